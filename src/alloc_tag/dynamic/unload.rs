// SPDX-License-Identifier: GPL-2.0

//! A module goes: its dynamic tags are dropped, or kept while their allocations live.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)

use super::{hash, Pool, FREE, KEPT, KEPT_UNUSED, LIVE, MAX_PROBES, TOMBSTONE, UNLOADED_UNUSED};
use crate::alloc_tag::leaks::Leaks;
use crate::codetag::KeptDynamic;
use core::{ptr, sync::atomic::Ordering};
use kernel::bindings;

impl<const C: usize, const M: usize> Pool<C, M> {
    /// Drops the tags of `module`, which is going away: they are no longer found by lookup;
    /// those whose counters read zero are no longer listed either. Frees kept tags found unused
    /// at two calls in a row, the read at unload being the first (as `Registry::reap` frees a
    /// module: a free between its `bytes` and `calls` updates can read zero once, when a split
    /// of the block was counted on a CPU read before it); a null `module` only does that.
    /// Called under the registry's write lock, so no reader is walking the tags and no other
    /// unload runs. Makers need no exclusion (see the module docs): they only take free slots
    /// and empty or tombstoned entries, and this only frees slots (their state last) and
    /// tombstones the entries of slots it drops.
    pub(crate) fn module_unload(&self, module: *mut bindings::module) -> KeptDynamic {
        let (mut changed, mut freed) = (false, false);
        let mut out = KeptDynamic::default();
        let mut leaks = Leaks::default();
        let mut module_name = None;
        for (i, slot) in self.slots() {
            let Some(tag) = self.tag_at(i) else {
                continue;
            };
            let state = slot.state.load(Ordering::Relaxed);
            let going =
                state == LIVE && !module.is_null() && slot.module.load(Ordering::Relaxed) == module;
            if !going && state != KEPT && state != KEPT_UNUSED && state != UNLOADED_UNUSED {
                continue;
            }
            // Why no allocator hook can reach a freed slot: the module's code, the only code
            // whose `Location`s these are, has returned for good (its exit ran), so the counters
            // only go down, but for splits (see above), and two sums of zero in a row mean that
            // no object refers to the tag any more (see `module_unload` of the static tags in
            // src/alloc_tag/mod.rs). A tag of vmlinux is never freed.
            let zero = tag.read().is_zero();
            if going {
                self.untable(i);
                tag.codetag().mark_unloaded();
                slot.module.store(ptr::null_mut(), Ordering::Relaxed);
                if !zero {
                    // The module's name, as its tags carry it.
                    module_name = tag.codetag().modname().or(module_name);
                    leaks.add(tag, tag.read());
                }
                // Unused, it leaves the listing now: a change readers must see.
                changed |= zero;
                if zero {
                    self.unlisted.fetch_add(1, Ordering::Relaxed);
                }
                let next = if zero { UNLOADED_UNUSED } else { KEPT };
                slot.state.store(next, Ordering::Relaxed);
                out.kept = true;
                continue;
            }
            // A kept tag: freed at the second pass in a row that finds it unused.
            if state == UNLOADED_UNUSED {
                self.unlisted.fetch_sub(1, Ordering::Relaxed);
            }
            let free = zero && (state == KEPT_UNUSED || state == UNLOADED_UNUSED);
            if free {
                slot.key.store(0, Ordering::Relaxed);
                slot.module.store(ptr::null_mut(), Ordering::Relaxed);
                slot.state.store(FREE, Ordering::Release);
                self.used.fetch_sub(1, Ordering::Relaxed);
                // An unlisted slot's going changes no listing.
                changed |= state == KEPT_UNUSED;
                freed = true;
                out.changed = true;
                continue;
            }
            // One that read unused at unload and now does not is listed again, for its
            // allocation (a free still between its updates then): kept.
            let next = if zero { KEPT_UNUSED } else { KEPT };
            changed |= state == UNLOADED_UNUSED;
            out.changed |= next != state;
            slot.state.store(next, Ordering::Relaxed);
            out.kept = true;
        }
        if changed {
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        if freed {
            // Room again: a full pool may be logged again.
            self.warned.store(false, Ordering::Relaxed);
        }
        // One line for the module, as for its static tags (src/alloc_tag/leaks.rs).
        leaks.report(module_name.unwrap_or(kernel::c_str!("?")));
        out.changed |= changed;
        out
    }

    /// Replaces slot `i`'s table entry with a tombstone; at module unload.
    fn untable(&self, i: usize) {
        let Some(key) = self.slot(i).map(|s| s.key.load(Ordering::Relaxed)) else {
            return;
        };
        let start = hash(key);
        for probe in 0..MAX_PROBES.min(M) {
            let e = &self.table[(start + probe) % M];
            if e.load(Ordering::Relaxed) == i as u32 + 1 {
                e.store(TOMBSTONE, Ordering::Release);
                return;
            }
        }
    }
}
