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

#ifdef CONFIG_ALLOCTAG_KUNIT_TEST
/*
 * A key of each initial state for the test of the kernel crate's inline
 * static branch (src/tests/jump_label.rs): DEFINE_STATIC_KEY_* are macros.
 */
DEFINE_STATIC_KEY_TRUE(alloctag_test_key_true);
DEFINE_STATIC_KEY_FALSE(alloctag_test_key_false);

/* Flips one of them; may sleep. */
void alloctag_test_key_set(bool initially_true, bool enable)
{
	struct static_key *key = initially_true ? &alloctag_test_key_true.key :
						  &alloctag_test_key_false.key;

	if (enable)
		static_key_enable(key);
	else
		static_key_disable(key);
}
#endif
