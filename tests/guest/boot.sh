# SPDX-License-Identifier: GPL-2.0
#
# In-guest checks of the sysctl.vm.mem_profiling= boot parameter, each run in
# a boot of its own with that parameter (tests/guest/boots.txt).

SYSCTL=/proc/sys/vm/mem_profiling

# Succeeds when the counters do not move across a few forks.
counters_frozen() {
	a=$(md5sum </proc/allocinfo)
	for i in 1 2 3; do /bin/true; done
	b=$(md5sum </proc/allocinfo)
	[ "$a" = "$b" ]
}

test_boot_param_0_starts_off_and_can_turn_on() {
	[ "$(cat "$SYSCTL")" = 0 ]
	[ "$(stat -c %a "$SYSCTL")" = 644 ]
	counters_frozen
	echo 1 >"$SYSCTL"
	[ "$(cat "$SYSCTL")" = 1 ]
	! counters_frozen
}

test_boot_param_1_starts_on() {
	[ "$(cat "$SYSCTL")" = 1 ]
	[ "$(stat -c %a "$SYSCTL")" = 644 ]
	! counters_frozen
}

test_boot_param_never_is_off_for_good() {
	[ "$(cat "$SYSCTL")" = 0 ]
	[ "$(stat -c %a "$SYSCTL")" = 444 ]
	if echo 1 >"$SYSCTL" 2>/dev/null; then
		echo "could turn profiling on"
		return 1
	fi
	[ "$(cat "$SYSCTL")" = 0 ]
	counters_frozen
}

test_boot_param_junk_is_reported_and_default_holds() {
	dmesg | grep -q 'alloctag: invalid sysctl.vm.mem_profiling="junk"' ||
		{ echo "no report in the kernel log"; return 1; }
	[ "$(cat "$SYSCTL")" = 1 ]
	! counters_frozen
}
