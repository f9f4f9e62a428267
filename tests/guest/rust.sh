# SPDX-License-Identifier: GPL-2.0
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
	while read -r bytes calls site module func; do
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
	dmesg | grep -E 'tests/modules/alloctag_rust_leak.rs:[0-9]+ \[alloctag_rust_leak\] func:[^ ]+ module alloctag_rust_leak has [0-9]+ bytes in 1 allocations at module unload' ||
		{ dmesg | tail -5; return 1; }
	cat /proc/allocinfo >/dev/null
}
