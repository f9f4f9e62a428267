// SPDX-License-Identifier: GPL-2.0

//! Per-node counting's table: from the number a tag carries to its slots.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! A tag names its slots with a number in `struct codetag`'s padding (`node_slots`, 0 for
//! none) rather than a pointer of its own, so that per-node counting built in and off costs no
//! memory per tag. Slots are made a block of tags at a time ([`super::make_block`]): a number
//! is the block's entry in the table and the tag's place in the block. The table, a
//! [`LeafTable`] that makes its directory with its first leaf, is made as blocks need it, only
//! while per-node counting is on, and never freed; its entries are given and taken back under
//! [`LOCK`]. The hooks' count reads it in any context without a lock: an entry is written before
//! a tag gets its number, and cleared only when nothing counts on the block's tags any more.

use crate::codetag::LeafTable;
use crate::rwsem::{c_rwsem, RwSem};
use core::{ptr, sync::atomic::Ordering};
use kernel::{bindings, prelude::*};

type Raw = bindings::alloc_tag_counters;

/// Bits of a number that say the tag's place in its block: a block of counters holds at most
/// `counters::GROUP` tags (2,048, or 4,096 with 64 KiB pages), a chunk of dynamic tags 64
/// (asserted in src/alloc_tag/node.rs).
pub(super) const PLACE_BITS: u32 = 12;
/// Leaves of the directory: room for 65,535 blocks at once (entry 0 is none).
const DIR_LEN: usize = 128;

/// From a block's number to the address of its slots.
static TABLE: LeafTable = LeafTable::new(DIR_LEN);

// SAFETY: `alloctag_node_table_lock` is defined with `DECLARE_RWSEM()` (src/glue.c) for this
// table alone.
static LOCK: RwSem<()> = unsafe { c_rwsem!(alloctag_node_table_lock, ()) };

/// Returns the address of the first of the `per` slots of the tag numbered `number`, or null
/// for 0 or a number whose block is gone. Any context.
pub(super) fn slots_of(number: u32, per: usize) -> *mut Raw {
    let block = (number >> PLACE_BITS) as usize;
    let place = (number & ((1 << PLACE_BITS) - 1)) as usize;
    if block == 0 {
        return ptr::null_mut();
    }
    // Acquire: the block's slots were zeroed before the entry was written.
    let base = TABLE.entry(block).map_or(0, |e| e.load(Ordering::Acquire)) as *mut Raw;
    if base.is_null() {
        return base;
    }
    base.wrapping_add(place * per)
}

/// Gives the block of slots at `base` a table entry and returns the number of its first tag
/// (the others follow, one each): `ENOMEM` without memory for a leaf, `ENOSPC` with every
/// entry taken. Process context or early boot; may sleep.
pub(super) fn give(base: *mut Raw) -> Result<u32> {
    let _guard = LOCK.write();
    // First fit: blocks come with modules and chunks of dynamic tags, a few hundred at most.
    for block in 1..TABLE.capacity() {
        if TABLE
            .entry(block)
            .is_some_and(|e| e.load(Ordering::Relaxed) != 0)
        {
            continue;
        }
        // SAFETY: Serialized by `LOCK`, held for writing.
        unsafe { TABLE.make_leaves(block, 1) }?;
        let e = TABLE.entry(block).ok_or(ENOMEM)?;
        // Release: the zeroed slots before the entry that leads to them.
        e.store(base as usize, Ordering::Release);
        return Ok((block as u32) << PLACE_BITS);
    }
    Err(ENOSPC)
}

/// Takes back the table entry of the block whose first tag is numbered `first`.
///
/// # Safety
///
/// Nothing may count on or read the block's tags meanwhile or after.
pub(super) unsafe fn take_back(first: u32) {
    let _guard = LOCK.write();
    if let Some(e) = TABLE.entry((first >> PLACE_BITS) as usize) {
        e.store(0, Ordering::Relaxed);
    }
}
