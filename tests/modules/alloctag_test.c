// SPDX-License-Identifier: GPL-2.0
/*
 * A module that allocates at its own call sites, for the in-guest tests of
 * module load and unload: /proc/allocinfo lists its tags with [alloctag_test]
 * while it is loaded. With leak=1 it keeps one allocation at unload, which
 * the core must report and survive.
 */

#include <linux/gfp.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

static bool leak;
module_param(leak, bool, 0444);
MODULE_PARM_DESC(leak, "keep one allocation when unloaded");

static void *object;
static void *area;
static struct page *pages;

static int __init alloctag_test_init(void)
{
	object = kmalloc(3000, GFP_KERNEL);
	area = vmalloc(4 * PAGE_SIZE);
	pages = alloc_pages(GFP_KERNEL, 2);
	if (!object || !area || !pages) {
		kfree(object);
		vfree(area);
		if (pages)
			__free_pages(pages, 2);
		return -ENOMEM;
	}
	return 0;
}

static void __exit alloctag_test_exit(void)
{
	if (!leak)
		kfree(object);
	vfree(area);
	__free_pages(pages, 2);
}

module_init(alloctag_test_init);
module_exit(alloctag_test_exit);
MODULE_DESCRIPTION("alloctag test module");
MODULE_LICENSE("GPL");
