#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The build matrix's smoke test (scripts/build-matrix.sh), installed as
# /alloctag/smoke.sh and run by /init with alloctag_run=smoke. It only shows
# that a kernel of an unusual configuration (no SMP, no sysctl; another
# architecture) boots and that its core works end to end: /proc/allocinfo
# lists tags, the tags of a C and of Rust modules come at load, at their
# lines, and go at unload; where the kernel has them, the debugfs files can
# be read and the sysctl gates the Rust call sites. The full checks are
# tests/guest/, which run on the x86_64 test kernels.
#
# Prints "smoke: ok - ..." or "smoke: not ok - ..." per check and exits 1 if
# any failed; the "smoke: cpus=", "smoke: sysctl=" and "smoke: debugfs="
# lines tell the host which configuration actually booted. All go through
# the kernel log (report, /alloctag/report.sh: a tty line can be cut or lost).

# shellcheck disable=SC1091 # scripts/guest/report.sh, in the initramfs
. /alloctag/report.sh
failed=0

check() {
	what=$1
	shift
	if "$@"; then
		report "smoke: ok - $what"
	else
		report "smoke: not ok - $what"
		failed=1
	fi
}

# Lines of /proc/allocinfo naming module $1.
module_tags() {
	grep -c "\[$1\]" /proc/allocinfo
}

# at_rs_lines FILE SRC PATTERN: each tag line of FILE is at a line of the
# module's source SRC (tests/modules/, as /alloctag/src/ has it) that
# matches PATTERN (grep -E), its own: no two tags share a line.
# shellcheck disable=SC2317 # called through check
at_rs_lines() {
	while read -r _ _ site _; do
		case "${site%:*}" in
		*/tests/modules/"${2##*/}") ;;
		*) report "smoke: $site is not in ${2##*/}"; return 1 ;;
		esac
		sed -n "${site##*:}p" "$2" | grep -Eq "$3" ||
			{ report "smoke: $site is: $(sed -n "${site##*:}p" "$2")"; return 1; }
	done <"$1"
	[ "$(awk '{ print $3 }' "$1" | sort -u | wc -l)" = "$(wc -l <"$1")" ]
}

report "smoke: kernel $(uname -r)"
report "smoke: cpus=$(grep -c '^processor' /proc/cpuinfo)"
if [ -e /proc/sys/vm/mem_profiling ]; then
	report "smoke: sysctl=$(cat /proc/sys/vm/mem_profiling)"
else
	report "smoke: sysctl=none"
fi
# alloctag's debugfs files, by name, or none without debugfs.
if grep -qw debugfs /proc/filesystems && mount -t debugfs none /sys/kernel/debug; then
	names=
	for f in /sys/kernel/debug/alloctag/*; do
		[ ! -e "$f" ] || names="$names ${f##*/}"
	done
	report "smoke: debugfs=${names# }"
else
	report "smoke: debugfs=none"
fi

# Booted without sysctl.vm.mem_profiling= on a kernel built with profiling
# off by default (smoke_switch, scripts/build-matrix.sh's debian boot): the
# kernel boots 0, switchable, with no page_ext; the first switch-on makes
# page_ext, and pages of order 0 and 3 count exactly. Profiling is on for the
# checks after.
st=/sys/kernel/debug/alloctag/status
held_pages() {
	awk '$4 == "[alloctag_test]" && $5 == "func:hold_exact" { print $1, $2 }' /proc/allocinfo
}
# shellcheck disable=SC2317 # called through check
holds_pages() {
	echo "$1" >/sys/kernel/debug/alloctag_test/hold_pages || return 1
	got=$(held_pages)
	echo 0 >/sys/kernel/debug/alloctag_test/hold_pages || return 1
	[ "${got% *}" = "$1" ] && [ "$(held_pages)" = "0 0" ] ||
		{ report "smoke: hold_exact read '$got' holding $1 bytes, then '$(held_pages)'"; return 1; }
}
if grep -qw smoke_switch /proc/cmdline; then
	check "booted 0 by default, switchable" \
		[ "$(cat /proc/sys/vm/mem_profiling) $(stat -c %a /proc/sys/vm/mem_profiling)" = "0 644" ]
	check "no page_ext at boot" sh -c "! dmesg | grep -q 'bytes of page_ext'"
	check "status: no page_ext, no counters" \
		sh -c "grep -qx 'page_ext: none' $st && grep -qx 'counters: none' $st"
	check "switched on" sh -c 'echo 1 >/proc/sys/vm/mem_profiling'
	check "page_ext made at the switch-on" \
		sh -c "[ \"\$(dmesg | grep -c 'allocated [0-9]* bytes of page_ext')\" = 1 ] && grep -qx 'page_ext: made at the first switch-on' $st"
	if insmod /lib/modules/alloctag_test.ko; then
		check "4096 bytes of pages count exactly" holds_pages 4096
		check "32768 bytes of pages (order 3) count exactly" holds_pages 32768
		check "rmmod alloctag_test" rmmod alloctag_test
	else
		check "insmod alloctag_test" false
	fi
fi

check "allocinfo header" \
	[ "$(sed -n 1p /proc/allocinfo)" = 'allocinfo - version: 1.0' ]
check "allocinfo column header" \
	[ "$(sed -n 2p /proc/allocinfo)" = '#     <size>  <calls> <tag info>' ]
tags=$(tail -n +3 /proc/allocinfo | wc -l)
report "smoke: $tags tags"
check "more than 100 tags" [ "$tags" -gt 100 ]

# module_comes_and_goes NAME MIN_TAGS MIN_BYTES FUNC [DIR]: NAME.ko (in DIR,
# /lib/modules by default) loads, its tags appear at insmod, at least
# MIN_TAGS lines in FUNC totalling MIN_BYTES or more, and are gone after
# rmmod.
module_comes_and_goes() {
	name=$1 min_tags=$2 min_bytes=$3 func=$4 dir=${5:-/lib/modules}
	check "no $name tags before insmod" [ "$(module_tags "$name")" = 0 ]
	if ! insmod "$dir/$name.ko"; then
		check "insmod $name" false
		return
	fi
	grep "\[$name\]" /proc/allocinfo >/tmp/smoke-tags
	cat /tmp/smoke-tags
	check "$name tags after insmod" [ "$(wc -l </tmp/smoke-tags)" -ge "$min_tags" ]
	check "$name tags name $func" grep -q " \[$name\] func:$func \$" /tmp/smoke-tags
	bytes=$(awk '{ sum += $1 } END { print sum + 0 }' /tmp/smoke-tags)
	check "$name tags count its bytes ($bytes >= $min_bytes)" [ "$bytes" -ge "$min_bytes" ]
	check "rmmod $name" rmmod "$name"
	check "$name tags gone after rmmod" [ "$(module_tags "$name")" = 0 ]
}

# C call sites: kmalloc(3000), vmalloc(4 pages), alloc_pages(order 2), each
# at its own line of alloctag_test_init. Their counters are C per-CPU
# variables, which a uniprocessor build puts in .data.
module_comes_and_goes alloctag_test 3 $((3000 + 8 * 4096)) alloctag_test_init
# Rust call sites (alloc_hooks!, kbox!, ...): their counters are Rust statics
# placed in .data..percpu by hand, which a uniprocessor module loader treats
# as plain data (kernel/module/main.c, !CONFIG_SMP). At least kbox (1000),
# the VBox (32 KiB and its page array) and the page (4 KiB).
module_comes_and_goes alloctag_rust_sample 5 $((1000 + 9 * 4096)) alloctag_rust_sample::RustSample::allocate
# Its six call sites, each at the .rs line of its allocation macro.
check "alloctag_rust_sample tags at their .rs lines" \
	at_rs_lines /tmp/smoke-tags /alloctag/src/alloctag_rust_sample.rs '(kbox|kvec_with_capacity|kvec_push|alloc_hooks|alloc_page)!'
check "alloctag_rust_sample has 6 tags" [ "$(wc -l </tmp/smoke-tags)" = 6 ]
# The kernel crate's plain APIs (dynamic tags): at least KBox::new (3000)
# and KVec::with_capacity (700 u64), each at its caller's .rs line. A Rust
# call site asks whether profiling is on through the kernel crate's inline
# static branch (rust/kernel/jump_label.rs), here in its initial state.
module_comes_and_goes alloctag_rust_plain 5 $((3000 + 700 * 8)) alloctag_rust_plain::RustPlain::allocate
grep 'tests/modules/alloctag_rust_plain.rs:' /tmp/smoke-tags >/tmp/smoke-plain
check "alloctag_rust_plain tags at their .rs lines" \
	at_rs_lines /tmp/smoke-plain /alloctag/src/alloctag_rust_plain.rs '(KBox::new|with_capacity|push|Arc::new|try_from_fmt)\('
check "alloctag_rust_plain has 5 tags at its lines" [ "$(wc -l </tmp/smoke-plain)" = 5 ]

# Where the sysctl can be written (mode 0644: busybox's test -w is true for
# root whatever the mode), a Rust call site makes no dynamic tag while
# profiling is off, and makes them again once it is back on: the kernel
# crate's static branch was patched to a jump and back to a no-op, and a
# jump left in place would leave the lines untagged. (While profiling is off
# the C glue tests the key again, so a no-op left in place shows only in
# KUnit's alloctag_jump_label suite.) Each load's tags go at its rmmod.
if [ "$(stat -c %a /proc/sys/vm/mem_profiling 2>/dev/null)" = 644 ]; then
	plain_lines() {
		insmod /lib/modules/alloctag_rust_plain.ko || return 1
		grep -c 'tests/modules/alloctag_rust_plain.rs:' /proc/allocinfo
		rmmod alloctag_rust_plain
	}
	echo 0 >/proc/sys/vm/mem_profiling
	check "no alloctag_rust_plain tag made with profiling off" [ "$(plain_lines)" = 0 ]
	echo 1 >/proc/sys/vm/mem_profiling
	check "alloctag_rust_plain tags made with profiling on again" [ "$(plain_lines)" = 5 ]
fi

# alloctag's debugfs files read, as many as the kernel has.
if [ -d /sys/kernel/debug/alloctag ]; then
	for f in /sys/kernel/debug/alloctag/*; do
		check "read $f" sh -c "cat $f >/dev/null"
	done
fi

# Waste accounting, where built and booted with its slots reserved
# (alloctag.waste_slots=on: scripts/build-matrix.sh): on, a module's objects
# are counted exactly (10 of 200 bytes at hold_object()), off again.
waste=/sys/kernel/debug/alloctag/waste
if [ -w "$waste" ] && [ -e /lib/modules/alloctag_test.ko ] && grep -qw alloctag.waste_slots=on /proc/cmdline; then
	echo on >"$waste"
	insmod /lib/modules/alloctag_test.ko
	echo 10 >/sys/kernel/debug/alloctag_test/hold
	check "allocwaste counts 10 objects of 200 bytes" sh -c \
		"awk '/func:hold_object\$/ { print \$2, \$4 }' /proc/allocwaste | grep -qx '2000 10'"
	rmmod alloctag_test
	echo off >"$waste"
fi

# With CONFIG_MODVERSIONS the loader checks each symbol's CRC: a module whose
# version of a symbol disagrees with the kernel's is refused. The host gives
# the byte of a CRC in alloctag_test.ko's __versions to change and its new
# value (smoke_crc=OFFSET:OCTAL, scripts/build-matrix.sh's debian boot).
crc=$(sed -n 's/.*smoke_crc=\([0-9]*:[0-7]*\).*/\1/p' /proc/cmdline)
if [ -n "$crc" ]; then
	cp /lib/modules/alloctag_test.ko /tmp/bad-crc.ko
	# shellcheck disable=SC2059 # the byte's value, as an octal escape
	printf "\\${crc#*:}" | dd of=/tmp/bad-crc.ko bs=1 seek="${crc%%:*}" conv=notrunc 2>/dev/null
	check "a module with a changed CRC differs from the one loaded" sh -c '! cmp -s /tmp/bad-crc.ko /lib/modules/alloctag_test.ko'
	check "a module with a changed CRC is refused" sh -c '! insmod /tmp/bad-crc.ko 2>/dev/null'
	check "the loader says which symbol's version disagrees" sh -c 'dmesg | grep -q "alloctag_test: disagrees about version of symbol "'
	# Rust's symbols are versioned too (patch 16), their long names in
	# __version_ext_crcs: smoke_rustcrc=OFFSET:OCTAL changes a byte of the
	# first CRC there in alloctag_rust_plain.ko.
	rc=$(sed -n 's/.*smoke_rustcrc=\([0-9]*:[0-7]*\).*/\1/p' /proc/cmdline)
	cp /lib/modules/alloctag_rust_plain.ko /tmp/bad-rust-crc.ko
	# shellcheck disable=SC2059 # the byte's value, as an octal escape
	printf "\\${rc#*:}" | dd of=/tmp/bad-rust-crc.ko bs=1 seek="${rc%%:*}" conv=notrunc 2>/dev/null
	check "a Rust module with a changed CRC of a Rust symbol is refused" sh -c '[ -n "'"$rc"'" ] && ! insmod /tmp/bad-rust-crc.ko 2>/dev/null'
	check "the loader says which Rust symbol's version disagrees" sh -c 'dmesg | grep -q "alloctag_rust_plain: disagrees about version of symbol _R"'
	# With CRCs checked, the release in vermagic is not (same_magic()), as
	# for C modules: smoke_vermagic=OFFSET:OCTAL changes a character of it.
	vm=$(sed -n 's/.*smoke_vermagic=\([0-9]*:[0-7]*\).*/\1/p' /proc/cmdline)
	cp /lib/modules/alloctag_rust_plain.ko /tmp/other-release.ko
	# shellcheck disable=SC2059 # the byte's value, as an octal escape
	printf "\\${vm#*:}" | dd of=/tmp/other-release.ko bs=1 seek="${vm%%:*}" conv=notrunc 2>/dev/null
	check "a Rust module built for another release differs from the one built" sh -c '! cmp -s /tmp/other-release.ko /lib/modules/alloctag_rust_plain.ko'
	check "a Rust module built for another release loads: its CRCs agree" sh -c '[ -n "'"$vm"'" ] && insmod /tmp/other-release.ko'
	check "rmmod alloctag_rust_plain (another release)" rmmod alloctag_rust_plain
	# An out-of-tree C module built against the headers package
	# (scripts/build-extmod.sh), its CRCs checked as it loads.
	module_comes_and_goes alloctag_extmod 1 4096 alloctag_extmod_init /lib/modules/extmod
fi

# A distribution's own modules (scripts/debian-full.sh): each line of
# /lib/modules/distro/order is a module's file name and the number of tags
# in its alloc_tags section, in load order. Each loads with exactly its tags
# listed; unloaded in reverse order, each takes them along.
if [ -f /lib/modules/distro/order ]; then
	loaded=
	while read -r file want; do
		name=$(echo "$file" | tr - _)
		if ! insmod "/lib/modules/distro/$file.ko"; then
			check "insmod $file" false
			continue
		fi
		report "smoke: distro $name $(module_tags "$name") tags"
		check "$name lists its $want tags" [ "$(module_tags "$name")" = "$want" ]
		loaded="$name $loaded"
	done </lib/modules/distro/order
	for name in $loaded; do
		check "rmmod $name" rmmod "$name"
		check "$name tags gone after rmmod" [ "$(module_tags "$name")" = 0 ]
	done
fi

# Where page tags are (src/status.rs), for the host to judge.
status=/sys/kernel/debug/alloctag/status
if [ -r "$status" ]; then
	report "smoke: page_tags=$(sed -n 's/^page_tags: //p' "$status") free_bits=$(sed -n 's/^free_bits: //p' "$status") needed_bits=$(sed -n 's/^needed_bits: //p' "$status")"
fi

# The list is still readable after the module's tags were unlinked.
check "allocinfo readable after rmmod" sh -c 'cat /proc/allocinfo >/dev/null'

exit $failed
