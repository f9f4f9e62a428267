// SPDX-License-Identifier: GPL-2.0

//! The memory of modules' sections of code tags, apart from the modules' own, so that a module's
//! tags can outlive it while allocations point to them, and nothing else of it does.
//!
//! C header: [`include/linux/execmem.h`](srctree/include/linux/execmem.h)
//!
//! The loader places each section in an extent of a chunk given by [`Areas::alloc`]
//! (`move_module()`). The chunks are module data memory (`EXECMEM_MODULE_DATA`), which the
//! module's code reaches with the same relocations as its own data; each holds the sections of
//! several modules, so a module costs its tags' bytes, not a page. A chunk goes back once its
//! last extent is freed: only then would a stale access fault (a freed extent's bytes stay
//! mapped, and KASAN does not poison them). All under the registry's write lock.

use kernel::{alloc::flags::GFP_KERNEL, bindings, page::PAGE_SIZE, prelude::*};

/// Bytes of a chunk, unless one section needs more: 64 KiB, or a page where pages are larger.
pub(crate) const CHUNK: usize = if PAGE_SIZE > 1 << 16 {
    PAGE_SIZE
} else {
    1 << 16
};

/// Who an extent is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Owner {
    /// A loading module's, which the registry has not taken yet; known by its address only
    /// (the loader's `struct module` moves while it loads).
    Loader,
    /// A range's, which frees it with [`Areas::free`].
    Range,
    /// The tags of `module`, loaded, which the registry could not list: its unload looks here.
    Unlisted(*mut bindings::module),
    /// Tags that nothing lists any more (a failed load's, or those of a module that the
    /// registry could not list, at its unload), with their counters: [`Registry::reap`] frees
    /// them at the second pass in a row that finds them unused, as it frees a kept module.
    /// `unused_once`: the last check found them unused.
    ///
    /// [`Registry::reap`]: super::Registry::reap
    Orphan { unused_once: bool },
}

/// One section's place in a chunk.
#[derive(Clone, Copy)]
struct Extent {
    offset: usize,
    len: usize,
    owner: Owner,
    /// The index of the tag type whose section it is.
    ty: usize,
}

/// An extent as [`Areas`] tells it: where, how long, of which tag type.
#[derive(Clone, Copy)]
pub(super) struct Placed {
    pub(super) start: *const u8,
    pub(super) len: usize,
    pub(super) ty: usize,
}

/// A block of module data memory, and the extents given out of it.
///
/// # Invariants
///
/// `base` is `size` bytes from `execmem_alloc()`, owned by the chunk; `used` is sorted by
/// offset, its extents disjoint and within `size`.
struct Chunk {
    base: *mut u8,
    size: usize,
    used: KVec<Extent>,
}

impl Chunk {
    /// Returns where `len` bytes aligned to `align` fit first: the index in `used` to insert
    /// at, and the offset.
    fn fit(&self, len: usize, align: usize) -> Option<(usize, usize)> {
        let mut free_from = 0usize;
        for (i, e) in self.used.iter().enumerate() {
            let offset = free_from.next_multiple_of(align);
            if offset.checked_add(len)? <= e.offset {
                return Some((i, offset));
            }
            free_from = e.offset + e.len;
        }
        let offset = free_from.next_multiple_of(align);
        (offset.checked_add(len)? <= self.size).then_some((self.used.len(), offset))
    }

    /// Returns the index in `used` of the extent at `start`.
    fn find(&self, start: *const u8) -> Option<usize> {
        let offset = (start as usize).checked_sub(self.base as usize)?;
        self.used.iter().position(|e| e.offset == offset)
    }

    /// Removes the extent at index `i` of `used`.
    fn remove(&mut self, i: usize) {
        let len = self.used.len();
        if i < len {
            self.used.as_mut_slice()[i..].rotate_left(1);
            // SAFETY: `len - 1 < len`, and `Extent` is `Copy`: dropping nothing is right.
            unsafe { self.used.set_len(len - 1) };
        }
    }
}

/// The chunks of modules' tag sections.
pub(crate) struct Areas {
    chunks: KVec<Chunk>,
}

/// What [`Areas`] holds, in bytes.
#[cfg(any(CONFIG_DEBUG_FS, CONFIG_ALLOCTAG_KUNIT_TEST))]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct AreaUsage {
    /// Chunks allocated.
    pub(crate) chunks: usize,
    /// Bytes of module data memory that the chunks take.
    pub(crate) mapped: usize,
    /// Bytes of the extents given out.
    pub(crate) used: usize,
}

impl Areas {
    /// Makes an empty set of chunks.
    pub(super) const fn new() -> Self {
        Self {
            chunks: KVec::new(),
        }
    }

    /// Gives a loading module `len` bytes, zeroed, aligned to `align` (a power of two, at most a
    /// page; 0 is 1) for a section of tag type `ty`'s tags, the loader's until [`Areas::take`]
    /// or [`Areas::free_owned`].
    pub(super) fn alloc(&mut self, len: usize, align: usize, ty: usize) -> Result<*mut u8> {
        let align = align.max(1);
        if len == 0 || !align.is_power_of_two() || align > PAGE_SIZE {
            return Err(EINVAL);
        }
        let found = self
            .chunks
            .iter()
            .enumerate()
            .find_map(|(c, chunk)| chunk.fit(len, align).map(|(i, offset)| (c, i, offset)));
        let (c, i, offset) = match found {
            Some(found) => found,
            None => {
                self.grow(len)?;
                (self.chunks.len() - 1, 0, 0)
            }
        };
        let chunk = &mut self.chunks[c];
        chunk.used.push(
            Extent {
                offset,
                len,
                owner: Owner::Loader,
                ty,
            },
            GFP_KERNEL,
        )?;
        chunk.used.as_mut_slice()[i..].rotate_right(1);
        // INVARIANT: `fit` found the extent free, within `size`, at its place in the order.
        let start = chunk.base.wrapping_add(offset);
        // SAFETY: The extent is `len` bytes of the chunk's memory, which nothing else uses (a
        // section the loader copies, as `module_memory_alloc()` zeroes module memory first).
        unsafe { core::ptr::write_bytes(start, 0, len) };
        Ok(start)
    }

    /// Without modules there is nothing to place.
    #[cfg(not(CONFIG_EXECMEM))]
    fn grow(&mut self, _len: usize) -> Result {
        Err(ENOMEM)
    }

    /// Adds a chunk for at least `len` bytes.
    #[cfg(CONFIG_EXECMEM)]
    fn grow(&mut self, len: usize) -> Result {
        let size = len
            .checked_next_multiple_of(PAGE_SIZE)
            .ok_or(ENOMEM)?
            .max(CHUNK);
        self.chunks.reserve(1, GFP_KERNEL)?;
        let mut used = KVec::new();
        used.reserve(4, GFP_KERNEL)?;
        // SAFETY: Process context (module load); `size` is not 0.
        let base =
            unsafe { bindings::execmem_alloc(bindings::execmem_type_EXECMEM_MODULE_DATA, size) };
        if base.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: `base` is `size` bytes of `execmem_alloc()`, with no extent yet.
        self.chunks
            .push(
                Chunk {
                    base: base.cast(),
                    size,
                    used,
                },
                GFP_KERNEL,
            )
            .map_err(|_| ENOMEM)
    }

    /// Returns the extent at `start` and its owner.
    pub(super) fn get(&self, start: *const u8) -> Option<(Placed, Owner)> {
        self.chunks.iter().find_map(|chunk| {
            let e = chunk.used[chunk.find(start)?];
            Some((
                Placed {
                    start,
                    len: e.len,
                    ty: e.ty,
                },
                e.owner,
            ))
        })
    }

    /// Gives the extent at `start`, whose owner is `from`, to `to`; returns whether it found
    /// it so.
    pub(super) fn hand_over(&mut self, start: *const u8, from: Owner, to: Owner) -> bool {
        for chunk in self.chunks.iter_mut() {
            if let Some(i) = chunk.find(start) {
                let e = &mut chunk.used[i];
                let found = e.owner == from;
                if found {
                    e.owner = to;
                }
                return found;
            }
        }
        false
    }

    /// Takes the loader's extent at `start` for a range, which frees it with [`Areas::free`].
    /// Returns whether `start` was such an extent.
    pub(super) fn take(&mut self, start: *const u8) -> bool {
        self.hand_over(start, Owner::Loader, Owner::Range)
    }

    /// Returns `module`'s extents that the registry could not list.
    pub(super) fn unlisted(
        &self,
        module: *mut bindings::module,
    ) -> impl Iterator<Item = Placed> + '_ {
        self.chunks.iter().flat_map(move |chunk| {
            chunk
                .used
                .iter()
                .filter(move |e| e.owner == Owner::Unlisted(module))
                .map(move |e| Placed {
                    start: chunk.base.wrapping_add(e.offset),
                    len: e.len,
                    ty: e.ty,
                })
        })
    }

    /// Calls `pass` with each orphaned extent ([`Owner::Orphan`]) and whether the last check
    /// found it unused; frees those for which it returns `None`, and records the others'
    /// answer. Returns whether any orphan is left, and whether any answer changed.
    pub(super) fn pass_orphans(
        &mut self,
        mut pass: impl FnMut(Placed, bool) -> Option<bool>,
    ) -> (bool, bool) {
        let (mut left, mut changed) = (false, false);
        let mut c = 0;
        while c < self.chunks.len() {
            let chunk = &mut self.chunks[c];
            let mut i = 0;
            while i < chunk.used.len() {
                let e = chunk.used[i];
                let Owner::Orphan { unused_once } = e.owner else {
                    i += 1;
                    continue;
                };
                let placed = Placed {
                    start: chunk.base.wrapping_add(e.offset),
                    len: e.len,
                    ty: e.ty,
                };
                match pass(placed, unused_once) {
                    None => {
                        chunk.remove(i);
                        changed = true;
                    }
                    Some(unused) => {
                        chunk.used[i].owner = Owner::Orphan {
                            unused_once: unused,
                        };
                        changed |= unused != unused_once;
                        left = true;
                        i += 1;
                    }
                }
            }
            if !self.release_if_empty(c) {
                c += 1;
            }
        }
        (left, changed)
    }

    /// Frees the extent at `start` if `owner` owns it, and its chunk once that is empty.
    pub(super) fn free_owned(&mut self, start: *const u8, owner: Owner) {
        for c in 0..self.chunks.len() {
            if let Some(i) = self.chunks[c].find(start) {
                if self.chunks[c].used[i].owner == owner {
                    self.chunks[c].remove(i);
                    self.release_if_empty(c);
                }
                return;
            }
        }
    }

    /// Frees a range's extent at `start`.
    pub(super) fn free(&mut self, start: *const u8) {
        self.free_owned(start, Owner::Range);
    }

    /// Frees chunk `c` if no extent is left in it; returns whether it did.
    fn release_if_empty(&mut self, c: usize) -> bool {
        if !self.chunks[c].used.is_empty() {
            return false;
        }
        let len = self.chunks.len();
        self.chunks.as_mut_slice()[c..].rotate_left(1);
        // SAFETY: `len - 1 < len`; the chunk moved to the end is dropped by hand below, once.
        unsafe { self.chunks.set_len(len - 1) };
        // SAFETY: The element at `len - 1` is initialised (it was in the vector) and no longer
        // owned by it.
        let chunk = unsafe { self.chunks.as_mut_ptr().add(len - 1).read() };
        // SAFETY: By the invariant `base` is from `execmem_alloc()`, and no extent of it is
        // left: nothing points into it.
        #[cfg(CONFIG_EXECMEM)]
        unsafe {
            bindings::execmem_free(chunk.base.cast())
        };
        #[cfg(not(CONFIG_EXECMEM))]
        let _ = chunk;
        true
    }

    /// Returns what the chunks hold.
    #[cfg(any(CONFIG_DEBUG_FS, CONFIG_ALLOCTAG_KUNIT_TEST))]
    pub(crate) fn usage(&self) -> AreaUsage {
        let mut usage = AreaUsage::default();
        for chunk in self.chunks.iter() {
            usage.chunks += 1;
            usage.mapped += chunk.size;
            usage.used += chunk.used.iter().map(|e| e.len).sum::<usize>();
        }
        usage
    }
}
