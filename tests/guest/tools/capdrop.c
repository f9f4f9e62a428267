// SPDX-License-Identifier: GPL-2.0
/*
 * capdrop: runs a command without some capabilities, or as another user,
 * for the guest privilege tests (tests/guest/privilege.sh). Built static by
 * scripts/mkinitramfs.sh; Debian's busybox setpriv can neither drop a
 * capability from root for good nor change the user.
 *
 *   capdrop CAP... -- COMMAND [ARG...]       drop the named capabilities
 *   capdrop -k CAP... -- COMMAND [ARG...]    drop all but the named ones
 *   capdrop -u UID:GID -- COMMAND [ARG...]   run as UID, GID, no other group
 *
 * CAP is a name (sys_admin or cap_sys_admin) or a number. The capabilities
 * leave the bounding, inheritable, permitted, effective and ambient sets.
 * Root gets its permitted set back at execve() only from the inheritable and
 * bounding sets, so after both lost a capability the command, and all it
 * runs, lacks it too. With -u, the real, effective and saved ids all change
 * after the capabilities are dropped, which clears every capability left.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const names[] = {
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid",
	"kill", "setgid", "setuid", "setpcap", "linux_immutable",
	"net_bind_service", "net_broadcast", "net_admin", "net_raw",
	"ipc_lock", "ipc_owner", "sys_module", "sys_rawio", "sys_chroot",
	"sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
	"sys_resource", "sys_time", "sys_tty_config", "mknod", "lease",
	"audit_write", "audit_control", "setfcap", "mac_override",
	"mac_admin", "syslog", "wake_alarm", "block_suspend", "audit_read",
	"perfmon", "bpf", "checkpoint_restore",
};
#define NAMES ((int)(sizeof(names) / sizeof(names[0])))

static int parse_cap(const char *s)
{
	char *end;
	long n;
	int i;

	if (!strncmp(s, "cap_", 4))
		s += 4;
	for (i = 0; i < NAMES; i++)
		if (!strcmp(s, names[i]))
			return i;
	n = strtol(s, &end, 10);
	if (*s && !*end && n >= 0 && n < 64)
		return (int)n;
	fprintf(stderr, "capdrop: unknown capability %s\n", s);
	exit(2);
}

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	int n = CAP_LAST_CAP;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = CAP_LAST_CAP;
		fclose(f);
	}
	return n;
}

int main(int argc, char **argv)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	unsigned long long named = 0, drop;
	int keep = 0, i, last;
	long uid = -1, gid = -1;

	i = 1;
	if (i + 1 < argc && !strcmp(argv[i], "-u")) {
		if (sscanf(argv[i + 1], "%ld:%ld", &uid, &gid) != 2 || uid < 0 || gid < 0) {
			fprintf(stderr, "capdrop: -u wants UID:GID, not %s\n", argv[i + 1]);
			return 2;
		}
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "-k")) {
		keep = 1;
		i++;
	}
	for (; i < argc && strcmp(argv[i], "--"); i++)
		named |= 1ULL << parse_cap(argv[i]);
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: capdrop [-u UID:GID] [-k] [CAP...] -- COMMAND [ARG...]\n");
		return 2;
	}
	drop = keep ? ~named : named;
	last = last_cap();

	/* The bounding set first: dropping from it needs CAP_SETPCAP. */
	for (int c = 0; c <= last; c++) {
		if ((drop >> c & 1) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0)) {
			fprintf(stderr, "capdrop: PR_CAPBSET_DROP %d: %s\n", c, strerror(errno));
			return 1;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL) {
		fprintf(stderr, "capdrop: clearing the ambient set: %s\n", strerror(errno));
		return 1;
	}
	if (syscall(SYS_capget, &hdr, data)) {
		fprintf(stderr, "capdrop: capget: %s\n", strerror(errno));
		return 1;
	}
	for (int w = 0; w < 2; w++) {
		unsigned int mask = ~(unsigned int)(drop >> (32 * w));

		data[w].effective &= mask;
		data[w].permitted &= mask;
		data[w].inheritable &= mask;
	}
	if (syscall(SYS_capset, &hdr, data)) {
		fprintf(stderr, "capdrop: capset: %s\n", strerror(errno));
		return 1;
	}
	if (uid >= 0 && (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))) {
		fprintf(stderr, "capdrop: becoming %ld:%ld: %s\n", uid, gid, strerror(errno));
		return 1;
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "capdrop: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
