// SPDX-License-Identifier: GPL-2.0
/*
 * A module that allocates at its own call sites, for the in-guest tests of
 * module load and unload: /proc/allocinfo lists its tags with [alloctag_test]
 * while it is loaded. With leak=1 it keeps one allocation at unload, which
 * the core must report and survive. With hold=1 it also hands objects
 * allocated at call sites of its own to alloctag_holder.ko, which frees them
 * after this module is gone: the core must keep those tags counting.
 * With cache=1 it allocates one object from a slab cache of its own, whose
 * first slab is new: the accuracy tests make that slab's extension vector
 * fail and expect the object's tag to be marked inaccurate.
 *
 * With longname=1 it allocates one object at a call site whose function and
 * file names are both longer than the 63 characters of a name that the
 * allocinfo ioctl returns (tests/guest/ioctl.sh); the site's tag is listed
 * whenever the module is loaded.
 *
 * /sys/kernel/debug/alloctag_test/hold allocates in its writer's context: a
 * write of N allocates N more objects at hold_object()'s call site (64 held
 * at most), kept until a write of 0 or unload. The capture tests and the
 * demo find them under each writer's pid and comm. A write of N to
 * hold_kfence holds one more there that KFENCE sampled, trying for N ms.
 *
 * A write of 1 to hold_page holds one page, of 2 one whose flags hold an
 * index (0 frees it; another number is refused); page_index then reads the tag's index in that page's
 * flags (include/linux/alloctag_pgflags.h).
 *
 * A write of N to hold_string holds one string that kasprintf() allocates,
 * at a call site of the kernel's (lib/kasprintf.c, func:kvasprintf) reached
 * through this module's frames, in place of the one held (0 frees it); with
 * leak_string=1 unload keeps it, so that a capture record of it outlives
 * the module its stack names (tests/guest/capture.sh). The call site is
 * not the module's: no tag of the module outlives it.
 *
 * A write of N to hold_page_list holds N more pages, allocated one at a
 * time (at most 65536 held); 0 frees them all.
 *
 * A write of N to hold_percpu holds N per-CPU areas of 32 KiB, the most
 * that alloc_percpu() gives at once (at most 256), allocating more or
 * freeing the last ones: a few fill the per-CPU allocator's first chunk,
 * and the next make chunks of their own (tests/guest/boot.sh).
 */

#include <linux/alloctag_pgflags.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/kfence.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/sprintf.h>
#include <linux/vmalloc.h>

#include "alloctag_holder.h"

static bool leak;
module_param(leak, bool, 0444);
MODULE_PARM_DESC(leak, "keep one allocation when unloaded");

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "hand allocations to alloctag_holder, which frees them later");

static bool leak_string;
module_param(leak_string, bool, 0444);
MODULE_PARM_DESC(leak_string, "keep hold_string's string when unloaded");

static bool cache;
module_param(cache, bool, 0444);
MODULE_PARM_DESC(cache, "allocate one object from a new slab cache of its own");

static bool longname;
module_param(longname, bool, 0444);
MODULE_PARM_DESC(longname, "allocate one object at the call site with long names");

static void *long_named;
static noinline void *alloctag_test_function_with_a_name_longer_than_the_ioctls_63_bytes(void);

/*
 * Objects handed over per call site with hold=1: the unload warning of each
 * of the three sites counts this many allocations, and the pages' site
 * exactly HELD_PER_SITE << (HELD_PAGES_ORDER + PAGE_SHIFT) bytes.
 */
#define HELD_PER_SITE 4
#define HELD_KMALLOC_SIZE 700
#define HELD_PAGES_ORDER 1
#define HELD_VMALLOC_SIZE (2 * PAGE_SIZE)

/*
 * Looked up with symbol_get() rather than linked, so that the module loads
 * without the holder when hold=0; the reference keeps the holder loaded
 * until this module's exit.
 */
static typeof(&alloctag_holder_take) holder_take;

static void *object;
static void *area;
static struct page *pages;
static struct kmem_cache *own_cache;
static void *cached;

/* A constructor keeps the cache from being merged with an existing one. */
static void cache_ctor(void *p)
{
}

static int cache_object(void)
{
	own_cache = kmem_cache_create("alloctag_test_cache", 128, 0, 0, cache_ctor);
	if (!own_cache)
		return -ENOMEM;
	cached = kmem_cache_alloc(own_cache, GFP_KERNEL);
	if (!cached) {
		kmem_cache_destroy(own_cache);
		return -ENOMEM;
	}
	return 0;
}

static void cache_free(void)
{
	if (own_cache) {
		kmem_cache_free(own_cache, cached);
		kmem_cache_destroy(own_cache);
	}
}

/* One function per call site, so that each has a tag of its own. */
static int hold_kmalloc(void)
{
	void *object = kmalloc(HELD_KMALLOC_SIZE, GFP_KERNEL);

	if (!object)
		return -ENOMEM;
	if (holder_take(ALLOCTAG_HOLDER_KMALLOC, object, 0)) {
		kfree(object);
		return -ENOMEM;
	}
	return 0;
}

static int hold_pages(void)
{
	struct page *page = alloc_pages(GFP_KERNEL, HELD_PAGES_ORDER);

	if (!page)
		return -ENOMEM;
	if (holder_take(ALLOCTAG_HOLDER_PAGES, page, HELD_PAGES_ORDER)) {
		__free_pages(page, HELD_PAGES_ORDER);
		return -ENOMEM;
	}
	return 0;
}

static int hold_vmalloc(void)
{
	void *area = vmalloc(HELD_VMALLOC_SIZE);

	if (!area)
		return -ENOMEM;
	if (holder_take(ALLOCTAG_HOLDER_VMALLOC, area, 0)) {
		vfree(area);
		return -ENOMEM;
	}
	return 0;
}

/*
 * On failure, what was handed over stays with the holder: the module is
 * then freed with live allocations, which the core must handle too.
 */
static int hand_over(void)
{
	int i, ret = 0;

	holder_take = symbol_get(alloctag_holder_take);
	if (!holder_take) {
		pr_err("hold=1 needs alloctag_holder loaded\n");
		return -ENODEV;
	}
	for (i = 0; i < HELD_PER_SITE && !ret; i++) {
		ret = hold_kmalloc();
		if (!ret)
			ret = hold_pages();
		if (!ret)
			ret = hold_vmalloc();
	}
	if (ret)
		symbol_put(alloctag_holder_take);
	return ret;
}

#define HOLD_MAX 64
#define HOLD_SIZE 200

static void *held[HOLD_MAX];
static unsigned int nheld;
static DEFINE_MUTEX(held_lock);
static struct dentry *hold_dir;

static void free_held(void)
{
	while (nheld)
		kfree(held[--nheld]);
}

/* One call site, in a function of its own: the capture tests select it. */
static noinline void *hold_object(void)
{
	return kmalloc(HOLD_SIZE, GFP_KERNEL);
}

/* Holds n more objects of hold_object(); 0 frees them all. */
static int hold_objects(unsigned int n)
{
	if (!n) {
		free_held();
		return 0;
	}
	if (n > HOLD_MAX - nheld)
		return -EINVAL;
	while (n--) {
		void *p = hold_object();

		if (!p)
			return -ENOMEM;
		held[nheld++] = p;
	}
	return 0;
}

/*
 * Holds one more object of hold_object() that KFENCE sampled: allocates
 * there, freeing each object KFENCE did not take, for up to ms milliseconds
 * (-ETIMEDOUT after). Only the held object's allocation stays counted. For
 * the test of what the hooks do with KFENCE's objects (tests/guest/suites.sh).
 */
static int hold_kfence_object(unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	void *p;

	if (nheld == HOLD_MAX)
		return -EINVAL;
	do {
		p = hold_object();
		if (!p)
			return -ENOMEM;
		if (is_kfence_address(p)) {
			held[nheld++] = p;
			return 0;
		}
		kfree(p);
		cond_resched();
	} while (time_before(jiffies, end));
	return -ETIMEDOUT;
}

/* The area hold_area() holds; writing 0 to hold_area frees it. */
static void *held_area;

/* One call site, for waste accounting's vmalloc() figures. */
static noinline void *hold_area(unsigned int size)
{
	return vmalloc(size);
}

/* Replaces the held area with one of n bytes; 0 frees it. */
static int hold_area_bytes(unsigned int n)
{
	vfree(held_area);
	held_area = n ? hold_area(n) : NULL;
	return n && !held_area ? -ENOMEM : 0;
}

/* The pages hold_exact() holds, and their size; writing 0 to hold_pages frees them. */
static void *held_exact;
static unsigned int held_exact_size;

/* One call site, for waste accounting's page figures. */
static noinline void *hold_exact(unsigned int size)
{
	return alloc_pages_exact(size, GFP_KERNEL);
}

static void free_held_exact(void)
{
	if (held_exact)
		free_pages_exact(held_exact, held_exact_size);
	held_exact = NULL;
}

/* Replaces the held pages with alloc_pages_exact(n); 0 frees them. */
static int hold_pages_bytes(unsigned int n)
{
	free_held_exact();
	held_exact = n ? hold_exact(n) : NULL;
	held_exact_size = n;
	return n && !held_exact ? -ENOMEM : 0;
}

/* The page hold_page_n() holds, and the index its flags held when last read. */
static struct page *held_page;
static unsigned long page_index;

/*
 * Frees the held page, then holds a new one if n (at hold_exact()'s call
 * site: a site of its own would add a tag to every instance of the module,
 * which the module tests count); with n = 2 its flags are then given
 * CODETAG_EMPTY's index, as an allocation with profiling on gives them a
 * tag's. page_index is the index of the page held, or after a free the freed
 * page's. An allocation ors its index into a field it takes to be clear
 * (alloctag_pgflags_add()): a freed page must hold none, profiling on or
 * off. Read after a free, the page may be someone else's already: only with
 * profiling off does no allocation set an index meanwhile.
 */
static int hold_page_n(unsigned int n)
{
	struct page *page = held_page;
	void *addr;

	if (n > 2)
		return -EINVAL;
	if (page) {
		held_page = NULL;
		free_pages_exact(page_address(page), PAGE_SIZE);
		page_index = alloctag_pgflags_read(page);
	}
	if (n) {
		addr = hold_exact(PAGE_SIZE);
		if (!addr)
			return -ENOMEM;
		held_page = virt_to_page(addr);
		if (n == 2)
			alloctag_pgflags_write(held_page, ALLOCTAG_IDX_EMPTY);
		page_index = alloctag_pgflags_read(held_page);
	}
	return 0;
}

/* The string hold_string() holds; unload frees it unless leak_string=1. */
static char *held_string;

/* Replaces the held string with one of kasprintf(); 0 frees it. */
static noinline int hold_string(unsigned int n)
{
	kfree(held_string);
	held_string = n ? kasprintf(GFP_KERNEL, "alloctag_test %u", n) : NULL;
	return n && !held_string ? -ENOMEM : 0;
}

/* The most pages hold_page_list holds. */
#define HOLD_LIST_MAX 65536

/* The pages hold_page_n_more() holds, each holding the address of the one held before. */
static void **page_list;
static unsigned int page_list_len;

static void free_page_list(void)
{
	while (page_list) {
		void **next = *page_list;

		free_pages_exact(page_list, PAGE_SIZE);
		page_list = next;
		cond_resched();
	}
	page_list_len = 0;
}

/*
 * Holds n more pages, each allocated alone at hold_exact()'s call site
 * (not a site of its own, as for hold_page_n()); 0 frees them all. For the
 * stress of capture's page records against the sysctl
 * (tests/guest/capture.sh): many page allocations at a selected site, none
 * freed until the test says so.
 */
static int hold_page_n_more(unsigned int n)
{
	void **page;

	if (!n) {
		free_page_list();
		return 0;
	}
	if (n > HOLD_LIST_MAX - page_list_len)
		return -EINVAL;
	while (n--) {
		page = hold_exact(PAGE_SIZE);
		if (!page)
			return -ENOMEM;
		*page = page_list;
		page_list = page;
		page_list_len++;
		cond_resched();
	}
	return 0;
}

#define HOLD_PERCPU_MAX 256
#define HOLD_PERCPU_SIZE 32768
static void __percpu *held_percpu[HOLD_PERCPU_MAX];
static unsigned int held_percpu_n;

/* One call site for per-CPU areas. */
static noinline void __percpu *hold_percpu(void)
{
	return __alloc_percpu(HOLD_PERCPU_SIZE, sizeof(long));
}

/* Holds n per-CPU areas: allocates more, or frees the last ones held. */
static int hold_percpu_n(unsigned int n)
{
	void __percpu *p;

	if (n > HOLD_PERCPU_MAX)
		return -EINVAL;
	while (held_percpu_n > n)
		free_percpu(held_percpu[--held_percpu_n]);
	while (held_percpu_n < n) {
		p = hold_percpu();
		if (!p)
			return -ENOMEM;
		held_percpu[held_percpu_n++] = p;
	}
	return 0;
}

/* A debugfs file of hold_dir: writing N to it runs apply(N). */
struct hold_file {
	const char *name;
	int (*apply)(unsigned int n);
};

static const struct hold_file hold_files[] = {
	{ "hold", hold_objects },
	{ "hold_kfence", hold_kfence_object },
	{ "hold_area", hold_area_bytes },
	{ "hold_pages", hold_pages_bytes },
	{ "hold_page", hold_page_n },
	{ "hold_string", hold_string },
	{ "hold_page_list", hold_page_n_more },
	{ "hold_percpu", hold_percpu_n },
};

/* Parses N from a hold file and runs its apply(N) under held_lock. */
static ssize_t hold_write(struct file *file, const char __user *buf,
			  size_t len, loff_t *ppos)
{
	const struct hold_file *h = file->private_data;
	unsigned int n;
	int ret = kstrtouint_from_user(buf, len, 0, &n);

	if (ret)
		return ret;
	mutex_lock(&held_lock);
	ret = h->apply(n);
	mutex_unlock(&held_lock);
	return ret ?: len;
}

static const struct file_operations hold_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = hold_write,
};

static int __init alloctag_test_init(void)
{
	unsigned int i;
	int ret;

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
	if (hold) {
		ret = hand_over();
		if (ret) {
			kfree(object);
			vfree(area);
			__free_pages(pages, 2);
			return ret;
		}
	}
	if (cache) {
		ret = cache_object();
		if (ret) {
			if (hold)
				symbol_put(alloctag_holder_take);
			kfree(object);
			vfree(area);
			__free_pages(pages, 2);
			return ret;
		}
	}
	if (longname) {
		long_named = alloctag_test_function_with_a_name_longer_than_the_ioctls_63_bytes();
		if (!long_named) {
			cache_free();
			if (hold)
				symbol_put(alloctag_holder_take);
			kfree(object);
			vfree(area);
			__free_pages(pages, 2);
			return -ENOMEM;
		}
	}
	hold_dir = debugfs_create_dir("alloctag_test", NULL);
	for (i = 0; i < ARRAY_SIZE(hold_files); i++)
		debugfs_create_file(hold_files[i].name, 0200, hold_dir,
				    (void *)&hold_files[i], &hold_fops);
	debugfs_create_ulong("page_index", 0400, hold_dir, &page_index);
	return 0;
}

static void __exit alloctag_test_exit(void)
{
	debugfs_remove_recursive(hold_dir);
	free_held();
	vfree(held_area);
	free_held_exact();
	free_page_list();
	hold_page_n(0);
	hold_percpu_n(0);
	kfree(long_named);
	cache_free();
	if (!leak)
		kfree(object);
	if (!leak_string)
		kfree(held_string);
	vfree(area);
	__free_pages(pages, 2);
	if (hold)
		symbol_put(alloctag_holder_take);
}

module_init(alloctag_test_init);
module_exit(alloctag_test_exit);
MODULE_DESCRIPTION("alloctag test module");
MODULE_LICENSE("GPL");

/*
 * Last in the file: the #line below names the rest of it, this call site
 * only, with a file name of 86 characters, which /proc/allocinfo shows as the
 * site's file (its tag's filename is __FILE__).
 */
#line 1 "lib/alloctag/tests/modules/alloctag_test_long_file_name_past_the_allocinfo_ioctls_63.c"
static noinline void *alloctag_test_function_with_a_name_longer_than_the_ioctls_63_bytes(void)
{
	return kmalloc(24, GFP_KERNEL);
}
