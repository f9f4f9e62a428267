// SPDX-License-Identifier: GPL-2.0

//! The registry of code-tag types and of the vmlinux and module ranges of their tags.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! Here the registry itself; walking its tags in [`cursor`], the module loader's side in
//! [`module`], the tags kept after their module and the reaper that frees them in [`reap`], the
//! memory of modules' tags in [`area`], the names an unloaded module's tags keep
//! in [`names`], the selections in force in `selections`, the tests' seams in `testing`.

use super::Codetag;
use crate::rwsem::{c_rwsem, ReadGuard, RwSem, WriteGuard};
use core::{
    marker::PhantomData,
    mem::size_of,
    sync::atomic::{AtomicU64, AtomicUsize, Ordering},
};
use kernel::{alloc::flags::GFP_KERNEL, bindings, prelude::*, str::CStr};

mod area;
mod cursor;
mod index;
mod module;
mod names;
mod reader;
mod reap;
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
mod selections;
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
mod testing;

#[cfg(any(CONFIG_DEBUG_FS, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) use area::AreaUsage;
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) use area::CHUNK as AREA_CHUNK;
pub(crate) use cursor::{Cursor, ModuleTags, ReadPosition, Tags};
pub(crate) use index::{name_tags, TagIndex, Usage as IndexUsage, FIRST as FIRST_INDEX};
use module::find_range;
#[cfg(CONFIG_MODULES)]
pub(crate) use module::section_tags;
pub(crate) use names::name as module_name;
pub(crate) use reader::Reader;
#[cfg(all(CONFIG_ALLOCTAG_SELECTION, CONFIG_ALLOCTAG_CAPTURE))]
pub(crate) use selections::flushing;
#[cfg(all(CONFIG_ALLOCTAG_CAPTURE, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) use selections::tags_held;
#[cfg(all(CONFIG_ALLOCTAG_SELECTION, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) use selections::REMATCHES;

/// A type of code tag, bound to the linker section that holds its tags.
///
/// # Safety
///
/// [`TagType::Tag`] must be laid out as the C struct of the tags in [`TagType::SECTION`], whose
/// first field is a `struct codetag`, and the section must be an array of them.
pub(crate) unsafe trait TagType: Sized + 'static {
    /// The tag struct.
    type Tag: Sync + 'static;

    /// The linker section holding the tags.
    const SECTION: &'static CStr;

    /// Called when a module goes away (`report`), and then while its tags are kept for it, with
    /// the registry locked for writing; changes nothing but the log. Returns whether the
    /// module's tags are unused, so that its memory may be freed: `false` keeps it, and its
    /// tags stay listed, marked unloaded, until later calls find them unused
    /// ([`Registry::reap`]).
    fn module_unload(_module: ModuleTags<'_, Self>, _report: bool) -> bool {
        true
    }

    /// Called once a module's tags go for good, before its memory may be freed, with the
    /// registry locked for writing: the type frees what it gave them.
    fn module_free(_module: ModuleTags<'_, Self>) {}

    /// Called when the loader gives up the tags of a module whose load failed, with the
    /// registry locked for writing, before the module's memory goes: the type drops what of
    /// the tags points into that memory, which the tags outlive (until [`Registry::reap`]).
    fn module_abandoned(_module: ModuleTags<'_, Self>) {}

    /// Returns the index that names this type's tags ([`TagIndex`]), if it has one: each
    /// module's tags then get a block of indices while they load, kept while the module's
    /// memory is.
    fn index() -> Option<&'static TagIndex> {
        None
    }

    /// Called when a module loads whose tags got no index (the index is full), with the
    /// registry locked for writing.
    fn not_indexed(_module: ModuleTags<'_, Self>) {}

    /// Called when a module's tags are listed, with the registry locked for writing.
    fn module_load(_module: ModuleTags<'_, Self>) {}

    /// Returns whether `tag`, of a module unloaded while its tags were in use, still is: one
    /// that is not is no longer listed. With the registry locked for writing.
    fn in_use(_tag: &Self::Tag) -> bool {
        true
    }
}

/// The code tags of one module (or vmlinux) in one section.
///
/// # Invariants
///
/// `start..stop` is a whole number of tags of the type's `tag_size`, in memory that lives while
/// the range is in the registry: vmlinux's, [`Areas`]' (`area`), or, for a range without an
/// area, the module's, which the loader keeps while the range is listed. Once `gone`, `module`
/// is null and the tags' names are `names`' copies, or, where the copy failed or the range has
/// no area, in the module's memory, which the loader then keeps for good.
#[derive(Clone, Copy)]
struct Range {
    /// Ids grow with each module load and are never reused; vmlinux is 0.
    id: u64,
    /// The module, or null for vmlinux and once the module went.
    module: *mut bindings::module,
    /// The module's name, which outlives it.
    name: names::ModuleName,
    start: *const u8,
    stop: *const u8,
    /// The tags are in an extent of [`Areas`], freed when the range goes.
    area: bool,
    /// The copies of the tags' names made when the module went (null before, or where none
    /// were needed), freed when the range goes.
    names: names::Names,
    /// The module was unloaded, and its tags kept for their live allocations.
    gone: bool,
    /// [`Registry::reap`]'s last pass found the module's kept tags unused: the next that does
    /// drops them.
    unused_once: bool,
}

impl Range {
    /// Returns the range's tags as code tags.
    fn codetags(&self, tag_size: usize) -> impl Iterator<Item = &Codetag> + Clone + '_ {
        (0..self.len(tag_size)).map(move |i| {
            // SAFETY: By the invariant the range holds `len` tags of `tag_size` bytes, each
            // starting with a `struct codetag`, which live while the range is borrowed.
            unsafe { &*self.start.wrapping_add(i * tag_size).cast::<Codetag>() }
        })
    }

    /// Returns the number of tags of `tag_size` bytes in the range.
    fn len(&self, tag_size: usize) -> usize {
        // `checked_div`: a tag type's size is never 0, and no division may panic.
        (self.stop as usize - self.start as usize)
            .checked_div(tag_size)
            .unwrap_or(0)
    }
}

/// Tags of one type made at run time, in a pool of `capacity` tags at `start`, not all in use:
/// the registry lists the ones in use after every module's tags.
///
/// # Safety
///
/// For each index below `capacity` that [`DynamicTags::is_listed`] says is listed, `tag` must
/// return the address of a tag of the type the pool is added for, initialised, which lives
/// while it is listed; a tag stops being listed only under the registry's write lock
/// ([`DynamicTags::module_unload`]).
pub(crate) unsafe trait DynamicTags: Sync {
    /// Returns the address of the tag at `index`, or null where the pool has none.
    fn tag(&self, index: usize) -> *const u8;
    /// Returns the most tags the pool holds: their indices are below it.
    fn capacity(&self) -> usize;
    /// Returns whether the tag at `index` is in use.
    fn is_listed(&self, index: usize) -> bool;
    /// Returns the number of tags in use.
    fn count(&self) -> usize;
    /// Returns the module of the tag at `index`, null for vmlinux or once its module went.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn module(&self, index: usize) -> *mut bindings::module;
    /// Returns whether the tag at `index` may be marked by a selection: it is listed and its
    /// call site can still allocate. A tag kept after its module went (listed for its live
    /// allocations) may not: the pool frees it when its counters read zero, without the
    /// registry, so it must carry no mark.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn is_selectable(&self, index: usize) -> bool;
    /// Returns whether the tag at `index` was made since the last call for it, and clears that:
    /// the selections in force have not marked it yet ([`made_dynamic`]).
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn take_unselected(&self, index: usize) -> bool;
    /// Returns a number that changes when a tag is made or dropped.
    fn generation(&self) -> u64;
    /// Drops the tags of `module`, which is going away, or keeps them while their allocations
    /// live; frees kept tags whose allocations are all gone (all that a null `module` does).
    /// Called with the registry locked for writing. A kept tag is freed at the second call in
    /// a row that finds it unused, as [`Registry::reap`] frees a module.
    fn module_unload(&self, module: *mut bindings::module) -> KeptDynamic;
}

/// What [`DynamicTags::module_unload`] left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct KeptDynamic {
    /// Tags are still kept for unloaded modules.
    pub(crate) kept: bool,
    /// A kept tag was found unused, or freed.
    pub(crate) changed: bool,
}

/// The module id of the dynamic tags in a [`Cursor`]: after every module's.
const DYNAMIC_ID: u64 = u64::MAX - 1;

/// A registered tag type.
struct TypeEntry {
    section: &'static CStr,
    tag_size: usize,
    /// [`TagType::module_unload`] of the type.
    unload: fn(&Range, bool) -> bool,
    /// [`TagType::module_free`] of the type.
    free: fn(&Range),
    /// [`TagType::module_abandoned`] of the type.
    abandoned: fn(&Range),
    /// [`TagType::index`] of the type.
    index: Option<&'static TagIndex>,
    /// [`TagType::not_indexed`] of the type.
    not_indexed: fn(&Range),
    /// [`TagType::module_load`] of the type.
    loaded: fn(&Range),
    /// Marks the tags of a kept range that [`TagType::in_use`] finds unused; returns whether
    /// it marked any.
    drop_unused: fn(&Range) -> bool,
    /// Ordered by id.
    ranges: KVec<Range>,
    /// Changes whenever a module's range is added or dropped: readers that walk the tags in
    /// several steps compare it before and after (the allocinfo ioctl's content id).
    generation: u64,
    /// Tags made at run time, listed after the modules' ranges.
    dynamic: Option<&'static dyn DynamicTags>,
}

/// The registered tag types, their ranges, and the selections in force.
pub(crate) struct Registry {
    /// Tells this registry's handles from another's; 0 until the first type registers.
    id: u64,
    types: KVec<TypeEntry>,
    next_module_id: u64,
    /// The memory of modules' tags.
    areas: area::Areas,
    /// In the order they were made: an earlier selection keeps the tags it marked.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    selections: KVec<selections::Selected>,
}

/// The last registry id given out.
static LAST_REGISTRY_ID: AtomicU64 = AtomicU64::new(0);

// SAFETY: The raw pointers are to module and vmlinux memory that stays while their ranges are in
// the registry; the registry's lock serializes changes.
unsafe impl Send for Registry {}
// SAFETY: As above; shared references only read.
unsafe impl Sync for Registry {}

/// A registered tag type, valid with the registry that registered it: another registry
/// lists no tags for it.
pub(crate) struct Handle<T: TagType> {
    registry: u64,
    index: usize,
    _type: PhantomData<T>,
}

impl<T: TagType> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: TagType> Copy for Handle<T> {}

// SAFETY: `alloctag_codetag_lock` is defined with `DECLARE_RWSEM()` for this registry alone.
static REGISTRY: RwSem<Registry> = unsafe { c_rwsem!(alloctag_codetag_lock, Registry::new()) };

/// A tag type's registration in the kernel's registry, made once at boot.
pub(crate) struct Registration<T: TagType> {
    /// The handle's index, or `usize::MAX` before registration.
    index: AtomicUsize,
    /// The kernel registry's id, stored before `index`.
    registry: AtomicU64,
    _type: PhantomData<T>,
}

impl<T: TagType> Registration<T> {
    /// Makes an empty registration.
    pub(crate) const fn new() -> Self {
        Self {
            index: AtomicUsize::new(usize::MAX),
            registry: AtomicU64::new(0),
            _type: PhantomData,
        }
    }

    /// Registers `T` with vmlinux's tags.
    pub(crate) fn register(&self) -> Result {
        let handle = REGISTRY.write().register::<T>()?;
        self.registry.store(handle.registry, Ordering::Relaxed);
        self.index.store(handle.index, Ordering::Release);
        Ok(())
    }

    /// Lists `tags`, made at run time, after the sections' tags of `T`.
    ///
    /// # Safety
    ///
    /// `tags` must hold tags of `T`'s type.
    pub(crate) unsafe fn add_dynamic(&self, tags: &'static dyn DynamicTags) -> Result {
        let handle = self.handle().ok_or(EINVAL)?;
        // SAFETY: The caller guarantees `tags`.
        unsafe { REGISTRY.write().add_dynamic(handle, tags) }
    }

    /// Returns the handle, once registered.
    pub(crate) fn handle(&self) -> Option<Handle<T>> {
        let index = self.index.load(Ordering::Acquire);
        (index != usize::MAX).then(|| Handle {
            registry: self.registry.load(Ordering::Relaxed),
            index,
            _type: PhantomData,
        })
    }
}

/// Locks the registry for reading; may sleep.
pub(crate) fn read() -> ReadGuard<'static, Registry> {
    REGISTRY.read()
}

/// Locks the registry for writing; may sleep. Selections change under it, and the first
/// switch-on gives the tags counters under it (src/alloc_tag/counters.rs).
pub(crate) fn write() -> WriteGuard<'static, Registry> {
    REGISTRY.write()
}

/// Has the selections in force mark the dynamic tags made since the last call, as they mark a
/// module's tags when it loads. Called after a dynamic tag is made, in any task context: never
/// sleeps. Returns `false` when the registry was locked, and so nothing was done.
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
pub(crate) fn made_dynamic() -> bool {
    // Pairs with the fence in `Registry::select`: either the selection sees the new tag listed,
    // or this sees the selection counted.
    core::sync::atomic::fence(Ordering::SeqCst);
    if !selections::any_in_force() {
        // A tag made with none in force needs no mark; its flag stays set, and a later call
        // applies the selections in force again, which marks nothing twice.
        return true;
    }
    let Some(registry) = REGISTRY.try_write() else {
        return false;
    };
    registry.made_dynamic();
    true
}

/// As [`made_dynamic`], but waits for the lock; may sleep.
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
pub(crate) fn made_dynamic_wait() {
    REGISTRY.write().made_dynamic();
}

/// Locks the registry for writing if that needs no wait; for the tests, which check that a
/// module load could take it meanwhile.
#[cfg(all(CONFIG_ALLOCTAG_SELECTION, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) fn try_write() -> Option<WriteGuard<'static, Registry>> {
    REGISTRY.try_write()
}

/// Locks the registry for reading if that needs no wait, as atomic context requires.
pub(crate) fn try_read() -> Option<ReadGuard<'static, Registry>> {
    REGISTRY.try_read()
}

impl Registry {
    /// Makes an empty registry; the kernel's is reached through [`read`] and [`Registration`].
    pub(crate) const fn new() -> Self {
        Self {
            id: 0,
            types: KVec::new(),
            next_module_id: 1,
            areas: area::Areas::new(),
            #[cfg(CONFIG_ALLOCTAG_SELECTION)]
            selections: KVec::new(),
        }
    }

    /// Registers the tag type `T` with vmlinux's tags.
    pub(crate) fn register<T: TagType>(&mut self) -> Result<Handle<T>> {
        let tag_size = size_of::<T::Tag>();
        let mut ranges = KVec::new();
        // SAFETY: Null names vmlinux.
        let vmlinux = unsafe { find_range(core::ptr::null_mut(), T::SECTION, tag_size) }?;
        if let Some((start, stop)) = vmlinux {
            // INVARIANT: vmlinux's tags live forever; `find_range` checked the size.
            ranges.push(
                Range {
                    id: 0,
                    module: core::ptr::null_mut(),
                    // SAFETY: Null is vmlinux.
                    name: unsafe { names::ModuleName::of(core::ptr::null_mut()) },
                    start,
                    stop,
                    area: false,
                    names: names::Names::NONE,
                    gone: false,
                    unused_once: false,
                },
                GFP_KERNEL,
            )?;
        }
        self.types.push(
            TypeEntry {
                section: T::SECTION,
                tag_size,
                unload: |range, report| T::module_unload(ModuleTags::new(range), report),
                free: |range| T::module_free(ModuleTags::new(range)),
                abandoned: |range| T::module_abandoned(ModuleTags::new(range)),
                index: T::index(),
                not_indexed: |range| T::not_indexed(ModuleTags::new(range)),
                loaded: |range| T::module_load(ModuleTags::new(range)),
                drop_unused: |range| {
                    let mut dropped = false;
                    for tag in ModuleTags::<T>::new(range).tags() {
                        if !T::in_use(tag) {
                            // SAFETY: By `TagType`'s contract a tag starts with its
                            // `struct codetag`.
                            let ct = unsafe { &*core::ptr::from_ref(tag).cast::<Codetag>() };
                            dropped |= ct.mark_dropped();
                        }
                    }
                    dropped
                },
                ranges,
                generation: 0,
                dynamic: None,
            },
            GFP_KERNEL,
        )?;
        if self.id == 0 {
            self.id = LAST_REGISTRY_ID.fetch_add(1, Ordering::Relaxed) + 1;
        }
        Ok(Handle {
            registry: self.id,
            index: self.types.len() - 1,
            _type: PhantomData,
        })
    }

    /// Lists `tags` after the sections' tags of `handle`'s type.
    ///
    /// # Safety
    ///
    /// `tags` must hold tags of `T`'s type.
    unsafe fn add_dynamic<T: TagType>(
        &mut self,
        handle: Handle<T>,
        tags: &'static dyn DynamicTags,
    ) -> Result {
        if handle.registry != self.id {
            return Err(EINVAL);
        }
        let ty = self.types.get_mut(handle.index).ok_or(EINVAL)?;
        ty.dynamic = Some(tags);
        ty.generation = ty.generation.wrapping_add(1);
        Ok(())
    }

    /// Returns the entry of `handle`'s type, if it was registered here.
    fn entry<T: TagType>(&self, handle: Handle<T>) -> Option<&TypeEntry> {
        (handle.registry == self.id)
            .then(|| self.types.get(handle.index))
            .flatten()
    }

    /// Marks the dynamic tags made since the last call with the selections in force.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    fn made_dynamic(&self) {
        for (index, ty) in self.types.iter().enumerate() {
            if let Some(dynamic) = ty.dynamic {
                selections::dynamic_made(&self.selections, index, dynamic, ty.tag_size);
            }
        }
    }

    /// Returns the tags of type `T` from `from` on, in vmlinux then in each module in the order
    /// of loading.
    pub(crate) fn tags<T: TagType>(&self, handle: Handle<T>, from: Cursor) -> Tags<'_, T> {
        let (ranges, dynamic) = self
            .entry(handle)
            .map_or((&[][..], None), |ty| (ty.ranges.as_slice(), ty.dynamic));
        Tags::new(ranges, dynamic, from)
    }

    /// Returns the number of tags of type `T`.
    pub(crate) fn count<T: TagType>(&self, handle: Handle<T>) -> usize {
        self.entry(handle).map_or(0, |ty| {
            ty.ranges
                .iter()
                .map(|r| {
                    if r.gone {
                        r.codetags(ty.tag_size).filter(|ct| !ct.dropped()).count()
                    } else {
                        r.len(ty.tag_size)
                    }
                })
                .sum::<usize>()
                + ty.dynamic.map_or(0, |d| d.count())
        })
    }

    /// Returns the generation of the tags of type `T`, which changes whenever a module adds or
    /// drops tags of the type: equal values before and after a walk mean that the walk saw one
    /// set of modules.
    pub(crate) fn generation<T: TagType>(&self, handle: Handle<T>) -> u64 {
        self.entry(handle).map_or(0, |ty| {
            ty.generation
                .wrapping_add(ty.dynamic.map_or(0, |d| d.generation()))
        })
    }
}
