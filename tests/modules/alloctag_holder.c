// SPDX-License-Identifier: GPL-2.0
/*
 * Takes ownership of objects that another module allocated, and frees them
 * later, for the in-guest tests of module unload with live allocations: the
 * other module (alloctag_test.ko hold=1) is unloaded first, so the frees here
 * update the counters of tags whose module is gone. The core must have kept
 * those tags and their counters; if it had not, these frees would write into
 * freed memory (KASAN) or into another module's counters (the tests compare
 * them).
 *
 * Writing 1 to /sys/module/alloctag_holder/parameters/release frees every
 * object held, and returns once they are freed; unloading frees them too.
 * .../parameters/held reads the number of objects held.
 */

#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

#include "alloctag_holder.h"

struct held_object {
	struct list_head node;
	enum alloctag_holder_kind kind;
	void *ptr;
	unsigned int order;
};

static LIST_HEAD(held_objects);
static unsigned int held_count;
/* Givers and release writers run concurrently in the stress test. */
static DEFINE_SPINLOCK(held_lock);

/**
 * alloctag_holder_take() - hand an object over to the holder
 * @kind: how it was allocated
 * @ptr: the object, or the struct page * of ALLOCTAG_HOLDER_PAGES
 * @order: the order of ALLOCTAG_HOLDER_PAGES, else 0
 *
 * Context: process context, may sleep.
 * Return: 0 when the holder owns the object; -ENOMEM when it could not take
 * it, and the caller still owns it.
 */
int alloctag_holder_take(enum alloctag_holder_kind kind, void *ptr,
			 unsigned int order)
{
	struct held_object *held;

	if (WARN_ON(!ptr || kind > ALLOCTAG_HOLDER_VMALLOC))
		return -EINVAL;
	held = kmalloc(sizeof(*held), GFP_KERNEL);
	if (!held)
		return -ENOMEM;
	held->kind = kind;
	held->ptr = ptr;
	held->order = order;
	spin_lock(&held_lock);
	list_add_tail(&held->node, &held_objects);
	held_count++;
	spin_unlock(&held_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(alloctag_holder_take);

static void free_held(struct held_object *held)
{
	switch (held->kind) {
	case ALLOCTAG_HOLDER_KMALLOC:
		kfree(held->ptr);
		break;
	case ALLOCTAG_HOLDER_PAGES:
		__free_pages(held->ptr, held->order);
		break;
	case ALLOCTAG_HOLDER_VMALLOC:
		vfree(held->ptr);
		break;
	}
	kfree(held);
}

/*
 * Frees every object held. They are taken off the list first, so that the
 * frees, which may sleep (vfree), run without the lock.
 */
static void release_all(void)
{
	struct held_object *held, *next;
	LIST_HEAD(objects);

	spin_lock(&held_lock);
	list_splice_init(&held_objects, &objects);
	held_count = 0;
	spin_unlock(&held_lock);
	list_for_each_entry_safe(held, next, &objects, node) {
		list_del(&held->node);
		free_held(held);
	}
}

static int release_set(const char *val, const struct kernel_param *kp)
{
	bool release;
	int ret;

	ret = kstrtobool(val, &release);
	if (ret)
		return ret;
	if (release)
		release_all();
	return 0;
}

static const struct kernel_param_ops release_ops = {
	.set = release_set,
};
module_param_cb(release, &release_ops, NULL, 0200);
MODULE_PARM_DESC(release, "write 1 to free every object held");

static int held_get(char *buffer, const struct kernel_param *kp)
{
	unsigned int count;

	spin_lock(&held_lock);
	count = held_count;
	spin_unlock(&held_lock);
	return sysfs_emit(buffer, "%u\n", count);
}

/* The loader calls .set, unchecked, for a held= given to insmod. */
static int held_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops held_ops = {
	.set = held_set,
	.get = held_get,
};
module_param_cb(held, &held_ops, NULL, 0444);
MODULE_PARM_DESC(held, "number of objects held");

static void __exit alloctag_holder_exit(void)
{
	release_all();
}

module_exit(alloctag_holder_exit);
MODULE_DESCRIPTION("alloctag test module: frees other modules' allocations");
MODULE_LICENSE("GPL");
