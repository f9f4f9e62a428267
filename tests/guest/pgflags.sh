# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of page tags in page flags (sysctl.vm.mem_profiling=1,compressed;
# include/linux/alloctag_pgflags.h). They run in every default boot and check
# that where page tags are is what the boot asked for; the boots that ask for
# page flags (tests/guest/boots.txt, pgflags-*) run every other test of the
# default set too, so that each figure the tests check exactly is checked
# with the tags in page flags as well.

# Succeeds when the kernel was booted asking for page tags in page flags.
pgflags_asked() {
	grep -Eq '(^| )sysctl\.vm\.mem_profiling=[^ ,]*,compressed( |$)' /proc/cmdline
}

test_pgflags_sysctl_says_where_page_tags_are() {
	f=/proc/sys/vm/mem_profiling_compressed
	[ -f "$f" ] || fail "no $f"
	want=0
	if pgflags_asked; then want=1; fi
	[ "$(cat "$f")" = "$want" ] || fail "$f reads $(cat "$f"), want $want"
	[ "$(stat -c %a "$f")" = 444 ] || fail "$f has mode $(stat -c %a "$f"), want 444"
	# Decided at boot: even root cannot change it, and the refusal changes nothing.
	if (echo $((1 - want)) >"$f") 2>/dev/null; then fail "$f took a write"; fi
	[ "$(cat "$f")" = "$want" ] || fail "$f changed to $(cat "$f") after a refused write"
}

# The boot's log as run.sh saved it: later tests' lines push it out of the
# ring buffer.
test_pgflags_page_ext_holds_no_tags() {
	if pgflags_asked; then
		line=$(grep -E 'alloctag: page tags in page flags: [0-9]+ bits of [0-9]+ free, [0-9]+ of [0-9]+ indices' /tmp/dmesg.boot || true)
		[ -n "$line" ] || fail "no 'page tags in page flags' line in the log"
		echo "$line"
		# page_ext has no other user in these kernels: none is allocated at all.
		! grep -q 'bytes of page_ext' /tmp/dmesg.boot ||
			fail "page_ext was allocated: $(grep 'bytes of page_ext' /tmp/dmesg.boot)"
	else
		grep -Eq 'allocated [0-9]+ bytes of page_ext' /tmp/dmesg.boot || fail "no page_ext for tags"
		! grep -q 'page tags in page flags' /tmp/dmesg.boot || fail "page tags in page flags, not asked for"
	fi
}
