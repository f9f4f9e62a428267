#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In-guest test runner. Sources every tests/*.sh and runs each selected
# function named test_* in a subshell under set -e; a function passes when it
# returns 0. Reports the results in KTAP through the kernel's helpers
# (ktap_helpers.sh; tests/guest/lib.sh's ktap says how), each line after
# "guest-test: ": "ok N NAME", "ok N NAME # SKIP" or "not ok N NAME" (after
# the last lines of its output), then the totals; the host parses them with
# the kernel's KTAP parser (scripts/manifest.sh).
#
# A test's name says what it needs of the kernel, so that one set of files
# serves every boot of tests/guest/boots.txt:
#
#   test_rw_*      writes vm.mem_profiling, or needs it writable (counters
#                  frozen with it off, privilege and input checks): only on a
#                  kernel without MEM_ALLOC_PROFILING_DEBUG (nodebug)
#   test_ro_*      needs the sysctl read-only, as MEM_ALLOC_PROFILING_DEBUG
#                  makes it, or another option of the test kernel
#                  (SLUB_DEBUG's /proc/slabinfo): only on the test kernel
#   test_boot_*    checks a boot parameter: only in the boot that passes it
#   test_stress_*  long concurrent runs: only in the stress boots
#   test_failnth_* each allocation of a system call failing in turn: only in
#                  the fail-nth boot, whose console has the allocation
#                  failure reports that run-qemu.sh then expects
#   test_inject_*  per-call-site fault injection and the error-path sweeper:
#                  only in the inject boot, which expects those reports too
#   test_fuzz_*    the fuzzer of every interface (fault rules among them):
#                  only in the fuzz boot, which expects those reports too
#   test_*         anything else (reads, modules, the allocinfo tool, Rust
#                  call sites): on every kernel
#
# The kernel command line selects (scripts/test.sh passes the first two):
#
#   alloctag_kernel=NAME  the kernel booted, as boots.txt names it: "test" or
#                         "nodebug". Without alloctag_tests= the runner runs
#                         test_* less test_boot_*, test_stress_*,
#                         test_failnth_*, test_inject_* and test_fuzz_*, less
#                         test_rw_* on test and test_ro_* on nodebug. Another
#                         or no name runs neither test_rw_* nor test_ro_*.
#   alloctag_tests=P[,P]  instead, exactly the functions matching one of the
#                         shell patterns P, less those matching a pattern
#                         written !P: alloctag_tests=test_rw_*,!test_rw_sysctl_*
#   alloctag_test_secs=N  a test still running after N seconds (default 300)
#                         is killed and fails, so that one hung test names
#                         itself and the others still run
#
# A selection that matches no test fails, so that a mistyped pattern in
# boots.txt does not pass unnoticed.

set -f # patterns stay patterns
kernel=
tests=
test_secs=300
# shellcheck disable=SC2013 # the command line's words
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	alloctag_kernel=*) kernel=${arg#alloctag_kernel=} ;;
	alloctag_tests=*) tests=${arg#alloctag_tests=} ;;
	alloctag_test_secs=*) test_secs=${arg#alloctag_test_secs=} ;;
	esac
done
if [ -z "$tests" ]; then
	tests='test_*,!test_boot_*,!test_stress_*,!test_failnth_*,!test_inject_*,!test_fuzz_*'
	case "$kernel" in
	test) tests="$tests,!test_rw_*" ;;
	nodebug) tests="$tests,!test_ro_*" ;;
	*) tests="$tests,!test_rw_*,!test_ro_*" ;;
	esac
fi
set +f # the tests may glob
# shellcheck disable=SC1091 # scripts/guest/report.sh, in the initramfs
. /alloctag/report.sh
# shellcheck disable=SC1091 # the kernel's, in the initramfs (scripts/mkinitramfs.sh)
. /alloctag/ktap_helpers.sh

# Succeeds when test $1 matches the selection $tests.
selected() {
	hit=1
	old_ifs=$IFS
	IFS=,
	set -f
	for p in $tests; do
		case "$p" in
		!*)
			# shellcheck disable=SC2254 # p is a pattern
			case "$1" in ${p#!}) hit=1 && break ;; esac
			;;
		*)
			# shellcheck disable=SC2254
			case "$1" in $p) hit=0 ;; esac
			;;
		esac
	done
	set +f
	IFS=$old_ifs
	return $hit
}

# The kernel log of the boot, before the tests fill the ring buffer: what
# the boot decided (tests/guest/pgflags.sh) is read from here.
dmesg >/tmp/dmesg.boot

for file in /alloctag/tests/*.sh; do
	# shellcheck disable=SC1090 # the test files, found at run time
	. "$file"
done
ktap ktap_print_header
guest_note "kernel '${kernel:-?}', tests $tests"
# ash cannot list functions, so they are found in the files.
selection=
# shellcheck disable=SC2013 # function names, one word each
for t in $(sed -n 's/^\(test_[a-zA-Z0-9_]*\) *().*/\1/p' /alloctag/tests/*.sh); do
	! selected "$t" || selection="$selection $t"
done
[ -n "$selection" ] || ktap_exit ktap_exit_fail_msg "no test matches '$tests'"
# shellcheck disable=SC2086 # one word per test
set -- $selection
ktap ktap_set_plan $#
for t in $selection; do
	# The output goes to a file, not through a pipe that a process the test
	# left behind would hold open; a watchdog ends a test that hangs.
	GUEST_TEST=$t
	(set -e; "$t") >/tmp/test.out 2>&1 &
	test_pid=$!
	(
		trap 'kill "$nap" 2>/dev/null; exit 0' TERM
		sleep "$test_secs" &
		nap=$!
		wait "$nap" && kill -9 "$test_pid" 2>/dev/null &&
			echo "killed after $test_secs s" >>/tmp/test.out
	) &
	watchdog=$!
	rc=0
	wait "$test_pid" || rc=$?
	kill "$watchdog" 2>/dev/null || true
	wait "$watchdog" 2>/dev/null || true
	if [ "$rc" -eq 0 ]; then
		ktap ktap_test_pass "$t"
	elif [ "$rc" -eq "$SKIP_RC" ]; then
		guest_note "  $(tail -n 1 /tmp/test.out)"
		ktap ktap_test_skip "$t"
	else
		tail -n 20 /tmp/test.out | while IFS= read -r line; do
			guest_note "  $line"
		done
		ktap ktap_test_fail "$t"
	fi
done
ktap_exit ktap_finished
