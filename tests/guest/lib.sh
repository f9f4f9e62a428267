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

# Prints the lines of loaded code's tags: the ioctl's dump (/proc/allocinfo's
# lines, with version 2.0's pairs) less the tags kept for an unloaded module's
# live allocations (" unloaded:yes"), which 1.0's text lists but cannot mark.
loaded_tags() {
	allocinfo_ioctl dump >/tmp/loaded-tags.all || return 1
	grep -v ' unloaded:yes $' /tmp/loaded-tags.all || true
}

# Prints the lines of the tags kept for unloaded modules' live allocations.
unloaded_tags() {
	allocinfo_ioctl dump --unloaded 1
}

# Prints word $2 of the status file's line $1 (src/status.rs):
# `module_tags: chunks C mapped M used U`, `unloaded_modules: N names B`.
status_word() {
	[ -e /sys/kernel/debug/alloctag ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	sed -n "s/^$1: //p" /sys/kernel/debug/alloctag/status | cut -d' ' -f"$2"
}

# Prints the bytes of module tags (status_word module_tags 6) once the
# reaper has settled them: two reads a second and a half apart agree (12 s
# at most). A module unloaded unused keeps its tags until the reaper's next
# pass (about a second), so a figure read right after an unload may drop.
settled_module_tags() {
	_st_a=$(status_word module_tags 6)
	_st_n=0
	while [ $_st_n -lt 8 ]; do
		sleep 1.5
		_st_b=$(status_word module_tags 6)
		[ "$_st_a" != "$_st_b" ] || break
		_st_a=$_st_b
		_st_n=$((_st_n + 1))
	done
	echo "$_st_a"
}

# module_tags_back_to BYTES SECONDS WHY: waits (SECONDS at most) until the
# bytes of module tags (status_word module_tags 6) read BYTES again, as
# before a module came and went; fails saying WHY when they do not.
module_tags_back_to() {
	_mt_n=0
	while [ "$(status_word module_tags 6)" != "$1" ] && [ "$_mt_n" -lt $(($2 * 5)) ]; do
		sleep 0.2
		_mt_n=$((_mt_n + 1))
	done
	[ "$(status_word module_tags 6)" = "$1" ] ||
		fail "$3: $(status_word module_tags 6) bytes, not $1"
}

# Waits (30 s at most) until no kept tag of an unloaded module matches the
# pattern $1 (grep's): they go at the core's first check after their last
# allocation's free (every 8 s at least while it keeps any, every second
# after a change), their module's memory at the next.
wait_unlisted() {
	_wu_n=0
	while unloaded_tags | grep -q "$1"; do
		_wu_n=$((_wu_n + 1))
		[ "$_wu_n" -le 150 ] || fail "kept tags matching '$1' still listed 30 s after their last free" || return 1
		sleep 0.2
	done
}

# The results go to the host in KTAP (the kernel's
# Documentation/dev-tools/ktap.rst), written by the kernel's own helpers,
# tools/testing/selftests/kselftest/ktap_helpers.sh (in the initramfs as
# /alloctag/ktap_helpers.sh, sourced by run.sh): ktap_print_header,
# ktap_set_plan, ktap_test_pass, ktap_test_fail, ktap_test_skip and
# ktap_finished. They print to standard output; each of their lines goes to
# the console through report(), after "guest-test: ", which tells the
# runner's lines from the kernel's (scripts/manifest.sh reads the lines with
# it, and parses them with the kernel's KTAP parser), and after KTAP_INDENT,
# a subtest's four spaces.
KTAP_INDENT=

# Reports /tmp/ktap.out's lines, what a helper printed.
ktap_report() {
	while IFS= read -r _kt_line; do
		report "guest-test: $KTAP_INDENT$_kt_line"
	done </tmp/ktap.out
}

# ktap FUNCTION [ARG...]: runs a function of ktap_helpers.sh in this shell,
# so that its counters count, and reports what it printed. The helpers pass
# their arguments to echo unquoted: no pattern is expanded meanwhile.
ktap() {
	case $- in *f*) _kt_glob= ;; *) _kt_glob=1 && set -f ;; esac
	"$@" >/tmp/ktap.out
	[ -z "$_kt_glob" ] || set +f
	ktap_report
}

# ktap_exit FUNCTION [ARG...]: for ktap_finished and ktap_exit_fail_msg,
# which end the shell with the run's verdict: they run in a subshell, their
# lines are reported, then this shell exits as they did.
ktap_exit() {
	_kt_rc=0
	(
		set -f
		"$@"
	) >/tmp/ktap.out || _kt_rc=$?
	ktap_report
	exit "$_kt_rc"
}

# A KTAP diagnostic line, "# TEXT": a figure a test reports, or a line of a
# failed test's output. Written as it is: ktap_helpers.sh's ktap_print_msg
# passes its words to echo unquoted, which would close up a test output's
# spacing.
guest_note() {
	report "guest-test: $KTAP_INDENT# $*"
}

# Opens the running test's block of subtests (the KUnit cases that
# tests/guest/suites.sh runs), once: "# Subtest: TEST" (GUEST_TEST, set by
# run.sh), which the test's own result line closes. Within it the helpers
# count from 1 again, in the test's subshell only.
guest_subtests() {
	[ -z "$KTAP_INDENT" ] || return 0
	KTAP_INDENT='    '
	KTAP_TESTNO=1
	KTAP_CNT_PASS=0
	KTAP_CNT_FAIL=0
	KTAP_CNT_SKIP=0
	ktap ktap_print_header
	report "guest-test: $KTAP_INDENT# Subtest: $GUEST_TEST"
}

# guest_subtest pass|fail|skip NAME: a result of the running test's
# subtests.
guest_subtest() {
	guest_subtests
	ktap "ktap_test_$1" "$2"
}

# Prints its arguments and fails: cmd || fail "why".
fail() {
	echo "$*"
	return 1
}

# A test whose precondition the machine cannot give (not the code under
# test: memory's state) ends with this, and run.sh reports it "ok N NAME #
# SKIP" after the reason; its manifest line must say "may-skip NAME"
# (tests/manifest/README), or the skip fails the run.
SKIP_RC=77
skip() {
	echo "skipped: $*"
	exit "$SKIP_RC"
}

# The probe of counters_frozen and counters_moving: a call site whose calls
# only the test makes, hold_object() of tests/modules/alloctag_test.c, which
# allocates one object per unit written to its debugfs hold file (capwriter,
# tests/guest/tools/capwriter.c). Nothing else on the system allocates there,
# so its counter moves by exactly what the probe does, or not at all.
PROBE_MODULE=/lib/modules/alloctag_test.ko
PROBE_HOLD=/sys/kernel/debug/alloctag_test/hold
PROBE_N=3

# Prints the calls column of the probe site's /proc/allocinfo line; fails
# unless there is exactly one such line.
probe_calls() {
	awk '$4 == "[alloctag_test]" && $5 == "func:hold_object" { c = $2; n++ }
		END { if (n != 1) exit 1; print c }' "$PROC_ALLOCINFO"
}

# Prints "ALLOCATED FREED": how far the probe site's calls moved from before
# PROBE_N allocations there to after them, and to after their free. Loads
# alloctag_test for the probe and unloads it after (with the sysctl
# unchanged in between) unless it was loaded already.
probe_moves() {
	_pr_loaded=
	[ -e "$PROBE_HOLD" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	if ! grep -q '^alloctag_test ' /proc/modules; then
		insmod "$PROBE_MODULE" || fail "probe: insmod $PROBE_MODULE failed" || return 1
		_pr_loaded=1
	fi
	# Nothing held from before, whose free would move the counter.
	capwriter "$PROBE_HOLD" 0 >/dev/null || fail "probe: writing 0 to $PROBE_HOLD failed" || return 1
	_pr_0=$(probe_calls) || fail "probe: not one hold_object line of [alloctag_test] in $PROC_ALLOCINFO" || return 1
	capwriter "$PROBE_HOLD" "$PROBE_N" >/dev/null || fail "probe: writing $PROBE_N to $PROBE_HOLD failed" || return 1
	_pr_1=$(probe_calls) || return 1
	capwriter "$PROBE_HOLD" 0 >/dev/null || fail "probe: freeing failed" || return 1
	_pr_2=$(probe_calls) || return 1
	if [ -n "$_pr_loaded" ]; then
		rmmod alloctag_test || fail "probe: rmmod alloctag_test failed" || return 1
	fi
	echo "$((_pr_1 - _pr_0)) $((_pr_2 - _pr_0))"
}

# Succeeds when profiling counts nothing: the probe's allocations and frees
# leave its counter where it was.
counters_frozen() {
	_pr_moves=$(probe_moves) || return 1
	[ "$_pr_moves" = "0 0" ] ||
		fail "probe: $PROBE_N allocations and their free moved hold_object's calls by $_pr_moves, expected 0 0"
}

# Succeeds when profiling counts: the probe's allocations add exactly their
# number to its counter, and their free takes it back.
counters_moving() {
	_pr_moves=$(probe_moves) || return 1
	[ "$_pr_moves" = "$PROBE_N 0" ] ||
		fail "probe: $PROBE_N allocations and their free moved hold_object's calls by $_pr_moves, expected $PROBE_N 0"
}

# refuses_each FILE COMMAND...: the control file FILE refuses each COMMAND,
# and none of them changes what it lists.
refuses_each() {
	_rf_file=$1
	shift
	_rf_before=$(cat "$_rf_file")
	for _rf_cmd; do
		if echo "$_rf_cmd" >"$_rf_file" 2>/dev/null; then
			fail "'$_rf_cmd' accepted" || return 1
		fi
		[ "$(cat "$_rf_file")" = "$_rf_before" ] || fail "'$_rf_cmd' changed $_rf_file" || return 1
	done
}

# enospc_at_33rd FILE ENTRY LOG [ARG...]: a control file of at most 32
# entries (capture's selections, fault injection's rules) takes 32 (each
# "add func:alloctag_never_called_N ARG...", listed in FILE as a line
# "ENTRY ..."); the 33rd is refused with ENOSPC, changes nothing, and is
# logged as "LOG: 'add ...' refused".
enospc_at_33rd() {
	_en_file=$1
	_en_entry=$2
	_en_log=$3
	shift 3
	_en_i=1
	while [ "$_en_i" -le 32 ]; do
		echo "add func:alloctag_never_called_$_en_i${*:+ $*}" >"$_en_file" ||
			fail "$_en_entry $_en_i refused" || return 1
		_en_i=$((_en_i + 1))
	done
	[ "$(grep -c "^$_en_entry " "$_en_file")" = 32 ] || fail "not 32 ${_en_entry}s: $(cat "$_en_file")" || return 1
	_en_before=$(cat "$_en_file")
	_en_got=$(rawwrite "$_en_file" 'add func:alloctag_never_called_33') || true
	[ "$_en_got" = ENOSPC ] || fail "the 33rd $_en_entry: $_en_got, expected ENOSPC" || return 1
	[ "$(cat "$_en_file")" = "$_en_before" ] || fail "the refused 33rd $_en_entry changed $_en_file" || return 1
	dmesg | grep -q "$_en_log: 'add func:alloctag_never_called_33' refused" ||
		fail "no log line for the 33rd $_en_entry"
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
