// SPDX-License-Identifier: GPL-2.0

//! The armed call sites: the code-tag library's table of the tags that rules marked
//! ([`Sites`]), owned by rule id, and the failures injected at each. A tag's mark (fault
//! injection's [`Field`] of its flags) is its slot number plus one, so the hook finds its slot
//! in one load.
//!
//! A slot whose tag was unmarked is only reused after an RCU grace period ([`reap`]): the hook
//! reads the mark and the slot inside `rcu_read_lock()`, and takes the slot's rule only if the
//! slot is still its tag's ([`Sites::owner_for`]), so it never counts into a slot for another
//! tag or applies another rule.

use crate::codetag::{Codetag, Field, Marker, Registry, Reuse, Sites};
use core::{
    num::NonZeroU32,
    sync::atomic::{AtomicU64, Ordering},
};

/// The most armed call sites at once.
pub(crate) const MAX_SITES: usize = 1024;

static SITES: Sites<MAX_SITES, { super::MAX_RULES }> = Sites::new(Reuse::AfterGracePeriod);

/// Failures injected per slot; reset when the slot is marked, before its mark is stored.
static INJECTED: [AtomicU64; MAX_SITES] = [const { AtomicU64::new(0) }; MAX_SITES];

/// Returns the index of the rule whose site `tag` is, by its mark `value`, for the hook (under
/// `rcu_read_lock()`).
#[inline]
pub(crate) fn rule_for(value: u32, tag: &Codetag) -> Option<usize> {
    (SITES.owner_for(value, tag)? as usize).checked_sub(1)
}

/// Counts a failure injected at the site of mark `value`.
pub(crate) fn count(value: u32) {
    if let Some(n) =
        Sites::<MAX_SITES, { super::MAX_RULES }>::index(value).and_then(|i| INJECTED.get(i))
    {
        n.fetch_add(1, Ordering::Relaxed);
    }
}

fn mark(id: u32, tag: &Codetag) -> Option<NonZeroU32> {
    let value = SITES.mark(id, tag)?;
    // The registry stores the mark after this returns: no hook counts into the slot before.
    if let Some(n) = INJECTED.get(value.get() as usize - 1) {
        n.store(0, Ordering::Relaxed);
    }
    Some(value)
}

fn unmark(value: u32) {
    SITES.unmark(value);
}

/// Nothing to finish: a slot is reused after a grace period ([`reap`]).
fn flush() {}

fn owner(value: u32) -> u32 {
    SITES.owner(value)
}

/// For the tests: the rule whose site `tag` is, if armed.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn rule_of(tag: &Codetag) -> Option<u32> {
    let value = Field::FAULT.get(tag);
    (value != 0).then(|| owner(value))
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

/// Frees the slots unmarked before the call, after a grace period ([`Sites::reap`]). Under
/// fault injection's control lock, which serializes the calls.
pub(crate) fn reap() {
    SITES.reap();
}

/// Resets the count of tags left unarmed for the rule at `index`.
pub(crate) fn reset_unarmed(index: usize) {
    SITES.reset_unmarked(index as u32 + 1);
}

/// Returns how many tags the rule at `index` matched with no slot left for them.
pub(crate) fn unarmed(index: usize) -> u32 {
    SITES.unmarked(index as u32 + 1)
}

/// Runs `f` on each armed site of the rule at `index`, with its tag and failures injected.
pub(crate) fn for_each<'r>(
    registry: &'r Registry,
    index: usize,
    mut f: impl FnMut(&'r Codetag, u64),
) {
    SITES.for_each(registry, |i, owner, tag| {
        if owner as usize == index + 1 {
            f(
                tag,
                INJECTED.get(i).map_or(0, |n| n.load(Ordering::Relaxed)),
            );
        }
    });
}
