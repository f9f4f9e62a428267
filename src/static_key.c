// SPDX-License-Identifier: GPL-2.0
/*
 * The static keys, for Rust: the profiling switch's state, the tag key's
 * users, and one setter for every key the Rust core flips (profiling,
 * capture's, waste accounting's, fault injection's, the tests'). C because
 * static_branch_*() and static_key_enabled() are macros, and without
 * CONFIG_JUMP_LABEL the key functions are inline.
 */

#include <linux/alloc_tag.h>
#include <linux/rwsem.h>
#include <linux/static_key.h>

#include "../include/alloctag_glue.h"

bool alloctag_profiling_enabled(void)
{
	return static_key_enabled(&mem_alloc_profiling_key);
}

#ifdef CONFIG_MEM_ALLOC_PROFILING_RUST
/*
 * The key that C's alloc_hooks() tests before it makes a call site's tag
 * current (without MEM_ALLOC_PROFILING_DEBUG: include/linux/alloc_tag.h):
 * on while profiling is on or a fault-injection rule is armed
 * (src/keys/tag.rs counts them), so that otherwise an allocation
 * costs one patched-out jump, as mainline's alloc_hooks_tag() (6.13) costs
 * with the profiling key alone. It starts as the profiling key does.
 */
DEFINE_STATIC_KEY_MAYBE(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT,
			alloctag_tag_key);
/*
 * Every module's allocations test it: exported to all, as mainline exports
 * its key for the same reason.
 */
EXPORT_SYMBOL(alloctag_tag_key);

/* What src/keys/tag.rs counts into it, under this lock. */
DECLARE_RWSEM(alloctag_tag_key_lock);

/* One user of the key more or less; may sleep. */
void alloctag_tag_key_get(bool get)
{
	if (get)
		static_branch_inc(&alloctag_tag_key);
	else
		static_branch_dec(&alloctag_tag_key);
}
#endif

/*
 * Flips key, the .key of a DEFINE_STATIC_KEY_*() (what static_branch_enable()
 * passes); may sleep. The key functions serialize changes.
 */
void alloctag_static_key_set(struct static_key *key, bool enable)
{
	if (enable)
		static_key_enable(key);
	else
		static_key_disable(key);
}

#ifdef CONFIG_ALLOCTAG_KUNIT_TEST
/*
 * A key of each initial state for the test of the kernel crate's inline
 * static branch (src/tests/jump_label.rs): DEFINE_STATIC_KEY_* are macros.
 */
DEFINE_STATIC_KEY_TRUE(alloctag_test_key_true);
DEFINE_STATIC_KEY_FALSE(alloctag_test_key_false);
#endif
