// SPDX-License-Identifier: GPL-2.0
/*
 * memhold pipe N: writes N pages into a pipe it never reads, so that the
 *   kernel allocates N pipe buffer pages (pipe_write()) in this process;
 * memhold thp: faults in one PMD-aligned 2 MiB anonymous region with
 *   MADV_HUGEPAGE, so that it is one transparent huge page
 *   (do_huge_pmd_anonymous_page()).
 * Then prints "PID ADDRESS" (ADDRESS: the region's start, 0 for a pipe) and
 * holds the memory until it is killed. The capture tests
 * (tests/guest/capture.sh) select those call sites and expect the objects
 * under this pid and the comm "memhold".
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL
#define HUGE (2UL << 20)

static int hold_pipe(long pages)
{
	static char buf[PAGE];
	int fds[2];
	long i;

	/* The default pipe holds 16 pages; write() would block past that. */
	if (pages < 1 || pages > 16 || pipe(fds)) {
		fprintf(stderr, "memhold: bad page count or no pipe\n");
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < pages; i++) {
		/* A full page per write: each takes a fresh buffer page. */
		if (write(fds[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("memhold: write");
			return 1;
		}
	}
	printf("%d 0\n", (int)getpid());
	return 0;
}

static int hold_thp(void)
{
	char *map, *huge;

	map = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("memhold: mmap");
		return 1;
	}
	huge = (char *)(((uintptr_t)map + HUGE - 1) & ~(HUGE - 1));
	if (madvise(huge, HUGE, MADV_HUGEPAGE)) {
		perror("memhold: madvise");
		return 1;
	}
	memset(huge, 'x', HUGE);
	printf("%d %p\n", (int)getpid(), (void *)huge);
	return 0;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc == 3 && !strcmp(argv[1], "pipe"))
		ret = hold_pipe(strtol(argv[2], NULL, 10));
	else if (argc == 2 && !strcmp(argv[1], "thp"))
		ret = hold_thp();
	else {
		fprintf(stderr, "usage: memhold pipe N | memhold thp\n");
		return 2;
	}
	if (ret)
		return ret;
	fflush(stdout);
	for (;;)
		pause();
}
