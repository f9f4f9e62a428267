# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of page tags in page flags (include/linux/alloctag_pgflags.h):
# where vmlinux's tags fit, as in the test kernels, by default or asked for
# with sysctl.vm.mem_profiling=1,compressed; in page_ext when asked with
# ,page_ext. They run in every default boot and check that where page tags
# are is what the boot asked for (and, in the fallback boot, what room there
# was); the boots that ask for page_ext (tests/guest/boots.txt, pageext-*)
# run every other test of the default set too, so that each figure the tests
# check exactly is checked with the tags in page_ext as well.

# Succeeds when the kernel was booted asking for page tags in page flags by
# name (,compressed).
pgflags_asked() {
	grep -Eq '(^| )sysctl\.vm\.mem_profiling=[^ ,]*,compressed( |$)' /proc/cmdline
}

# Succeeds when the kernel was booted asking for page tags in page_ext.
pageext_asked() {
	grep -Eq '(^| )sysctl\.vm\.mem_profiling=[^ ,]*,page_ext( |$)' /proc/cmdline
}

# Succeeds when the boot made too few page-flag bits look free for vmlinux's
# tags (alloctag_test_pgflags_bits=, test kernels only: src/glue_pgflags.c).
pgflags_starved() {
	grep -Eq '(^| )alloctag_test_pgflags_bits=[0-9]+( |$)' /proc/cmdline
}

# Succeeds when page tags should be in page flags: not asked for page_ext,
# and room.
pgflags_expected() {
	! pageext_asked && ! pgflags_starved
}

test_pgflags_sysctl_says_where_page_tags_are() {
	f=/proc/sys/vm/mem_profiling_compressed
	[ -f "$f" ] || fail "no $f"
	want=0
	if pgflags_expected; then want=1; fi
	[ "$(cat "$f")" = "$want" ] || fail "$f reads $(cat "$f"), want $want"
	[ "$(stat -c %a "$f")" = 444 ] || fail "$f has mode $(stat -c %a "$f"), want 444"
	# Decided at boot: even root cannot change it, and the refusal changes nothing.
	if (echo $((1 - want)) >"$f") 2>/dev/null; then fail "$f took a write"; fi
	[ "$(cat "$f")" = "$want" ] || fail "$f changed to $(cat "$f") after a refused write"
}

# The boot's log as run.sh saved it: later tests' lines push it out of the
# ring buffer.
test_pgflags_page_ext_holds_no_tags() {
	if pgflags_expected; then
		line=$(grep -E 'alloctag: page tags in page flags: [0-9]+ bits of [0-9]+ free, [0-9]+ of [0-9]+ indices' /tmp/dmesg.boot || true)
		[ -n "$line" ] || fail "no 'page tags in page flags' line in the log"
		echo "$line"
		# page_ext has no other user in these kernels but waste accounting's
		# page slots, reserved at boot: without them, none is allocated at
		# all (pgflags-stress boots so).
		if grep -Eq '(^| )alloctag\.waste(_slots)?=on( |$)' /proc/cmdline; then
			grep -Eq 'allocated [0-9]+ bytes of page_ext' /tmp/dmesg.boot ||
				fail "no page_ext for the waste slots"
		else
			! grep -q 'bytes of page_ext' /tmp/dmesg.boot ||
				fail "page_ext was allocated: $(grep 'bytes of page_ext' /tmp/dmesg.boot)"
		fi
	else
		grep -Eq 'allocated [0-9]+ bytes of page_ext' /tmp/dmesg.boot || fail "no page_ext for tags"
		! grep -q 'page tags in page flags' /tmp/dmesg.boot || fail "page tags in page flags, page_ext asked for"
	fi
}

# The boot asked for page tags in page flags where vmlinux's tags cannot fit
# (tests/guest/boots.txt, pgflags-fallback): the tags stay in page_ext, as
# the log says, and profiling goes on (that boot runs the module test, whose
# figures need the page charges, too).
test_boot_pgflags_fallback_keeps_page_ext() {
	pgflags_asked && pgflags_starved || fail "booted without the fallback's parameters"
	bits=$(sed -n 's/.*alloctag_test_pgflags_bits=\([0-9]*\).*/\1/p' /proc/cmdline)
	line=$(grep -E "alloctag: [0-9]+ allocation tags cannot be named in $bits free page-flag bits: page tags stay in page_ext" /tmp/dmesg.boot || true)
	[ -n "$line" ] || fail "no fallback line for $bits bits in the log"
	echo "$line"
	tags=$(echo "$line" | sed -n 's/.*alloctag: \([0-9]*\) allocation tags.*/\1/p')
	[ "$tags" -gt $((1 << bits)) ] || fail "$tags tags would fit in $bits bits"
	# The next line says why: the bits the tags need, and what takes
	# page->flags' bits, which add up to all of them.
	why=$(grep -E "alloctag: they need [0-9]+ bits; page->flags' " /tmp/dmesg.boot || true)
	[ -n "$why" ] || fail "no line saying what takes the page-flag bits"
	echo "$why"
	need=$(echo "$why" | sed -n 's/.*they need \([0-9]*\) bits.*/\1/p')
	[ $(((tags + 1) >> need)) = 0 ] && [ $(((tags + 1) >> (need - 1))) != 0 ] ||
		fail "$tags tags and the two reserved indices do not need $need bits"
	long=$(echo "$why" | sed -n "s/.*page->flags' \([0-9]*\) bits hold.*/\1/p")
	sum=0
	for n in $(echo "$why" | sed "s/.* bits hold //; s/([^)]*)//g" | grep -oE -- '-?[0-9]+'); do
		sum=$((sum + n))
	done
	[ "$sum" = "$long" ] || fail "the fields and the unused bits add up to $sum, not $long"
	grep -Eq 'allocated [0-9]+ bytes of page_ext' /tmp/dmesg.boot || fail "no page_ext for tags"
	! grep -q 'page tags in page flags:' /tmp/dmesg.boot || fail "page tags in page flags after all"
	[ "$(cat /proc/sys/vm/mem_profiling_compressed)" = 0 ] || fail "mem_profiling_compressed is not 0"
	[ "$(cat /proc/sys/vm/mem_profiling)" = 1 ] || fail "profiling is off"
}

# The value of KEY in alloctag's status file (src/status.rs).
status_value() {
	sed -n "s/^$1: //p" /sys/kernel/debug/alloctag/status
}

# Every default boot: the status file says where page tags are, as the boot
# decided, with figures that agree with the boot's log and with each other.
test_pgflags_status_file_says_where_page_tags_are() {
	f=/sys/kernel/debug/alloctag/status
	[ -e "$f" ] || mount -t debugfs none /sys/kernel/debug
	[ -f "$f" ] || fail "no $f"
	cat "$f"
	[ "$(stat -c %a "$f")" = 400 ] || fail "$f has mode $(stat -c %a "$f"), want 400"
	if (echo x >"$f") 2>/dev/null; then fail "$f took a write"; fi
	asked=no
	if pgflags_asked; then asked=yes; fi
	[ "$(status_value compressed_requested)" = "$asked" ] ||
		fail "compressed_requested is $(status_value compressed_requested), want $asked"
	# page->flags' fields and the unused bits add up to the long.
	layout=$(status_value page_flags)
	long=$(echo "$layout" | sed -n 's/^long \([0-9]*\) .*/\1/p')
	sum=0
	for n in $(echo "$layout" | sed 's/^long [0-9]* //' | grep -oE -- '-?[0-9]+'); do
		sum=$((sum + n))
	done
	[ -n "$long" ] && [ "$sum" = "$long" ] || fail "page_flags '$layout' adds up to $sum, not $long"
	free=$(status_value free_bits)
	unused=$(echo "$layout" | sed -n 's/.* unused \(-\{0,1\}[0-9]*\)$/\1/p')
	[ "$unused" -gt 0 ] || unused=0
	[ "$unused" = "$free" ] || fail "free_bits $free is not page_flags' unused, at least 0"
	bits=$(status_value index_bits)
	max=$free
	[ "$max" -le 16 ] || max=16
	if pgflags_starved; then
		max=$(sed -n 's/.*alloctag_test_pgflags_bits=\([0-9]*\).*/\1/p' /proc/cmdline)
	fi
	[ "$bits" = "$max" ] || fail "index_bits $bits, want $max"
	tags=$(status_value vmlinux_tags)
	need=$(status_value needed_bits)
	[ "$tags" -gt 100 ] || fail "vmlinux_tags $tags"
	[ $(((tags + 1) >> need)) = 0 ] && [ $(((tags + 1) >> (need - 1))) != 0 ] ||
		fail "$tags tags and the two reserved indices do not need $need bits"
	# A module unloaded just before keeps its tags' indices until the reaper's
	# next pass: read both figures once it has settled.
	settled_module_tags >/dev/null
	used=$(status_value indices_used)
	cap=$(status_value indices_capacity)
	[ "$(status_value tags_without_index)" = 0 ] || fail "tags_without_index is not 0"
	# The tool says the same, first line first (crates/allocinfo/src/status.rs).
	allocinfo status >/tmp/status.out 2>&1 || fail "allocinfo status: $(cat /tmp/status.out)"
	cat /tmp/status.out
	if pgflags_expected; then
		head -1 /tmp/status.out | grep -q "^page tags: in page flags ($free free bits, index of $bits bits: $used of $cap indices used, $tags by vmlinux)$" ||
			fail "allocinfo status: $(head -1 /tmp/status.out)"
	elif pgflags_starved; then
		grep -q "^page tags: in page_ext, although" /tmp/status.out &&
			grep -q "need an index of $need bits" /tmp/status.out ||
			fail "allocinfo status does not say why: $(cat /tmp/status.out)"
	else
		head -1 /tmp/status.out | grep -q "^page tags: in page_ext, as sysctl.vm.mem_profiling=V,page_ext asked$" ||
			fail "allocinfo status: $(head -1 /tmp/status.out)"
	fi
	asked=no
	if pageext_asked; then asked=yes; fi
	[ "$(status_value page_ext_requested)" = "$asked" ] ||
		fail "page_ext_requested is $(status_value page_ext_requested), want $asked"
	if pgflags_expected; then
		[ "$(status_value page_tags)" = page_flags ] || fail "page_tags is not page_flags"
		[ "$cap" = $((1 << bits)) ] || fail "indices_capacity $cap, not 2^$bits"
		[ "$used" -ge $((tags + 2)) ] && [ "$used" -le "$cap" ] ||
			fail "indices_used $used, not between vmlinux's $tags + 2 and $cap"
		grep -Eq "alloctag: page tags in page flags: $bits bits of $free free, $tags of $cap indices" /tmp/dmesg.boot ||
			fail "the boot log does not say $bits bits of $free free, $tags of $cap indices"
	else
		[ "$(status_value page_tags)" = page_ext ] || fail "page_tags is not page_ext"
		[ "$used $cap" = "0 0" ] || fail "indices $used of $cap with page tags in page_ext"
		if pgflags_starved; then
			grep -Eq "alloctag: $tags allocation tags cannot be named in $bits free page-flag bits" /tmp/dmesg.boot ||
				fail "the boot log does not say $tags tags cannot be named in $bits bits"
		fi
	fi
}

# A page freed with profiling off holds no tag's index after, as one freed
# with it on: an allocation ors its index into the field
# (alloctag_pgflags_add()), so one left behind would mix with the next
# allocation's, and that allocation's free would take back another tag's
# bytes. alloctag_test's hold_page holds one page, and page_index says what
# its flags held, then what they held after its free. With profiling on,
# its allocation sets its tag's index (and its free takes the charge back);
# with profiling off nothing is charged, and the module sets an index itself
# (CODETAG_EMPTY's), as an allocation with profiling on would have. (Read
# after a free with profiling on, the page may be someone else's already.)
test_rw_pgflags_free_clears_the_index_with_profiling_off() {
	dir=/sys/kernel/debug/alloctag_test
	[ -d /sys/kernel/debug/alloctag ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	insmod /lib/modules/alloctag_test.ko || fail "insmod alloctag_test failed"
	# Profiling on again before the unload, whose frees take back its charges.
	trap 'echo 1 >"$SYSCTL" 2>/dev/null; rmmod alloctag_test 2>/dev/null' EXIT
	set_sysctl 1
	echo 1 >$dir/hold_page || fail "holding a page failed"
	held=$(cat $dir/page_index)
	if pgflags_expected; then
		# 0 is no tag, 1 CODETAG_EMPTY: a module's tag has a higher one.
		[ "$held" -ge 2 ] || fail "the page held has index $held"
	else
		[ "$held" = 0 ] || fail "page tags in page_ext, and the page held has index $held"
	fi
	echo 0 >$dir/hold_page || fail "freeing the page failed"
	set_sysctl 0
	echo 2 >$dir/hold_page || fail "holding a page with an index failed"
	held=$(cat $dir/page_index)
	[ "$held" = 1 ] || fail "the page held has index $held, not 1"
	echo 0 >$dir/hold_page || fail "freeing the page failed"
	freed=$(cat $dir/page_index)
	[ "$freed" = 0 ] || fail "the page freed with profiling off holds index $freed"
}
