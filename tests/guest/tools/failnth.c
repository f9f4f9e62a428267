// SPDX-License-Identifier: GPL-2.0
/*
 * Makes the Nth fault-injection point of one system call fail, through
 * /proc/thread-self/fail-nth (Documentation/fault-injection/), and says
 * whether the failure was injected. The write to fail-nth and the call are
 * made by this one thread with nothing between them, so the count covers
 * exactly that call (a shell running insmod would spend it on exec).
 *
 *   failnth N load FILE.ko [PARAMS]   finit_module()
 *   failnth N unload NAME             delete_module()
 *   failnth N read FILE               open() and read() to the end
 *
 * Prints "rc=R injected=I": R is 0 or the call's errno, I is 1 when the Nth
 * point was reached (and failed), 0 when the call had fewer points.
 * Exits 0 unless the tool itself failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fail_nth_fd;

static void arm(const char *n)
{
	if (write(fail_nth_fd, n, strlen(n)) != (ssize_t)strlen(n)) {
		perror("fail-nth");
		exit(2);
	}
}

/* Returns 1 when the armed failure was injected, 0 when it was not reached. */
static int disarm(void)
{
	char buf[32];
	ssize_t len = pread(fail_nth_fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0) {
		perror("fail-nth");
		exit(2);
	}
	buf[len] = 0;
	if (atoi(buf) == 0)
		return 1;
	arm("0");
	return 0;
}

static int do_read(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY);
	ssize_t len;

	if (fd < 0)
		return errno;
	do {
		len = read(fd, buf, sizeof(buf));
	} while (len > 0);
	close(fd);
	return len < 0 ? errno : 0;
}

int main(int argc, char **argv)
{
	int rc = 0, injected, fd = -1;

	if (argc < 4) {
		fprintf(stderr, "usage: failnth N load|unload|read ARG [PARAMS]\n");
		return 2;
	}
	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fail_nth_fd < 0) {
		perror("/proc/thread-self/fail-nth");
		return 2;
	}
	if (!strcmp(argv[2], "load")) {
		fd = open(argv[3], O_RDONLY);
		if (fd < 0) {
			perror(argv[3]);
			return 2;
		}
		arm(argv[1]);
		if (syscall(SYS_finit_module, fd, argc > 4 ? argv[4] : "", 0))
			rc = errno;
	} else if (!strcmp(argv[2], "unload")) {
		arm(argv[1]);
		if (syscall(SYS_delete_module, argv[3], O_NONBLOCK))
			rc = errno;
	} else if (!strcmp(argv[2], "read")) {
		arm(argv[1]);
		rc = do_read(argv[3]);
	} else {
		fprintf(stderr, "failnth: unknown operation %s\n", argv[2]);
		return 2;
	}
	injected = disarm();
	printf("rc=%d injected=%d\n", rc, injected);
	return 0;
}
