// SPDX-License-Identifier: GPL-2.0

//! The armed call sites: one slot per tag that a rule's selection marked, holding the rule and
//! the failures injected there. A tag's mark (fault injection's [`Field`] of its flags) is its
//! slot number plus one, so the hook finds its slot in one load.
//!
//! Slots are static, so a hook never touches freed memory. A slot whose tag was unmarked is
//! only reused after an RCU grace period ([`reap`]): hooks read the mark and the slot inside
//! `rcu_read_lock()`, and check that the slot is still the tag's ([`Site::is`]), so none counts
//! into it for another tag or applies another rule.

use crate::codetag::{Codetag, Field, Marker};
use core::{
    num::NonZeroU32,
    ptr,
    sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering},
};

/// The most armed call sites at once.
pub(crate) const MAX_SITES: usize = 1024;

const FREE: u8 = 0;
const LIVE: u8 = 1;
/// Unmarked; free after a grace period.
const DYING: u8 = 2;

/// One armed call site.
pub(crate) struct Site {
    state: AtomicU8,
    /// The index of the rule.
    rule: AtomicU32,
    injected: AtomicU64,
    /// Valid while `LIVE`: the registry unmarks a tag before its module's memory goes.
    tag: AtomicPtr<Codetag>,
}

impl Site {
    const fn new() -> Self {
        Self {
            state: AtomicU8::new(FREE),
            rule: AtomicU32::new(0),
            injected: AtomicU64::new(0),
            tag: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Returns the index of the rule, if the site is armed.
    pub(crate) fn rule(&self) -> Option<usize> {
        (self.state.load(Ordering::Acquire) == LIVE)
            .then(|| self.rule.load(Ordering::Relaxed) as usize)
    }

    /// Returns whether the site is armed for `tag`.
    pub(crate) fn is(&self, tag: &Codetag) -> bool {
        self.state.load(Ordering::Acquire) == LIVE && ptr::eq(self.tag.load(Ordering::Relaxed), tag)
    }

    /// Counts a failure injected here.
    pub(crate) fn count(&self) {
        self.injected.fetch_add(1, Ordering::Relaxed);
    }
}

static SITES: [Site; MAX_SITES] = [const { Site::new() }; MAX_SITES];

/// Tags that a rule's selection matched but no slot was left for, per rule.
static UNARMED: [AtomicU32; super::MAX_RULES] = [const { AtomicU32::new(0) }; super::MAX_RULES];

/// Returns the slot of mark `value`, for the hook.
#[inline]
pub(crate) fn site(value: u32) -> Option<&'static Site> {
    SITES.get((value as usize).wrapping_sub(1))
}

fn mark(id: u32, tag: &Codetag) -> Option<NonZeroU32> {
    let rule = id.checked_sub(1)?;
    for (i, site) in SITES.iter().enumerate() {
        if site.state.load(Ordering::Relaxed) == FREE {
            site.rule.store(rule, Ordering::Relaxed);
            site.injected.store(0, Ordering::Relaxed);
            site.tag
                .store(ptr::from_ref(tag).cast_mut(), Ordering::Relaxed);
            site.state.store(LIVE, Ordering::Release);
            return NonZeroU32::new(i as u32 + 1);
        }
    }
    if let Some(n) = UNARMED.get(rule as usize) {
        n.fetch_add(1, Ordering::Relaxed);
    }
    None
}

fn unmark(value: u32) {
    if let Some(site) = site(value) {
        site.tag.store(ptr::null_mut(), Ordering::Relaxed);
        site.state.store(DYING, Ordering::Release);
    }
}

/// Nothing to finish: a slot is reused after a grace period ([`reap`]).
fn flush() {}

fn owner(value: u32) -> u32 {
    site(value).map_or(0, |s| s.rule.load(Ordering::Relaxed) + 1)
}

/// Fault injection as a user of selections. Its marks fit [`MAX_SITES`].
pub(crate) static MARKER: Marker = Marker {
    field: Field::FAULT,
    mark,
    unmark,
    flush,
    owner,
};

const _: () = assert!(MAX_SITES <= Field::FAULT.max() as usize);

/// Frees the slots unmarked before the call. Sleeps for a grace period when there are any.
/// Needs no lock: the slots it frees are those dying before the grace period began, which no
/// hook can still be using after it; a slot unmarked meanwhile (a module unloading) waits for
/// the next call. Only dying slots are freed, and only marking takes free ones.
pub(crate) fn reap() {
    let mut dying = [0u64; MAX_SITES.div_ceil(64)];
    let mut any = false;
    for (i, site) in SITES.iter().enumerate() {
        if site.state.load(Ordering::Acquire) == DYING {
            dying[i / 64] |= 1 << (i % 64);
            any = true;
        }
    }
    if !any {
        return;
    }
    // SAFETY: Called in process context, holding no lock that a hook takes.
    unsafe { kernel::bindings::synchronize_rcu() };
    for (i, site) in SITES.iter().enumerate() {
        if dying[i / 64] & (1 << (i % 64)) != 0 {
            let _ = site
                .state
                .compare_exchange(DYING, FREE, Ordering::Release, Ordering::Relaxed);
        }
    }
}

/// Resets the count of tags left unarmed for the rule at `index`.
pub(crate) fn reset_unarmed(index: usize) {
    if let Some(n) = UNARMED.get(index) {
        n.store(0, Ordering::Relaxed);
    }
}

/// Returns how many tags the rule at `index` matched with no slot left for them.
pub(crate) fn unarmed(index: usize) -> u32 {
    UNARMED.get(index).map_or(0, |n| n.load(Ordering::Relaxed))
}

/// Runs `f` on each armed site of the rule at `index`, with its tag and failures injected.
/// Called with the registry locked, so that the tags stay.
pub(crate) fn for_each(index: usize, mut f: impl FnMut(&Codetag, u64)) {
    for site in SITES.iter() {
        if site.rule() != Some(index) {
            continue;
        }
        let tag = site.tag.load(Ordering::Relaxed);
        if tag.is_null() {
            continue;
        }
        // SAFETY: A live site's tag is listed in the registry, which the caller holds locked:
        // the registry unmarks a module's tags, under its write lock, before they go.
        f(unsafe { &*tag }, site.injected.load(Ordering::Relaxed));
    }
}
