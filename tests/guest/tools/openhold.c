// SPDX-License-Identifier: GPL-2.0
/*
 * openhold FILE N: opens FILE N times, reads one byte from each open (so
 * that seq_file allocates its buffer and the file's first read runs), then
 * prints "held N" and keeps every open until it is killed. For the tests of
 * what one open of our /proc files costs, and who is charged for it
 * (tests/guest/waste.sh). Raises its open-file limit to fit N first. On a
 * failed open or read it prints "failed I ERRNO-NAME" after the I opens held
 * and still waits, so that the test sees both.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char line[128];
	struct rlimit lim;
	long n, i;
	int len;
	char c;
	int fd;

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) < 0 || n > 1000000) {
		fprintf(stderr, "usage: openhold FILE N (N up to 1000000)\n");
		return 2;
	}
	lim.rlim_cur = lim.rlim_max = n + 64;
	if (setrlimit(RLIMIT_NOFILE, &lim)) {
		perror("openhold: setrlimit");
		return 1;
	}
	/*
	 * Every page the report needs is faulted in first: a page fault charged
	 * to a full cgroup would otherwise wait on its OOM killer.
	 */
	len = snprintf(line, sizeof(line), "failed %ld %s\n", n, strerrorname_np(ENOMEM));
	for (i = 0; i < n; i++) {
		fd = open(argv[1], O_RDONLY);
		if (fd < 0 || read(fd, &c, 1) != 1) {
			len = snprintf(line, sizeof(line), "failed %ld %s\n", i,
				       strerrorname_np(errno));
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
