// SPDX-License-Identifier: GPL-2.0

//! A module goes: its dynamic tags are dropped, or kept while their allocations live.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)

use super::{hash, Pool, FREE, KEPT, KEPT_UNUSED, LIVE, MAX_PROBES, TOMBSTONE};
use crate::alloc_tag::leaks::Leaks;
use crate::codetag::KeptDynamic;
use core::{ptr, sync::atomic::Ordering};
use kernel::bindings;

impl<const C: usize, const M: usize> Pool<C, M> {
    /// Drops the tags of `module`, which is going away: those whose counters read zero are
    /// freed, the others are kept (listed, but no longer found by lookup). Also frees kept tags
    /// found unused at two calls in a row (as `Registry::reap` frees a module: a free between
    /// its `bytes` and `calls` updates can read zero once, when a split of the block was counted
    /// on a CPU read before it); a null `module` only does that. Called under the registry's
    /// write lock, so no reader is walking the tags and no other unload runs. Makers need no
    /// exclusion (see the module docs): they only take free slots and empty or tombstoned
    /// entries, and this only frees slots (their state last) and tombstones the entries of
    /// slots it drops.
    pub(crate) fn module_unload(&self, module: *mut bindings::module) -> KeptDynamic {
        let mut changed = false;
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
            if !going && state != KEPT && state != KEPT_UNUSED {
                continue;
            }
            // Why no allocator hook can reach a freed slot: the module's code, the only code
            // whose `Location`s these are, has returned for good (its exit ran), so the counters
            // only go down, but for splits (see above), and a sum of zero means that no object
            // refers to the tag any more (see `module_unload` of the static tags in
            // src/alloc_tag.rs). A tag of vmlinux is never freed.
            let zero = tag.read().is_zero();
            if going {
                self.untable(i);
                if !zero {
                    // The module's name, as its tags carry it.
                    module_name = tag.codetag().modname().or(module_name);
                    leaks.add(tag, tag.read());
                    tag.codetag().mark_unloaded();
                    slot.module.store(ptr::null_mut(), Ordering::Relaxed);
                    slot.state.store(KEPT, Ordering::Relaxed);
                }
            }
            // A kept tag: freed at the second pass in a row that finds it unused.
            let free = zero && (going || state == KEPT_UNUSED);
            if !going && !free {
                let next = if zero { KEPT_UNUSED } else { KEPT };
                out.changed |= next != state;
                slot.state.store(next, Ordering::Relaxed);
            }
            if free {
                slot.key.store(0, Ordering::Relaxed);
                slot.module.store(ptr::null_mut(), Ordering::Relaxed);
                slot.state.store(FREE, Ordering::Release);
                self.used.fetch_sub(1, Ordering::Relaxed);
                changed = true;
            } else {
                out.kept = true;
            }
        }
        if changed {
            self.generation.fetch_add(1, Ordering::Relaxed);
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
