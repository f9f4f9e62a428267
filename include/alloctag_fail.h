/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-call-site fault injection (lib/alloctag/src/fault.rs), asked by the
 * slab and page allocators where they already ask failslab and
 * fail_page_alloc. scripts/graft.sh includes this header into mm/slub.c and
 * mm/page_alloc.c.
 *
 * The static key is on only while a rule is armed: with none, the test is a
 * patched-out jump and costs nothing measurable.
 */
#ifndef _ALLOCTAG_FAIL_H
#define _ALLOCTAG_FAIL_H

#include <linux/jump_label.h>
#include <linux/types.h>

#ifdef CONFIG_ALLOCTAG_FAULT_INJECTION

DECLARE_STATIC_KEY_FALSE(alloctag_fail_key);
bool alloctag_should_fail(gfp_t gfp, size_t size);

static __always_inline bool alloctag_fail(gfp_t gfp, size_t size)
{
	return static_branch_unlikely(&alloctag_fail_key) &&
	       alloctag_should_fail(gfp, size);
}

#else

static inline bool alloctag_fail(gfp_t gfp, size_t size)
{
	return false;
}

#endif /* CONFIG_ALLOCTAG_FAULT_INJECTION */

#endif /* _ALLOCTAG_FAIL_H */
