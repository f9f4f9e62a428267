# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Helpers shared by the guest test files; sourced by run.sh with them (it
# has no test_* function of its own). POSIX sh for busybox ash.

SYSCTL=/proc/sys/vm/mem_profiling
PROC_ALLOCINFO=/proc/allocinfo
# Capability numbers, bits of /proc/PID/status's Cap* sets.
# shellcheck disable=SC2034 # used by the test files
CAP_SYS_ADMIN=21

# Prints its arguments and fails: cmd || fail "why".
fail() {
	echo "$*"
	return 1
}

# Succeeds when no counter of /proc/allocinfo moves across a few forks, each
# of which allocates a task_struct (kernel/fork.c) and more.
counters_frozen() {
	a=$(md5sum <"$PROC_ALLOCINFO")
	for _ in 1 2 3; do /bin/true; done
	b=$(md5sum <"$PROC_ALLOCINFO")
	[ "$a" = "$b" ]
}

# Succeeds when the counters move across a few forks: profiling is on.
counters_moving() {
	! counters_frozen
}

# Fails unless the sysctl reads $1.
expect_sysctl() {
	v=$(cat "$SYSCTL")
	[ "$v" = "$1" ] || fail "$SYSCTL reads '$v', expected '$1'"
}

# Sets the sysctl to $1 (0 or 1) the way an administrator does, and checks it.
set_sysctl() {
	echo "$1" >"$SYSCTL" || fail "echo $1 >$SYSCTL failed"
	expect_sysctl "$1"
}

# Prints capability set $1 (CapEff, CapPrm, CapBnd, ...) of the
# /proc/PID/status on stdin as a number: capdrop ... -- cat /proc/self/status.
cap_field() {
	echo $((0x$(awk -v f="$1:" '$1 == f { print $2 }')))
}

# Succeeds when capability $2 is in the set $1 (a number).
has_cap() {
	[ $(($1 >> $2 & 1)) = 1 ]
}

# Sets the sysctl back to 1, the boot default, when the calling test's
# subshell exits, pass or fail, so that a failed test does not leave
# profiling off for the tests after it.
restore_sysctl_on_exit() {
	trap 'echo 1 >"$SYSCTL" 2>/dev/null' EXIT
}
