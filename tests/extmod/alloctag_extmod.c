// SPDX-License-Identifier: GPL-2.0
/*
 * An out-of-tree module, as distributions' users build theirs (DKMS), built
 * by scripts/build-extmod.sh against the kernel's headers package alone: its
 * one allocation, a page-sized object held while it is loaded, shows in
 * /proc/allocinfo under its own module name (tests/guest/extmod.sh).
 */

#include <linux/module.h>
#include <linux/slab.h>

static void *held;

static int __init alloctag_extmod_init(void)
{
	held = kmalloc(4096, GFP_KERNEL);
	return held ? 0 : -ENOMEM;
}

static void __exit alloctag_extmod_exit(void)
{
	kfree(held);
}

module_init(alloctag_extmod_init);
module_exit(alloctag_extmod_exit);
MODULE_DESCRIPTION("alloctag: an out-of-tree module built from the headers package");
MODULE_LICENSE("GPL");
