// SPDX-License-Identifier: GPL-2.0

//! The allocator hook: whether the allocation being made now fails.
//!
//! C header: [`include/alloctag_fail.h`](srctree/lib/alloctag/include/alloctag_fail.h)

use super::{sites, RULES};
use crate::codetag::{Codetag, Field};
use kernel::{bindings, prelude::*};

/// Returns whether the allocation of `size` bytes with `gfp` that is being made at the call
/// site of `tag` (`current->alloc_tag`) must fail. Never sleeps, allocates nothing, takes no
/// lock: it runs in every context the allocators run in. `__GFP_NOFAIL` allocations never fail,
/// nor do allocations in NMI.
///
/// Called by `alloctag_fail_pages()` and `alloctag_fail_slab()` (include/alloctag_fail.h) from
/// the page and slab allocators while a rule is armed, for a tag whose mark it saw set; the mark
/// is read again here, inside the RCU read section that keeps its slot from being reused.
///
/// # Safety
///
/// `tag` must be the current task's `alloc_tag`, not null: a tag that lives while the
/// allocation runs under it.
#[no_mangle]
pub(crate) unsafe extern "C" fn alloctag_should_fail(
    tag: *mut bindings::alloc_tag,
    gfp: bindings::gfp_t,
    size: usize,
) -> bool {
    if gfp & bindings::__GFP_NOFAIL != 0 {
        return false;
    }
    // SAFETY: Reading the context has no precondition.
    if unsafe { bindings::alloctag_in_nmi() } {
        return false;
    }
    // SAFETY: The caller guarantees `tag`; a `struct alloc_tag` starts with its `struct codetag`.
    let ct = unsafe { &*tag.cast::<Codetag>() };
    // SAFETY: Paired below; the slots and rules read in between are reused only after a grace
    // period (`sites::reap`).
    unsafe { bindings::alloctag_rcu_read_lock() };
    let fail = check(gfp, ct, size);
    // SAFETY: Paired with the lock above.
    unsafe { bindings::alloctag_rcu_read_unlock() };
    fail
}

/// Asks the rule of the site that `ct` is marked with about an allocation there, and counts and
/// reports a failure. Inside an RCU read section.
fn check(gfp: bindings::gfp_t, ct: &Codetag, size: usize) -> bool {
    // Read inside the read section: a slot unmarked before this read is not reused until the
    // section ends, and one unmarked after it is `DYING` (no rule) until then.
    let value = Field::FAULT.get(ct);
    // The slot must still be this tag's: never another site's rule and counts.
    let Some(rule) = sites::rule_for(value, ct).and_then(|i| RULES.get(i)) else {
        return false;
    };
    if !rule.is_armed() || !rule.should_fail(size) {
        return false;
    }
    sites::count(value);
    // As failslab: __GFP_NOWARN asks for no output at all (it may be under a printk lock), and
    // the output is rate-limited (fail_dump()): a rule on a site that system calls reach lets
    // any user drive it.
    let verbose = rule.verbose();
    let quiet = gfp & bindings::__GFP_NOWARN != 0 || verbose == 0;
    // SAFETY: The rate limit may be asked in any context but NMI, as here.
    if !quiet && unsafe { bindings::alloctag_fail_log_ratelimit() } {
        pr_info!("injected a failure at {ct}\n");
        if verbose > 1 {
            // SAFETY: Dumping the stack works in any context but NMI.
            unsafe { bindings::dump_stack() };
        }
    }
    true
}

c_declared!(alloctag_should_fail);
