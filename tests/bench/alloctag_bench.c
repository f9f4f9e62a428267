// SPDX-License-Identifier: GPL-2.0
/*
 * alloctag benchmark, C part (scripts/bench.sh, Documentation/benchmarks.rst).
 *
 * Loaded with mode=alloc it times the allocators in loops, in the loading
 * task, which the guest script pins to CPU 0 (taskset; every line printed
 * says on which CPU it ran):
 *
 *   kmalloc/kfree of 8 to 4096 bytes, krealloc(NULL, 64)/kfree (the path a
 *   Rust KBox takes, for the Rust module's rows), kmem_cache_alloc/free of a
 *   128-byte cache of its own, alloc_pages/__free_pages of order 0 and 3, and
 *   vmalloc/vfree of 4 pages.
 *
 * Each test allocates a batch of objects, then frees the batch, and repeats
 * (ops allocations; ops/4 for pages, ops/16 for vmalloc, which cost more);
 * the clock (ktime_get_ns()) is read around each batch, so the cost of
 * reading it is spread over the batch. Then it makes the same allocations
 * one at a time, each freed before the next (pair_ns): no batch straddles two
 * slabs, so that figure does not move with how full a slab was at boot. It
 * prints one line per test:
 *
 *   alloctag-bench: test=T ops=N ns_per_op=X.YYY alloc_ns=A.AAA free_ns=F.FFF pair_ns=P.PPP cpu=C
 *
 * where one op is one allocation and its free. The module stays loaded,
 * allocating nothing, until rmmod.
 *
 * Loaded with mode=allocinfo it times reads of the whole /proc/allocinfo
 * with read buffers of 1 MiB, 4096 and 64 bytes, as "dd bs=..." would do
 * them, and prints per buffer size:
 *
 *   alloctag-bench: test=allocinfo-bs=B reads=N bytes=S lines=L ns_per_read=X cpu=C
 *
 * where one read is the whole file, from open to close.
 */

#define pr_fmt(fmt) "alloctag-bench: " fmt

#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/smp.h>
#include <linux/vmalloc.h>

static char *mode = "alloc";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "alloc: allocator loops; allocinfo: /proc/allocinfo reads");

static unsigned int ops = 262144;
module_param(ops, uint, 0444);
MODULE_PARM_DESC(ops, "allocations per slab test; pages tests make ops/4, vmalloc ops/16");

static unsigned int batch = 64;
module_param(batch, uint, 0444);
MODULE_PARM_DESC(batch, "objects allocated before they are freed");

static unsigned int reads = 20;
module_param(reads, uint, 0444);
MODULE_PARM_DESC(reads, "whole-file reads of /proc/allocinfo per buffer size");

#define MAX_BATCH 1024

enum kind { KMALLOC, KREALLOC, CACHE, PAGES, VMALLOC };

struct test {
	const char *name;
	enum kind kind;
	size_t size;	/* bytes, or the page order */
	unsigned int shift;	/* the test makes ops >> shift allocations */
};

static const struct test tests[] = {
	{ "kmalloc-8", KMALLOC, 8 },
	{ "kmalloc-16", KMALLOC, 16 },
	{ "kmalloc-32", KMALLOC, 32 },
	{ "kmalloc-64", KMALLOC, 64 },
	{ "kmalloc-128", KMALLOC, 128 },
	{ "kmalloc-256", KMALLOC, 256 },
	{ "kmalloc-512", KMALLOC, 512 },
	{ "kmalloc-1024", KMALLOC, 1024 },
	{ "kmalloc-2048", KMALLOC, 2048 },
	{ "kmalloc-4096", KMALLOC, 4096 },
	{ "c-krealloc-64", KREALLOC, 64 },
	{ "kmem_cache-128", CACHE, 128 },
	{ "pages-order0", PAGES, 0, 2 },
	{ "pages-order3", PAGES, 3, 2 },
	{ "vmalloc-16k", VMALLOC, 4 * PAGE_SIZE, 4 },
};

static struct kmem_cache *cache;
static void **objs;

/*
 * Allocates n objects of test t into objs[]; each call site below is a
 * call site of its own in /proc/allocinfo.
 */
static noinline int alloc_batch(const struct test *t, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		switch (t->kind) {
		case KMALLOC:
			objs[i] = kmalloc(t->size, GFP_KERNEL);
			break;
		case KREALLOC:
			objs[i] = krealloc(NULL, t->size, GFP_KERNEL);
			break;
		case CACHE:
			objs[i] = kmem_cache_alloc(cache, GFP_KERNEL);
			break;
		case PAGES:
			objs[i] = alloc_pages(GFP_KERNEL, t->size);
			break;
		case VMALLOC:
			objs[i] = vmalloc(t->size);
			break;
		}
		if (unlikely(!objs[i]))
			return -ENOMEM;
	}
	return 0;
}

static noinline void free_batch(const struct test *t, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (unlikely(!objs[i]))
			continue;
		switch (t->kind) {
		case KMALLOC:
		case KREALLOC:
			kfree(objs[i]);
			break;
		case CACHE:
			kmem_cache_free(cache, objs[i]);
			break;
		case PAGES:
			__free_pages(objs[i], t->size);
			break;
		case VMALLOC:
			vfree(objs[i]);
			break;
		}
		objs[i] = NULL;
	}
}

/* Prints ns / n with three decimals. */
static void fmt_per_op(char *buf, size_t len, u64 ns, u64 n)
{
	u64 milli = div64_u64(ns * 1000, n);

	snprintf(buf, len, "%llu.%03llu", milli / 1000, milli % 1000);
}

static int run_test(const struct test *t)
{
	u64 alloc_ns = 0, free_ns = 0, pair_ns, t0, t1, t2;
	unsigned int done, rounds = max((ops >> t->shift) / batch, 1U);
	char per_op[24], per_alloc[24], per_free[24], per_pair[24];
	int ret;

	/* Warm up: fill the per-CPU caches and slabs the loop will use. */
	for (done = 0; done < 4; done++) {
		ret = alloc_batch(t, batch);
		free_batch(t, batch);
		if (ret)
			return ret;
	}

	for (done = 0; done < rounds; done++) {
		t0 = ktime_get_ns();
		ret = alloc_batch(t, batch);
		t1 = ktime_get_ns();
		free_batch(t, batch);
		t2 = ktime_get_ns();
		if (ret)
			return ret;
		alloc_ns += t1 - t0;
		free_ns += t2 - t1;
		cond_resched();
	}

	/*
	 * The same allocations made and freed one at a time: each object goes
	 * back where the next comes from, so no batch straddles two slabs and
	 * every kernel takes the same fast paths. A batch's slow frees depend
	 * on how full the slab was at boot and move a row by tens of
	 * instructions between kernels; this figure does not (benchmarks.rst,
	 * the floor table, reads it).
	 */
	t0 = ktime_get_ns();
	for (done = 0; done < rounds * batch; done++) {
		ret = alloc_batch(t, 1);
		free_batch(t, 1);
		if (ret)
			return ret;
		if (!(done % MAX_BATCH))
			cond_resched();
	}
	pair_ns = ktime_get_ns() - t0;

	fmt_per_op(per_op, sizeof(per_op), alloc_ns + free_ns, (u64)rounds * batch);
	fmt_per_op(per_alloc, sizeof(per_alloc), alloc_ns, (u64)rounds * batch);
	fmt_per_op(per_free, sizeof(per_free), free_ns, (u64)rounds * batch);
	fmt_per_op(per_pair, sizeof(per_pair), pair_ns, (u64)rounds * batch);
	pr_info("test=%s ops=%u ns_per_op=%s alloc_ns=%s free_ns=%s pair_ns=%s cpu=%d\n",
		t->name, rounds * batch, per_op, per_alloc, per_free, per_pair,
		raw_smp_processor_id());
	return 0;
}

static int run_alloc(void)
{
	unsigned int i;
	int ret = 0;

	cache = kmem_cache_create("alloctag_bench", 128, 0, SLAB_NO_MERGE, NULL);
	if (!cache)
		return -ENOMEM;
	objs = kcalloc(batch, sizeof(*objs), GFP_KERNEL);
	if (!objs) {
		kmem_cache_destroy(cache);
		return -ENOMEM;
	}
	for (i = 0; i < ARRAY_SIZE(tests) && !ret; i++)
		ret = run_test(&tests[i]);
	kfree(objs);
	kmem_cache_destroy(cache);
	return ret;
}

/* Reads the whole file with reads of bs bytes; returns the bytes read. */
static ssize_t read_whole(const char *path, char *buf, size_t bs, unsigned int *lines)
{
	struct file *f;
	ssize_t total = 0, n;
	loff_t pos = 0;
	size_t i;

	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	*lines = 0;
	while ((n = kernel_read(f, buf, bs, &pos)) > 0) {
		total += n;
		for (i = 0; i < n; i++)
			*lines += buf[i] == '\n';
	}
	filp_close(f, NULL);
	return n < 0 ? n : total;
}

static int run_allocinfo(void)
{
	static const size_t sizes[] = { SZ_1M, 4096, 64 };
	unsigned int i, r, lines;
	ssize_t bytes = 0;
	u64 t0, ns;
	char *buf;

	buf = vmalloc(SZ_1M);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		/* One untimed read first, as the warm-up of the alloc tests. */
		bytes = read_whole("/proc/allocinfo", buf, sizes[i], &lines);
		if (bytes < 0)
			break;
		ns = 0;
		for (r = 0; r < reads; r++) {
			t0 = ktime_get_ns();
			bytes = read_whole("/proc/allocinfo", buf, sizes[i], &lines);
			ns += ktime_get_ns() - t0;
			if (bytes < 0)
				break;
			cond_resched();
		}
		if (bytes < 0)
			break;
		pr_info("test=allocinfo-bs=%zu reads=%u bytes=%zd lines=%u ns_per_read=%llu cpu=%d\n",
			sizes[i], reads, bytes, lines, div_u64(ns, reads),
			raw_smp_processor_id());
	}
	vfree(buf);
	return bytes < 0 ? bytes : 0;
}

static int __init alloctag_bench_init(void)
{
	int ret;

	if (!batch || batch > MAX_BATCH || ops < batch)
		return -EINVAL;
	if (!strcmp(mode, "alloc"))
		ret = run_alloc();
	else if (!strcmp(mode, "allocinfo"))
		ret = run_allocinfo();
	else
		return -EINVAL;
	if (ret) {
		pr_err("mode=%s failed: %d\n", mode, ret);
		return ret;
	}
	pr_info("mode=%s finished\n", mode);
	return 0;
}

static void __exit alloctag_bench_exit(void)
{
}

module_init(alloctag_bench_init);
module_exit(alloctag_bench_exit);
MODULE_DESCRIPTION("alloctag benchmark: allocator loops and /proc/allocinfo reads");
MODULE_LICENSE("GPL");
