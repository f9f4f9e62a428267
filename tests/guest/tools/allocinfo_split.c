// SPDX-License-Identifier: GPL-2.0
/*
 * allocinfo_split: drives alloctag's ALLOCINFO_IOC_GET_SPLIT
 * (include/uapi/linux/alloc_tag.h) for tests/guest/split.sh.
 *
 *   allocinfo_split width                 the number of shares (nr 0's answer)
 *   allocinfo_split dump [AT MIN]         every tag (only those holding at least
 *                                         MIN bytes on CPU AT), one line each:
 *                                         "BYTES CALLS file:line [module] func:name"
 *                                         then " cpuN:BYTES/CALLS" for each
 *                                         non-zero share
 *   allocinfo_split site MODULE FUNCTION  that tag's shares, "cpuN BYTES CALLS"
 *                                         for each CPU
 *   allocinfo_split check-errors          bad input and kept state, one line per
 *                                         check ("ok - ..." or "not ok - ...")
 *
 * Every answer is checked: nr is the width, the shares add up to the
 * counter, and entries past nr are left alone. A violation is reported on
 * stderr and makes the exit status 1; 2 is an ioctl that failed otherwise.
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
#include <unistd.h>
#include <linux/alloc_tag.h>

_Static_assert(sizeof(struct allocinfo_split_entry) == 16, "entry layout");
_Static_assert(sizeof(struct allocinfo_get_split) == 496, "get_split layout");
_Static_assert(ALLOCINFO_IOC_GET_SPLIT == 0xc1f0a603, "GET_SPLIT number");

#define CANARY	0x5a5a5a5a5a5a5a5aLL

static int bad;

static int open_file(void)
{
	int fd = open("/proc/allocinfo", O_RDONLY);

	if (fd < 0) {
		perror("/proc/allocinfo");
		exit(2);
	}
	return fd;
}

/* The split asked: SPLIT_BY=node in the environment for the node split. */
static unsigned int by = ALLOCINFO_SPLIT_CPU;
static const char *label = "cpu";

static int split(int fd, struct allocinfo_get_split *p)
{
	return ioctl(fd, ALLOCINFO_IOC_GET_SPLIT, p) ? errno : 0;
}

static unsigned int width(int fd)
{
	struct allocinfo_get_split p = { .by = by, .at = -1 };
	int e = split(fd, &p);

	if (e || !p.nr) {
		fprintf(stderr, "GET_SPLIT nr 0: %s, nr %u\n", strerror(e), p.nr);
		exit(2);
	}
	return p.nr;
}

/* Checks an answer; entries has room for n + 1, the last a canary. */
static void check(const struct allocinfo_get_split *p,
		  const struct allocinfo_split_entry *entries, unsigned int n)
{
	int64_t bytes = 0, calls = 0;
	unsigned int i;

	if (p->nr != n) {
		fprintf(stderr, "nr %u, not the width %u\n", p->nr, n);
		bad = 1;
	}
	for (i = 0; i < n; i++) {
		bytes += entries[i].bytes;
		calls += entries[i].calls;
	}
	if (bytes != (int64_t)p->data.counter.bytes || calls != (int64_t)p->data.counter.calls) {
		fprintf(stderr, "%s:%llu: shares add up to %lld %lld, counter %lld %lld\n",
			p->data.tag.filename, (unsigned long long)p->data.tag.lineno,
			(long long)bytes, (long long)calls,
			(long long)p->data.counter.bytes, (long long)p->data.counter.calls);
		bad = 1;
	}
	if (entries[n].bytes != CANARY || entries[n].calls != CANARY) {
		fprintf(stderr, "an entry past nr was written\n");
		bad = 1;
	}
}

/*
 * Walks every tag (of module/function when given, or holding min bytes on
 * CPU at when at >= 0) and calls show for each.
 */
static void walk(int fd, int at, long long min, const char *module, const char *function,
		 void (*show)(const struct allocinfo_get_split *,
			      const struct allocinfo_split_entry *, unsigned int))
{
	unsigned int n = width(fd);
	struct allocinfo_split_entry *entries = calloc(n + 1, sizeof(*entries));
	struct allocinfo_get_split p;
	int e, count = 0;

	if (!entries)
		exit(2);
	memset(&p, 0, sizeof(p));
	p.by = by;
	p.at = at;
	p.min_at = min;
	if (module) {
		p.filter.mask = ALLOCINFO_FILTER_MASK_MODNAME | ALLOCINFO_FILTER_MASK_FUNCTION;
		snprintf(p.filter.fields.modname, ALLOCINFO_STR_SIZE, "%s", module);
		snprintf(p.filter.fields.function, ALLOCINFO_STR_SIZE, "%s", function);
	}
	for (;;) {
		entries[n].bytes = entries[n].calls = CANARY;
		p.nr = n;
		p.entries = (uintptr_t)entries;
		e = split(fd, &p);
		if (e == ENOENT)
			break;
		if (e) {
			fprintf(stderr, "GET_SPLIT: %s\n", strerror(e));
			exit(2);
		}
		check(&p, entries, n);
		show(&p, entries, n);
		p.flags = ALLOCINFO_SPLIT_NEXT;
		if (++count > 1000000)
			exit(2);
	}
	free(entries);
}

static void show_line(const struct allocinfo_get_split *p,
		      const struct allocinfo_split_entry *entries, unsigned int n)
{
	const struct allocinfo_tag *t = &p->data.tag;
	unsigned int i;

	printf("%lld %llu %s:%llu ", (long long)p->data.counter.bytes,
	       (unsigned long long)p->data.counter.calls, t->filename,
	       (unsigned long long)t->lineno);
	if (t->modname[0])
		printf("[%s] ", t->modname);
	printf("func:%s", t->function);
	for (i = 0; i < n; i++)
		if (entries[i].bytes || entries[i].calls)
			printf(" %s%u:%lld/%lld", label, i, (long long)entries[i].bytes,
			       (long long)entries[i].calls);
	printf("\n");
}

static int sites;

static void show_site(const struct allocinfo_get_split *p,
		      const struct allocinfo_split_entry *entries, unsigned int n)
{
	unsigned int i;

	(void)p;
	sites++;
	for (i = 0; i < n; i++)
		printf("%s%u %lld %lld\n", label, i, (long long)entries[i].bytes,
		       (long long)entries[i].calls);
}

static void expect(const char *what, int got, int want)
{
	printf("%s - %s (%s)\n", got == want ? "ok" : "not ok", what, strerror(got));
	if (got != want)
		bad = 1;
}

static void check_errors(void)
{
	int fd = open_file();
	unsigned int n = width(fd);
	struct allocinfo_split_entry *entries = calloc(n + 1, sizeof(*entries));
	struct allocinfo_split_entry *ro;
	struct allocinfo_get_split p, q;
	struct allocinfo_get_at at;

	if (!entries)
		exit(2);
	memset(&p, 0, sizeof(p));
	p.by = ALLOCINFO_SPLIT_CPU;
	p.at = -1;
	p.nr = n;
	p.entries = (uintptr_t)entries;

	q = p;
	q.flags = ALLOCINFO_SPLIT_NEXT;
	expect("NEXT before any GET_SPLIT is EINVAL", split(fd, &q), EINVAL);
	q = p;
	q.by = 2;
	expect("an unknown split is EINVAL", split(fd, &q), EINVAL);
	q = p;
	q.by = ALLOCINFO_SPLIT_NODE;
	expect("the node split without per-node counting is EOPNOTSUPP", split(fd, &q), EOPNOTSUPP);
	q = p;
	q.flags = 2;
	expect("an unknown flag is EINVAL", split(fd, &q), EINVAL);
	q = p;
	q.at = n;
	expect("a CPU at nr_cpu_ids is EINVAL", split(fd, &q), EINVAL);
	q = p;
	q.at = -2;
	expect("a CPU of -2 is EINVAL", split(fd, &q), EINVAL);
	q = p;
	q.nr = n - 1;
	expect("room for one share less is EINVAL", n > 1 ? split(fd, &q) : EINVAL, EINVAL);
	q = p;
	q.filter.mask = 1 << 30;
	expect("an unknown filter bit is EINVAL", split(fd, &q), EINVAL);
	q = p;
	q.pos = 1ULL << 40;
	expect("a pos beyond the tags is ENOENT", split(fd, &q), ENOENT);
	/* None of those kept a split: NEXT still has none. */
	q = p;
	q.flags = ALLOCINFO_SPLIT_NEXT;
	expect("failed requests keep no split", split(fd, &q), EINVAL);

	q = p;
	q.nr = 0;
	q.entries = 0;
	expect("nr 0 asks for the width", split(fd, &q), 0);
	expect("nr 0's answer is nr_cpu_ids", q.nr == n ? 0 : EDOM, 0);

	q = p;
	q.entries = 8;
	expect("an unmapped array is EFAULT", split(fd, &q), EFAULT);
	ro = mmap(NULL, 4096 + n * sizeof(*ro), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro != MAP_FAILED) {
		q = p;
		q.entries = (uintptr_t)ro;
		expect("a read-only array is EFAULT", split(fd, &q), EFAULT);
	}

	/* A good request keeps its split for NEXT; GET_AT drops it. */
	q = p;
	expect("GET_SPLIT pos 0", split(fd, &q), 0);
	q.flags = ALLOCINFO_SPLIT_NEXT;
	q.by = 7;	/* not read with NEXT: the kept split is */
	expect("NEXT after it", split(fd, &q), 0);
	memset(&at, 0, sizeof(at));
	expect("GET_AT 0", ioctl(fd, ALLOCINFO_IOC_GET_AT, &at) ? errno : 0, 0);
	q = p;
	q.flags = ALLOCINFO_SPLIT_NEXT;
	expect("NEXT after GET_AT is EINVAL: GET_AT dropped the split", split(fd, &q), EINVAL);
	close(fd);
	free(entries);
}

int main(int argc, char **argv)
{
	const char *split_by = getenv("SPLIT_BY");

	if (split_by && !strcmp(split_by, "node")) {
		by = ALLOCINFO_SPLIT_NODE;
		label = "node";
	}
	if (argc == 2 && !strcmp(argv[1], "width")) {
		printf("%u\n", width(open_file()));
	} else if (argc == 2 && !strcmp(argv[1], "dump")) {
		walk(open_file(), -1, 0, NULL, NULL, show_line);
	} else if (argc == 4 && !strcmp(argv[1], "dump")) {
		walk(open_file(), atoi(argv[2]), atoll(argv[3]), NULL, NULL, show_line);
	} else if (argc == 4 && !strcmp(argv[1], "site")) {
		walk(open_file(), -1, 0, argv[2], argv[3], show_site);
		if (sites != 1) {
			fprintf(stderr, "%d tags of [%s] %s\n", sites, argv[2], argv[3]);
			return 1;
		}
	} else if (argc == 2 && !strcmp(argv[1], "check-errors")) {
		check_errors();
	} else {
		fprintf(stderr, "usage: allocinfo_split width|dump [AT MIN]|site MODULE FUNCTION|check-errors\n");
		return 2;
	}
	return bad;
}
