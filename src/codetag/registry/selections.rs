// SPDX-License-Identifier: GPL-2.0

//! The selections in force in the registry: each marks the tags of one type that match it, in
//! vmlinux, in every module and among the dynamic tags, including modules loaded and dynamic
//! tags made later, and unmarks them when it ends or their module goes.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)

use super::{DynamicTags, Handle, Range, Registry, TagType};
use crate::codetag::{Codetag, Field, Marker, Matched, Selection};
use crate::rwsem::{c_rwsem, ReadGuard, RwSem, WriteGuard};
use core::{
    ptr,
    sync::atomic::{fence, AtomicUsize, Ordering},
};
use kernel::{alloc::flags::GFP_KERNEL, bindings, prelude::*};

/// A selection in force: its user marks the tags of one type that match it, in vmlinux and in
/// every module, including modules loaded later.
pub(super) struct Selected {
    /// The index of the tag type.
    ty: usize,
    marker: &'static Marker,
    id: u32,
    selection: Selection,
}

/// For the tests: how many matches removals made to hand tags over, the only matching a
/// removal does while memory lasts.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) static REMATCHES: AtomicUsize = AtomicUsize::new(0);

/// The number of selections in force, of every user: a dynamic tag made while there are none
/// needs no lock to be marked.
static IN_FORCE: AtomicUsize = AtomicUsize::new(0);

/// Returns whether any selection is in force.
pub(super) fn any_in_force() -> bool {
    IN_FORCE.load(Ordering::SeqCst) != 0
}

/// The tags a selection is applied to or taken back from.
#[derive(Clone, Copy)]
enum Scope<'a> {
    /// The tags of `ranges` and every dynamic tag in use.
    All(&'a [Range], Option<&'a dyn DynamicTags>),
    /// The tags of one module's range.
    Range(&'a Range),
    /// The dynamic tags of one module.
    DynamicOf(&'a dyn DynamicTags, *mut bindings::module),
    /// One dynamic tag, by its index.
    Dynamic(&'a dyn DynamicTags, usize),
}

/// What a walk over a scope's tags is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// Marking: only the tags that may be marked: not an unloaded module's kept tags
    /// ([`DynamicTags::is_selectable`] for the dynamic ones).
    Mark,
    /// Unmarking: every listed tag.
    Unmark,
}

/// Runs `f` on the code tag of every tag of `scope`, of `tag_size` bytes, with whether the tag
/// may be marked (always, in a [`Walk::Mark`]): not an unloaded module's kept tag.
fn for_each_codetag(
    scope: Scope<'_>,
    tag_size: usize,
    walk: Walk,
    mut f: impl FnMut(&Codetag, bool),
) {
    let (ranges, dynamic) = match scope {
        Scope::All(ranges, dynamic) => (ranges, dynamic),
        Scope::Range(range) => (core::slice::from_ref(range), None),
        Scope::DynamicOf(..) | Scope::Dynamic(..) => (&[][..], None),
    };
    for range in ranges {
        // An unloaded module's kept tags can no longer allocate: no new mark; the marks they
        // had stay until they go (`Registry::reap`), for the records of their live objects.
        if walk == Walk::Mark && range.gone {
            continue;
        }
        for i in 0..range.len(tag_size) {
            // SAFETY: By `Range`'s invariant the range holds `len` tags of the type whose
            // `TagType` contract says they start with a `struct codetag`, alive while listed.
            f(
                unsafe { &*range.start.add(i * tag_size).cast::<Codetag>() },
                !range.gone,
            );
        }
    }
    let (pool, indices) = match (scope, dynamic) {
        (Scope::All(..), Some(pool)) | (Scope::DynamicOf(pool, _), _) => (pool, 0..pool.capacity()),
        (Scope::Dynamic(pool, i), _) => (pool, i..i.saturating_add(1).min(pool.capacity())),
        _ => return,
    };
    for i in indices {
        let selectable = pool.is_selectable(i);
        let listed = match scope {
            Scope::DynamicOf(_, module) => pool.is_listed(i) && pool.module(i) == module,
            _ if walk == Walk::Mark => selectable,
            _ => pool.is_listed(i),
        };
        let tag = pool.tag(i).cast::<Codetag>();
        if listed && !tag.is_null() {
            // SAFETY: A listed tag is an initialised tag of the type (`DynamicTags`), starting with
            // its `struct codetag` (`TagType`), alive while listed: the registry is write-locked.
            f(unsafe { &*tag }, selectable);
        }
    }
}

impl Selected {
    /// Marks the tags of `scope` that the selection matches and that its user has not marked.
    fn apply(&self, scope: Scope<'_>, tag_size: usize) -> Matched {
        let mut matched = Matched::default();
        let field = self.marker.field;
        for_each_codetag(scope, tag_size, Walk::Mark, |ct, _| {
            if !self.selection.matches(ct) {
                return;
            }
            matched.tags += 1;
            if field.get(ct) == 0 && self.mark(ct) {
                matched.marked += 1;
            }
        });
        matched
    }

    /// Marks `ct`, which this selection matches and no selection of its user marked; returns
    /// whether the user had room.
    fn mark(&self, ct: &Codetag) -> bool {
        let Some(value) = (self.marker.mark)(self.id, ct) else {
            return false;
        };
        self.marker.field.set(ct, value.get());
        true
    }
}

/// Takes back the marks of `marker` on the tags of `scope`: all of them, or with `owner` those
/// of that selection.
fn unmark(marker: &Marker, scope: Scope<'_>, tag_size: usize, owner: Option<u32>) {
    let field: Field = marker.field;
    let mut unmarked = false;
    for_each_codetag(scope, tag_size, Walk::Unmark, |ct, _| {
        let value = field.get(ct);
        if value != 0 && owner.map_or(true, |id| (marker.owner)(value) == id) {
            field.set(ct, 0);
            (marker.unmark)(value);
            unmarked = true;
        }
    });
    if unmarked {
        (marker.flush)();
    }
}

/// What [`Registry::take_back`] leaves for [`Registry::hand_over`].
pub(crate) struct TakenBack {
    /// The index of the selection's tag type.
    ty: usize,
    /// A mark was taken back: the user's flush is due.
    pub(crate) unmarked: bool,
    /// The selectable tags the selection had marked; `None` where the list could not be
    /// allocated.
    freed: Option<KVec<*const Codetag>>,
}

/// Held for writing by a user that flushes outside the registry's lock, from before
/// [`Registry::take_back`] to after [`Registry::hand_over`]; for reading by whatever may drop
/// listed tags or free their memory: module unload and the reaper. So while a flush runs
/// unlocked, every tag stays where it was: a record that the flush, or an allocator hook,
/// finds in the pool still points to a live tag, and the hand-over's list to listed ones.
/// Taken before the registry's lock, never after.
// SAFETY: `alloctag_codetag_flush_lock` is defined with `DECLARE_RWSEM()` for this alone.
static FLUSHING: RwSem<()> = unsafe { c_rwsem!(alloctag_codetag_flush_lock, ()) };

/// Holds off module unload and the reaper while a flush runs outside the registry's lock; may
/// sleep.
#[cfg_attr(not(CONFIG_ALLOCTAG_CAPTURE), allow(dead_code))]
pub(crate) fn flushing() -> WriteGuard<'static, ()> {
    FLUSHING.write()
}

/// Returns whether module unload and the reaper would wait for a flush now; for the tests.
#[cfg(all(CONFIG_ALLOCTAG_CAPTURE, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) fn tags_held() -> bool {
    FLUSHING.try_read().is_none()
}

/// Waits for a flush running outside the registry's lock, and holds the next off; before the
/// registry's lock is taken to drop tags. May sleep.
pub(super) fn no_flush() -> ReadGuard<'static, ()> {
    FLUSHING.read()
}

/// Removes and returns the element at `i`, keeping the order of the others.
fn remove_at<T>(v: &mut KVec<T>, i: usize) -> T {
    let len = v.len();
    v.as_mut_slice()[i..].rotate_left(1);
    // SAFETY: `i < len` (the slice above would have panicked otherwise), so `len - 1` is in
    // bounds and initialised; `set_len` then gives up ownership of it to `removed`.
    let removed = unsafe { core::ptr::read(v.as_ptr().add(len - 1)) };
    // SAFETY: The last element was moved out above.
    unsafe { v.set_len(len - 1) };
    removed
}

/// Marks the matching tags of a module just listed at `range`, of the type at `index`.
pub(super) fn module_loaded(selections: &[Selected], index: usize, range: &Range, tag_size: usize) {
    for sel in selections.iter().filter(|s| s.ty == index) {
        sel.apply(Scope::Range(range), tag_size);
    }
}

/// Takes back every mark on the tags of a module going away, at `range`.
pub(super) fn module_going(selections: &[Selected], index: usize, range: &Range, tag_size: usize) {
    for sel in selections.iter().filter(|s| s.ty == index) {
        unmark(sel.marker, Scope::Range(range), tag_size, None);
    }
}

/// Takes back every mark on the dynamic tags of a module going away, before the pool drops
/// or keeps them: a kept tag is no longer found, so no selection should hold it.
pub(super) fn dynamic_module_going(
    selections: &[Selected],
    index: usize,
    pool: &dyn DynamicTags,
    module: *mut bindings::module,
    tag_size: usize,
) {
    for sel in selections.iter().filter(|s| s.ty == index) {
        unmark(sel.marker, Scope::DynamicOf(pool, module), tag_size, None);
    }
}

/// Marks each dynamic tag made since the last call with the selections in force of the type at
/// `index`, as a module's tags are marked when it loads.
pub(super) fn dynamic_made(
    selections: &[Selected],
    index: usize,
    pool: &dyn DynamicTags,
    tag_size: usize,
) {
    for i in 0..pool.capacity() {
        // Taken one tag at a time: a tag made meanwhile keeps its flag for the next call. Only
        // from a tag that may be marked: one whose maker has set the flag but not yet published
        // it keeps the flag for the call that maker makes after publishing, which a walk now
        // would have emptied while marking nothing.
        if !pool.is_selectable(i) || !pool.take_unselected(i) {
            continue;
        }
        for sel in selections.iter().filter(|s| s.ty == index) {
            sel.apply(Scope::Dynamic(pool, i), tag_size);
        }
    }
}

impl Registry {
    /// Puts `selection` in force for the tags of type `T`: `marker` marks the tags it matches,
    /// now and in modules loaded later, until [`Registry::deselect`]. Fails, changing
    /// nothing, when memory runs out.
    pub(crate) fn select<T: TagType>(
        &mut self,
        handle: Handle<T>,
        marker: &'static Marker,
        id: u32,
        selection: Selection,
    ) -> Result<Matched> {
        if handle.registry != self.id || handle.index >= self.types.len() {
            return Err(EINVAL);
        }
        let ty = &self.types[handle.index];
        let sel = Selected {
            ty: handle.index,
            marker,
            id,
            selection,
        };
        self.selections.reserve(1, GFP_KERNEL)?;
        // Counted before the walk, with a fence that pairs with `made_dynamic()`'s: a dynamic
        // tag made meanwhile is either listed for the walk or sees the count and marks itself.
        IN_FORCE.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let matched = sel.apply(Scope::All(&ty.ranges, ty.dynamic), ty.tag_size);
        // Cannot fail: room was reserved above.
        self.selections.push(sel, GFP_KERNEL)?;
        Ok(matched)
    }

    /// Ends the selection `id` of `marker`: its marks are taken back, and each tag it had
    /// marked goes to the first of the user's other selections that matches it, as if that one
    /// had been put in force after the removal (the first that matches with room). Returns
    /// whether it was in force. The user's flush runs under the write lock: a user whose flush
    /// is long runs [`Registry::take_back`], its flush outside the lock, then
    /// [`Registry::hand_over`].
    pub(crate) fn deselect(&mut self, marker: &'static Marker, id: u32) -> bool {
        let Some(taken) = self.take_back(marker, id) else {
            return false;
        };
        if taken.unmarked {
            (marker.flush)();
        }
        // SAFETY: The registry stayed locked for writing since `take_back`.
        unsafe { self.hand_over(marker, taken) };
        true
    }

    /// Ends the selection `id` of `marker` and takes its marks back, without the user's flush;
    /// returns what [`Registry::hand_over`] needs, `None` if it was not in force. Between the
    /// two the user flushes ([`Marker::flush`]) outside the registry's lock, holding
    /// [`flushing`] from before this call to after the hand-over: no listed tag goes meanwhile.
    ///
    /// Only the tags the selection had marked are matched again, so the registry's write lock
    /// is held for two reads of every tag's mark here plus, in the hand-over, one more and, for
    /// at most the user's slots, a match against each other selection
    /// ([`super::super::glob::Glob`]: linear in the name), whatever the number of tags and
    /// selections. Every mark is taken back and the user's flush run before any tag is handed
    /// over, so that nothing the user kept for the removed selection (capture's records)
    /// passes to another. Tags that found no room when another selection was applied stay
    /// unmarked (the user counted them) until it is applied again. When the list of tags to
    /// hand over cannot be allocated, every other selection is applied again over every tag
    /// instead.
    pub(crate) fn take_back(&mut self, marker: &'static Marker, id: u32) -> Option<TakenBack> {
        let i = self
            .selections
            .iter()
            .position(|s| core::ptr::eq(s.marker, marker) && s.id == id)?;
        let removed = remove_at(&mut self.selections, i);
        IN_FORCE.fetch_sub(1, Ordering::SeqCst);
        let mut taken = TakenBack {
            ty: removed.ty,
            unmarked: false,
            freed: None,
        };
        let Some(ty) = self.types.get(removed.ty) else {
            return Some(taken);
        };
        let scope = Scope::All(&ty.ranges, ty.dynamic);
        let field = marker.field;
        let owned = |ct: &Codetag| {
            let value = field.get(ct);
            value != 0 && (marker.owner)(value) == id
        };
        // Room for the tags to hand over, made before any mark changes: counted first.
        let mut count = 0;
        for_each_codetag(scope, ty.tag_size, Walk::Unmark, |ct, selectable| {
            count += usize::from(selectable && owned(ct));
        });
        let mut freed = KVec::<*const Codetag>::with_capacity(count, GFP_KERNEL).ok();
        for_each_codetag(scope, ty.tag_size, Walk::Unmark, |ct, selectable| {
            let value = field.get(ct);
            if value == 0 || (marker.owner)(value) != id {
                return;
            }
            field.set(ct, 0);
            (marker.unmark)(value);
            taken.unmarked = true;
            if let (true, Some(freed)) = (selectable, freed.as_mut()) {
                // Cannot fail: room for every selectable tag marked by `id` was made above,
                // and no mark of `id` was made since (the registry is write-locked).
                let _ = freed.push(ptr::from_ref(ct), GFP_KERNEL);
            }
        });
        taken.freed = freed;
        Some(taken)
    }

    /// Hands the tags that [`Registry::take_back`] unmarked to the user's other selections,
    /// once the user's flush is done.
    ///
    /// # Safety
    ///
    /// `taken` comes from `take_back` on this registry with `marker`, and the registry stayed
    /// locked for writing since, or it is the kernel's registry and the caller held
    /// [`flushing`] from before that call: every tag `taken` lists is still listed.
    pub(crate) unsafe fn hand_over(&mut self, marker: &'static Marker, taken: TakenBack) {
        let Some(ty) = self.types.get(taken.ty) else {
            return;
        };
        let others = self
            .selections
            .iter()
            .filter(|s| s.ty == taken.ty && core::ptr::eq(s.marker, marker));
        match taken.freed {
            Some(freed) => {
                for &ct in freed.iter() {
                    // SAFETY: Each was a tag listed in the registry when taken back, and still
                    // is (the caller's guarantee): nothing dropped tags meanwhile, module
                    // unload and the reaper waiting for `flushing`.
                    let ct = unsafe { &*ct };
                    // Marked meanwhile (a dynamic tag's maker applies the selections in force
                    // to tags it made): the first that matched it has it.
                    if marker.field.get(ct) != 0 {
                        continue;
                    }
                    // The first that matches and has room, as applying them in order would.
                    let _ = others.clone().any(|s| {
                        #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
                        REMATCHES.fetch_add(1, Ordering::Relaxed);
                        s.selection.matches(ct) && s.mark(ct)
                    });
                }
            }
            // Out of memory for the list: every other selection is applied again, over every
            // tag, as before the list existed.
            None => {
                for sel in others {
                    sel.apply(Scope::All(&ty.ranges, ty.dynamic), ty.tag_size);
                }
            }
        }
    }

    /// Returns whether `marker` has a selection in force that reads as `selection`.
    pub(crate) fn in_force(&self, marker: &'static Marker, selection: &Selection) -> bool {
        self.selections
            .iter()
            .any(|s| core::ptr::eq(s.marker, marker) && s.selection.same_as(selection))
    }

    /// Returns the selection `id` of `marker`, if in force.
    pub(crate) fn selection(&self, marker: &'static Marker, id: u32) -> Option<&Selection> {
        self.selections
            .iter()
            .find(|s| core::ptr::eq(s.marker, marker) && s.id == id)
            .map(|s| &s.selection)
    }
}
