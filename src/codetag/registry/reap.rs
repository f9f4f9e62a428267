// SPDX-License-Identifier: GPL-2.0

//! The tags kept after their module: the unlisted sections given up to the reaper, and the
//! reaper's passes that free them, with their memory, once their allocations are all freed.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)

#[cfg(CONFIG_ALLOCTAG_SELECTION)]
use super::selections;
#[cfg(any(CONFIG_DEBUG_FS, CONFIG_ALLOCTAG_KUNIT_TEST))]
use super::AreaUsage;
#[cfg(CONFIG_MODULES)]
use super::REGISTRY;
use super::{area, names, Range, Registry};
use kernel::bindings;

impl Range {
    /// A range over tags of `module` (null where not known) in `placed` that the registry does
    /// not list, for its type's checks.
    ///
    /// # Safety
    ///
    /// `module` must be null or point to a live module; the tags must live while the range is
    /// used.
    pub(super) unsafe fn unlisted(module: *mut bindings::module, placed: area::Placed) -> Self {
        // INVARIANT: The caller guarantees the tags; `placed` is a whole section of them.
        Self {
            id: u64::MAX,
            module,
            // SAFETY: The caller guarantees `module`.
            name: unsafe { names::ModuleName::of(module) },
            start: placed.start,
            stop: placed.start.wrapping_add(placed.len),
            area: true,
            names: names::Names::NONE,
            gone: true,
            unused_once: false,
        }
    }
}

impl Registry {
    /// Drops range `i` of the type at `index`: its indices, its selections' marks, and the
    /// range itself.
    pub(super) fn drop_range(&mut self, index: usize, i: usize) {
        let ty = &mut self.types[index];
        let range = ty.ranges[i];
        if let Some(tag_index) = ty.index {
            // SAFETY: The range's tags live while it is in the registry, which it still is.
            unsafe { tag_index.remove(range.start) };
        }
        #[cfg(CONFIG_ALLOCTAG_SELECTION)]
        selections::module_going(&self.selections, index, &range, ty.tag_size);
        // A kept range none of whose tags is listed any more changes no listing as it goes.
        let listed = !range.gone || range.codetags(ty.tag_size).any(|ct| !ct.dropped());
        let len = ty.ranges.len();
        ty.ranges.as_mut_slice()[i..].rotate_left(1);
        // SAFETY: `len - 1 < len`, and `Range` is `Copy`: dropping nothing is right.
        unsafe { ty.ranges.set_len(len - 1) };
        if listed {
            ty.generation = ty.generation.wrapping_add(1);
        }
        // Unlisted, and read by no one: readers hold the registry's lock, and no allocation
        // points to a tag of a range that goes (its type found them unused, or its module
        // unloads with them unused).
        // SAFETY: As above, no tag of the range is read any more.
        unsafe { range.names.free() };
        if range.area {
            self.areas.free(range.start);
        }
    }

    /// Gives up the extent `placed`, which `from` owns and whose tags the registry does not
    /// list: orphaned ([`area::Owner::Orphan`]), it goes with what its type gave its tags at
    /// the second check in a row, this one included, that finds them unused ([`Registry::reap`]),
    /// never at once: one sum read while a free is between its `bytes` and `calls` updates can
    /// read zero. With `report`, its type logs what is live. Returns whether its tags read
    /// unused.
    ///
    /// # Safety
    ///
    /// `module` must be null or point to a live module, and the extent's tags must live across
    /// the call.
    pub(super) unsafe fn free_unlisted(
        &mut self,
        module: *mut bindings::module,
        placed: area::Placed,
        from: area::Owner,
        report: bool,
    ) -> bool {
        // SAFETY: The caller guarantees `module` and the tags.
        let range = unsafe { Range::unlisted(module, placed) };
        let Some(ty) = self.types.get(placed.ty) else {
            // No type counts into them: nothing can be in flight.
            self.areas.free_owned(placed.start, from);
            return true;
        };
        let unused = (ty.unload)(&range, report);
        self.areas.hand_over(
            placed.start,
            from,
            area::Owner::Orphan {
                unused_once: unused,
            },
        );
        unused
    }

    /// Drops the tags kept for unloaded modules whose allocations are now all freed, with their
    /// memory and their names' copies. Kept tags found unused go from the listing.
    ///
    /// A module's tags go at the second pass in a row that finds them all unused (the first
    /// only marks them): a sum across the CPUs read while a free is between its `bytes` and its
    /// `calls` update can read zero when a split of the block (`split_page()`, which adds
    /// `calls`, not `bytes`) was counted on a CPU read before it. `bytes` only go down once the
    /// module's code is gone, so a pass that reads zero bytes everywhere sees no live block,
    /// hence no split to come; a later pass that still reads zero `calls` saw every free
    /// finished (one still between its updates keeps a CPU's `calls` up). The read at unload
    /// is the first pass of a module that unloads unused; orphaned sections (a failed load's,
    /// an unlisted module's) go by the same rule.
    pub(crate) fn reap(&mut self) -> Reaped {
        let mut out = Reaped::default();
        let mut index = 0;
        while index < self.types.len() {
            let mut i = 0;
            while let Some(range) = self.types[index].ranges.get(i).copied() {
                let id = range.id;
                // Each module once: at its first gone range in the first type that has one.
                let seen_before = self.types[..index]
                    .iter()
                    .any(|ty| ty.ranges.iter().any(|r| r.gone && r.id == id));
                if !range.gone || seen_before {
                    i += 1;
                    continue;
                }
                // One loop, not an iterator chain: the chain's symbol names grew past
                // kallsyms' 512 bytes.
                let (mut unused, mut once) = (true, true);
                for ty in self.types.iter() {
                    for r in ty.ranges.iter().filter(|r| r.gone && r.id == id) {
                        once &= r.unused_once;
                        unused &= (ty.unload)(r, false);
                    }
                }
                if !unused || !once {
                    for ty in self.types.iter_mut() {
                        let drop_unused = ty.drop_unused;
                        let mut dropped = false;
                        for r in ty.ranges.iter_mut().filter(|r| r.gone && r.id == id) {
                            r.unused_once = unused;
                            // Its tags that are no longer used go from the listing now.
                            dropped |= !unused && drop_unused(r);
                        }
                        if dropped {
                            ty.generation = ty.generation.wrapping_add(1);
                        }
                    }
                    out.changed |= unused;
                    i += 1;
                    continue;
                }
                for other in 0..self.types.len() {
                    while let Some(j) = self.types[other]
                        .ranges
                        .iter()
                        .position(|r| r.gone && r.id == id)
                    {
                        (self.types[other].free)(&self.types[other].ranges[j]);
                        self.drop_range(other, j);
                    }
                }
                out.freed += 1;
                out.changed = true;
                // The ranges at and after `i` moved; types before `index` had none of it.
            }
            index += 1;
        }
        // Orphaned sections: freed with what their type gave their tags, by the same rule.
        let types = &self.types;
        let (orphans, moved) = self.areas.pass_orphans(|placed, unused_once| {
            let ty = types.get(placed.ty)?;
            // SAFETY: An orphan's tags live in their extent until it is freed here; nothing
            // lists them, and their module is not known (null).
            let range = unsafe { Range::unlisted(core::ptr::null_mut(), placed) };
            let unused = (ty.unload)(&range, false);
            if unused && unused_once {
                (ty.free)(&range);
                return None;
            }
            Some(unused)
        });
        out.changed |= moved;
        out.kept = orphans || self.types.iter().any(|ty| ty.ranges.iter().any(|r| r.gone));
        for ty in self.types.iter() {
            if let Some(dynamic) = ty.dynamic {
                let d = dynamic.module_unload(core::ptr::null_mut());
                out.kept |= d.kept;
                out.changed |= d.changed;
            }
        }
        out
    }

    /// Returns what the memory of modules' tags holds, and the bytes of the names copied for
    /// unloaded modules' tags, and how many such modules are kept for their live allocations
    /// (not those unloaded unused, which wait for the reaper's second pass, unlisted).
    #[cfg(any(CONFIG_DEBUG_FS, CONFIG_ALLOCTAG_KUNIT_TEST))]
    pub(crate) fn area_usage(&self) -> (AreaUsage, usize, usize) {
        let (mut names, mut kept) = (0, 0);
        for (index, ty) in self.types.iter().enumerate() {
            for r in ty.ranges.iter().filter(|r| r.gone) {
                names += r.names.len();
                let seen_before = self.types[..index]
                    .iter()
                    .any(|t| t.ranges.iter().any(|o| o.gone && o.id == r.id));
                let listed = self.types.iter().any(|t| {
                    t.ranges
                        .iter()
                        .filter(|o| o.gone && o.id == r.id)
                        .any(|o| o.codetags(t.tag_size).any(|ct| !ct.dropped()))
                });
                kept += usize::from(!seen_before && listed);
            }
        }
        (self.areas.usage(), names, kept)
    }
}

/// What a pass of [`Registry::reap`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reaped {
    /// Tags are still kept for unloaded modules.
    pub(crate) kept: bool,
    /// Something moved towards being freed: the next pass should come soon.
    pub(crate) changed: bool,
    /// How many unloaded modules' tags it dropped, with their memory.
    pub(crate) freed: usize,
}

/// Drops the tags kept for unloaded modules whose allocations are all freed, with their memory.
/// Returns 0 when no tag is kept any more, 1 when tags are kept and nothing changed (the next
/// pass may wait), 2 when something moved towards being freed (the next pass should come soon).
///
/// Called by the glue's delayed work (src/glue_module.c) while tags are kept.
#[cfg(CONFIG_MODULES)]
#[no_mangle]
pub(crate) extern "C" fn alloctag_codetag_reap() -> u32 {
    // No tag goes while a deselection flushes outside the registry's lock.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    let _no_flush = selections::no_flush();
    let reaped = REGISTRY.write().reap();
    match (reaped.kept, reaped.changed) {
        (false, _) => 0,
        (true, false) => 1,
        (true, true) => 2,
    }
}

#[cfg(CONFIG_MODULES)]
c_declared!(alloctag_codetag_reap);
