// SPDX-License-Identifier: GPL-2.0
/*
 * The profiling switch, mem_alloc_profiling_key, for Rust: static_branch_*()
 * and static_key_enabled() are macros, and without CONFIG_JUMP_LABEL the
 * key functions are inline.
 */

#include <linux/alloc_tag.h>
#include <linux/static_key.h>

#include "../include/alloctag_glue.h"

bool alloctag_profiling_enabled(void)
{
	return static_key_enabled(&mem_alloc_profiling_key);
}

/* Flips the key; may sleep. The key functions serialize changes. */
void alloctag_set_profiling(bool enable)
{
	if (enable)
		static_branch_enable(&mem_alloc_profiling_key);
	else
		static_branch_disable(&mem_alloc_profiling_key);
}
