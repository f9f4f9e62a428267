// SPDX-License-Identifier: GPL-2.0

//! The tags that one user of selections marked: a table with a slot per marked tag, whose
//! number plus one is the tag's mark, so that an allocator hook that read a mark finds its slot
//! in one load. A slot holds the tag and the selection that marked it (its owner); per owner,
//! the table counts the tags matched with no slot left.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! Fault injection and capture each keep one, through their [`super::Marker`] callbacks, which
//! the registry calls under its write lock. The slots are static, so a reader never touches
//! freed memory. With [`Reuse::AfterGracePeriod`] an unmarked slot is reused only after an RCU
//! grace period ([`Sites::reap`]), for a user whose allocator hook reads slots inside
//! `rcu_read_lock()`: such a hook also checks that the slot is still its tag's
//! ([`Sites::owner_for`]), so it never applies another site's owner.

use super::{Codetag, Registry};
use core::{
    num::NonZeroU32,
    ptr,
    sync::atomic::{AtomicPtr, AtomicU32, AtomicU8, Ordering},
};

/// When an unmarked slot may hold another tag.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// At once: nothing reads the slots outside the registry's lock.
    #[cfg_attr(not(CONFIG_ALLOCTAG_CAPTURE), allow(dead_code))]
    AtOnce,
    /// After an RCU grace period ([`Sites::reap`]): allocator hooks read the slots.
    #[cfg_attr(not(CONFIG_ALLOCTAG_FAULT_INJECTION), allow(dead_code))]
    AfterGracePeriod,
}

/// The most slots a table has: [`Sites::reap`] keeps a bit per slot on the stack.
const MAX_SLOTS: usize = 64 * 64;

const FREE: u8 = 0;
const LIVE: u8 = 1;
/// Unmarked; free after a grace period.
const DYING: u8 = 2;

/// One slot.
struct Slot {
    state: AtomicU8,
    /// The selection that marked the tag.
    owner: AtomicU32,
    /// Valid while [`LIVE`]: the registry unmarks a tag, under its write lock, before its
    /// module's memory goes.
    tag: AtomicPtr<Codetag>,
}

/// A table of `N` slots for the tags that the selections of one user marked, the selections
/// being numbered 1 to `OWNERS`.
pub(crate) struct Sites<const N: usize, const OWNERS: usize> {
    slots: [Slot; N],
    /// Tags matched with no slot left, per owner.
    unmarked: [AtomicU32; OWNERS],
    reuse: Reuse,
}

impl<const N: usize, const OWNERS: usize> Sites<N, OWNERS> {
    /// Makes an empty table.
    pub(crate) const fn new(reuse: Reuse) -> Self {
        assert!(N <= MAX_SLOTS);
        Self {
            slots: [const {
                Slot {
                    state: AtomicU8::new(FREE),
                    owner: AtomicU32::new(0),
                    tag: AtomicPtr::new(ptr::null_mut()),
                }
            }; N],
            unmarked: [const { AtomicU32::new(0) }; OWNERS],
            reuse,
        }
    }

    /// Returns the slot index of mark `value`.
    #[cfg_attr(not(CONFIG_ALLOCTAG_FAULT_INJECTION), allow(dead_code))]
    pub(crate) const fn index(value: u32) -> Option<usize> {
        let i = (value as usize).wrapping_sub(1);
        if i < N {
            Some(i)
        } else {
            None
        }
    }

    fn slot(&self, value: u32) -> Option<&Slot> {
        self.slots.get(Self::index(value)?)
    }

    fn unmarked_of(&self, owner: u32) -> Option<&AtomicU32> {
        self.unmarked.get((owner as usize).wrapping_sub(1))
    }

    /// Claims a free slot for `tag`, marked by selection `owner`, and returns the mark; counts
    /// the tag unmarked when no slot is left. A [`super::Marker`]'s `mark`: any task context,
    /// atomics only.
    pub(crate) fn mark(&self, owner: u32, tag: &Codetag) -> Option<NonZeroU32> {
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.state.load(Ordering::Relaxed) == FREE {
                slot.owner.store(owner, Ordering::Relaxed);
                slot.tag
                    .store(ptr::from_ref(tag).cast_mut(), Ordering::Relaxed);
                slot.state.store(LIVE, Ordering::Release);
                return NonZeroU32::new(i as u32 + 1);
            }
        }
        if let Some(n) = self.unmarked_of(owner) {
            n.fetch_add(1, Ordering::Relaxed);
        }
        None
    }

    /// Gives the slot of mark `value` back: free at once, or after a grace period. A
    /// [`super::Marker`]'s `unmark`, after the registry cleared the mark.
    pub(crate) fn unmark(&self, value: u32) {
        if let Some(slot) = self.slot(value) {
            slot.tag.store(ptr::null_mut(), Ordering::Relaxed);
            let state = match self.reuse {
                Reuse::AtOnce => FREE,
                Reuse::AfterGracePeriod => DYING,
            };
            slot.state.store(state, Ordering::Release);
        }
    }

    /// Returns the selection that made the mark `value`; 0 for none. A [`super::Marker`]'s
    /// `owner`.
    pub(crate) fn owner(&self, value: u32) -> u32 {
        self.slot(value)
            .map_or(0, |s| s.owner.load(Ordering::Relaxed))
    }

    /// Returns the selection of the slot of mark `value` if the slot is in use for `tag`, for
    /// an allocator hook that read the mark of `tag`: the slot may have been unmarked since,
    /// and with [`Reuse::AtOnce`] given to another tag.
    #[inline]
    #[cfg_attr(not(CONFIG_ALLOCTAG_FAULT_INJECTION), allow(dead_code))]
    pub(crate) fn owner_for(&self, value: u32, tag: &Codetag) -> Option<u32> {
        let slot = self.slot(value)?;
        (slot.state.load(Ordering::Acquire) == LIVE
            && ptr::eq(slot.tag.load(Ordering::Relaxed), tag))
        .then(|| slot.owner.load(Ordering::Relaxed))
    }

    /// Frees the slots unmarked before the call, after a grace period; sleeps when there are
    /// any. Needs no lock: it frees only the slots dying before the grace period began, which
    /// no hook can still be using after it; a slot unmarked meanwhile (a module unloading)
    /// waits for the next call. Its callers must be serialized, so that no slot is freed,
    /// reused and unmarked again between its two passes. Process context.
    #[cfg_attr(not(CONFIG_ALLOCTAG_FAULT_INJECTION), allow(dead_code))]
    pub(crate) fn reap(&self) {
        let mut dying = [0u64; MAX_SLOTS / 64];
        let mut any = false;
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.state.load(Ordering::Acquire) == DYING {
                if let Some(word) = dying.get_mut(i / 64) {
                    *word |= 1 << (i % 64);
                    any = true;
                }
            }
        }
        if !any {
            return;
        }
        // SAFETY: Process context, holding no lock that an allocator hook takes.
        unsafe { kernel::bindings::synchronize_rcu() };
        for (i, slot) in self.slots.iter().enumerate() {
            if dying.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0) {
                let _ =
                    slot.state
                        .compare_exchange(DYING, FREE, Ordering::Release, Ordering::Relaxed);
            }
        }
    }

    /// Resets the count of tags that selection `owner` matched with no slot left.
    pub(crate) fn reset_unmarked(&self, owner: u32) {
        if let Some(n) = self.unmarked_of(owner) {
            n.store(0, Ordering::Relaxed);
        }
    }

    /// Returns how many tags selection `owner` matched with no slot left.
    pub(crate) fn unmarked(&self, owner: u32) -> u32 {
        self.unmarked_of(owner)
            .map_or(0, |n| n.load(Ordering::Relaxed))
    }

    /// Runs `f` on each slot in use, with its index, its owner and its tag. The registry,
    /// locked by the caller, keeps the tags: it unmarks a tag, under its write lock, before the
    /// tag's memory can go.
    pub(crate) fn for_each<'r>(
        &self,
        _registry: &'r Registry,
        mut f: impl FnMut(usize, u32, &'r Codetag),
    ) {
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.state.load(Ordering::Acquire) != LIVE {
                continue;
            }
            let tag = slot.tag.load(Ordering::Relaxed);
            if tag.is_null() {
                continue;
            }
            // SAFETY: A slot in use holds a tag the registry lists, and the registry, borrowed
            // for `'r`, cannot unmark it (and so let it go) meanwhile.
            f(i, slot.owner.load(Ordering::Relaxed), unsafe { &*tag });
        }
    }
}
