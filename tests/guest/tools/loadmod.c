// SPDX-License-Identifier: GPL-2.0
/*
 * loadmod: loads a module with one finit_module() call, for the fault
 * injection tests and the error-path sweeper (tests/guest/inject.sh,
 * scripts/sweep-error-paths.sh). Busybox insmod retries a failed
 * finit_module() with init_module(), so a load that an injected failure
 * made fail would run twice and succeed the second time.
 *
 *   loadmod MODULE.ko [PARAMS...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char params[4096] = "";
	size_t len = 0;
	int fd, i;

	if (argc < 2) {
		fprintf(stderr, "usage: loadmod MODULE.ko [PARAMS...]\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		int n = snprintf(params + len, sizeof(params) - len, "%s%s",
				 len ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= sizeof(params) - len) {
			fprintf(stderr, "loadmod: parameters too long\n");
			return 2;
		}
		len += n;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "loadmod: can't open '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (syscall(SYS_finit_module, fd, params, 0) != 0) {
		fprintf(stderr, "loadmod: can't insert '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
