// SPDX-License-Identifier: GPL-2.0

//! Per-node counting: each call site's bytes and calls by the NUMA node of their memory.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! The per-CPU counters say which CPU counted, not where the memory is: a CPU allocates on other
//! nodes (`kmalloc_node()`, `__GFP_THISNODE`, mempolicies) and frees memory of any node. With
//! per-node counting on (`alloctag_node_key`), a hook that knows the memory's node (the page's,
//! the slab's) compares it with its CPU's, with preemption off from the comparison to the
//! per-CPU update (`alloctag_node_count()`, src/glue.c, out of line): memory of that node is
//! counted per CPU as always, the rest (most allocations are node-local) in one update of the
//! tag's slot for its node, here. Per-CPU memory, a unit on
//! every node, has a slot of its own, the last. So a node's figures are the counters of its
//! CPUs plus its slot, and a tag's total is the sum of every CPU's counters and every slot: the
//! node figures of one read add up to its total by construction.
//!
//! The slots are made with the counters ([`make_block`], from `counters::make()` and the dynamic
//! tags' chunks), and a tag finds its own through [`table`] by the number it carries, so that
//! per-node counting built in and off costs a tag no memory. Per-node counting is decided before
//! the first count: at boot with
//! `alloctag.per_node=on`, or by writing 1 to `vm.mem_profiling_per_node` before profiling is
//! first switched on. Turned on later, memory counted per CPU before would be uncharged from
//! its node's slot when freed, and the node figures would drift. With the debug checks vmlinux's
//! tags have static counters that count from the first allocation, before any slot can be
//! made: refused there.

use super::AllocTag;
use crate::alloc_tag::{Counters, Share};
use core::{
    ffi::c_int,
    ptr,
    sync::atomic::{AtomicI64, AtomicPtr, AtomicU32, AtomicU8, Ordering},
};
use kernel::{bindings, prelude::*, str::CStr};

mod table;

type Raw = bindings::alloc_tag_counters;

/// Off.
const OFF: u8 = 0;
/// On, asked at boot.
const BOOT: u8 = 1;
/// On, asked by a write of the sysctl.
const WRITTEN: u8 = 2;

/// Whether slots are made, and who asked; changes only before the tags get counters.
static WANTED: AtomicU8 = AtomicU8::new(OFF);

/// Returns whether per-node counting is (or will be, once the tags get counters) on.
pub(crate) fn wanted() -> bool {
    WANTED.load(Ordering::Relaxed) != OFF
}

/// Returns what the status file says of per-node counting.
pub(crate) fn said() -> &'static str {
    match WANTED.load(Ordering::Relaxed) {
        BOOT => "on (alloctag.per_node=on)",
        WRITTEN => "on (vm.mem_profiling_per_node)",
        _ if cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG) => "off (not with the debug checks)",
        _ => "off",
    }
}

/// Returns the number of slots of a tag: one per node id, and the last for per-CPU memory.
pub(crate) fn slots() -> usize {
    // SAFETY: `nr_node_ids` is fixed during early boot, before any of our code runs.
    unsafe { bindings::nr_node_ids as usize + 1 }
}

/// Each possible CPU's node when per-node counting turned on ([`switch_on`]), for a CPU whose
/// node is cleared later (`numa_clear_node()` on hot-remove), so that what it counted stays on
/// its node. Null where the table could not be made.
static CPU_NODES: AtomicPtr<u16> = AtomicPtr::new(ptr::null_mut());

/// Returns the node whose memory `cpu`'s counters count: its node now, which the hooks compare
/// the memory's node with (`numa_node`), or, once cleared, its node when per-node counting
/// turned on (0 for none). Not the node at the switch-on for every CPU: a CPU's node can be
/// set after it (x86's `srat_detect_node()` sets a CPU's node as it is brought up, after the
/// switch-on of a kernel booted with per-node counting on), and its counters then count the
/// later node's memory.
pub(crate) fn cpu_node(cpu: usize) -> usize {
    // SAFETY: A read of a CPU's per-CPU node number.
    let live = unsafe { bindings::alloctag_cpu_to_node(cpu as u32) };
    if let Ok(nid) = usize::try_from(live) {
        return nid;
    }
    let table = CPU_NODES.load(Ordering::Acquire);
    if !table.is_null() && cpu < crate::percpu::nr_cpu_ids() {
        // SAFETY: `switch_on` made `nr_cpu_ids` entries, never freed nor written again.
        let nid = unsafe { *table.add(cpu) };
        if nid != u16::MAX {
            return usize::from(nid);
        }
    }
    0
}

impl AllocTag {
    /// Returns the number of the tag's slots in [`table`] (its code tag's `node_slots`): 0, or
    /// the number of its [`slots`] slots, made with its counters and freed with them. Stored
    /// before any hook can count on the tag.
    fn slots_number(&self) -> &AtomicU32 {
        // SAFETY: A field of the tag, an aligned `unsigned int`, which lives as long as `self`;
        // every Rust access to it is atomic, and C's hooks only read it.
        unsafe { AtomicU32::from_ptr(&raw mut (*self.as_raw()).ct.node_slots) }
    }

    /// Returns the address of the tag's first slot, or null for a tag without slots.
    pub(crate) fn slots_ptr(&self) -> *mut Raw {
        table::slots_of(self.slots_number().load(Ordering::Acquire), slots())
    }

    /// Calls `f` with each slot of the tag, by index ([`slots`]), as it reads now; nothing for a
    /// tag without slots.
    pub(crate) fn for_each_slot(&self, mut f: impl FnMut(usize, Share)) {
        let nodes = self.slots_ptr();
        if nodes.is_null() {
            return;
        }
        for i in 0..slots() {
            // SAFETY: By `slots_number`'s invariant the tag's slots live while the tag does;
            // only atomic operations reach them.
            let (bytes, calls) = unsafe { slot(nodes, i) };
            f(
                i,
                Share {
                    bytes: bytes.load(Ordering::Relaxed),
                    calls: calls.load(Ordering::Relaxed),
                },
            );
        }
    }

    /// Adds the tag's slots to `sum`: what [`AllocTag::read`] adds to the CPUs' counters.
    pub(super) fn add_slots(&self, sum: &mut Counters) {
        self.for_each_slot(|_, s| {
            sum.bytes = sum.bytes.wrapping_add(s.bytes);
            sum.calls = sum.calls.wrapping_add(s.calls as u64);
        });
    }

    /// Calls `f` with each part of the tag's node shares as it reads them: each counting CPU's
    /// counters with its node, then each slot with its index ([`slots`]; the last is per-CPU
    /// memory's). A node's share is the sum of its parts.
    pub(crate) fn for_each_node_part(&self, mut f: impl FnMut(usize, Share)) {
        self.for_each_cpu(|cpu, s| f(cpu_node(cpu), s));
        self.for_each_slot(f);
    }

    /// Fills `shares` with the tag's node shares, indexed as its slots ([`slots`]), from one
    /// read, and returns their sum: the tag's figures, which they add up to exactly. `None`,
    /// leaving `shares` alone, for a tag without slots.
    pub(crate) fn read_nodes(&self, shares: &mut [Share]) -> Option<Counters> {
        if self.slots_ptr().is_null() {
            return None;
        }
        shares.fill(Share::default());
        let mut sum = Counters::default();
        self.for_each_node_part(|i, s| {
            if let Some(share) = shares.get_mut(i) {
                share.bytes = share.bytes.wrapping_add(s.bytes);
                share.calls = share.calls.wrapping_add(s.calls);
                sum.bytes = sum.bytes.wrapping_add(s.bytes);
                sum.calls = sum.calls.wrapping_add(s.calls as u64);
            }
        });
        Some(sum)
    }

    /// Returns node `nid`'s share of the tag (`nr_node_ids`: per-CPU memory's).
    pub(crate) fn node_share(&self, nid: usize) -> Share {
        let mut share = Share::default();
        self.for_each_node_part(|i, s| {
            if i == nid {
                share.bytes = share.bytes.wrapping_add(s.bytes);
                share.calls = share.calls.wrapping_add(s.calls);
            }
        });
        share
    }
}

/// Returns slot `i` of `nodes`, its bytes and calls.
///
/// # Safety
///
/// `nodes` must point to at least `i + 1` live slots, accessed only atomically meanwhile.
unsafe fn slot<'a>(nodes: *mut Raw, i: usize) -> (&'a AtomicI64, &'a AtomicI64) {
    // SAFETY: As the caller guarantees; `u64` and `AtomicI64` have one size and alignment.
    unsafe {
        let s = nodes.add(i);
        (
            AtomicI64::from_ptr((&raw mut (*s).bytes).cast()),
            AtomicI64::from_ptr((&raw mut (*s).calls).cast()),
        )
    }
}

/// Counts `bytes` and `calls` (C's `long`s) of memory on node `nid` on `tag`'s slot for it
/// (`NUMA_NO_NODE`, or a node beyond `nr_node_ids`: per-CPU memory's slot). Called by the hooks'
/// count (`alloctag_node_count()`, src/glue.c) for memory of another node than their CPU's, in
/// any context: one atomic add for each figure, no lock, no allocation.
///
/// # Safety
///
/// `tag` must point to a live tag whose `node_slots` the hook found set.
#[no_mangle]
pub(crate) unsafe extern "C" fn alloctag_node_slot_count(
    tag: *mut bindings::alloc_tag,
    nid: c_int,
    bytes: isize,
    calls: isize,
) {
    // SAFETY: The caller guarantees `tag`; `AllocTag` wraps it transparently.
    let tag = unsafe { &*tag.cast::<AllocTag>() };
    let nodes = tag.slots_ptr();
    if nodes.is_null() {
        return;
    }
    let last = slots() - 1;
    let i = usize::try_from(nid).map_or(last, |n| n.min(last));
    // SAFETY: The tag's slots, `slots()` of them, live while it does; `i < slots()`.
    let (b, c) = unsafe { slot(nodes, i) };
    // As the per-CPU updates: a free's `calls` last (src/alloc_tag/mod.rs, `module_unload`).
    if calls < 0 {
        b.fetch_add(bytes as i64, Ordering::Relaxed);
        c.fetch_add(calls as i64, Ordering::Relaxed);
    } else {
        c.fetch_add(calls as i64, Ordering::Relaxed);
        b.fetch_add(bytes as i64, Ordering::Relaxed);
    }
}
c_declared!(alloctag_node_slot_count);

/// Makes zeroed slots for a block of `n` tags and gives each its own, or gives none where
/// per-node counting is off. Process context or early boot; may sleep.
///
/// # Safety
///
/// Nothing may read the tags' `node_slots` until this returns.
pub(crate) unsafe fn make_block(tags: &[AllocTag]) -> Result {
    if !wanted() || tags.is_empty() {
        return Ok(());
    }
    // Never so, by the assertion below: a block's places are what a number's bits can say.
    if tags.len() > 1 << table::PLACE_BITS {
        return Err(EINVAL);
    }
    let per = slots();
    let len = tags.len() * per;
    let zero = Raw { bytes: 0, calls: 0 };
    // The core's own allocation, charged to this line; quiet: the caller's ENOMEM says it.
    let block = kernel::alloc_hooks!(KVec::from_elem(zero, len, GFP_KERNEL | __GFP_NOWARN))?;
    let (base, _, _) = block.into_raw_parts();
    let first = match table::give(base) {
        Ok(first) => first,
        Err(e) => {
            // SAFETY: The vector of `len` slots made above, which no table entry names.
            drop(unsafe { KVec::<Raw>::from_raw_parts(base, len, len) });
            return Err(e);
        }
    };
    for (i, tag) in tags.iter().enumerate() {
        // INVARIANT: Tag `i`'s `per` slots of the block, zeroed, named by the table until
        // `free_block`, which frees them.
        tag.slots_number()
            .store(first + i as u32, Ordering::Release);
    }
    Ok(())
}

// A block of counters (`counters::GROUP` tags: 2,048 with 4 KiB pages, 4,096 with 64 KiB ones)
// or of dynamic tags fits the places of one table entry.
const _: () = assert!(
    super::counters::GROUP <= 1 << table::PLACE_BITS
        && super::dynamic::CHUNK_TAGS <= 1 << table::PLACE_BITS
);

/// Frees the slots [`make_block`] gave a block of tags, and leaves them without.
///
/// # Safety
///
/// Nothing may count on or read the tags meanwhile or after.
pub(crate) unsafe fn free_block(tags: &[AllocTag]) {
    let Some(first) = tags.first() else {
        return;
    };
    let number = first.slots_number().load(Ordering::Relaxed);
    let base = first.slots_ptr();
    for tag in tags {
        tag.slots_number().store(0, Ordering::Relaxed);
    }
    if !base.is_null() {
        // SAFETY: As the caller guarantees.
        unsafe { table::take_back(number) };
        let len = tags.len() * slots();
        // SAFETY: `make_block`'s vector of `len` slots, which no tag and no table entry names
        // any more.
        drop(unsafe { KVec::<Raw>::from_raw_parts(base, len, len) });
    }
}

/// Turns the hooks' per-node counting on where it was asked, and chooses their variants:
/// once, when the tags got their counters and slots and page tags their place, before the
/// profiling key. Process context or early boot; may sleep.
pub(super) fn switch_on() {
    if wanted() {
        let ids = crate::percpu::nr_cpu_ids();
        // The core's own allocation; without it the nodes are read live.
        if let Ok(mut table) = kernel::alloc_hooks!(KVec::with_capacity(ids, GFP_KERNEL)) {
            for cpu in 0..ids {
                // SAFETY: A read of a CPU's per-CPU node number.
                let nid = unsafe { bindings::alloctag_cpu_to_node(cpu as u32) };
                // Room reserved above.
                let _ = table.push(u16::try_from(nid).unwrap_or(u16::MAX), GFP_KERNEL);
            }
            // The room was reserved, so every push was made: `nr_cpu_ids` entries.
            if table.len() == ids {
                let (base, _, _) = table.into_raw_parts();
                // Release: a reader that loads it reads the entries.
                CPU_NODES.store(base, Ordering::Release);
            }
        }
    }
    crate::keys::choose_node_variants(wanted(), super::index::compressed());
    if wanted() {
        pr_info!("per-node counting on: {} slots per tag\n", slots());
    }
}

/// Sets per-node counting as a write of `vm.mem_profiling_per_node` asks (src/profiling.rs),
/// before the tags get counters: `EBUSY` after.
pub(crate) fn set(on: bool) -> Result {
    super::counters::while_unarmed(|| {
        let was = WANTED.load(Ordering::Relaxed);
        if on && was == OFF {
            WANTED.store(WRITTEN, Ordering::Relaxed);
        } else if !on {
            WANTED.store(OFF, Ordering::Relaxed);
        }
    })
}

/// Parses `alloctag.per_node=on|off`; a bad value is logged and changes nothing.
///
/// # Safety
///
/// Called by the kernel's parameter parser with null or a NUL-terminated string.
unsafe extern "C" fn setup(value: *mut u8) -> c_int {
    if value.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: A non-null value is a NUL-terminated string, as the caller guarantees.
    let value = unsafe { CStr::from_char_ptr(value) };
    match value.as_bytes() {
        b"on" if cfg!(CONFIG_MEM_ALLOC_PROFILING_DEBUG) => {
            pr_err!("alloctag.per_node: not with the debug checks, whose tags count from boot\n");
            EINVAL.to_errno()
        }
        b"on" => {
            WANTED.store(BOOT, Ordering::Relaxed);
            0
        }
        b"off" => {
            WANTED.store(OFF, Ordering::Relaxed);
            0
        }
        _ => {
            pr_err!("alloctag.per_node: invalid value, expected on or off; keeping off\n");
            EINVAL.to_errno()
        }
    }
}

#[used]
#[link_section = ".init.setup"]
static PARAMETER: crate::profiling::EarlyParam =
    crate::profiling::EarlyParam::new(kernel::c_str!("alloctag.per_node"), setup);
