#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The build matrix's smoke test (scripts/build-matrix.sh), installed as
# /alloctag/smoke.sh and run by /init with alloctag_run=smoke. It only shows
# that a kernel of an unusual configuration (no SMP, no sysctl) boots and that
# its core works end to end: /proc/allocinfo lists tags, and the tags of a C
# and of a Rust module come at load and go at unload. The full checks are
# tests/guest/, which need the sysctl and run on the test kernel.
#
# Prints "smoke: ok - ..." or "smoke: not ok - ..." per check and exits 1 if
# any failed; the "smoke: cpus=" and "smoke: sysctl=" lines tell the host
# which configuration actually booted.

failed=0

check() {
	what=$1
	shift
	if "$@"; then
		echo "smoke: ok - $what"
	else
		echo "smoke: not ok - $what"
		failed=1
	fi
}

# Lines of /proc/allocinfo naming module $1.
module_tags() {
	grep -c "\[$1\]" /proc/allocinfo
}

echo "smoke: kernel $(uname -r)"
echo "smoke: cpus=$(grep -c '^processor' /proc/cpuinfo)"
if [ -e /proc/sys/vm/mem_profiling ]; then
	echo "smoke: sysctl=$(cat /proc/sys/vm/mem_profiling)"
else
	echo "smoke: sysctl=none"
fi

check "allocinfo header" \
	[ "$(sed -n 1p /proc/allocinfo)" = 'allocinfo - version: 1.0' ]
check "allocinfo column header" \
	[ "$(sed -n 2p /proc/allocinfo)" = '#     <size>  <calls> <tag info>' ]
tags=$(tail -n +3 /proc/allocinfo | wc -l)
echo "smoke: $tags tags"
check "more than 100 tags" [ "$tags" -gt 100 ]

# module_comes_and_goes NAME MIN_TAGS MIN_BYTES FUNC: NAME.ko's tags appear
# at insmod, at least MIN_TAGS lines in FUNC totalling MIN_BYTES or more, and
# are gone after rmmod.
module_comes_and_goes() {
	name=$1 min_tags=$2 min_bytes=$3 func=$4
	check "no $name tags before insmod" [ "$(module_tags "$name")" = 0 ]
	if ! insmod "/lib/modules/$name.ko"; then
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
# The list is still readable after the module's tags were unlinked.
check "allocinfo readable after rmmod" sh -c 'cat /proc/allocinfo >/dev/null'

exit $failed
