# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of module load and unload. Sourced by run.sh.

TEST_MODULE=/lib/modules/alloctag_test.ko

# Prints the total bytes of the tags of module $1.
module_bytes() {
	awk -v m="[$1]" '$4 == m { sum += $1 } END { print sum + 0 }' /proc/allocinfo
}

test_module_tags_come_and_go() {
	[ "$(grep -c '\[alloctag_test\]' /proc/allocinfo)" = 0 ]
	insmod "$TEST_MODULE"
	grep '\[alloctag_test\]' /proc/allocinfo >/tmp/module-tags
	bytes=$(module_bytes alloctag_test)
	rmmod alloctag_test
	cat /tmp/module-tags
	# kmalloc(3000), vmalloc(4 pages) and 4 pages, each at its own line.
	[ "$(wc -l </tmp/module-tags)" -ge 3 ]
	[ "$bytes" -ge $((3000 + 8 * 4096)) ]
	grep -q 'tests/modules/alloctag_test.c:[0-9]* \[alloctag_test\] func:alloctag_test_init $' /tmp/module-tags
	[ "$(grep -c '\[alloctag_test\]' /proc/allocinfo)" = 0 ]
}

test_module_unload_with_live_allocation_warns() {
	dmesg -c >/dev/null
	insmod "$TEST_MODULE" leak=1
	rmmod alloctag_test
	log=$(dmesg)
	echo "$log" | grep -E 'alloctag_test.c:[0-9]+ \[alloctag_test\] func:alloctag_test_init module alloctag_test has [0-9]+ bytes in 1 allocations at module unload' ||
		{ echo "no warning in: $log"; return 1; }
	# The tags are gone from the list; the kernel goes on.
	[ "$(grep -c '\[alloctag_test\]' /proc/allocinfo)" = 0 ]
	cat /proc/allocinfo >/dev/null
}
