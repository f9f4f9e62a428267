// SPDX-License-Identifier: GPL-2.0

//! Walking the tags of one type: resumable cursors over vmlinux's, each module's and the
//! dynamic tags, and a module's tags as its type sees them at unload.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)

use super::{Codetag, DynamicTags, Handle, Range, Registry, TagType, DYNAMIC_ID};
use core::{marker::PhantomData, mem::size_of};
use kernel::str::CStr;

/// A position in the tags of one type: a module id and an index in that module's range.
///
/// A cursor stays meaningful when the registry changes: if its module went away it stands at
/// the start of the next module loaded after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    module_id: u64,
    index: usize,
}

impl Cursor {
    /// The position of the first tag.
    pub(crate) const START: Self = Self {
        module_id: 0,
        index: 0,
    };
}

/// Where a reader of the tags of one type stands between two reads, as seq_file readers of
/// `/proc/allocinfo` need: the position of the tag it stands on in the listing, where that
/// tag is, and where the one after it is.
///
/// Both cursors are kept because either may be asked for next (seq_file shows a record again
/// when its buffer overflowed). The one after is taken right after the tag was found, so that
/// when the tag's module goes away between two reads the next read starts at the first tag of
/// the next module, with none skipped: each tag of a module loaded for the whole reading is
/// returned exactly once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadPosition {
    /// The position in the listing of the tag at `at`; -1 before the first.
    pos: i64,
    at: Cursor,
    after: Cursor,
}

impl ReadPosition {
    /// Before the first tag.
    pub(crate) const START: Self = Self {
        pos: -1,
        at: Cursor::START,
        after: Cursor::START,
    };

    /// Returns the position in the listing of the tag it stands on; -1 before the first.
    pub(crate) fn pos(&self) -> i64 {
        self.pos
    }

    /// Returns the tag at position `pos` of the listing and stands on it, or `None` past the
    /// end. The same position and the next one resume from the stored cursors; any other, as
    /// after a seek, walks from the first tag.
    pub(crate) fn seek<'a, T: TagType>(
        &mut self,
        registry: &'a Registry,
        handle: Handle<T>,
        pos: i64,
    ) -> Option<&'a T::Tag> {
        let mut tags = if pos == self.pos {
            registry.tags(handle, self.at)
        } else if Some(pos) == self.pos.checked_add(1) {
            registry.tags(handle, self.after)
        } else {
            let mut tags = registry.tags(handle, Cursor::START);
            for _ in 0..pos {
                tags.next()?;
            }
            tags
        };
        self.pos = pos;
        self.at = tags.cursor();
        let tag = tags.next();
        self.after = tags.cursor();
        tag
    }
}

/// An iterator over the tags of one type.
pub(crate) struct Tags<'a, T: TagType> {
    ranges: &'a [Range],
    /// Listed after the ranges.
    dynamic: Option<&'a dyn DynamicTags>,
    /// The range of the next tag; `ranges.len()` in the dynamic tags and at the end.
    range: usize,
    /// The index of the next tag in its range, or in the dynamic tags' pool.
    index: usize,
    /// Whether an unloaded module's tags that are no longer used are left out, as listings
    /// leave them; a type's own hooks see every tag ([`ModuleTags::tags`]).
    skip_dropped: bool,
    _type: PhantomData<T>,
}

impl<'a, T: TagType> Tags<'a, T> {
    pub(super) fn new(
        ranges: &'a [Range],
        dynamic: Option<&'a dyn DynamicTags>,
        from: Cursor,
    ) -> Self {
        let range = ranges.partition_point(|r| r.id < from.module_id);
        let index = match ranges.get(range) {
            Some(r) if r.id == from.module_id => from.index,
            // Past the ranges: in the dynamic tags, or at the end.
            None if from.module_id == DYNAMIC_ID => from.index,
            None if from.module_id > DYNAMIC_ID => usize::MAX,
            _ => 0,
        };
        Self {
            ranges,
            dynamic,
            range,
            index,
            skip_dropped: true,
            _type: PhantomData,
        }
    }

    /// Returns the position of the tag that `next()` returns next.
    pub(crate) fn cursor(&self) -> Cursor {
        match (self.ranges.get(self.range), self.dynamic) {
            (Some(r), _) => Cursor {
                module_id: r.id,
                index: self.index,
            },
            (None, Some(d)) if self.index < d.capacity() => Cursor {
                module_id: DYNAMIC_ID,
                index: self.index,
            },
            _ => Cursor {
                module_id: u64::MAX,
                index: 0,
            },
        }
    }
}

impl<'a, T: TagType> Iterator for Tags<'a, T> {
    type Item = &'a T::Tag;

    fn next(&mut self) -> Option<&'a T::Tag> {
        let size = size_of::<T::Tag>();
        while let Some(r) = self.ranges.get(self.range) {
            if self.index < r.len(size) {
                let tag = r
                    .start
                    .wrapping_add(self.index.wrapping_mul(size))
                    .cast::<T::Tag>();
                self.index += 1;
                // An unloaded module's tag that is no longer used is not listed.
                // SAFETY: By `TagType`'s contract a tag starts with its `struct codetag`; the
                // tag is alive as below.
                if self.skip_dropped && r.gone && unsafe { &*tag.cast::<Codetag>() }.dropped() {
                    continue;
                }
                // SAFETY: By `Range`'s invariant the range holds `len` tags of `T` (the type
                // of this registration), alive while the registry, borrowed for `'a`, holds it.
                return Some(unsafe { &*tag });
            }
            self.range += 1;
            self.index = 0;
        }
        let dynamic = self.dynamic?;
        while self.index < dynamic.capacity() {
            let i = self.index;
            self.index += 1;
            let tag = dynamic.tag(i).cast::<T::Tag>();
            if dynamic.is_listed(i) && !tag.is_null() {
                // SAFETY: By `DynamicTags`' contract a listed tag is a tag of `T`, which stays
                // while the registry, borrowed for `'a`, is not locked for writing.
                return Some(unsafe { &*tag });
            }
        }
        None
    }
}

/// The tags of one module of type `T`, as [`TagType::module_unload`] sees them.
pub(crate) struct ModuleTags<'a, T: TagType> {
    range: &'a Range,
    _type: PhantomData<T>,
}

impl<'a, T: TagType> ModuleTags<'a, T> {
    pub(super) fn new(range: &'a Range) -> Self {
        Self {
            range,
            _type: PhantomData,
        }
    }

    /// Returns the module's name.
    pub(crate) fn name(&self) -> &CStr {
        self.range.name.as_cstr()
    }

    /// Returns all the module's tags as a slice, those no longer listed included.
    pub(crate) fn slice(&self) -> &'a [T::Tag] {
        let len = self.range.len(size_of::<T::Tag>());
        // SAFETY: By `Range`'s invariant the range holds `len` tags of `T` (the type of this
        // registration), alive while the range is borrowed, or across the unload call that made
        // this `ModuleTags`.
        unsafe { core::slice::from_raw_parts(self.range.start.cast(), len) }
    }

    /// Returns all the module's tags, those no longer listed included: a type's hooks must see
    /// every tag (to read it once more before its memory goes, to free what it gave it).
    pub(crate) fn tags(&self) -> Tags<'a, T> {
        let mut tags = Tags::new(
            core::slice::from_ref(self.range),
            None,
            Cursor {
                module_id: self.range.id,
                index: 0,
            },
        );
        tags.skip_dropped = false;
        tags
    }
}
