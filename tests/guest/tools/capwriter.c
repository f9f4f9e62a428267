// SPDX-License-Identifier: GPL-2.0
/*
 * capwriter FILE TEXT: writes TEXT to FILE in one write() and prints its own
 * pid. The capture tests (tests/guest/capture.sh) make the kernel allocate
 * at a selected call site this way and expect the objects under this pid
 * and the comm "capwriter".
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: capwriter FILE TEXT\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (write(fd, argv[2], strlen(argv[2])) != (ssize_t)strlen(argv[2])) {
		perror("write");
		return 1;
	}
	close(fd);
	printf("%d\n", (int)getpid());
	return 0;
}
