# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The kernel's own KUnit suites for the allocator paths the graft edits:
# 6.12's slub_test (lib/slub_kunit.c), kasan (mm/kasan/kasan_test_c.c) and
# kfence (mm/kfence/kfence_test.c). The test kernel builds them as modules
# (tests/kunit/.kunitconfig); each suite runs as its module loads. The boots
# "suites" (as booted by default: page tags in page flags) and "suites-all"
# (page tags in page_ext,
# waste accounting on, and capture selections of each suite's module made
# by the boot parameter alloctag.capture) run them with KFENCE sampling
# (kfence.sample_interval) and KUnit enabled for modules only
# (kunit.filter_glob matches no built-in suite at boot; the tests set it).
#
# Each case is also reported as a subtest of the test that ran its suite,
# "kunit:SUITE.CASE" (lib.sh's guest_subtest), so that the boots' manifests
# list the cases.
#
# KASAN's and KFENCE's suites make reports on purpose. The console is quieted
# while a suite runs, and its log is judged instead: each report of the
# sanitizers (between their "=====" lines) is the suite's, which fails the
# case that did not expect it; any other kernel report fails the test, but
# for one: MEM_ALLOC_PROFILING_DEBUG's "alloc_tag was not set", which the
# slab free hook gives (once a boot) when a double free reaches it before
# KASAN or KFENCE refuses the free, as in 6.12's C core.

SUITES_DIR=/lib/modules/suites
SUITES_CAP=/sys/kernel/debug/alloctag/capture

# kernel_suite MODULE SUITE: loads MODULE, whose KUnit suite SUITE runs at
# load, and reports its cases; fails unless the suite passed with no
# kernel report of its own.
kernel_suite() {
	ks_mod=$SUITES_DIR/$1.ko
	[ -f "$ks_mod" ] || fail "no $ks_mod (tests/kunit/.kunitconfig builds it)" || return 1
	[ -d /sys/kernel/debug/alloctag ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	# No newline: a charp parameter would keep it, and match no suite.
	printf '*' >/sys/module/kunit/parameters/filter_glob || fail "cannot set kunit.filter_glob" || return 1
	ks_mark="alloctag-test: kernel suite $2 starts"
	echo "$ks_mark" >/dev/kmsg
	ks_level=$(cut -f 1 /proc/sys/kernel/printk)
	dmesg -n 1
	# KASAN's suite runs with KFENCE paused: an object KFENCE took would be
	# outside KASAN's view, and the bad access the case expects unreported.
	ks_kfence=/sys/module/kfence/parameters/sample_interval
	ks_interval=$(cat $ks_kfence)
	[ "$2" != kasan ] || echo 0 >$ks_kfence
	ks_rc=0
	insmod "$ks_mod" || ks_rc=$?
	echo "$ks_interval" >$ks_kfence
	dmesg -n "$ks_level"
	# The log from the mark on, without printk's time stamps.
	dmesg | sed -n "/$ks_mark/,\$p" | sed 's/^\[ *[0-9]*\.[0-9]*\] \{0,1\}//' >/tmp/suite.log
	# Its cases: the KTAP lines one level in, under "# Subtest: SUITE", as
	# "pass|fail|skip kunit:SUITE.CASE".
	awk -v s="$2" '
	$0 == "    # Subtest: " s { on = 1; next }
	on && /^    (not )?ok [0-9]+ / {
		rest = $0; sub(/^    (not )?ok [0-9]+ /, "", rest)
		name = rest; sub(/ *#.*$/, "", name)
		print (rest ~ /# *SKIP/ ? "skip" : $1 == "not" ? "fail" : "pass"), "kunit:" s "." name
	}
	on && /^(not )?ok [0-9]+ / { exit }' /tmp/suite.log >/tmp/suite.cases
	while read -r ks_status ks_name; do
		guest_subtests
		# A failed case's own lines, for its report.
		if [ "$ks_status" = fail ]; then
			grep -B 15 "^    not ok [0-9]* ${ks_name#kunit:$2.}$" /tmp/suite.log | while IFS= read -r l; do
				guest_note "  $l"
			done
		fi
		guest_subtest "$ks_status" "$ks_name"
	done </tmp/suite.cases
	[ "$ks_rc" = 0 ] || fail "insmod $ks_mod: rc $ks_rc" || return 1
	[ -s /tmp/suite.cases ] || fail "suite $2 reported no case: $(head -40 /tmp/suite.log)" || return 1
	grep -q "^ok [0-9]* $2$" /tmp/suite.log ||
		fail "suite $2: $(grep -E "^(not )?ok [0-9]+ $2" /tmp/suite.log; grep "^fail " /tmp/suite.cases)" || return 1
	# Kernel reports other than the sanitizers' (and the one above).
	ks_other=$(awk '
	/^=+$/ && length($0) >= 60 { inside = !inside; next }
	inside { next }
	/\[ cut here \]/ { cut = 1; next }
	cut == 1 { cut = ($0 == "alloc_tag was not set") ? 2 : 0; if (cut) next }
	cut == 2 { if (/---\[ end trace/) cut = 0; next }
	{ print }' /tmp/suite.log |
		grep -E "Oops|BUG:|WARNING:|Kernel panic|general protection fault|Call Trace:|INFO: possible|circular locking|inconsistent lock state|UBSAN:|detected stall|blocked for more than" || true)
	[ -z "$ks_other" ] || fail "suite $2: kernel reports besides the sanitizers': $ks_other" || return 1
	# With the boot's selection of the module, its sites were marked as it
	# loaded.
	if grep -q "alloctag.capture=.*module:$1" /proc/cmdline; then
		grep -Eq "^selection [0-9]+ sites=[1-9][0-9]* unmarked=[0-9]+ select=module:$1$" "$SUITES_CAP" ||
			fail "capture selected none of $1's sites: $(grep "^selection" "$SUITES_CAP")" || return 1
	fi
}

test_boot_suites_slub() {
	kernel_suite slub_kunit slub_test
}

test_boot_suites_kasan() {
	kernel_suite kasan_test kasan
}

test_boot_suites_kfence() {
	grep -q "kfence.sample_interval=[1-9]" /proc/cmdline || fail "KFENCE is off in this boot (kfence.sample_interval)"
	kernel_suite kfence_test kfence
}

# What the hooks do with an object that KFENCE sampled. It lives on a page of
# KFENCE's pool, not in a slab; but KFENCE marks each page of its pool as a
# slab of one object, so the slab hooks find a struct slab for it, give that
# slab an extension vector of one entry (and one waste slot when slots are
# reserved; with memory cgroups the entry is KFENCE's own, in its object's
# metadata), and count the object at its call site as any object of its
# cache: one call, the cache's object size. Its free takes both back. With
# the site selected, capture records it as any other. Documentation/alloctag.rst
# ("KFENCE's objects") says the same.
test_boot_suites_kfence_objects_are_counted() {
	grep -q "kfence.sample_interval=[1-9]" /proc/cmdline || fail "KFENCE is off in this boot (kfence.sample_interval)"
	[ -e /sys/kernel/debug/kfence/objects ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	kf_hold=/sys/kernel/debug/alloctag_test/hold
	# Selected by the boot (alloctag.capture=...func:hold_object) or not.
	kf_capture=
	! grep -q "alloctag.capture=.*func:hold_object" /proc/cmdline || kf_capture=1
	insmod /lib/modules/alloctag_test.ko || fail "insmod alloctag_test failed"
	trap 'echo 0 >$kf_hold; rmmod alloctag_test' EXIT
	# An object from the slab, for the figures of one.
	capwriter "$kf_hold" 1 >/dev/null || fail "hold 1 failed"
	set -- $(awk '$4 == "[alloctag_test]" && $5 == "func:hold_object" { print $1, $2 }' /proc/allocinfo)
	[ "$2" = 1 ] || fail "one object held, hold_object's line reads '$*'"
	one=$1
	capwriter "$kf_hold" 0 >/dev/null || fail "free failed"
	capwriter /sys/kernel/debug/alloctag_test/hold_kfence 60000 >/dev/null ||
		fail "KFENCE sampled no allocation of hold_object in 60 s"
	# KFENCE's own list has it: allocated at hold_object (the first frame
	# of its allocation stack; an extension vector that KFENCE sampled
	# inside the same kmalloc() names hold_object further down), not freed.
	kf_live=$(awk '
	function done() { if (at && !freed) n++; at = 0; freed = 0 }
	/^kfence-#/ { done() }
	first { first = 0; if ($1 ~ /^hold_object\+/) at = 1 }
	/^allocated by task/ { first = 1 }
	/^freed by task/ { freed = 1 }
	END { done(); print n + 0 }' /sys/kernel/debug/kfence/objects)
	[ "$kf_live" = 1 ] || fail "KFENCE lists $kf_live live objects of hold_object"
	set -- $(awk '$4 == "[alloctag_test]" && $5 == "func:hold_object" { print $1, $2 }' /proc/allocinfo)
	[ "$*" = "$one 1" ] || fail "KFENCE's object: hold_object's line reads '$*', one from the slab '$one 1'"
	if [ -n "$kf_capture" ]; then
		grep -Eq "^site selection=[0-9]+ live=1 live_bytes=[0-9]+ untracked=0 .* func:hold_object$" "$SUITES_CAP" ||
			fail "KFENCE's object not captured: $(cat "$SUITES_CAP")"
	fi
	capwriter "$kf_hold" 0 >/dev/null || fail "free of KFENCE's object failed"
	set -- $(awk '$4 == "[alloctag_test]" && $5 == "func:hold_object" { print $1, $2 }' /proc/allocinfo)
	[ "$*" = "0 0" ] || fail "KFENCE's object freed: hold_object's line reads '$*'"
	if [ -n "$kf_capture" ]; then
		grep -Eq "^site selection=[0-9]+ live=0 .* func:hold_object$" "$SUITES_CAP" || fail "record left: $(cat "$SUITES_CAP")"
	fi
}
