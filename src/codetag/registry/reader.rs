// SPDX-License-Identifier: GPL-2.0

//! A reader of the kernel registry's tags of one type across the `read()`s of one open file,
//! for files shown a tag per seq_file item (`/proc/allocinfo`, `/proc/allocwaste`).
//!
//! C header: [`include/linux/seq_file.h`](srctree/include/linux/seq_file.h)
//!
//! Between two reads it holds only its [`ReadPosition`]; within one read, from seq_file's
//! `start` to its `stop`, it holds the registry read-locked and the tag it stands on. So an
//! open file costs a few words whatever the number of tags, module load and unload wait for
//! one `read()` at most, and a read that continues where the last one stopped resumes there.

use super::{read, ReadPosition, Registration, Registry, TagType};
use crate::rwsem::ReadGuard;

/// Where one open file's reader of the tags of `T` stands.
///
/// # Invariants
///
/// `tag` is null, or a tag of `T` found in the registry that `registry` holds locked.
pub(crate) struct Reader<T: TagType + 'static> {
    registration: &'static Registration<T>,
    position: ReadPosition,
    /// The registry, read-locked between [`Reader::lock`] and [`Reader::unlock`].
    registry: Option<ReadGuard<'static, Registry>>,
    tag: *const T::Tag,
}

// SAFETY: The registry guard and the tag it keeps valid are taken by `lock` and given back by
// `unlock`, within one `read()`, by one task; between reads the reader holds neither.
unsafe impl<T: TagType> Send for Reader<T> {}

impl<T: TagType> Reader<T> {
    /// Stands before the first tag of `registration`'s type.
    pub(crate) fn new(registration: &'static Registration<T>) -> Self {
        // INVARIANT: No tag.
        Self {
            registration,
            position: ReadPosition::START,
            registry: None,
            tag: core::ptr::null(),
        }
    }

    /// Locks the registry for reading until [`Reader::unlock`]: seq_file's `start`. May sleep.
    /// A lock still held is given back first, so that the read lock is never taken twice (a
    /// writer waiting between the two would deadlock).
    pub(crate) fn lock(&mut self) {
        self.unlock();
        self.registry = Some(read());
    }

    /// Unlocks the registry: seq_file's `stop`, which follows every `start`.
    pub(crate) fn unlock(&mut self) {
        // INVARIANT: No tag, then no lock.
        self.tag = core::ptr::null();
        self.registry = None;
    }

    /// Moves to the tag at position `pos` of the listing, with the registry locked. Returns
    /// whether there is one.
    pub(crate) fn seek(&mut self, pos: i64) -> bool {
        // INVARIANT: Null, or found below in the registry that `self.registry` holds locked.
        self.tag = core::ptr::null();
        let (Some(handle), Some(registry)) = (self.registration.handle(), self.registry.as_deref())
        else {
            return false;
        };
        if let Some(tag) = self.position.seek(registry, handle, pos) {
            self.tag = tag;
        }
        !self.tag.is_null()
    }

    /// Returns the tag it stands on, while the registry is locked.
    pub(crate) fn tag(&self) -> Option<&T::Tag> {
        self.registry.as_ref()?;
        // SAFETY: By the type invariant a non-null `tag` is in the registry, which stays locked
        // at least as long as `self` is borrowed (`unlock` needs `&mut self`).
        unsafe { self.tag.as_ref() }
    }

    /// Returns the position of the tag it stands on; -1 before the first.
    pub(crate) fn pos(&self) -> i64 {
        self.position.pos()
    }
}
