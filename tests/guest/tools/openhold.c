// SPDX-License-Identifier: GPL-2.0
/*
 * openhold FILE N [unkillable]: opens FILE N times, reads one byte from each
 * open (so that seq_file allocates its buffer and the file's first read
 * runs), then prints "held N" and keeps every open until it is killed. For
 * the tests of what one open of our /proc files costs, and who is charged for
 * it (tests/guest/waste.sh). Raises its open-file limit to fit N first. On a
 * failed open or read it prints "failed I ERRNO-NAME" after the I opens held
 * and still waits, so that the test sees both.
 *
 * With "unkillable" it is made to fill a memory cgroup: its oom_score_adj is
 * -1000, so the cgroup's OOM killer finds no one to kill and a charge made
 * in a system call fails with ENOMEM. A charge made in a page fault cannot
 * fail: the fault is retried for as long as the cgroup stays full. So every
 * page it has and will map is locked in first (mlockall), and on a failure
 * it closes a few opens again to make room for its report before writing it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* Opens given back after a failure, so that the report's page fits. */
#define ROOM 64

static int unkillable(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY);

	if (fd < 0 || write(fd, "-1000", 5) != 5) {
		perror("openhold: oom_score_adj");
		return -1;
	}
	close(fd);
	if (mlockall(MCL_CURRENT | MCL_FUTURE)) {
		perror("openhold: mlockall");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char line[128];
	struct rlimit lim;
	long n, i, j;
	int first = -1;
	int len;
	char c;
	int fd;

	if (argc < 3 || argc > 4 || (n = strtol(argv[2], NULL, 10)) < 0 || n > 1000000 ||
	    (argc == 4 && strcmp(argv[3], "unkillable"))) {
		fprintf(stderr, "usage: openhold FILE N [unkillable] (N up to 1000000)\n");
		return 2;
	}
	lim.rlim_cur = lim.rlim_max = n + 64;
	if (setrlimit(RLIMIT_NOFILE, &lim)) {
		perror("openhold: setrlimit");
		return 1;
	}
	if (argc == 4 && unkillable())
		return 1;
	/* The report's text is made before the cgroup can fill. */
	len = snprintf(line, sizeof(line), "failed %ld %s\n", n, strerrorname_np(ENOMEM));
	for (i = 0; i < n; i++) {
		fd = open(argv[1], O_RDONLY);
		if (fd >= 0 && first < 0)
			first = fd;
		if (fd < 0 || read(fd, &c, 1) != 1) {
			len = snprintf(line, sizeof(line), "failed %ld %s\n", i,
				       strerrorname_np(errno));
			/* Descriptors are handed out in order: the last held are these. */
			for (j = 0; j < ROOM && i - j > 0; j++)
				close(first + i - 1 - j);
			break;
		}
	}
	if (i == n)
		len = snprintf(line, sizeof(line), "held %ld\n", n);
	if (write(1, line, len) != len)
		return 1;
	for (;;)
		pause();
}
