// SPDX-License-Identifier: GPL-2.0
/*
 * alloctag benchmark: many tags (scripts/bench.sh with BENCH_TAGS=N).
 *
 * Allocation call sites, each a function of its own, so that /proc/allocinfo
 * has that many more tags while the module is loaded: the /proc/allocinfo
 * read and query benchmarks (scripts/bench/guest.sh) run at a few thousand
 * tags without building a kernel with a few thousand call sites. The sites
 * are the SITE() lines of the header named by ALLOCTAG_BENCH_TAGS_SITES.
 * scripts/mkinitramfs.sh --bench generates those headers and, per 1,000 sites,
 * a module alloctag_bench_tags_I.c that includes this file (with the C
 * core each site's counters are 16 bytes of static per-CPU data, and a
 * module's static per-CPU data is one allocation of at most 32 KiB), and
 * builds them out of tree against each benchmark kernel. The test modules'
 * alloctag_many_tags.c includes it too.
 *
 * Loading it allocates and frees once, from the site given by site= (with
 * hold=1 it frees at unload), and prints "alloctag-bench-tags: sites=N".
 */

#define pr_fmt(fmt) "alloctag-bench-tags: " fmt

#include <linux/module.h>
#include <linux/slab.h>

#ifndef ALLOCTAG_BENCH_TAGS_SITES
#define ALLOCTAG_BENCH_TAGS_SITES "alloctag_bench_tags_sites.h"
#endif

#define SITE(n)								\
	static noinline void *alloctag_bench_site_##n(size_t size)	\
	{								\
		return kmalloc(size, GFP_KERNEL);			\
	}
#include ALLOCTAG_BENCH_TAGS_SITES
#undef SITE

#define SITE(n) alloctag_bench_site_##n,
static void *(*const sites[])(size_t) = {
#include ALLOCTAG_BENCH_TAGS_SITES
};
#undef SITE

static unsigned int site;
module_param(site, uint, 0444);
MODULE_PARM_DESC(site, "the call site that allocates once at load");

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "keep that allocation until unload");

static void *held;

static int __init alloctag_bench_tags_init(void)
{
	void *p = sites[site % ARRAY_SIZE(sites)](8);

	if (!p)
		return -ENOMEM;
	if (hold)
		held = p;
	else
		kfree(p);
	pr_info("sites=%zu\n", ARRAY_SIZE(sites));
	return 0;
}

static void __exit alloctag_bench_tags_exit(void)
{
	kfree(held);
}

module_init(alloctag_bench_tags_init);
module_exit(alloctag_bench_tags_exit);
MODULE_DESCRIPTION("alloctag benchmark: a module of many allocation call sites");
MODULE_LICENSE("GPL");
