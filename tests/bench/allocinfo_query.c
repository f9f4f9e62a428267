// SPDX-License-Identifier: GPL-2.0
/*
 * allocinfo_query: times selections of /proc/allocinfo's tags from user
 * space, through the text and through the ioctls (mainline's ABI,
 * include/uapi/linux/alloc_tag.h), for scripts/bench/guest.sh
 * (Documentation/benchmarks.rst). Built static by scripts/mkinitramfs.sh --bench:
 *
 *   gcc -static -O2 -I$ALLOCTAG_ROOT/include/uapi allocinfo_query.c
 *
 * Usage: allocinfo_query MODE ARG REPS
 *
 *   read BS          read the whole file with read() buffers of BS bytes, as
 *                    "dd bs=BS" does
 *   text-file F      read the whole file (64 KiB reads) and select the lines
 *                    whose tag is in source file F (the field before ':')
 *   ioctl-file F     ALLOCINFO_IOC_GET_AT(0) with a FILENAME filter F, then
 *                    GET_NEXT until ENOENT
 *   exec-file F      run "grep ' F:' /proc/allocinfo" (busybox), output
 *                    discarded
 *   text-min B       as text-file, selecting the lines of at least B bytes
 *   ioctl-min B      as ioctl-file with a MIN_SIZE filter B
 *   exec-min B       run "awk '$1 + 0 >= B' /proc/allocinfo"
 *   sysrq K          write K to /proc/sysrq-trigger (m: show_mem(), the OOM
 *                    report, whose last part is the 10 largest call sites
 *                    from alloc_tag_top_users() while profiling is on)
 *
 * Each of REPS repetitions opens the file, selects, and closes it; the loop is
 * timed with clock_gettime(CLOCK_MONOTONIC). Prints one line:
 *
 *   alloctag-bench-query: test=MODE reps=N matches=M bytes=S ns_per_query=X
 *
 * (matches: lines or tags selected by the last repetition; for exec-*, 0).
 * Where the ioctls are missing (the C core: ENOTTY) it prints
 * "unsupported=ERRNAME" instead of the figures, and exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/alloc_tag.h>

#define PROC_ALLOCINFO	((char *)path)
#define TEXT_BUF	(64 << 10)

/* ALLOCINFO_QUERY_FILE overrides it, for trying the program on a copy. */
static const char *path = "/proc/allocinfo";
static char *buf;
static size_t buf_size;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "allocinfo_query: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Reads the whole file with reads of bs bytes; returns the bytes read. */
static size_t read_whole(size_t bs)
{
	size_t total = 0;
	ssize_t n;
	int fd = open(PROC_ALLOCINFO, O_RDONLY);

	if (fd < 0)
		die("open");
	while ((n = read(fd, buf, bs)) > 0)
		total += n;
	if (n < 0)
		die("read");
	close(fd);
	return total;
}

/* The tag field of a line: after the bytes and calls columns. */
static const char *tag_field(const char *line, const char *end)
{
	int field;

	for (field = 0; field < 2; field++) {
		while (line < end && *line == ' ')
			line++;
		while (line < end && *line != ' ')
			line++;
	}
	while (line < end && *line == ' ')
		line++;
	return line;
}

struct selection {
	const char *file;	/* or NULL */
	size_t file_len;
	unsigned long long min;
};

static int line_matches(const struct selection *s, const char *line, const char *end)
{
	if (line[0] == '#' || (end - line >= 9 && !memcmp(line, "allocinfo", 9)))
		return 0;
	if (s->file) {
		const char *t = tag_field(line, end);

		return end - t > (ptrdiff_t)s->file_len && !memcmp(t, s->file, s->file_len) &&
		       t[s->file_len] == ':';
	}
	return strtoll(line, NULL, 10) >= (long long)s->min;
}

/*
 * Reads the whole file in TEXT_BUF reads and counts the lines selected; a
 * line cut by a read is carried over to the next.
 */
static unsigned long text_select(const struct selection *s, size_t *bytes)
{
	unsigned long matches = 0;
	size_t have = 0;
	ssize_t n;
	int fd = open(PROC_ALLOCINFO, O_RDONLY);

	if (fd < 0)
		die("open");
	*bytes = 0;
	while ((n = read(fd, buf + have, TEXT_BUF - have)) > 0) {
		char *p = buf, *end = buf + have + n, *nl;

		*bytes += n;
		while ((nl = memchr(p, '\n', end - p))) {
			matches += line_matches(s, p, nl);
			p = nl + 1;
		}
		have = end - p;
		memmove(buf, p, have);
	}
	if (n < 0)
		die("read");
	close(fd);
	return matches;
}

/* GET_AT(0) and GET_NEXT until ENOENT; returns the tags, or -errno. */
static long ioctl_select(const struct selection *s)
{
	static struct allocinfo_get_at at;
	struct allocinfo_tag_data data;
	long matches = 0;
	int fd = open(PROC_ALLOCINFO, O_RDONLY);

	if (fd < 0)
		die("open");
	memset(&at, 0, sizeof(at));
	if (s->file) {
		at.filter.mask = ALLOCINFO_FILTER_MASK_FILENAME;
		snprintf(at.filter.fields.filename, sizeof(at.filter.fields.filename), "%s", s->file);
	} else {
		at.filter.mask = ALLOCINFO_FILTER_MASK_MIN_SIZE;
		at.filter.min_size = s->min;
	}
	if (ioctl(fd, ALLOCINFO_IOC_GET_AT, &at) < 0) {
		long ret = errno == ENOENT ? 0 : -errno;

		close(fd);
		return ret;
	}
	matches = 1;
	while (ioctl(fd, ALLOCINFO_IOC_GET_NEXT, &data) == 0)
		matches++;
	if (errno != ENOENT) {
		long ret = -errno;

		close(fd);
		return ret;
	}
	close(fd);
	return matches;
}

static void exec_select(char *const argv[])
{
	int status, fd;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	/* grep exits 1 when nothing matched: fine; 127 or a signal is not. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
		fprintf(stderr, "allocinfo_query: %s failed (status %#x)\n", argv[0], status);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct selection s = { 0 };
	const char *mode, *arg;
	char pattern[128], program[128];
	unsigned long reps, r;
	long matches = 0;
	size_t bytes = 0;
	uint64_t t0 = 0, ns;

	if (argc != 4) {
		fprintf(stderr, "usage: allocinfo_query MODE ARG REPS\n");
		return 2;
	}
	if (getenv("ALLOCINFO_QUERY_FILE"))
		path = getenv("ALLOCINFO_QUERY_FILE");
	mode = argv[1];
	arg = argv[2];
	reps = strtoul(argv[3], NULL, 0);
	if (!reps)
		reps = 1;
	if (strstr(mode, "-file")) {
		s.file = arg;
		s.file_len = strlen(arg);
	} else {
		s.min = strtoull(arg, NULL, 0);
	}
	buf_size = TEXT_BUF;
	if (!strcmp(mode, "read"))
		buf_size = strtoul(arg, NULL, 0);
	if (buf_size < TEXT_BUF)
		buf_size = TEXT_BUF;
	buf = malloc(buf_size);
	if (!buf)
		die("malloc");

	/* One untimed repetition first: it warms up, and finds a missing ioctl. */
	for (r = 0; r <= reps; r++) {
		if (r == 1)
			t0 = now_ns();
		if (!strcmp(mode, "read")) {
			bytes = read_whole(strtoul(arg, NULL, 0));
		} else if (!strncmp(mode, "text-", 5)) {
			matches = text_select(&s, &bytes);
		} else if (!strncmp(mode, "ioctl-", 6)) {
			matches = ioctl_select(&s);
			if (matches < 0) {
				printf("alloctag-bench-query: test=%s reps=%lu unsupported=%s\n", mode,
				       reps, strerrorname_np(-matches) ?: "E?");
				return 0;
			}
		} else if (!strcmp(mode, "exec-file")) {
			char *const av[] = { "/bin/grep", pattern, PROC_ALLOCINFO, NULL };

			snprintf(pattern, sizeof(pattern), " %s:", arg);
			exec_select(av);
		} else if (!strcmp(mode, "sysrq")) {
			int fd = open("/proc/sysrq-trigger", O_WRONLY);

			if (fd < 0 || write(fd, arg, 1) != 1)
				die("/proc/sysrq-trigger");
			close(fd);
		} else if (!strcmp(mode, "exec-min")) {
			char *const av[] = { "/bin/awk", program, PROC_ALLOCINFO, NULL };

			snprintf(program, sizeof(program), "$1 + 0 >= %s", arg);
			exec_select(av);
		} else {
			fprintf(stderr, "allocinfo_query: unknown mode %s\n", mode);
			return 2;
		}
	}
	ns = now_ns() - t0;
	if (!strcmp(mode, "read"))
		printf("alloctag-bench-query: test=uread-bs=%s", arg);
	else if (!strcmp(mode, "sysrq"))
		printf("alloctag-bench-query: test=sysrq-%s", arg);
	else
		printf("alloctag-bench-query: test=%s", mode);
	printf(" reps=%lu matches=%ld bytes=%zu ns_per_query=%llu\n",
	       reps, matches, bytes, (unsigned long long)(ns / reps));
	return 0;
}
