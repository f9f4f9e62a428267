// SPDX-License-Identifier: GPL-2.0
/*
 * numa_migrate: migrates a process's own anonymous pages from one NUMA node
 * to another with move_pages(2), and checks that per-node counting moved
 * their charge with them (tests/guest/numa.sh).
 *
 *   numa_migrate PAGES FROM TO
 *
 * It binds PAGES fresh anonymous pages to node FROM (mbind(2)), touches
 * them, and checks that each is there; reads every tag's node split
 * (ALLOCINFO_IOC_GET_SPLIT by node), moves the pages to TO, checks that
 * each moved, and reads the split again. Between the two reads this
 * process allocates nothing and nothing else runs but the kernel's
 * threads: the tag that charged the pages (the anonymous fault's) must
 * show node FROM down by exactly PAGES pages and PAGES calls, TO up by as
 * much, and its total unchanged. It prints "moved FILE:LINE func:NAME" for
 * each tag that did, or every tag whose split changed, and exits 0 when
 * one did, 1 otherwise, 2 when a call failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/alloc_tag.h>

#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)
#define MAX_TAGS	16384

struct snap {
	char key[3 * ALLOCINFO_STR_SIZE + 64];
	long long bytes, calls;
	struct allocinfo_split_entry *shares;
};

static unsigned int width;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* Every tag's node split, into snaps (allocated before the first read). */
static int take(int fd, struct snap *snaps, struct allocinfo_split_entry *all)
{
	struct allocinfo_get_split p;
	int n = 0;

	memset(&p, 0, sizeof(p));
	p.by = ALLOCINFO_SPLIT_NODE;
	p.at = -1;
	for (;;) {
		if (n == MAX_TAGS) {
			fprintf(stderr, "more than %d tags\n", MAX_TAGS);
			exit(2);
		}
		snaps[n].shares = all + (size_t)n * width;
		p.nr = width;
		p.entries = (uintptr_t)snaps[n].shares;
		if (ioctl(fd, ALLOCINFO_IOC_GET_SPLIT, &p)) {
			if (errno == ENOENT)
				return n;
			die("GET_SPLIT");
		}
		snprintf(snaps[n].key, sizeof(snaps[n].key), "%s:%llu func:%s%s%s",
			 p.data.tag.filename, (unsigned long long)p.data.tag.lineno,
			 p.data.tag.function, p.data.tag.modname[0] ? " " : "",
			 p.data.tag.modname);
		snaps[n].bytes = p.data.counter.bytes;
		snaps[n].calls = (long long)p.data.counter.calls;
		p.flags = ALLOCINFO_SPLIT_NEXT;
		n++;
	}
}

int main(int argc, char **argv)
{
	struct allocinfo_get_split q = { .by = ALLOCINFO_SPLIT_NODE, .at = -1 };
	struct allocinfo_split_entry *all_a, *all_b;
	int fd, i, j, na, nb, from, to, moved = 0, *nodes, *status;
	struct snap *a, *b;
	unsigned long mask;
	long pages, psize = sysconf(_SC_PAGESIZE);
	char *mem;
	void **addrs;

	if (argc != 4) {
		fprintf(stderr, "usage: numa_migrate PAGES FROM TO\n");
		return 2;
	}
	pages = atol(argv[1]);
	from = atoi(argv[2]);
	to = atoi(argv[3]);
	fd = open("/proc/allocinfo", O_RDONLY);
	if (fd < 0)
		die("/proc/allocinfo");
	if (ioctl(fd, ALLOCINFO_IOC_GET_SPLIT, &q))
		die("GET_SPLIT nr 0 by node");
	width = q.nr;
	if (from < 0 || to < 0 || (unsigned int)from >= width - 1 || (unsigned int)to >= width - 1) {
		fprintf(stderr, "nodes %d and %d: the split has %u nodes\n", from, to, width - 1);
		return 2;
	}
	/*
	 * Everything this process uses between the reads, allocated and
	 * touched now: written with a non-zero byte, as a compiler drops a
	 * memset() of zeros after calloc() (and makes calloc() of malloc()
	 * and one), which would leave the pages to fault in between the reads.
	 */
	a = malloc(MAX_TAGS * sizeof(*a));
	b = malloc(MAX_TAGS * sizeof(*b));
	all_a = malloc((size_t)MAX_TAGS * width * sizeof(*all_a));
	all_b = malloc((size_t)MAX_TAGS * width * sizeof(*all_b));
	addrs = malloc(pages * sizeof(*addrs));
	nodes = malloc(pages * sizeof(*nodes));
	status = malloc(pages * sizeof(*status));
	if (!a || !b || !all_a || !all_b || !addrs || !nodes || !status)
		die("malloc");
	memset(a, 1, MAX_TAGS * sizeof(*a));
	memset(b, 1, MAX_TAGS * sizeof(*b));
	memset(all_a, 1, (size_t)MAX_TAGS * width * sizeof(*all_a));
	memset(all_b, 1, (size_t)MAX_TAGS * width * sizeof(*all_b));
	memset(status, 1, pages * sizeof(*status));
	mem = mmap(NULL, pages * psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	/* small pages, one charge each */
	madvise(mem, pages * psize, MADV_NOHUGEPAGE);
	mask = 1UL << from;
	if (syscall(SYS_mbind, mem, pages * psize, MPOL_BIND, &mask, 64, 0))
		die("mbind");
	for (i = 0; i < pages; i++) {
		mem[i * psize] = 1;
		addrs[i] = mem + i * psize;
		nodes[i] = to;
	}
	if (syscall(SYS_move_pages, 0, pages, addrs, NULL, status, 0))
		die("move_pages (query)");
	for (i = 0; i < pages; i++)
		if (status[i] != from) {
			fprintf(stderr, "page %d is on node %d, not %d\n", i, status[i], from);
			return 2;
		}
	/* the policy now allows the target (a policy change alone moves nothing) */
	mask = 1UL << to;
	if (syscall(SYS_mbind, mem, pages * psize, MPOL_BIND, &mask, 64, 0))
		die("mbind to the target");
	/*
	 * A move to where the pages are: it drains every CPU's page batches
	 * (lru_cache_disable()), whose last references to an exited
	 * process's pages would otherwise free them between the reads.
	 */
	for (i = 0; i < pages; i++)
		nodes[i] = from;
	if (syscall(SYS_move_pages, 0, pages, addrs, nodes, status, MPOL_MF_MOVE))
		die("move_pages (drain)");
	for (i = 0; i < pages; i++)
		nodes[i] = to;
	na = take(fd, a, all_a);
	if (getenv("NO_MOVE"))
		to = from;
	else if (syscall(SYS_move_pages, 0, pages, addrs, nodes, status, MPOL_MF_MOVE))
		die("move_pages");
	nb = take(fd, b, all_b);
	for (i = 0; i < pages; i++)
		if (status[i] != to) {
			fprintf(stderr, "page %d: status %d after the move, not node %d\n", i, status[i], to);
			return 2;
		}
	for (i = 0; i < nb; i++) {
		struct snap *x = NULL;
		long long d_from, d_to, c_from, c_to;
		int changed = 0;

		/* the tags come in one order: the same index first */
		if (i < na && !strcmp(a[i].key, b[i].key))
			x = &a[i];
		for (j = 0; j < na && !x; j++)
			if (!strcmp(a[j].key, b[i].key))
				x = &a[j];
		if (!x)
			continue;
		d_from = b[i].shares[from].bytes - x->shares[from].bytes;
		d_to = b[i].shares[to].bytes - x->shares[to].bytes;
		c_from = b[i].shares[from].calls - x->shares[from].calls;
		c_to = b[i].shares[to].calls - x->shares[to].calls;
		if (d_from == -pages * psize && d_to == pages * psize && c_from == -pages &&
		    c_to == pages && b[i].bytes == x->bytes && b[i].calls == x->calls) {
			printf("moved %s\n", b[i].key);
			moved++;
			continue;
		}
		for (j = 0; j < (int)width; j++)
			changed |= b[i].shares[j].bytes != x->shares[j].bytes ||
				   b[i].shares[j].calls != x->shares[j].calls;
		if (!changed)
			continue;
		printf("changed %s:", b[i].key);
		for (j = 0; j < (int)width; j++)
			printf(" node%d %+lld/%+lld", j, b[i].shares[j].bytes - x->shares[j].bytes,
			       b[i].shares[j].calls - x->shares[j].calls);
		printf("\n");
	}
	return moved ? 0 : 1;
}
