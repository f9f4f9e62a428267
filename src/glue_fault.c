// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of per-call-site fault injection (src/fault.rs): its key, the lock
 * of its control operations, the hooks' slow paths (include/alloctag_fail.h)
 * and the context tests its rules read.
 *
 * C because DEFINE_STATIC_KEY_FALSE, DECLARE_RWSEM, in_nmi(), in_task() and
 * current are macros, and __preserve_most is an attribute only C can give.
 */

#include <linux/alloc_tag.h>
#include <linux/pid.h>
#include <linux/preempt.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/static_key.h>

#include "../include/alloctag_fail.h"
#include "../include/alloctag_glue.h"

/*
 * Fault injection's switch, tested inline by alloctag_fail_pages()
 * (include/alloctag_fail.h): DEFINE_STATIC_KEY_FALSE and static_branch_*()
 * are macros.
 */
DEFINE_STATIC_KEY_FALSE(alloctag_fail_key);

/*
 * Serializes fault injection's control operations (src/fault.rs), which wait
 * for grace periods and flip the key outside the code-tag registry's lock.
 */
DECLARE_RWSEM(alloctag_fault_control_lock);

/*
 * The hooks' call into Rust behind the key. __preserve_most is an attribute
 * that only C can give: this function saves the registers that the Rust
 * function may clobber, so the allocators' fast paths need not.
 */
bool __preserve_most alloctag_fail_pages_slowpath(struct alloc_tag *tag,
						  gfp_t gfp, unsigned int order)
{
	return alloctag_should_fail(tag, gfp, PAGE_SIZE << order);
}

/* The slab allocator's, which asks before it masks the flags. */
bool __preserve_most alloctag_fail_slab_slowpath(struct alloc_tag *tag,
						 struct kmem_cache *s,
						 gfp_t gfp)
{
	return alloctag_should_fail(tag, gfp & gfp_allowed_mask,
				    kmem_cache_size(s));
}

/* The fault hook's context tests and read-side lock are macros. */
/* Not __preserve_most: per-CPU allocations are rare, and it saves nothing. */
bool alloctag_fail_percpu_slowpath(struct alloc_tag *tag, gfp_t gfp,
				   size_t size)
{
	return alloctag_should_fail(tag, gfp & gfp_allowed_mask, size);
}

bool alloctag_in_nmi(void)
{
	return in_nmi();
}

bool alloctag_in_task(void)
{
	return in_task();
}

/*
 * bindgen lays struct task_struct out differently from C in the test kernel's
 * configuration (tgid at offset 1196 instead of 1132: some member's alignment
 * is lost), so Rust must not read task fields past alloc_tag; this one is
 * read here, where the layout is C's.
 */
pid_t alloctag_current_tgid(void)
{
	return task_tgid_nr(current);
}
