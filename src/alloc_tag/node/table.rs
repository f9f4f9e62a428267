// SPDX-License-Identifier: GPL-2.0

//! Per-node counting's table: from the number a tag carries to its slots.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! A tag names its slots with a number in `struct codetag`'s padding (`node_slots`, 0 for
//! none) rather than a pointer of its own, so that per-node counting built in and off costs no
//! memory per tag. Slots are made a block of tags at a time ([`super::make_block`]): a number
//! is the block's entry in the table and the tag's place in the block. The table, a directory of
//! leaves of block addresses, is made as blocks need it, only while per-node counting is on, and
//! never freed; its entries are given and taken back under [`LOCK`]. The hooks' count reads it
//! in any context without a lock: an entry is written before a tag gets its number, and cleared
//! only when nothing counts on the block's tags any more.

use crate::rwsem::{c_rwsem, RwSem};
use core::{
    ptr,
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{alloc::KBox, bindings, prelude::*};

type Raw = bindings::alloc_tag_counters;

/// Bits of a number that say the tag's place in its block: a block of counters holds at most
/// `counters::GROUP` tags (2,048, or 4,096 with 64 KiB pages), a chunk of dynamic tags 64
/// (asserted in src/alloc_tag/node.rs).
pub(super) const PLACE_BITS: u32 = 12;
/// Entries of a leaf: 4 KiB of addresses.
const LEAF_LEN: usize = 512;
/// Leaves of the directory: room for 65,535 blocks at once (entry 0 is none).
const DIR_LEN: usize = 128;

type Leaf = [AtomicPtr<Raw>; LEAF_LEN];
type Dir = [AtomicPtr<Leaf>; DIR_LEN];

/// The directory; null until a block first needs it.
static DIR: AtomicPtr<Dir> = AtomicPtr::new(ptr::null_mut());

// SAFETY: `alloctag_node_table_lock` is defined with `DECLARE_RWSEM()` (src/glue.c) for this
// table alone.
static LOCK: RwSem<()> = unsafe { c_rwsem!(alloctag_node_table_lock, ()) };

/// Returns a zeroed `T` on the heap, or `ENOMEM`.
///
/// # Safety
///
/// All zero bits must be a valid `T` (here arrays of `AtomicPtr`: null).
unsafe fn zeroed<T>() -> Result<KBox<T>> {
    // The core's own allocation, charged to this line.
    let mut b = kernel::alloc_hooks!(KBox::<T>::new_uninit(GFP_KERNEL))?;
    // SAFETY: `b` holds room for one `T`; zero is a valid `T`, as the caller guarantees.
    unsafe {
        ptr::write_bytes(b.as_mut_ptr(), 0, 1);
        Ok(b.assume_init())
    }
}

/// Returns table entry `block`, or `None` where its leaf is not made yet.
fn entry(block: usize) -> Option<&'static AtomicPtr<Raw>> {
    // Acquire: pairs with the publication of the directory and leaf in `give`.
    let dir = DIR.load(Ordering::Acquire);
    if dir.is_null() || block >= DIR_LEN * LEAF_LEN {
        return None;
    }
    // SAFETY: A published directory lives forever.
    let leaf = unsafe { &*dir }[block / LEAF_LEN].load(Ordering::Acquire);
    if leaf.is_null() {
        return None;
    }
    // SAFETY: A published leaf lives forever.
    Some(&unsafe { &*leaf }[block % LEAF_LEN])
}

/// Returns the address of the first of the `per` slots of the tag numbered `number`, or null
/// for 0 or a number whose block is gone. Any context.
pub(super) fn slots_of(number: u32, per: usize) -> *mut Raw {
    let block = (number >> PLACE_BITS) as usize;
    let place = (number & ((1 << PLACE_BITS) - 1)) as usize;
    if block == 0 {
        return ptr::null_mut();
    }
    // Acquire: the block's slots were zeroed before the entry was written.
    let base = entry(block).map_or(ptr::null_mut(), |e| e.load(Ordering::Acquire));
    if base.is_null() {
        return base;
    }
    base.wrapping_add(place * per)
}

/// Makes the directory and the leaf of `block` where they are not made yet. Under [`LOCK`].
fn make_leaf(block: usize) -> Result {
    if DIR.load(Ordering::Relaxed).is_null() {
        // SAFETY: A null `AtomicPtr` is all zero bits.
        let dir = unsafe { zeroed::<Dir>() }?;
        // Release: the zeroed directory before its address.
        DIR.store(KBox::into_raw(dir), Ordering::Release);
    }
    // SAFETY: Made above or before, never freed.
    let slot = &unsafe { &*DIR.load(Ordering::Relaxed) }[block / LEAF_LEN];
    if slot.load(Ordering::Relaxed).is_null() {
        // SAFETY: As above.
        let leaf = unsafe { zeroed::<Leaf>() }?;
        // Release: the zeroed leaf before its address.
        slot.store(KBox::into_raw(leaf), Ordering::Release);
    }
    Ok(())
}

/// Gives the block of slots at `base` a table entry and returns the number of its first tag
/// (the others follow, one each): `ENOMEM` without memory for a leaf, `ENOSPC` with every
/// entry taken. Process context or early boot; may sleep.
pub(super) fn give(base: *mut Raw) -> Result<u32> {
    let _guard = LOCK.write();
    // First fit: blocks come with modules and chunks of dynamic tags, a few hundred at most.
    for block in 1..DIR_LEN * LEAF_LEN {
        if entry(block).is_some_and(|e| !e.load(Ordering::Relaxed).is_null()) {
            continue;
        }
        make_leaf(block)?;
        let e = entry(block).ok_or(ENOMEM)?;
        // Release: the zeroed slots before the entry that leads to them.
        e.store(base, Ordering::Release);
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
    if let Some(e) = entry((first >> PLACE_BITS) as usize) {
        e.store(ptr::null_mut(), Ordering::Relaxed);
    }
}
