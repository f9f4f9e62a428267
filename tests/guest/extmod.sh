# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# An out-of-tree module built as distributions' users build theirs: against
# the kernel's headers package alone (scripts/build-extmod.sh,
# tests/extmod/alloctag_extmod.c). It loads, its one allocation (4096 bytes
# asked, held while loaded; KASAN's redzone puts it in kmalloc-8k on the test
# kernel) shows under its own module name, and unloading frees it.

EXTMOD=/lib/modules/extmod/alloctag_extmod.ko

test_extmod_from_headers_package_loads_and_is_profiled() {
	[ -f "$EXTMOD" ] || fail "no $EXTMOD: scripts/build-extmod.sh did not build it (test-logs/extmod-*.log)"
	insmod "$EXTMOD" || fail "insmod $EXTMOD failed"
	grep -E ' \[alloctag_extmod\] func:alloctag_extmod_init ?$' /proc/allocinfo >/tmp/extmod-lines || true
	cat /tmp/extmod-lines
	[ "$(wc -l </tmp/extmod-lines)" = 1 ] || fail "not one line of alloctag_extmod_init: $(grep alloctag_extmod /proc/allocinfo)"
	read -r bytes calls site _ </tmp/extmod-lines
	[ "$calls" = 1 ] && { [ "$bytes" = 4096 ] || [ "$bytes" = 8192 ]; } ||
		fail "$site holds $bytes bytes in $calls calls, expected 4096 (8192 under KASAN) in 1"
	case $site in
	*alloctag_extmod.c:*) ;;
	*) fail "site $site is not in alloctag_extmod.c" ;;
	esac
	rmmod alloctag_extmod || fail "rmmod failed"
	! grep -q '\[alloctag_extmod\]' /proc/allocinfo || fail "lines left after unload: $(grep alloctag_extmod /proc/allocinfo)"
}
