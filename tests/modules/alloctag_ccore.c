// SPDX-License-Identifier: GPL-2.0
/*
 * A module as 6.12's C core builds them: its allocation tag has static
 * per-CPU counters, in the module's per-CPU area (DEFINE_ALLOC_TAG()'s C
 * core form, spelled out here because the Rust core's headers give module
 * tags none). The Rust core refuses it when it comes. Its counters start
 * non-zero, as garbage left in a freed per-CPU area would read: a check of
 * the tag made after the loader freed that area, which read them, would
 * find the tag in use and keep its section for good (tests/guest/modules.sh).
 */
#include <linux/alloc_tag.h>
#include <linux/module.h>
#include <linux/percpu.h>

static DEFINE_PER_CPU(struct alloc_tag_counters, alloctag_ccore_counters) = {
	.bytes = 4096,
	.calls = 1,
};

static struct alloc_tag alloctag_ccore_tag __used __aligned(8)
	__section("alloc_tags") = {
	.ct = {
		.modname = KBUILD_MODNAME,
		.function = "alloctag_ccore_init",
		.filename = __FILE__,
		.lineno = __LINE__,
	},
	.counters = &alloctag_ccore_counters,
};

static int __init alloctag_ccore_init(void)
{
	return 0;
}
module_init(alloctag_ccore_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("alloctag test: a module built for the C core");
