// SPDX-License-Identifier: GPL-2.0
/*
 * allocinfo_ioctl: drives /proc/allocinfo's ioctls (mainline's ABI, magic
 * 0xA6, include/uapi/linux/alloc_tag.h) for tests/guest/ioctl.sh.
 *
 *   allocinfo_ioctl dump [FILTER...]        GET_AT(0) then GET_NEXT until ENOENT
 *   allocinfo_ioctl next-dump               GET_NEXT alone on a fresh fd
 *   allocinfo_ioctl retry-dump [FILTER...]  dump between two CONTENT_IDs, again
 *                                           while they differ (the kselftest's loop)
 *   allocinfo_ioctl snapshot T1 DUMP T2 [FILTER...]
 *                                           the text (less its header) into file
 *                                           T1, the dump into DUMP, the text again
 *                                           into T2, all between two equal content
 *                                           ids, by this one process: no other
 *                                           process's memory moves the counters
 *                                           between the three, and this one's
 *                                           memory is all allocated first
 *   allocinfo_ioctl get-at POS [FILTER...]  one GET_AT
 *   allocinfo_ioctl content-id
 *   allocinfo_ioctl check-errors            bad input and iterator state, one
 *                                           line per check ("ok - ..." or
 *                                           "not ok - ...")
 *
 * FILTER: --module M (M may be "" for built-in code), --function F, --file F,
 * --line N, --inaccurate V, --min BYTES, --max BYTES, --unloaded 1 (alloctag's:
 * only unloaded modules' tags), --mask BITS (ORed into
 * the mask as they are, for unknown bits). Names are copied into their 64
 * bytes as given, not trimmed: a name of 64 characters or more fills them
 * with no NUL, as a careless caller would.
 *
 * Tags print as /proc/allocinfo's lines: "%12lli %8llu file:line [module]
 * func:name ", the module part only for a non-empty modname and mainline's
 * " accurate:no" before the last space when counter.accurate is 0, then
 * alloctag's " unloaded:yes" when counter.unloaded is 1 (as version 2.0). Names are
 * what the ioctl returns: the last 63 characters of longer ones.
 *
 * Every tag returned is checked: NUL-terminated, zero-padded names (mainline
 * copies them with strscpy_pad(); an empty modname is just a NUL), accurate 0 or 1, a GET_NEXT record zeroed
 * around its fields (mainline memsets it), and the filter asked for holds for
 * it (same trimmed names, line, accuracy, bytes in [min, max] as unsigned).
 * A violation is reported on stderr and makes the exit status 1.
 *
 * Exit status: 0 done (an empty dump included), 1 a check failed, get-at's
 * ENOENT, 2 an ioctl failed otherwise or bad usage, 3 retry-dump's or
 * snapshot's content id never held still.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/alloc_tag.h>

#define PROC_ALLOCINFO	"/proc/allocinfo"
/* A walk longer than this does not end: the kernel never said ENOENT. */
#define WALK_CAP	1000000
#define STR		ALLOCINFO_STR_SIZE

_Static_assert(sizeof(struct allocinfo_tag) == 200, "allocinfo_tag layout");
_Static_assert(sizeof(struct allocinfo_counter) == 24, "allocinfo_counter layout");
_Static_assert(sizeof(struct allocinfo_tag_data) == 224, "allocinfo_tag_data layout");
_Static_assert(sizeof(struct allocinfo_filter) == 232, "allocinfo_filter layout");
_Static_assert(sizeof(struct allocinfo_get_at) == 464, "allocinfo_get_at layout");
_Static_assert(ALLOCINFO_IOC_CONTENT_ID == 0x8008a600, "CONTENT_ID number");
_Static_assert(ALLOCINFO_IOC_GET_AT == 0xc1d0a601, "GET_AT number");
_Static_assert(ALLOCINFO_IOC_GET_NEXT == 0x80e0a602, "GET_NEXT number");

static int bad_records;	/* tags that broke a check of the output */

static const char *errname(int e)
{
	const char *name;

	if (e == 0)
		return "0";
	name = strerrorname_np(e);
	return name ? name : "E?";
}

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

static int open_allocinfo(void)
{
	int fd = open(PROC_ALLOCINFO, O_RDONLY);

	if (fd < 0) {
		fprintf(stderr, "allocinfo_ioctl: open %s: %s\n", PROC_ALLOCINFO, errname(errno));
		exit(2);
	}
	return fd;
}

/* --- records ------------------------------------------------------------ */

struct vec {
	struct allocinfo_tag_data *v;
	size_t n, cap;
};

static void vec_push(struct vec *vec, const struct allocinfo_tag_data *d)
{
	if (vec->n == vec->cap) {
		vec->cap = vec->cap ? 2 * vec->cap : 1024;
		vec->v = realloc(vec->v, vec->cap * sizeof(*vec->v));
		if (!vec->v) {
			perror("realloc");
			exit(2);
		}
	}
	vec->v[vec->n++] = *d;
}

static void print_tag(FILE *out, const struct allocinfo_tag_data *d)
{
	fprintf(out, "%12lli %8llu %.*s:%llu ", (long long)d->counter.bytes,
		(unsigned long long)d->counter.calls, STR, d->tag.filename,
		(unsigned long long)d->tag.lineno);
	if (d->tag.modname[0])
		fprintf(out, "[%.*s] ", STR, d->tag.modname);
	fprintf(out, "func:%.*s%s%s \n", STR, d->tag.function,
		d->counter.accurate ? "" : " accurate:no", d->counter.unloaded ? " unloaded:yes" : "");
}

static void describe(char *buf, size_t len, const struct allocinfo_tag_data *d)
{
	snprintf(buf, len, "%.*s:%llu [%.*s] func:%.*s", STR, d->tag.filename,
		 (unsigned long long)d->tag.lineno, STR, d->tag.modname, STR, d->tag.function);
}

/* The same call site: names, line (not the counters, which move). */
static int same_tag(const struct allocinfo_tag_data *a, const struct allocinfo_tag_data *b)
{
	return !strncmp(a->tag.modname, b->tag.modname, STR) &&
	       !strncmp(a->tag.function, b->tag.function, STR) &&
	       !strncmp(a->tag.filename, b->tag.filename, STR) &&
	       a->tag.lineno == b->tag.lineno;
}

/* Non-NULL when a name has no NUL or is not zero-padded after it. */
static const char *bad_string(const char *s)
{
	const char *nul = memchr(s, '\0', STR);

	if (!nul)
		return "no NUL";
	for (nul++; nul < s + STR; nul++)
		if (*nul)
			return "not zero-padded";
	return NULL;
}

/* Non-NULL when record d, as returned by GET_NEXT (zeroed first) or not, is malformed. */
static const char *bad_record(const struct allocinfo_tag_data *d, int from_next)
{
	const unsigned char *p;
	const char *why;

	/*
	 * An empty modname (built-in code) is one NUL written over GET_AT's
	 * input, which mainline leaves behind it; GET_NEXT's record is zeroed.
	 */
	if ((from_next || d->tag.modname[0]) && (why = bad_string(d->tag.modname)))
		return why;
	if ((why = bad_string(d->tag.function)) || (why = bad_string(d->tag.filename)))
		return why;
	if (d->counter.accurate > 1)
		return "accurate neither 0 nor 1";
	if (d->counter.unloaded > 1)
		return "unloaded neither 0 nor 1";
	if (!d->tag.function[0] || !d->tag.filename[0])
		return "empty function or file name";
	if (from_next) {
		/* Mainline memsets the record: the counter's tail padding is zero. */
		p = (const unsigned char *)&d->counter.unloaded + 1;
		for (; p < (const unsigned char *)(d + 1); p++)
			if (*p)
				return "counter padding not zeroed";
	}
	return NULL;
}

/* Non-NULL when d does not pass filter f: the kernel returned a tag it should have skipped. */
static const char *violates(const struct allocinfo_tag_data *d, const struct allocinfo_filter *f)
{
	if ((f->mask & ALLOCINFO_FILTER_MASK_MODNAME) &&
	    strncmp(d->tag.modname, f->fields.modname, STR))
		return "modname";
	if ((f->mask & ALLOCINFO_FILTER_MASK_FUNCTION) &&
	    strncmp(d->tag.function, f->fields.function, STR))
		return "function";
	if ((f->mask & ALLOCINFO_FILTER_MASK_FILENAME) &&
	    strncmp(d->tag.filename, f->fields.filename, STR))
		return "filename";
	if ((f->mask & ALLOCINFO_FILTER_MASK_LINENO) && d->tag.lineno != f->fields.lineno)
		return "lineno";
	if ((f->mask & ALLOCINFO_FILTER_MASK_INACCURATE) && d->counter.accurate != !f->inaccurate)
		return "accuracy";
	if ((f->mask & ALLOCINFO_FILTER_MASK_MIN_SIZE) && d->counter.bytes < f->min_size)
		return "min_size";
	if ((f->mask & ALLOCINFO_FILTER_MASK_MAX_SIZE) && d->counter.bytes > f->max_size)
		return "max_size";
	if ((f->mask & ALLOCINFO_FILTER_MASK_UNLOADED) && !d->counter.unloaded)
		return "unloaded";
	return NULL;
}

static void check_record(const struct allocinfo_tag_data *d, const struct allocinfo_filter *f,
			 int from_next, size_t index)
{
	const char *why = bad_record(d, from_next);
	char desc[300];

	if (!why && f)
		why = violates(d, f);
	if (why) {
		describe(desc, sizeof(desc), d);
		fprintf(stderr, "allocinfo_ioctl: record %zu (%s): %s\n", index, desc, why);
		bad_records++;
	}
}

/* --- the two iterating ioctls --------------------------------------------- */

static int get_at(int fd, uint64_t pos, const struct allocinfo_filter *f,
		  struct allocinfo_tag_data *out)
{
	struct allocinfo_get_at ga;
	int err;

	memset(&ga, 0, sizeof(ga));
	memset(&ga.data, 0xa5, sizeof(ga.data));
	ga.pos = pos;
	if (f)
		ga.filter = *f;
	err = do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga);
	if (err)
		return err;
	if (ga.pos != pos || (f && memcmp(&ga.filter, f, sizeof(*f)))) {
		fprintf(stderr, "allocinfo_ioctl: GET_AT changed its input (pos or filter)\n");
		bad_records++;
	}
	check_record(&ga.data, f, 0, pos);
	if (out)
		*out = ga.data;
	return 0;
}

static int get_next(int fd, struct allocinfo_tag_data *out, const struct allocinfo_filter *f,
		    size_t index)
{
	struct allocinfo_tag_data d;
	int err;

	memset(&d, 0xa5, sizeof(d));
	err = do_ioctl(fd, ALLOCINFO_IOC_GET_NEXT, &d);
	if (err)
		return err;
	check_record(&d, f, 1, index);
	if (out)
		*out = d;
	return 0;
}

/*
 * Appends to out the tags matching f from position start: GET_AT, then
 * GET_NEXT until ENOENT. Returns 0, or the errno of the call that failed
 * otherwise (GET_AT's ENOENT is an empty result).
 */
static int walk(int fd, const struct allocinfo_filter *f, uint64_t start, struct vec *out)
{
	struct allocinfo_tag_data d;
	int err = get_at(fd, start, f, &d);

	if (err == ENOENT)
		return 0;
	if (err)
		return err;
	vec_push(out, &d);
	while (!(err = get_next(fd, &d, f, out->n))) {
		vec_push(out, &d);
		if (out->n > WALK_CAP) {
			fprintf(stderr, "allocinfo_ioctl: GET_NEXT never ends\n");
			return E2BIG;
		}
	}
	return err == ENOENT ? 0 : err;
}

static int content_id(int fd, uint64_t *id)
{
	struct allocinfo_content_id c = { .id = 0 };
	int err = do_ioctl(fd, ALLOCINFO_IOC_CONTENT_ID, &c);

	*id = c.id;
	return err;
}

/* --- command line --------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: allocinfo_ioctl dump|retry-dump|get-at POS [FILTER...]\n"
		"       allocinfo_ioctl snapshot T1 DUMP T2 [FILTER...]\n"
		"       allocinfo_ioctl next-dump|content-id|check-errors\n"
		"FILTER: --module M --function F --file F --line N --inaccurate V\n"
		"        --min BYTES --max BYTES --unloaded 1 --mask BITS\n");
	exit(2);
}

static uint64_t number(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end || *s == '-') {
		fprintf(stderr, "allocinfo_ioctl: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

/* Copies name s into a 64-byte field as it is: no trimming, no NUL when it fills it. */
static void set_name(char *field, const char *s)
{
	size_t len = strlen(s);

	memset(field, 0, STR);
	memcpy(field, s, len < STR ? len : STR);
}

static void parse_filter(int argc, char **argv, struct allocinfo_filter *f)
{
	int i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < argc; i += 2) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			usage();
		if (!strcmp(opt, "--module")) {
			f->mask |= ALLOCINFO_FILTER_MASK_MODNAME;
			set_name(f->fields.modname, val);
		} else if (!strcmp(opt, "--function")) {
			f->mask |= ALLOCINFO_FILTER_MASK_FUNCTION;
			set_name(f->fields.function, val);
		} else if (!strcmp(opt, "--file")) {
			f->mask |= ALLOCINFO_FILTER_MASK_FILENAME;
			set_name(f->fields.filename, val);
		} else if (!strcmp(opt, "--line")) {
			f->mask |= ALLOCINFO_FILTER_MASK_LINENO;
			f->fields.lineno = number(val);
		} else if (!strcmp(opt, "--inaccurate")) {
			f->mask |= ALLOCINFO_FILTER_MASK_INACCURATE;
			f->inaccurate = number(val);
		} else if (!strcmp(opt, "--min")) {
			f->mask |= ALLOCINFO_FILTER_MASK_MIN_SIZE;
			f->min_size = number(val);
		} else if (!strcmp(opt, "--max")) {
			f->mask |= ALLOCINFO_FILTER_MASK_MAX_SIZE;
			f->max_size = number(val);
		} else if (!strcmp(opt, "--unloaded")) {
			if (number(val) != 1)
				usage();
			f->mask |= ALLOCINFO_FILTER_MASK_UNLOADED;
		} else if (!strcmp(opt, "--mask")) {
			f->mask |= number(val);
		} else {
			usage();
		}
	}
}

static int cmd_dump(const struct allocinfo_filter *f)
{
	struct vec tags = { 0 };
	int fd = open_allocinfo(), err;
	size_t i;

	err = walk(fd, f, 0, &tags);
	for (i = 0; i < tags.n; i++)
		print_tag(stdout, &tags.v[i]);
	if (err) {
		fprintf(stderr, "allocinfo_ioctl: dump: %s after %zu tags\n", errname(err), tags.n);
		return 2;
	}
	return bad_records ? 1 : 0;
}

static int cmd_next_dump(void)
{
	struct allocinfo_tag_data d;
	int fd = open_allocinfo(), err;
	size_t n = 0;

	while (!(err = get_next(fd, &d, NULL, n))) {
		print_tag(stdout, &d);
		if (++n > WALK_CAP) {
			fprintf(stderr, "allocinfo_ioctl: GET_NEXT never ends\n");
			return 2;
		}
	}
	if (err != ENOENT) {
		fprintf(stderr, "allocinfo_ioctl: next-dump: %s after %zu tags\n", errname(err), n);
		return 2;
	}
	return bad_records ? 1 : 0;
}

/* The kselftest's get_filtered_ioctl_entries(): walk between two equal content ids. */
static int cmd_retry_dump(const struct allocinfo_filter *f)
{
	const int max_retries = 10;
	int fd = open_allocinfo(), retry, err;
	uint64_t before, after;
	struct vec tags = { 0 };
	size_t i;

	for (retry = 0; retry <= max_retries; retry++) {
		tags.n = 0;
		if ((err = content_id(fd, &before)) || (err = walk(fd, f, 0, &tags)) ||
		    (err = content_id(fd, &after))) {
			fprintf(stderr, "allocinfo_ioctl: retry-dump: %s\n", errname(err));
			return 2;
		}
		if (before == after) {
			if (retry)
				fprintf(stderr, "allocinfo_ioctl: %d retries\n", retry);
			for (i = 0; i < tags.n; i++)
				print_tag(stdout, &tags.v[i]);
			return bad_records ? 1 : 0;
		}
	}
	fprintf(stderr, "allocinfo_ioctl: the content id changed during each of %d walks\n", retry);
	return 3;
}

/* Reads the whole text from fd into buf (cap bytes) from offset 0; returns its length or -1. */
static ssize_t read_text(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t r;

	if (lseek(fd, 0, SEEK_SET) != 0)
		return -1;
	while ((r = read(fd, buf + len, cap - len)) > 0) {
		len += r;
		if (len == cap)
			return -1;
	}
	return r < 0 ? -1 : (ssize_t)len;
}

/* Writes text buf of len bytes less its two header lines into file path. */
static int write_text(const char *path, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	FILE *out = fopen(path, "w");
	int i;

	for (i = 0; i < 2 && p < end; i++) {
		p = memchr(p, '\n', end - p);
		p = p ? p + 1 : end;
	}
	if (!out || fwrite(p, 1, end - p, out) != (size_t)(end - p) || fclose(out))
		return -1;
	return 0;
}

static int cmd_snapshot(const char *t1, const char *dump, const char *t2,
			const struct allocinfo_filter *f)
{
	const size_t cap = 4 << 20;
	char *b1 = malloc(cap), *b2 = malloc(cap);
	struct vec tags = { .cap = 16384 };
	int text_fd = open_allocinfo(), fd = open_allocinfo(), retry, err;
	ssize_t n1, n2;
	uint64_t before, after;
	FILE *out;
	size_t i;

	/* All of this process's memory first, so that it holds still during the reads. */
	tags.v = malloc(tags.cap * sizeof(*tags.v));
	if (!b1 || !b2 || !tags.v) {
		perror("malloc");
		return 2;
	}
	memset(b1, 0, cap);
	memset(b2, 0, cap);
	memset(tags.v, 0, tags.cap * sizeof(*tags.v));
	for (retry = 0; retry < 5; retry++) {
		tags.n = 0;
		if ((err = content_id(fd, &before)))
			break;
		n1 = read_text(text_fd, b1, cap);
		err = walk(fd, f, 0, &tags);
		n2 = read_text(text_fd, b2, cap);
		if (err || (err = content_id(fd, &after)))
			break;
		if (n1 < 0 || n2 < 0) {
			fprintf(stderr, "allocinfo_ioctl: snapshot: reading the text failed\n");
			return 2;
		}
		if (before != after)
			continue;
		if (write_text(t1, b1, n1) || write_text(t2, b2, n2) || !(out = fopen(dump, "w"))) {
			perror("allocinfo_ioctl: snapshot");
			return 2;
		}
		for (i = 0; i < tags.n; i++)
			print_tag(out, &tags.v[i]);
		if (fclose(out)) {
			perror("allocinfo_ioctl: snapshot");
			return 2;
		}
		return bad_records ? 1 : 0;
	}
	if (err) {
		fprintf(stderr, "allocinfo_ioctl: snapshot: %s\n", errname(err));
		return 2;
	}
	fprintf(stderr, "allocinfo_ioctl: the content id changed during each of %d snapshots\n", retry);
	return 3;
}

static int cmd_get_at(uint64_t pos, const struct allocinfo_filter *f)
{
	struct allocinfo_tag_data d;
	int fd = open_allocinfo(), err = get_at(fd, pos, f, &d);

	if (err) {
		printf("%s\n", errname(err));
		return err == ENOENT ? 1 : 2;
	}
	print_tag(stdout, &d);
	return bad_records ? 1 : 0;
}

static int cmd_content_id(void)
{
	int fd = open_allocinfo(), err;
	uint64_t id;

	if ((err = content_id(fd, &id))) {
		fprintf(stderr, "allocinfo_ioctl: CONTENT_ID: %s\n", errname(err));
		return 2;
	}
	printf("%llu\n", (unsigned long long)id);
	return 0;
}

/* --- check-errors --------------------------------------------------------- */

static int failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failures += !ok;
}

static void expect_err(int got, int want, const char *what)
{
	check(got == want, "%s: %s (mainline: %s)", what, errname(got), errname(want));
}

/* Call returned err and record got; mainline returns 0 and the call site want. */
static void expect_tag(int err, const struct allocinfo_tag_data *got,
		       const struct allocinfo_tag_data *want, const char *what)
{
	char g[300] = "", w[300];

	describe(w, sizeof(w), want);
	if (err) {
		check(0, "%s: %s (mainline: %s)", what, errname(err), w);
		return;
	}
	describe(g, sizeof(g), got);
	check(same_tag(got, want), "%s: %s%s%s", what, g, same_tag(got, want) ? "" : ", mainline: ",
	      same_tag(got, want) ? "" : w);
}

/* A page that only reads, then one that reads and writes, then an address mapped to nothing. */
static void *rw_page, *ro_page, *no_page;
static long page_size;

static void map_pages(void)
{
	char *p;

	page_size = sysconf(_SC_PAGESIZE);
	p = mmap(NULL, 3 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	ro_page = p;
	rw_page = p + page_size;
	no_page = p + 2 * page_size;
	if (munmap(no_page, page_size) || mprotect(ro_page, page_size, PROT_READ)) {
		perror("munmap/mprotect");
		exit(2);
	}
}

/* GET_AT whose struct lives at p (set up by the caller), for fault tests. */
static int get_at_raw(int fd, void *p)
{
	return do_ioctl(fd, ALLOCINFO_IOC_GET_AT, p);
}

static struct allocinfo_filter filter_function(const char *name)
{
	struct allocinfo_filter f;

	memset(&f, 0, sizeof(f));
	f.mask = ALLOCINFO_FILTER_MASK_FUNCTION;
	set_name(f.fields.function, name);
	return f;
}

/*
 * Calls that mainline refuses before touching the per-file state, each with
 * a filter of its own (which must not replace the stored one): bad mask bits,
 * min > max, an unreadable struct, pos past the count, an unknown command, a
 * CONTENT_ID it cannot write.
 */
static void failed_calls(int fd, uint64_t count, const char *tag)
{
	struct allocinfo_get_at ga;
	char what[120];
	uint64_t junk = 0;

	memset(&ga, 0, sizeof(ga));
	ga.filter = filter_function("alloctag_ioctl_no_such_function");
	ga.filter.mask |= 1ull << 8;
	snprintf(what, sizeof(what), "%s: GET_AT with mask bit 8", tag);
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), EINVAL, what);

	memset(&ga, 0, sizeof(ga));
	ga.filter.mask = ALLOCINFO_FILTER_MASK_MIN_SIZE | ALLOCINFO_FILTER_MASK_MAX_SIZE;
	ga.filter.min_size = 2;
	ga.filter.max_size = 1;
	snprintf(what, sizeof(what), "%s: GET_AT with min_size 2 > max_size 1", tag);
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), EINVAL, what);

	snprintf(what, sizeof(what), "%s: GET_AT at an unmapped address", tag);
	expect_err(get_at_raw(fd, no_page), EFAULT, what);

	memset(&ga, 0, sizeof(ga));
	ga.pos = count;
	ga.filter = filter_function("alloctag_ioctl_no_such_function");
	snprintf(what, sizeof(what), "%s: GET_AT at pos = tag count, with a filter", tag);
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), ENOENT, what);

	snprintf(what, sizeof(what), "%s: unknown command _IOR(0xA6, 3, u64)", tag);
	expect_err(do_ioctl(fd, _IOR(ALLOCINFO_IOC_BASE, 3, __u64), &junk), ENOTTY, what);

	snprintf(what, sizeof(what), "%s: CONTENT_ID into a read-only page", tag);
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_CONTENT_ID, ro_page), EFAULT, what);
}

/*
 * The first function with two tags that are not neighbours (another
 * function's tag lies between them), else any with two tags; -1 if none.
 * Sets *second to the index of its second tag.
 */
static long pick_function(const struct vec *all, long *second)
{
	size_t i, j, k;
	long any = -1, any2 = -1;

	for (i = 0; i < all->n; i++) {
		for (j = i + 1; j < all->n; j++) {
			if (strncmp(all->v[i].tag.function, all->v[j].tag.function, STR))
				continue;
			/* i's first occurrence only */
			for (k = 0; k < i; k++)
				if (!strncmp(all->v[k].tag.function, all->v[i].tag.function, STR))
					break;
			if (k < i)
				break;
			if (any < 0) {
				any = i;
				any2 = j;
			}
			if (j > i + 1) {
				*second = j;
				return i;
			}
			break;
		}
	}
	*second = any2;
	return any;
}

static int cmd_check_errors(void)
{
	struct allocinfo_tag_data d, ftags[2];
	struct allocinfo_filter f, none;
	struct allocinfo_get_at ga, *gp;
	struct vec all = { 0 }, nexts = { 0 }, fall = { 0 };
	uint64_t id1, id2, n, j;
	long fi, fi2;
	int fd, fd2, err, err2, ok;
	char buf[64];
	size_t i;
	ssize_t r;

	map_pages();
	memset(&none, 0, sizeof(none));

	/* The reference: every tag, by GET_AT(0) + GET_NEXT and by GET_NEXT alone. */
	fd = open_allocinfo();
	err = walk(fd, NULL, 0, &all);
	check(!err && all.n >= 8, "GET_AT(0) + GET_NEXT lists %zu tags, then ENOENT (%s)",
	      all.n, errname(err));
	if (err || all.n < 8)
		return 1;
	close(fd);
	n = all.n;
	fd = open_allocinfo();
	while (!(err = get_next(fd, &d, NULL, nexts.n)) && nexts.n <= n)
		vec_push(&nexts, &d);
	ok = err == ENOENT && nexts.n == n;
	for (i = 0; ok && i < n; i++)
		ok = same_tag(&all.v[i], &nexts.v[i]);
	check(ok, "GET_NEXT alone from a fresh fd lists the same %zu tags (got %zu, ended %s)",
	      all.n, nexts.n, errname(err));
	close(fd);

	fd = open_allocinfo();

	/* Command numbers: only the three exact ones. */
	expect_err(do_ioctl(fd, _IO(ALLOCINFO_IOC_BASE, 3), rw_page), ENOTTY, "_IO(0xA6, 3)");
	expect_err(do_ioctl(fd, _IOR(ALLOCINFO_IOC_BASE, 3, struct allocinfo_tag_data), rw_page),
		   ENOTTY, "_IOR(0xA6, 3, allocinfo_tag_data)");
	expect_err(do_ioctl(fd, _IOWR(ALLOCINFO_IOC_BASE, 1, __u64), rw_page), ENOTTY,
		   "GET_AT's number with an 8-byte size");
	expect_err(do_ioctl(fd, _IOR(ALLOCINFO_IOC_BASE, 1, struct allocinfo_get_at), rw_page),
		   ENOTTY, "GET_AT's number and size, read-only direction");
	expect_err(do_ioctl(fd, _IOW(ALLOCINFO_IOC_BASE, 0, struct allocinfo_content_id), rw_page),
		   ENOTTY, "CONTENT_ID's number and size, write direction");
	expect_err(do_ioctl(fd, _IOR(0xA7, 0, struct allocinfo_content_id), rw_page), ENOTTY,
		   "CONTENT_ID with magic 0xA7");
	expect_err(do_ioctl(fd, _IOR(ALLOCINFO_IOC_BASE, 2, struct allocinfo_get_at), rw_page),
		   ENOTTY, "GET_NEXT's number with GET_AT's size");

	/* CONTENT_ID. */
	err = content_id(fd, &id1);
	expect_err(err, 0, "CONTENT_ID");
	fd2 = open_allocinfo();
	err = content_id(fd2, &id2);
	check(!err && id1 == id2, "CONTENT_ID is the same on another fd and later (%llu, %llu)",
	      (unsigned long long)id1, (unsigned long long)id2);
	close(fd2);
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_CONTENT_ID, NULL), EFAULT, "CONTENT_ID into NULL");
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_CONTENT_ID, no_page), EFAULT,
		   "CONTENT_ID into an unmapped page");
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_CONTENT_ID, ro_page), EFAULT,
		   "CONTENT_ID into a read-only page");

	/* GET_AT: bad input. */
	memset(&ga, 0, sizeof(ga));
	ga.filter.mask = 1ull << 8;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), EINVAL, "GET_AT with mask bit 8");
	ga.filter.mask = 1ull << 63;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), EINVAL, "GET_AT with mask bit 63");
	ga.filter.mask = ALLOCINFO_FILTER_MASKS + 1;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), EINVAL,
		   "GET_AT with mask ALLOCINFO_FILTER_MASKS + 1");
	ga.filter = filter_function(all.v[0].tag.function);
	ga.filter.mask |= 1ull << 40;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), EINVAL,
		   "GET_AT with a matching function filter and mask bit 40");
	memset(&ga, 0, sizeof(ga));
	ga.filter.mask = ALLOCINFO_FILTER_MASK_MIN_SIZE | ALLOCINFO_FILTER_MASK_MAX_SIZE;
	ga.filter.min_size = 1;
	ga.filter.max_size = 0;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), EINVAL, "GET_AT with min 1 > max 0");
	ga.filter.min_size = UINT64_MAX;
	ga.filter.max_size = UINT64_MAX - 1;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), EINVAL,
		   "GET_AT with min 2^64-1 > max 2^64-2 (compared unsigned)");
	ga.filter.min_size = 1;
	ga.filter.max_size = UINT64_MAX;
	err = do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga);
	check(err == 0 || err == ENOENT, "GET_AT with min 1, max 2^64-1 is valid: %s", errname(err));
	/* A bound without its mask bit is ignored, so min > max is fine then. */
	memset(&f, 0, sizeof(f));
	f.mask = ALLOCINFO_FILTER_MASK_MAX_SIZE;
	f.min_size = 5;
	f.max_size = UINT64_MAX;
	err = get_at(fd, 0, &f, &d);
	expect_tag(err, &d, &all.v[0], "GET_AT(0) with max 2^64-1 alone (min 5 without its bit)");
	f.mask = ALLOCINFO_FILTER_MASK_MIN_SIZE;
	f.min_size = 0;
	f.max_size = 0;
	err = get_at(fd, 0, &f, &d);
	expect_tag(err, &d, &all.v[0], "GET_AT(0) with min 0 alone");
	f.mask = ALLOCINFO_FILTER_MASK_MIN_SIZE | ALLOCINFO_FILTER_MASK_MAX_SIZE;
	err = get_at(fd, 0, &f, &d);
	check(err == ENOENT || (!err && !d.counter.bytes),
	      "GET_AT(0) with min = max = 0 is valid and finds a tag of 0 bytes: %s, %lld bytes",
	      errname(err), err ? 0LL : (long long)d.counter.bytes);

	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, NULL), EFAULT, "GET_AT from NULL");
	expect_err(get_at_raw(fd, no_page), EFAULT, "GET_AT from an unmapped page");
	gp = (void *)((char *)no_page - 100);
	memset(gp, 0, 100);
	expect_err(get_at_raw(fd, gp), EFAULT, "GET_AT from a struct whose end is unmapped");

	memset(&ga, 0, sizeof(ga));
	ga.pos = n;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), ENOENT, "GET_AT at pos = tag count");
	ga.pos = UINT64_MAX;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), ENOENT, "GET_AT at pos 2^64-1");
	ga.pos = 1ull << 32;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), ENOENT,
		   "GET_AT at pos 2^32 (not truncated to 32 bits)");
	ga.pos = (1ull << 32) + 1;
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), ENOENT, "GET_AT at pos 2^32 + 1");
	err = get_at(fd, n - 1, NULL, &d);
	expect_tag(err, &d, &all.v[n - 1], "GET_AT at pos = tag count - 1: the last tag");
	err = get_at(fd, n / 2, NULL, &d);
	expect_tag(err, &d, &all.v[n / 2], "GET_AT in the middle");
	f = filter_function("alloctag_ioctl_no_such_function");
	expect_err(get_at(fd, 0, &f, NULL), ENOENT, "GET_AT(0) with a function no tag has");
	memset(&f, 0, sizeof(f));
	f.mask = ALLOCINFO_FILTER_MASK_FUNCTION;
	memset(f.fields.function, 'x', STR);
	expect_err(get_at(fd, 0, &f, NULL), ENOENT,
		   "GET_AT(0) with a 64-byte function filter without NUL");
	f.mask = ALLOCINFO_FILTER_MASK_MODNAME;
	memset(&f.fields, 0, sizeof(f.fields));
	set_name(f.fields.modname, "alloctag_ioctl_no_such_module");
	expect_err(get_at(fd, 0, &f, NULL), ENOENT, "GET_AT(0) with a module not loaded");

	/* Inaccurate: a boolean; 2 is 1. */
	memset(&f, 0, sizeof(f));
	f.mask = ALLOCINFO_FILTER_MASK_INACCURATE;
	f.inaccurate = 1;
	err = get_at(fd, 0, &f, &ftags[0]);
	f.inaccurate = 2;
	err2 = get_at(fd, 0, &f, &ftags[1]);
	check(err == err2 && (err || same_tag(&ftags[0], &ftags[1])),
	      "inaccurate = 2 selects as inaccurate = 1 does (%s, %s)", errname(err), errname(err2));
	/* The 0 and 1 selections split the tags by counter.accurate (each record is checked). */
	fall.n = 0;
	f.inaccurate = 0;
	fd2 = open_allocinfo();
	err = walk(fd2, &f, 0, &fall);
	f.inaccurate = 1;
	i = fall.n;
	if (!err)
		err = walk(fd2, &f, 0, &fall);
	close(fd2);
	check(!err && fall.n == n,
	      "inaccurate 0 (%zu tags) and inaccurate 1 (%zu tags) make up all %zu (%s)", i,
	      fall.n - i, all.n, errname(err));

	/* Sizes as unsigned: max 2^64-1 and min 0 keep every tag. */
	memset(&f, 0, sizeof(f));
	f.mask = ALLOCINFO_FILTER_MASK_MIN_SIZE | ALLOCINFO_FILTER_MASK_MAX_SIZE;
	f.max_size = UINT64_MAX;
	fall.n = 0;
	fd2 = open_allocinfo();
	err = walk(fd2, &f, 0, &fall);
	close(fd2);
	check(!err && fall.n == n, "min 0, max 2^64-1 keeps all %llu tags: %zu (%s)",
	      (unsigned long long)n, fall.n, errname(err));

	/* Built-in code: modname "" selects the tags without a module, in order. */
	memset(&f, 0, sizeof(f));
	f.mask = ALLOCINFO_FILTER_MASK_MODNAME;
	fall.n = 0;
	fd2 = open_allocinfo();
	err = walk(fd2, &f, 0, &fall);
	close(fd2);
	for (ok = !err, i = 0, j = 0; ok && j < n; j++) {
		if (all.v[j].tag.modname[0])
			continue;
		ok = i < fall.n && same_tag(&fall.v[i], &all.v[j]);
		i++;
	}
	check(ok && i == fall.n, "modname \"\" lists the %zu built-in tags (%s)", i, errname(err));

	/* File and line of one tag find it (first among the tags of that file:line). */
	memset(&f, 0, sizeof(f));
	f.mask = ALLOCINFO_FILTER_MASK_FILENAME | ALLOCINFO_FILTER_MASK_LINENO;
	set_name(f.fields.filename, all.v[n / 3].tag.filename);
	f.fields.lineno = all.v[n / 3].tag.lineno;
	for (i = 0; i < n; i++)
		if (!strncmp(all.v[i].tag.filename, f.fields.filename, STR) &&
		    all.v[i].tag.lineno == f.fields.lineno)
			break;
	err = get_at(fd, 0, &f, &d);
	expect_tag(err, &d, &all.v[i], "GET_AT(0) with the file and line of a tag");

	close(fd);

	/* --- per-file state --- */
	fd = open_allocinfo();
	err = get_next(fd, &d, NULL, 0);
	expect_tag(err, &d, &all.v[0], "fresh fd: GET_NEXT without GET_AT gives the first tag");
	err = get_next(fd, &d, NULL, 1);
	expect_tag(err, &d, &all.v[1], "fresh fd: second GET_NEXT gives the second tag");
	close(fd);

	fd = open_allocinfo();
	err = get_at(fd, 1, NULL, &d);
	expect_tag(err, &d, &all.v[1], "GET_AT(1)");
	failed_calls(fd, n, "after GET_AT(1)");
	err = get_next(fd, &d, NULL, 2);
	expect_tag(err, &d, &all.v[2], "GET_NEXT after those failed calls continues at tag 2");
	/* read() has its own iterator. */
	r = pread(fd, buf, sizeof(buf), 0);
	check(r > 20 && !memcmp(buf, "allocinfo - version: ", 21),
	      "read() between ioctls reads the header (%zd bytes)", r);
	r = read(fd, buf, sizeof(buf));
	check(r > 0, "read() on an fd the ioctls moved works (%zd)", r);
	err = get_next(fd, &d, NULL, 3);
	expect_tag(err, &d, &all.v[3], "GET_NEXT after read() continues at tag 3");
	/* Another fd has its own. */
	fd2 = open_allocinfo();
	err = get_at(fd2, 0, NULL, &d);
	expect_tag(err, &d, &all.v[0], "GET_AT(0) on a second fd");
	err = get_next(fd, &d, NULL, 4);
	expect_tag(err, &d, &all.v[4], "GET_NEXT on the first fd continues at tag 4");
	err = get_next(fd2, &d, NULL, 1);
	expect_tag(err, &d, &all.v[1], "GET_NEXT on the second fd gives tag 1");
	close(fd2);
	/* To the end and past it: ENOENT, then the walk starts over. */
	err = get_at(fd, n - 2, NULL, &d);
	expect_tag(err, &d, &all.v[n - 2], "GET_AT(count - 2)");
	err = get_next(fd, &d, NULL, n - 1);
	expect_tag(err, &d, &all.v[n - 1], "GET_NEXT gives the last tag");
	expect_err(get_next(fd, &d, NULL, n), ENOENT, "GET_NEXT after the last tag");
	err = get_next(fd, &d, NULL, 0);
	expect_tag(err, &d, &all.v[0], "GET_NEXT after ENOENT starts over at the first tag");
	err = get_next(fd, &d, NULL, 1);
	expect_tag(err, &d, &all.v[1], "and goes on with the second");
	close(fd);

	/* A filter kept for GET_NEXT. */
	fi = pick_function(&all, &fi2);
	check(fi >= 0, "a function with two tags to filter on: %.*s", STR,
	      fi >= 0 ? all.v[fi].tag.function : "none");
	if (fi >= 0) {
		struct allocinfo_filter ff = filter_function(all.v[fi].tag.function);
		size_t matches = 0, got = 0;

		for (i = 0; i < n; i++)
			matches += !strncmp(all.v[i].tag.function, ff.fields.function, STR);
		fd = open_allocinfo();
		err = get_at(fd, 0, &ff, &d);
		expect_tag(err, &d, &all.v[fi], "GET_AT(0) with the function filter: its first tag");
		failed_calls(fd, n, "after GET_AT(0, function)");
		err = get_next(fd, &d, &ff, 1);
		expect_tag(err, &d, &all.v[fi2],
			   "GET_NEXT keeps GET_AT's filter, past other functions' tags");
		got = 2;
		while (!(err = get_next(fd, &d, &ff, got)) && got <= n)
			got++;
		check(err == ENOENT && got == matches,
		      "GET_NEXT with the filter stops at ENOENT after the %zu matching tags (%zu, %s)",
		      matches, got, errname(err));
		err = get_next(fd, &d, &ff, 0);
		expect_tag(err, &d, &all.v[fi],
			   "GET_NEXT after ENOENT starts over at the filter's first tag (filter kept)");
		err = get_at(fd, 1, &ff, &d);
		expect_tag(err, &d, &all.v[fi2], "GET_AT(1) with the filter: the second matching tag");
		memset(&ga, 0, sizeof(ga));
		ga.pos = matches;
		ga.filter = ff;
		expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_AT, &ga), ENOENT,
			   "GET_AT at pos = number of matches");
		err = get_at(fd, 0, &none, &d);
		expect_tag(err, &d, &all.v[0], "GET_AT(0) with mask 0 drops the filter");
		err = get_next(fd, &d, NULL, 1);
		expect_tag(err, &d, &all.v[1], "and GET_NEXT goes on unfiltered");
		close(fd);
	}

	/*
	 * Mainline's exact behaviour where a call fails late. GET_NEXT advances
	 * before it copies out; GET_AT stores its filter and moves before its
	 * copy out and before it finds no pos-th match.
	 */
	fd = open_allocinfo();
	err = get_at(fd, 0, NULL, &d);
	expect_tag(err, &d, &all.v[0], "GET_AT(0)");
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_NEXT, NULL), EFAULT, "GET_NEXT into NULL");
	err = get_next(fd, &d, NULL, 2);
	expect_tag(err, &d, &all.v[2], "GET_NEXT after GET_NEXT into NULL: tag 1 was consumed");
	expect_err(do_ioctl(fd, ALLOCINFO_IOC_GET_NEXT, ro_page), EFAULT,
		   "GET_NEXT into a read-only page");
	err = get_next(fd, &d, NULL, 4);
	expect_tag(err, &d, &all.v[4], "then GET_NEXT gives tag 4: tag 3 was consumed");
	mprotect(ro_page, page_size, PROT_READ | PROT_WRITE);
	memset(ro_page, 0, sizeof(ga));
	((struct allocinfo_get_at *)ro_page)->pos = 5;
	mprotect(ro_page, page_size, PROT_READ);
	expect_err(get_at_raw(fd, ro_page), EFAULT, "GET_AT(5) in a read-only page");
	err = get_next(fd, &d, NULL, 6);
	expect_tag(err, &d, &all.v[6], "then GET_NEXT gives tag 6: GET_AT had moved to 5");
	close(fd);

	fd = open_allocinfo();
	f = filter_function("alloctag_ioctl_no_such_function");
	expect_err(get_at(fd, 0, &f, NULL), ENOENT, "fresh fd: GET_AT(0) with a function no tag has");
	expect_err(get_next(fd, &d, NULL, 0), ENOENT,
		   "then GET_NEXT: ENOENT, the unmatched filter was stored");
	err = get_at(fd, 0, &none, &d);
	expect_tag(err, &d, &all.v[0], "then GET_AT(0) unfiltered");
	err = get_next(fd, &d, NULL, 1);
	expect_tag(err, &d, &all.v[1], "then GET_NEXT: tag 1");
	expect_err(get_at(fd, 0, &f, NULL), ENOENT, "then GET_AT(0) with the unmatched filter again");
	expect_err(get_next(fd, &d, NULL, 0), ENOENT,
		   "then GET_NEXT: ENOENT (the iterator ran off the end)");
	expect_err(get_next(fd, &d, NULL, 0), ENOENT,
		   "then GET_NEXT again: ENOENT (starts over with the stored filter)");
	err = get_at(fd, 2, &none, &d);
	expect_tag(err, &d, &all.v[2], "then GET_AT(2) unfiltered works");
	close(fd);

	if (bad_records)
		check(0, "%d records returned were malformed or broke their filter (see stderr)",
		      bad_records);
	printf("%d checks failed\n", failures);
	return failures || bad_records ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct allocinfo_filter f;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "dump")) {
		parse_filter(argc - 2, argv + 2, &f);
		return cmd_dump(&f);
	}
	if (!strcmp(argv[1], "retry-dump")) {
		parse_filter(argc - 2, argv + 2, &f);
		return cmd_retry_dump(&f);
	}
	if (!strcmp(argv[1], "snapshot") && argc >= 5) {
		parse_filter(argc - 5, argv + 5, &f);
		return cmd_snapshot(argv[2], argv[3], argv[4], &f);
	}
	if (!strcmp(argv[1], "get-at") && argc >= 3) {
		parse_filter(argc - 3, argv + 3, &f);
		return cmd_get_at(number(argv[2]), &f);
	}
	if (!strcmp(argv[1], "next-dump") && argc == 2)
		return cmd_next_dump();
	if (!strcmp(argv[1], "content-id") && argc == 2)
		return cmd_content_id();
	if (!strcmp(argv[1], "check-errors") && argc == 2)
		return cmd_check_errors();
	usage();
	return 2;
}
