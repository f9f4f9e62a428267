// SPDX-License-Identifier: GPL-2.0
/*
 * Allocations on a chosen NUMA node, for the tests of the NUMA boot
 * (tests/guest/numa.sh): memory whose node differs from the node of the CPU
 * that asked for it, and freed from yet another CPU.
 *
 * A write of "KIND NODE N" to /sys/kernel/debug/alloctag_numa/hold makes N
 * more allocations of KIND for node NODE, in the writer's context (so on the
 * CPU the writer runs on), each at its own call site: slab, kmalloc_node() of
 * 512 bytes (hold_slab_node()); page, alloc_pages_node() of one page
 * (hold_page_node()); vmalloc, vmalloc_node() of four pages
 * (hold_vmalloc_node()). The first two with __GFP_THISNODE: without it
 * SLUB (and SLUB_TINY always) may hand out a free object of another node's
 * partial slab; NODE -1 (NUMA_NO_NODE) leaves both out, so that the memory
 * is where the allocator's policy puts it (for a CPU of a node without
 * memory, the nearest node with some). At most 64 of each are held. A write of "free"
 * frees them all, in the writer's context. Reading
 * /sys/kernel/debug/alloctag_numa/nodes gives each held allocation's node,
 * one line per kind ("slab 1 1 1"): the node of its slab, of its page, or
 * of its pages when they all have one ("mixed" when not).
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#define HELD_MAX	64
#define SLAB_SIZE	512
#define VMALLOC_PAGES	4

enum kind { SLAB, PAGE, VMALLOC, KINDS };

static const char *const kind_names[KINDS] = { "slab", "page", "vmalloc" };

static DEFINE_MUTEX(held_lock);
static void *held[KINDS][HELD_MAX];
static unsigned int held_n[KINDS];
static struct dentry *dir;

/* on that node exactly; or where the allocator's policy puts it, for -1 */
static gfp_t gfp_for(int node)
{
	return node == NUMA_NO_NODE ? GFP_KERNEL : GFP_KERNEL | __GFP_THISNODE;
}

static noinline void *hold_slab_node(int node)
{
	return kmalloc_node(SLAB_SIZE, gfp_for(node), node);
}

static noinline void *hold_page_node(int node)
{
	struct page *page = alloc_pages_node(node, gfp_for(node), 0);

	return page ? page_address(page) : NULL;
}

static noinline void *hold_vmalloc_node(int node)
{
	return vmalloc_node(VMALLOC_PAGES * PAGE_SIZE, node);
}

static void release(enum kind k, void *p)
{
	switch (k) {
	case SLAB:
		kfree(p);
		break;
	case PAGE:
		free_page((unsigned long)p);
		break;
	default:
		vfree(p);
	}
}

/* The node of p's memory, or -1 for a vmalloc area across nodes. */
static int node_of(enum kind k, void *p)
{
	int nid, i;

	if (k != VMALLOC)
		return page_to_nid(virt_to_page(p));
	nid = page_to_nid(vmalloc_to_page(p));
	for (i = 1; i < VMALLOC_PAGES; i++)
		if (page_to_nid(vmalloc_to_page(p + i * PAGE_SIZE)) != nid)
			return -1;
	return nid;
}

static int hold(enum kind k, int node, unsigned int n)
{
	void *p;

	if (held_n[k] + n > HELD_MAX)
		return -ENOSPC;
	while (n--) {
		if (k == SLAB)
			p = hold_slab_node(node);
		else if (k == PAGE)
			p = hold_page_node(node);
		else
			p = hold_vmalloc_node(node);
		if (!p)
			return -ENOMEM;
		held[k][held_n[k]++] = p;
	}
	return 0;
}

static void free_all(void)
{
	enum kind k;

	for (k = 0; k < KINDS; k++)
		while (held_n[k])
			release(k, held[k][--held_n[k]]);
}

static ssize_t hold_write(struct file *file, const char __user *ubuf, size_t len, loff_t *ppos)
{
	char buf[32], name[8];
	unsigned int n;
	enum kind k;
	int node, ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&held_lock);
	if (sysfs_streq(buf, "free")) {
		free_all();
		ret = len;
		goto out;
	}
	ret = -EINVAL;
	if (sscanf(buf, "%7s %d %u", name, &node, &n) != 3 ||
	    (node != NUMA_NO_NODE &&
	     (node < 0 || node >= nr_node_ids || !node_online(node))))
		goto out;
	for (k = 0; k < KINDS; k++)
		if (!strcmp(name, kind_names[k]))
			break;
	if (k == KINDS)
		goto out;
	ret = hold(k, node, n);
	if (!ret)
		ret = len;
out:
	mutex_unlock(&held_lock);
	return ret;
}

static const struct file_operations hold_fops = {
	.owner = THIS_MODULE,
	.write = hold_write,
	.llseek = noop_llseek,
};

static int nodes_show(struct seq_file *m, void *v)
{
	unsigned int i;
	enum kind k;
	int nid;

	mutex_lock(&held_lock);
	for (k = 0; k < KINDS; k++) {
		seq_puts(m, kind_names[k]);
		for (i = 0; i < held_n[k]; i++) {
			nid = node_of(k, held[k][i]);
			if (nid < 0)
				seq_puts(m, " mixed");
			else
				seq_printf(m, " %d", nid);
		}
		seq_putc(m, '\n');
	}
	mutex_unlock(&held_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nodes);

static int __init alloctag_numa_init(void)
{
	dir = debugfs_create_dir("alloctag_numa", NULL);
	debugfs_create_file("hold", 0200, dir, NULL, &hold_fops);
	debugfs_create_file("nodes", 0400, dir, NULL, &nodes_fops);
	return 0;
}

static void __exit alloctag_numa_exit(void)
{
	debugfs_remove_recursive(dir);
	mutex_lock(&held_lock);
	free_all();
	mutex_unlock(&held_lock);
}

module_init(alloctag_numa_init);
module_exit(alloctag_numa_exit);
MODULE_DESCRIPTION("alloctag test: allocations on a chosen NUMA node");
MODULE_LICENSE("GPL");
