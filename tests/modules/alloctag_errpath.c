// SPDX-License-Identifier: GPL-2.0
/*
 * A module whose init allocates at four call sites of its own, for the
 * error-path sweeper (scripts/sweep-error-paths.sh): each required
 * allocation that fails unwinds the earlier ones and fails the load; the
 * optional one is done without. alloctag_errpath_leaky.c builds it with a
 * deliberate bug: when the second allocation fails, the first one leaks,
 * which the sweeper must catch.
 */

#include <linux/gfp.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

static void *table;
static struct page *pages;
static void *area;
static void *cache;

static int __init errpath_init(void)
{
	table = kzalloc(256, GFP_KERNEL);
	if (!table)
		return -ENOMEM;
	pages = alloc_pages(GFP_KERNEL, 1);
	if (!pages) {
#ifndef ALLOCTAG_ERRPATH_LEAKY
		kfree(table);
#endif
		return -ENOMEM;
	}
	area = vmalloc(3 * PAGE_SIZE);
	if (!area) {
		__free_pages(pages, 1);
		kfree(table);
		return -ENOMEM;
	}
	/* Optional: without it the module runs, degraded. */
	cache = kmalloc(128, GFP_KERNEL | __GFP_NOWARN);
	if (!cache)
		pr_info("running without a cache\n");
	return 0;
}

static void __exit errpath_exit(void)
{
	kfree(cache);
	vfree(area);
	__free_pages(pages, 1);
	kfree(table);
}

module_init(errpath_init);
module_exit(errpath_exit);
MODULE_DESCRIPTION("alloctag error-path sweeper test module");
MODULE_LICENSE("GPL");
