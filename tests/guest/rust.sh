# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of Rust call-site tags (alloc_hooks!). Sourced by run.sh.

RUST_SAMPLE=/lib/modules/alloctag_rust_sample.ko
RUST_LEAK=/lib/modules/alloctag_rust_leak.ko
RUST_SAMPLE_SRC=/alloctag/src/alloctag_rust_sample.rs

test_rust_no_allocation_charged_to_helpers() {
	if grep 'rust/helpers/' /proc/allocinfo; then
		echo "tags in rust/helpers/"
		return 1
	fi
}

test_rust_fallback_tags_listed() {
	for f in krealloc kvrealloc vrealloc alloc_pages; do
		grep -q "rust/kernel/alloc_tag.rs:[0-9]* func:rust_untagged_$f \$" /proc/allocinfo ||
			{ echo "no fallback tag for $f"; return 1; }
	done
}

test_rust_sample_sites_listed_by_rs_line() {
	insmod "$RUST_SAMPLE"
	grep '\[alloctag_rust_sample\]' /proc/allocinfo >/tmp/rust-sample
	rmmod alloctag_rust_sample
	cat /tmp/rust-sample
	# Six call sites, each with its own .rs line; five of them hold memory (the push found
	# room in the vector made just before it).
	[ "$(wc -l </tmp/rust-sample)" = 6 ]
	[ "$(awk '$1 > 0' /tmp/rust-sample | wc -l)" = 5 ]
	while read -r _ _ site module func; do
		file=${site%:*}
		line=${site##*:}
		case "$file" in */tests/modules/alloctag_rust_sample.rs) ;; *) echo "file $file"; return 1 ;; esac
		[ "$module" = '[alloctag_rust_sample]' ]
		[ "$func" = 'func:alloctag_rust_sample::RustSample::allocate' ] || { echo "func $func"; return 1; }
		# The source line holds the allocation macro.
		sed -n "${line}p" "$RUST_SAMPLE_SRC" | grep -Eq '(kbox|kvec_with_capacity|kvec_push|alloc_hooks|alloc_page)!' ||
			{ echo "line $line is: $(sed -n "${line}p" "$RUST_SAMPLE_SRC")"; return 1; }
	done </tmp/rust-sample
	# Unloaded: the tags are gone with the module.
	[ "$(grep -c '\[alloctag_rust_sample\]' /proc/allocinfo)" = 0 ]
}

test_rust_sample_frees_to_zero() {
	insmod "$RUST_SAMPLE"
	dmesg -c >/dev/null
	rmmod alloctag_rust_sample
	# Freed at unload: no warning about live allocations.
	if dmesg | grep 'alloctag_rust_sample.*at module unload'; then
		return 1
	fi
	# Reloading starts from zero again and works.
	insmod "$RUST_SAMPLE"
	rmmod alloctag_rust_sample
}

test_rust_unload_with_live_allocation_warns() {
	dmesg -c >/dev/null
	insmod "$RUST_LEAK"
	rmmod alloctag_rust_leak
	dmesg | grep -E 'module alloctag_rust_leak has [0-9]+ bytes in 1 allocations at module unload, at 1 call site, listed until freed: [^ ]*tests/modules/alloctag_rust_leak.rs:[0-9]+ \[alloctag_rust_leak\] func:[^ ]+ has [0-9]+ bytes in 1 allocations$' ||
		{ dmesg | tail -5; return 1; }
	cat /proc/allocinfo >/dev/null
}

# Dynamic tags: a module that allocates with the kernel crate's plain APIs
# only (no alloc_hooks!) still shows each allocation at its own .rs line.
RUST_PLAIN=/lib/modules/alloctag_rust_plain.ko
RUST_PLAIN_SRC=/alloctag/src/alloctag_rust_plain.rs

# Prints the bytes held by the Rust fallback tags, one line per tag, also to
# the console log (alloctag-fallback: WHEN: func bytes calls), which keeps
# them when the test passes.
rust_fallback_bytes() {
	grep 'func:rust_untagged_' /proc/allocinfo | awk '{ print $NF, $1, $2 }' |
		while read -r line; do
			echo "$line"
			echo "alloctag-fallback: $1: $line" >/dev/kmsg
		done
}

# Fails unless the four Rust fallback tags are listed and hold 0 bytes in 0
# live allocations (README: no Rust allocation of these kernels goes
# untagged); $1 says when, for the message and the console log.
rust_fallback_zero() {
	rust_fallback_bytes "$1" >/tmp/rust-fallback
	cat /tmp/rust-fallback
	[ "$(wc -l </tmp/rust-fallback)" = 4 ] || fail "$1: not the 4 fallback tags"
	if awk '$2 != 0 || $3 != 0 { bad = 1 } END { exit !bad }' /tmp/rust-fallback; then
		fail "$1: a fallback tag holds memory: $(awk '$2 != 0 || $3 != 0' /tmp/rust-fallback | tr '\n' ';')"
	fi
}

test_rust_plain_sites_listed_by_rs_line() {
	echo "fallback tags (func bytes calls) before loading the Rust test modules:"
	rust_fallback_zero after-boot
	insmod "$RUST_PLAIN"
	grep '\[alloctag_rust_plain\]' /proc/allocinfo >/tmp/rust-plain
	echo "fallback tags with alloctag_rust_plain loaded:"
	rust_fallback_zero plain-loaded
	rmmod alloctag_rust_plain
	cat /tmp/rust-plain
	grep 'tests/modules/alloctag_rust_plain.rs' /tmp/rust-plain >/tmp/rust-plain-own
	# Five allocations (KBox::new, KVec::with_capacity, push, Arc::new,
	# CString::try_from_fmt), each at its own line holding one allocation.
	[ "$(wc -l </tmp/rust-plain-own)" = 5 ] || { echo "not 5 lines"; return 1; }
	[ "$(awk '$1 > 0 && $2 == 1' /tmp/rust-plain-own | wc -l)" = 5 ] || { echo "not 5 live"; return 1; }
	[ "$(awk '{ print $3 }' /tmp/rust-plain-own | sort -u | wc -l)" = 5 ] || { echo "lines repeat"; return 1; }
	while read -r _ _ site module func; do
		line=${site##*:}
		[ "$module" = '[alloctag_rust_plain]' ] || { echo "module $module"; return 1; }
		[ "$func" = 'func:alloctag_rust_plain::RustPlain::allocate' ] || { echo "func $func"; return 1; }
		sed -n "${line}p" "$RUST_PLAIN_SRC" | grep -Eq '(KBox::new|with_capacity|push|Arc::new|try_from_fmt)\(' ||
			{ echo "line $line is: $(sed -n "${line}p" "$RUST_PLAIN_SRC")"; return 1; }
	done </tmp/rust-plain-own
	# The kernel crate's own allocation for the module, at its own line.
	grep -Eq ' rust/kernel/workqueue.rs:[0-9]+ \[alloctag_rust_plain\] func:' /tmp/rust-plain ||
		{ echo "no rust/kernel/workqueue.rs line"; return 1; }
	# Unloaded with every allocation freed: the counters read zero, so the
	# tags went with the module, and no warning.
	[ "$(grep -c '\[alloctag_rust_plain\]' /proc/allocinfo)" = 0 ] || { echo "tags left"; return 1; }
	if dmesg | grep 'alloctag_rust_plain.*at module unload'; then
		return 1
	fi
	# Reloading makes the tags again.
	insmod "$RUST_PLAIN"
	[ "$(grep -c 'tests/modules/alloctag_rust_plain.rs:[0-9]* \[alloctag_rust_plain\]' /proc/allocinfo)" = 5 ]
	rmmod alloctag_rust_plain
	echo "fallback tags after the Rust test modules ran:"
	insmod "$RUST_SAMPLE"
	rust_fallback_zero sample-loaded
	rmmod alloctag_rust_sample
}

test_rust_kernel_crate_lines_listed() {
	insmod "$RUST_PLAIN"
	grep -E ' rust/kernel/[^ ]+\.rs:[0-9]+ ' /proc/allocinfo | grep -v 'func:rust_untagged_' >/tmp/rust-kernel
	rmmod alloctag_rust_plain
	cat /tmp/rust-kernel
	[ -s /tmp/rust-kernel ]
	# Every dynamic tag's function parses as func:NAME.
	awk '/\.rs:[0-9]+ / && !/ func:[^ ]+ *$/ { print; bad = 1 } END { exit bad }' /proc/allocinfo
	[ -d /sys/kernel/debug/alloctag ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	# Both kernels have debugfs and the Rust core: the file must be there.
	[ -r /sys/kernel/debug/alloctag/dynamic_tags ] || fail "no /sys/kernel/debug/alloctag/dynamic_tags"
	cat /sys/kernel/debug/alloctag/dynamic_tags
	grep -q '^overflows 0$' /sys/kernel/debug/alloctag/dynamic_tags || fail "the pool of dynamic tags overflowed"
}

# A dynamic tag (the line of a plain-API allocation) that still counts an
# allocation when its module unloads is kept, not freed: the unload warns,
# naming the line, and /proc/allocinfo still lists the tag with the bytes
# (tests/modules/alloctag_rust_leak_plain.rs).
RUST_LEAK_PLAIN=/lib/modules/alloctag_rust_leak_plain.ko
RUST_LEAK_PLAIN_SRC=/alloctag/src/alloctag_rust_leak_plain.rs

test_rust_dynamic_tag_kept_at_unload_with_live_allocation() {
	line=$(grep -n 'KBox::new(\[0u8; 384\]' "$RUST_LEAK_PLAIN_SRC" | cut -d: -f1)
	[ -n "$line" ] || fail "no KBox::new line in $RUST_LEAK_PLAIN_SRC"
	site="tests/modules/alloctag_rust_leak_plain.rs:$line"
	dmesg -c >/dev/null
	insmod "$RUST_LEAK_PLAIN" || fail "insmod failed"
	# The file as the tag names it: lib/alloctag/tests/modules/...
	grep -F "/$site [alloctag_rust_leak_plain] func:" /proc/allocinfo >/tmp/leak-plain-loaded || true
	cat /tmp/leak-plain-loaded
	[ "$(wc -l </tmp/leak-plain-loaded)" = 1 ] || fail "not one tag at $site while loaded"
	read -r bytes calls _ </tmp/leak-plain-loaded
	[ "$calls" = 1 ] || fail "tag holds $bytes bytes in $calls calls"
	[ "$bytes" -ge 384 ] || fail "tag holds $bytes bytes in $calls calls"
	rmmod alloctag_rust_leak_plain || fail "rmmod failed"
	# Worded as a static tag's: one line for the module.
	dmesg | grep -E "module alloctag_rust_leak_plain has $bytes bytes in 1 allocations at module unload, at 1 call site, listed until freed: [^ ]*$site \[alloctag_rust_leak_plain\] func:[^ ]+ has $bytes bytes in 1 allocations\$" ||
		fail "no unload warning for $site: $(dmesg | tail -n 5)"
	# Kept: listed after the unload, with what it still counts.
	grep -F "/$site " /proc/allocinfo >/tmp/leak-plain-after || true
	cat /tmp/leak-plain-after
	[ "$(wc -l </tmp/leak-plain-after)" = 1 ] || fail "the tag of $site was not kept (or listed twice)"
	read -r b2 c2 _ </tmp/leak-plain-after
	[ "$b2 $c2" = "$bytes 1" ] || fail "the kept tag holds $b2 bytes in $c2 calls, expected $bytes in 1"
}

