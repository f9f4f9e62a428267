# SPDX-License-Identifier: GPL-2.0
#
# In-guest tests of the vm.mem_profiling sysctl. Sourced by run.sh.

SYSCTL=/proc/sys/vm/mem_profiling

# Prints the calls counter of the first tag whose tag info matches $1.
calls_of() {
	awk -v site="$1" '$3 ~ site { print $2; exit }' /proc/allocinfo
}

test_sysctl_reads_enabled() {
	[ "$(cat "$SYSCTL")" = 1 ]
	[ "$(stat -c %a "$SYSCTL")" = 644 ]
}

test_sysctl_toggle_stops_and_restarts_accounting() {
	# fork() allocates a task_struct at kernel/fork.c, charged to
	# alloc_task_struct_node's or dup_task_struct's tag, at every command.
	echo 0 >"$SYSCTL"
	[ "$(cat "$SYSCTL")" = 0 ]
	a=$(cat /proc/allocinfo | md5sum)
	for i in 1 2 3 4 5; do /bin/true; done
	b=$(cat /proc/allocinfo | md5sum)
	echo 1 >"$SYSCTL"
	[ "$(cat "$SYSCTL")" = 1 ]
	[ "$a" = "$b" ] || { echo "counters moved while disabled"; return 1; }
	c=$(cat /proc/allocinfo | md5sum)
	for i in 1 2 3 4 5; do /bin/true; done
	d=$(cat /proc/allocinfo | md5sum)
	[ "$c" != "$d" ] || { echo "counters did not move when enabled"; return 1; }
}

# Writes the bytes printf makes of $1 to the sysctl in one write; fails if
# the write is accepted or the value changes.
reject() {
	before=$(cat "$SYSCTL")
	if printf "$1" >"$SYSCTL" 2>/dev/null; then
		echo "accepted '$1'"
		return 1
	fi
	[ "$(cat "$SYSCTL")" = "$before" ] || { echo "'$1' changed the value"; return 1; }
}

test_sysctl_rejects_bad_values() {
	for v in '2\n' '-1\n' 'abc\n' '0x1\n' '1 1\n' ' 1\n' '1\n\n' '\n' \
		'99999999999999999999\n' '\001\377\000' '1\000'; do
		reject "$v"
		echo 0 >"$SYSCTL"
		reject "$v"
		echo 1 >"$SYSCTL"
	done
	# A very long write, in one write() call.
	long=$(head -c 8192 /dev/zero | tr '\0' 1)
	reject "$long"
	[ "$(cat "$SYSCTL")" = 1 ]
}

test_sysctl_accepts_exact_values() {
	printf 0 >"$SYSCTL"
	[ "$(cat "$SYSCTL")" = 0 ]
	printf '1\n' >"$SYSCTL"
	[ "$(cat "$SYSCTL")" = 1 ]
}

test_sysctl_unwritable_for_non_root() {
	if setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo 0 >$SYSCTL" 2>/dev/null; then
		echo "nobody could write $SYSCTL"
		return 1
	fi
	[ "$(cat "$SYSCTL")" = 1 ]
}
