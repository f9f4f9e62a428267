# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The fuzzer of every interface alloctag exposes (allocinfo-fuzz,
# crates/allocinfo-fuzz): for a fixed time, grammar-made and mutated
# commands to the control files fail, capture and waste and to
# vm.mem_profiling, random ioctls of /proc/allocinfo with bad pointers,
# filters and positions, the test modules loaded and unloaded, and every
# file read, with its checks (a refused write changes nothing, the ioctls
# fail as the ABI says, allocinfo-check's rules on /proc/allocinfo). Only in
# the fuzz-test boot (tests/guest/boots.txt), whose console check
# (scripts/run-qemu.sh) fails on any KASAN, lockdep or WARN report.
#
# Boot parameters: alloctag_fuzz_secs=N (default 120) and
# alloctag_fuzz_seed=N (default a random one); the seed is the first line
# the fuzzer prints on the console ("fuzz: seed N"), and booting with it
# gives each fuzzer thread the same commands again. alloctag_fuzz_plant=1
# runs it with --plant-refusal, the check's own test, which must fail.

test_fuzz_interfaces() {
	secs=120
	seed=
	plant=
	# shellcheck disable=SC2013 # the command line's words
	for arg in $(cat /proc/cmdline); do
		case "$arg" in
		alloctag_fuzz_secs=*) secs=${arg#alloctag_fuzz_secs=} ;;
		alloctag_fuzz_seed=*) seed=${arg#alloctag_fuzz_seed=} ;;
		alloctag_fuzz_plant=1) plant=--plant-refusal ;;
		esac
	done
	command -v allocinfo-fuzz >/dev/null || fail "no /bin/allocinfo-fuzz (scripts/build-tool.sh builds it)"
	[ -d /sys/kernel/debug/alloctag ] || mount -t debugfs none /sys/kernel/debug
	# The fuzzer's lines go to the console as they come, so that the seed
	# is in the log even if the guest dies; run.sh shows the end on failure.
	# (ash has no pipefail: the fuzzer's status comes back in a file.)
	{
		rc=0
		# shellcheck disable=SC2086 # no seed or plant is no argument
		allocinfo-fuzz "$secs" $seed $plant || rc=$?
		echo "$rc" >/tmp/fuzz.rc
	} 2>&1 | tee /tmp/fuzz.out >/dev/console
	rc=$(cat /tmp/fuzz.rc)
	grep -E '^fuzz: (FAIL|ok)' /tmp/fuzz.out || true
	[ "$rc" = 0 ] || fail "allocinfo-fuzz exited $rc"
}
