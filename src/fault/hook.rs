// SPDX-License-Identifier: GPL-2.0

//! The allocator hook: whether the allocation being made now fails.
//!
//! C header: [`include/alloctag_fail.h`](srctree/lib/alloctag/include/alloctag_fail.h)

use super::{sites, RULES};
use crate::codetag::{Codetag, Field};
use kernel::{bindings, prelude::*};

extern "C" {
    fn alloctag_in_nmi() -> bool;
    fn alloctag_rcu_read_lock();
    fn alloctag_rcu_read_unlock();
}

/// Returns whether the allocation of `size` bytes with `gfp` that is being made at the current
/// call site (`current->alloc_tag`) must fail. Never sleeps, allocates nothing, takes no lock:
/// it runs in every context the allocators run in. `__GFP_NOFAIL` allocations never fail,
/// nor do allocations in NMI.
///
/// Called by `alloctag_fail()` (include/alloctag_fail.h) from the slab and page allocators
/// while a rule is armed.
#[no_mangle]
pub(crate) extern "C" fn alloctag_should_fail(gfp: bindings::gfp_t, size: usize) -> bool {
    if gfp & bindings::__GFP_NOFAIL != 0 {
        return false;
    }
    // SAFETY: Reading the context has no precondition.
    if unsafe { alloctag_in_nmi() } {
        return false;
    }
    // SAFETY: `current` is always valid; its `alloc_tag` is null or a tag whose module stays
    // while an allocation runs under it.
    let tag = unsafe { (*bindings::get_current()).alloc_tag };
    if tag.is_null() {
        return false;
    }
    // SAFETY: As above; a `struct alloc_tag` starts with its `struct codetag`.
    let ct = unsafe { &*tag.cast::<Codetag>() };
    let value = Field::FAULT.get(ct);
    if value == 0 {
        return false;
    }
    // SAFETY: Paired below; the slots and rules read in between are reused only after a grace
    // period (`sites::reap`).
    unsafe { alloctag_rcu_read_lock() };
    let fail = check(value, gfp, ct, size);
    // SAFETY: Paired with the lock above.
    unsafe { alloctag_rcu_read_unlock() };
    fail
}

/// Asks the rule of site `value` about an allocation at `ct`, and counts and reports a failure.
fn check(value: u32, gfp: bindings::gfp_t, ct: &Codetag, size: usize) -> bool {
    let Some(site) = sites::site(value) else {
        return false;
    };
    let Some(rule) = site.rule().and_then(|i| RULES.get(i)) else {
        return false;
    };
    if !rule.is_armed() || !rule.should_fail(size) {
        return false;
    }
    site.count();
    // As failslab: __GFP_NOWARN asks for no output at all (it may be under a printk lock).
    if gfp & bindings::__GFP_NOWARN == 0 {
        let verbose = rule.verbose();
        if verbose > 0 {
            pr_info!("injected a failure at {ct}\n");
        }
        if verbose > 1 {
            // SAFETY: Dumping the stack works in any context but NMI.
            unsafe { bindings::dump_stack() };
        }
    }
    true
}
