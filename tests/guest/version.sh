# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest checks of allocinfo.version=, in a boot of the test kernel with
# "allocinfo.version=2.0 allocinfo.version=3" (tests/guest/boots.txt selects
# test_boot_version_*): the first value switches /proc/allocinfo to
# mainline's version 2.0, the second is refused and changes nothing.

# Fails unless this boot had allocinfo.version=2.0.
booted_with_version_2() {
	grep -qw 'allocinfo.version=2.0' /proc/cmdline ||
		fail "not booted with allocinfo.version=2.0: $(cat /proc/cmdline)"
}

test_boot_version_2_header() {
	booted_with_version_2
	h=$(head -n 1 "$PROC_ALLOCINFO")
	[ "$h" = "allocinfo - version: 2.0" ] || fail "header '$h'"
	# Mainline's column line, then since when the counters count: when they
	# were made, as the status file says it.
	[ -e /sys/kernel/debug/alloctag/status ] || mount -t debugfs none /sys/kernel/debug
	since=$(sed -n 's/^counters: made at \([0-9]*\.[0-9]\{6\}\) s$/\1/p' /sys/kernel/debug/alloctag/status)
	[ -n "$since" ] || fail "status: $(grep counters: /sys/kernel/debug/alloctag/status)"
	h=$(sed -n 2p "$PROC_ALLOCINFO")
	[ "$h" = "#     <size>  <calls> <tag info> counters_since:$since" ] || fail "second header line '$h'"
}

test_boot_version_2_refused_value_changes_nothing() {
	booted_with_version_2
	dmesg | grep -q 'allocinfo.version: invalid value, expected 1.0 or 2.0; keeping 2.0' ||
		fail "no refusal logged: $(dmesg | grep allocinfo.version)"
	dmesg | grep -q "Malformed early option 'allocinfo.version'" ||
		fail "the early parameter parser was not told"
}

# Every line is a version 1.0 line, or one with " accurate:no" after the
# function; the tool parses the file.
test_boot_version_2_lines_parse() {
	booted_with_version_2
	bad=$(tail -n +3 "$PROC_ALLOCINFO" | grep -Ev '^ *-?[0-9]+ +[0-9]+ [^ ]+:[0-9]+ (\[[^] ]+\] )?func:[^ ]+( accurate:no)? $' | head -n 3)
	[ -z "$bad" ] || fail "lines that do not parse: $bad"
	# The initramfs has the tool (scripts/mkinitramfs.sh): without it, this
	# check did not run, which is a failure, not a pass.
	[ -x /bin/allocinfo ] || fail "no /bin/allocinfo"
	allocinfo top -n 3 >/dev/null || fail "allocinfo top cannot read version 2.0"
	allocinfo top -n 3 --via text >/dev/null || fail "allocinfo top --via text cannot read version 2.0"
}

# A tag that lost counts shows " accurate:no" in the text and accurate 0 in
# the ioctl: alloctag_test cache=1 allocates from a new slab, whose
# extension vector is made to fail (per-call-site fault injection: every
# vector allocation while the module loads, its first slab's among them).
test_boot_version_2_inaccurate_tag_marked() {
	booted_with_version_2
	ctl=/sys/kernel/debug/alloctag/fail
	[ -e "$ctl" ] || mount -t debugfs none /sys/kernel/debug
	trap 'echo clear >"$ctl" 2>/dev/null; rmmod alloctag_test 2>/dev/null || true' EXIT
	line=$(grep ' \[alloctag_test\] func:cache_object' "$PROC_ALLOCINFO" || true)
	[ -z "$line" ] || fail "alloctag_test already loaded: $line"
	echo "add func:alloc_slab_obj_exts times=1000 verbose=0" >"$ctl" || fail "arming refused"
	loadmod /lib/modules/alloctag_test.ko cache=1 || fail "loading with cache=1 failed"
	injected=$(awk '/^rule / { for (i = 1; i <= NF; i++) if ($i ~ /^injected=/) print substr($i, 10) }' "$ctl")
	echo clear >"$ctl"
	[ "${injected:-0}" -ge 1 ] || fail "no vector failure injected ('$injected')"
	line=$(grep ' \[alloctag_test\] func:cache_object' "$PROC_ALLOCINFO")
	case "$line" in
	*' func:cache_object accurate:no ') ;;
	*) fail "not marked in the text: '$line'" ;;
	esac
	calls=$(echo "$line" | awk '{ print $2 }')
	[ "$calls" = 0 ] || fail "the uncounted object was counted: '$line'"
	n=$(allocinfo_ioctl dump --module alloctag_test --function cache_object --inaccurate 1 | wc -l)
	[ "$n" = 1 ] || fail "the ioctl's inaccurate filter lists $n cache_object tags"
	# The text and the ioctl mark the same tags.
	text=$(grep -c ' accurate:no $' "$PROC_ALLOCINFO")
	ioctl=$(allocinfo_ioctl dump --inaccurate 1 | wc -l)
	[ "$text" = "$ioctl" ] || fail "$text tags marked in the text, $ioctl by the ioctl"
	rmmod alloctag_test || fail "rmmod failed"
}
