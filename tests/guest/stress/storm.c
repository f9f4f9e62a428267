// SPDX-License-Identifier: GPL-2.0
/*
 * alloctag-storm SECONDS: the allocation storm of tests/guest/stress.sh.
 *
 * Until SECONDS have passed, makes the kernel allocate and free through many
 * of its allocators and call sites, from the CPU it runs on (the test pins
 * one storm per CPU with taskset): fork and exit (task, mm, page tables),
 * pipes, Unix and inet sockets (skbs, socket slabs), tmpfs files (inodes,
 * dentries, page cache) and anonymous memory. Every one of those allocations
 * updates its tag's per-CPU counters while modules come and go and
 * /proc/allocinfo is read on other CPUs.
 *
 * Prints "storm: cpu C rounds N". Exits 1 when a system call fails: the
 * kernel must keep allocating normally under the stress.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[8192];

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pipe_round(void)
{
	int fds[2];

	if (pipe(fds))
		fail("pipe");
	if (write(fds[1], buf, 512) != 512 || read(fds[0], buf, 512) != 512)
		fail("pipe i/o");
	close(fds[0]);
	close(fds[1]);
}

static void unix_round(void)
{
	int fds[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
		fail("socketpair");
	if (send(fds[0], buf, 256, 0) != 256 || recv(fds[1], buf, 256, 0) != 256)
		fail("unix i/o");
	close(fds[0]);
	close(fds[1]);
}

/* Binding takes a port: the socket and the bind hash entries allocate. */
static void inet_round(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	int udp = socket(AF_INET, SOCK_DGRAM, 0);
	int tcp = socket(AF_INET, SOCK_STREAM, 0);

	if (udp < 0 || tcp < 0)
		fail("socket");
	if (bind(udp, (struct sockaddr *)&addr, sizeof(addr)) ||
	    bind(tcp, (struct sockaddr *)&addr, sizeof(addr)))
		fail("bind");
	close(udp);
	close(tcp);
}

static void file_round(unsigned long round)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/storm-%d-%lu", (int)getpid(),
		 round % 8);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	if (fd < 0)
		fail("open");
	if (write(fd, buf, sizeof(buf)) != sizeof(buf))
		fail("write");
	close(fd);
	if (unlink(path))
		fail("unlink");
}

static void anon_round(void)
{
	size_t len = 16 * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		fail("mmap");
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	munmap(p, len);
}

static void fork_round(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		anon_round();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail("child");
}

int main(int argc, char **argv)
{
	double end;
	unsigned long rounds = 0;
	int cpu = sched_getcpu();

	if (argc != 2) {
		fprintf(stderr, "usage: %s SECONDS\n", argv[0]);
		return 2;
	}
	/*
	 * The storm fills the time the checked loops (module churn, readers)
	 * leave idle rather than starve them: under TCG every vCPU shares one
	 * host thread.
	 */
	if (nice(10) < 0)
		fail("nice");
	end = now() + atof(argv[1]);
	memset(buf, 'a', sizeof(buf));
	while (now() < end) {
		pipe_round();
		unix_round();
		inet_round();
		file_round(rounds);
		anon_round();
		fork_round();
		rounds++;
	}
	printf("storm: cpu %d rounds %lu\n", cpu, rounds);
	return 0;
}
