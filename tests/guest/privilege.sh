# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of who may read /proc/allocinfo and read or write
# vm.mem_profiling, as in 6.12's C core: /proc/allocinfo is 0400 root's
# (no capability checked: uid 0 reads it by the owner bits); the sysctl is
# 0644 root's (0444 with MEM_ALLOC_PROFILING_DEBUG or after booting with
# "never"), and its handler, proc_do_static_key(), refuses a writer without
# CAP_SYS_ADMIN with EPERM. Sourced by run.sh (test_rw_: nodebug kernel).
#
# capdrop (tests/guest/tools/capdrop.c) runs a command as root without the
# named capabilities (-k: with only those), or as another user (-u); rawwrite
# prints what each write() returned. (Debian's busybox setpriv has no
# --reuid: the tests that used it failed to start it and passed unseen.)

# Runs "$@" as nobody (uid and gid 65534, no groups): setuid() away from
# root clears every capability.
as_nobody() {
	capdrop -u 65534:65534 -- "$@"
}

test_privilege_capdrop_drops_for_good() {
	# The tests below rely on capdrop: without sys_admin, root keeps the
	# rest (dac_override here), and the command's own children lack it too.
	s=$(capdrop sys_admin -- sh -c 'cat /proc/self/status')
	for set in CapEff CapPrm CapBnd; do
		n=$(echo "$s" | cap_field $set)
		! has_cap "$n" "$CAP_SYS_ADMIN" || fail "$set still has CAP_SYS_ADMIN: $n"
		has_cap "$n" 1 || fail "$set lost CAP_DAC_OVERRIDE: $n"
	done
	s=$(capdrop -k sys_admin -- cat /proc/self/status)
	[ "$(echo "$s" | cap_field CapEff)" = $((1 << CAP_SYS_ADMIN)) ] ||
		fail "capdrop -k sys_admin: $(echo "$s" | grep Cap)"
	[ "$(capdrop sys_admin -- id -u)" = 0 ] || fail "capdrop changed the user"
	# nobody has no capability at all.
	[ "$(as_nobody id -u):$(as_nobody id -g):$(as_nobody id -G)" = 65534:65534:65534 ] ||
		fail "as_nobody runs as $(as_nobody id)"
	s=$(as_nobody cat /proc/self/status)
	[ "$(echo "$s" | cap_field CapEff)" = 0 ] || fail "nobody has capabilities: $(echo "$s" | grep Cap)"
}

test_privilege_root_without_capabilities_reads() {
	# Reading needs no capability, only uid 0 for the 0400 file.
	[ "$(capdrop -k -- cat "$SYSCTL")" = 1 ] || fail "sysctl unreadable without capabilities"
	capdrop -k -- cat "$PROC_ALLOCINFO" >/tmp/priv-allocinfo ||
		fail "root without capabilities cannot read $PROC_ALLOCINFO"
	[ "$(head -n 1 /tmp/priv-allocinfo)" = 'allocinfo - version: 1.0' ]
	[ "$(wc -l </tmp/priv-allocinfo)" -gt 1000 ]
}

test_privilege_nobody_cannot_read_allocinfo() {
	if err=$(as_nobody cat "$PROC_ALLOCINFO" 2>&1 >/dev/null); then
		fail "nobody could read $PROC_ALLOCINFO"
	fi
	case "$err" in
	*'Permission denied'*) ;;
	*) fail "nobody reading $PROC_ALLOCINFO: $err (expected EACCES)" ;;
	esac
}

test_privilege_nobody_reads_sysctl() {
	[ "$(as_nobody cat "$SYSCTL")" = 1 ] || fail "nobody cannot read $SYSCTL"
}

test_rw_privilege_nobody_cannot_write_sysctl() {
	restore_sysctl_on_exit
	# Not root: the 0644 mode refuses the open, before the handler runs.
	for start in 1 0; do
		set_sysctl $start
		for v in 0 1; do
			got=$(as_nobody rawwrite "$SYSCTL" "$v") || true
			[ "$got" = 'open: EACCES' ] || fail "nobody writing $v from $start: $got"
			expect_sysctl $start
		done
	done
}

test_rw_privilege_root_without_sys_admin_gets_eperm() {
	restore_sysctl_on_exit
	# proc_do_static_key() checks CAP_SYS_ADMIN first: whatever is written,
	# even nothing or garbage, is EPERM and changes nothing.
	for start in 1 0; do
		set_sysctl $start
		for v in 0 1 '0\n' '1\n' 2 abc ''; do
			got=$(capdrop sys_admin -- rawwrite "$SYSCTL" "$v") || true
			[ "$got" = EPERM ] || fail "writing '$v' from $start without CAP_SYS_ADMIN: $got"
			expect_sysctl $start
		done
		# The way an administrator writes it.
		if err=$(capdrop sys_admin -- sh -c "echo $((1 - start)) >$SYSCTL" 2>&1); then
			fail "echo $((1 - start)) succeeded without CAP_SYS_ADMIN"
		fi
		case "$err" in
		*'Operation not permitted'*) ;;
		*) fail "echo without CAP_SYS_ADMIN: $err (expected EPERM)" ;;
		esac
		expect_sysctl $start
		# The static key stayed where it was.
		if [ $start = 1 ]; then
			counters_moving || fail "profiling stopped"
		else
			counters_frozen || fail "profiling started"
		fi
	done
}

test_rw_privilege_root_with_only_sys_admin_writes() {
	restore_sysctl_on_exit
	# uid 0 (the owner bits) and CAP_SYS_ADMIN are all a writer needs.
	got=$(capdrop -k sys_admin -- rawwrite "$SYSCTL" 0) || fail "writing 0: $got"
	[ "$got" = 1 ] || fail "writing 0 returned $got"
	expect_sysctl 0
	counters_frozen || fail "counters moved with profiling off"
	got=$(capdrop -k sys_admin -- rawwrite "$SYSCTL" '1\n') || fail "writing 1: $got"
	[ "$got" = 2 ] || fail "writing 1 returned $got"
	expect_sysctl 1
	counters_moving || fail "counters frozen with profiling on"
}
