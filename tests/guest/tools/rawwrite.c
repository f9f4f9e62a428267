// SPDX-License-Identifier: GPL-2.0
/*
 * rawwrite: writes to a file with exactly the write() calls asked for and
 * prints what each returned, for the guest sysctl tests
 * (tests/guest/sysctl.sh). A shell's echo or printf goes through stdio,
 * which retries short writes and hides their counts.
 *
 *   rawwrite [-s OFFSET] FILE CHUNK...
 *
 * Opens FILE write-only (no O_TRUNC), seeks to OFFSET if given, then calls
 * write() once per CHUNK, in order, on the same open file. A CHUNK may hold
 * printf's escapes: \n \t \r \v \f \\ \xHH and \NNN (octal, \0 is a NUL).
 * Prints one line per write: the count it returned, or the errno name
 * (EINVAL). A failed open prints "open: ENAME" and exits 2. Exits 0 when
 * every write() wrote its whole chunk, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes the escapes of s into out (as long as s at most); returns the length. */
static size_t unescape(const char *s, char *out)
{
	size_t n = 0;

	while (*s) {
		if (*s != '\\' || !s[1]) {
			out[n++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'n': out[n++] = '\n'; s++; break;
		case 't': out[n++] = '\t'; s++; break;
		case 'r': out[n++] = '\r'; s++; break;
		case 'v': out[n++] = '\v'; s++; break;
		case 'f': out[n++] = '\f'; s++; break;
		case 'x': {
			int v = 0, d, i;

			s++;
			for (i = 0; i < 2 && (d = hexval(*s)) >= 0; i++, s++)
				v = v * 16 + d;
			out[n++] = (char)v;
			break;
		}
		default:
			if (*s >= '0' && *s <= '7') {
				int v = 0, i;

				for (i = 0; i < 3 && *s >= '0' && *s <= '7'; i++, s++)
					v = v * 8 + (*s - '0');
				out[n++] = (char)v;
			} else {
				out[n++] = *s++;
			}
		}
	}
	return n;
}

static const char *errname(int e)
{
	const char *name = strerrorname_np(e);

	return name ? name : "E?";
}

int main(int argc, char **argv)
{
	long long offset = -1;
	int i = 1, fd, all = 1;

	if (i + 1 < argc && !strcmp(argv[i], "-s")) {
		offset = atoll(argv[i + 1]);
		i += 2;
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: rawwrite [-s OFFSET] FILE CHUNK...\n");
		return 2;
	}
	fd = open(argv[i], O_WRONLY);
	if (fd < 0) {
		printf("open: %s\n", errname(errno));
		return 2;
	}
	if (offset >= 0 && lseek(fd, offset, SEEK_SET) != offset) {
		printf("lseek: %s\n", errname(errno));
		return 2;
	}
	for (i++; i < argc; i++) {
		char *buf = malloc(strlen(argv[i]) + 1);
		size_t len = unescape(argv[i], buf);
		ssize_t r = write(fd, buf, len);

		if (r < 0) {
			printf("%s\n", errname(errno));
			all = 0;
		} else {
			printf("%zd\n", r);
			all &= (size_t)r == len;
		}
		free(buf);
	}
	close(fd);
	return all ? 0 : 1;
}
