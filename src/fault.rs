// SPDX-License-Identifier: GPL-2.0

//! Per-call-site fault injection: allocations at the call sites of an armed selection fail as
//! the rule's knobs say.
//!
//! C header: [`include/linux/fault-inject.h`](srctree/include/linux/fault-inject.h)
//!
//! During an allocation `current->alloc_tag` is the call site's tag, so the slab and page
//! allocators, asked whether to fail (mm/slub.c `slab_pre_alloc_hook()`, mm/page_alloc.c
//! `prepare_alloc_pages()`, grafted), call [`hook`] behind a static key that is on only while a
//! rule is armed. The hook tests the tag's mark, which the code-tag library's selections set
//! ([`crate::codetag::Selection`]), and only a marked site goes on to its rule. vmalloc and the
//! Rust helpers allocate through those two, under the caller's tag.
//!
//! Rules change under [`CONTROL`], sites under the registry's write lock; the hook reads them
//! under `rcu_read_lock()` and they are reused only after a grace period, which is waited for
//! outside the registry's lock.

mod control;
mod hook;
mod rule;
mod sites;

pub(crate) use control::register;
pub(crate) use rule::Config;
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) use sites::{rule_of as rule_of_site, MAX_SITES};

use crate::{
    alloc_tag::ALLOC_TAGS,
    codetag::{self, Matched, Selection},
    rwsem::{c_rwsem, RwSem},
};
use kernel::{bindings, prelude::*};
use rule::Rule;

/// The most rules armed at once.
pub(crate) const MAX_RULES: usize = 32;

static RULES: [Rule; MAX_RULES] = [const { Rule::new() }; MAX_RULES];

/// Serializes the control operations: arming and disarming rules, waiting for grace periods
/// ([`sites::reap`]) and flipping the key, all outside the registry's lock, so that module load
/// and unload and `/proc/allocinfo` never wait for them. Taken before the registry, never after.
// SAFETY: `alloctag_fault_control_lock` is defined with `DECLARE_RWSEM()` for this alone.
static CONTROL: RwSem<()> = unsafe { c_rwsem!(alloctag_fault_control_lock, ()) };

/// Turns the hooks on while a rule is armed, and has call sites make their tags current
/// meanwhile, profiling on or off (src/keys.rs). Under [`CONTROL`].
fn update_key() {
    let any = RULES.iter().any(Rule::is_armed);
    if any {
        crate::keys::set_fault_armed(true);
    }
    // SAFETY: The key is C's static key (`DEFINE_STATIC_KEY_FALSE()`); called in process
    // context.
    unsafe { bindings::alloctag_static_key_set(&raw mut bindings::alloctag_fail_key.key, any) };
    if !any {
        crate::keys::set_fault_armed(false);
    }
}

/// Arms `selection` with `config` and returns the rule's id (1 to [`MAX_RULES`]) and what
/// it matched. Refuses a selection already armed (`EEXIST`) and a full table (`ENOSPC`),
/// changing nothing.
pub(crate) fn arm(selection: Selection, config: &Config) -> Result<(u32, Matched)> {
    let handle = ALLOC_TAGS.handle().ok_or(ENODEV)?;
    let _control = CONTROL.write();
    sites::reap();
    if codetag::read().in_force(&sites::MARKER, &selection) {
        return Err(EEXIST);
    }
    let index = RULES.iter().position(|r| !r.is_armed()).ok_or(ENOSPC)?;
    let id = index as u32 + 1;
    // The rule is armed before its sites are marked: a hook that finds a site finds its rule.
    RULES[index].arm(config);
    sites::reset_unarmed(index);
    let selected = codetag::write().select(handle, &sites::MARKER, id, selection);
    match selected {
        Ok(matched) => {
            update_key();
            Ok((id, matched))
        }
        Err(e) => {
            RULES[index].free();
            Err(e)
        }
    }
}

/// Disarms rule `id`: its sites stop failing and their slots are freed. `ENOENT` if no such
/// rule is armed.
pub(crate) fn disarm(id: u32) -> Result {
    let _control = CONTROL.write();
    let rule = rule_of(id).ok_or(ENOENT)?;
    codetag::write().deselect(&sites::MARKER, id);
    // No site points to the rule any more; after a grace period no hook uses it either.
    sites::reap();
    rule.free();
    update_key();
    Ok(())
}

/// Disarms every rule.
pub(crate) fn disarm_all() {
    for id in 1..=MAX_RULES as u32 {
        let _ = disarm(id);
    }
}

/// Returns the armed rule `id`.
fn rule_of(id: u32) -> Option<&'static Rule> {
    RULES
        .get((id as usize).checked_sub(1)?)
        .filter(|r| r.is_armed())
}

/// Returns the failures rule `id` injected so far, if armed.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn injected(id: u32) -> Option<u64> {
    rule_of(id).map(Rule::injected)
}
