# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# A Rust driver that nobody here wrote: 6.12's null block driver
# (drivers/block/rnull.rs, module rnull_mod), on the kernel crate's
# allocation API (Arc::pin_init(), KBox::pin_init()) and blk-mq's. Only the
# nodebug kernel builds it (scripts/configs/nodebug.config); its writable
# sysctl lets the disk's I/O run while profiling flips.

RNULL=/lib/modules/rnull_mod.ko

# Loaded, the driver's Rust call sites are lines of [rnull_mod] at
# drivers/block/rnull.rs holding what its disk holds; reads and writes of
# the disk go on while profiling goes off and on; unloaded, its lines go and
# the log says nothing of bytes it left (the core's "has N bytes in M
# allocations at module unload"), so its allocations and frees were counted
# alike, whatever the sysctl said in between.
test_rw_rnull_driver_counted_while_profiling_flips() {
	[ -f "$RNULL" ] || fail "no $RNULL (CONFIG_BLK_DEV_RUST_NULL=m)"
	restore_sysctl_on_exit
	insmod "$RNULL" || fail "insmod rnull_mod failed"
	# ash exits with the trap's status: the module is gone when the test passed.
	trap 'echo 1 >"$SYSCTL" 2>/dev/null; rmmod rnull_mod 2>/dev/null || true' EXIT
	grep ' \[rnull_mod\] ' /proc/allocinfo
	set -- $(module_figures rnull_mod)
	[ "$1" -ge 2 ] && [ "$2" -gt 0 ] || fail "[rnull_mod]: $1 lines, $2 bytes"
	grep -Eq ' ([^ ]*/)?drivers/block/rnull\.rs:[0-9]+ \[rnull_mod\] ' /proc/allocinfo ||
		fail "no line at drivers/block/rnull.rs"
	[ -b /dev/rnullb0 ] || fail "no /dev/rnullb0"
	for state in 0 1 0 1; do
		set_sysctl $state
		dd if=/dev/zero of=/dev/rnullb0 bs=4096 count=512 2>/dev/null || fail "profiling $state: writing failed"
		dd if=/dev/rnullb0 of=/dev/null bs=4096 count=512 2>/dev/null || fail "profiling $state: reading failed"
	done
	dmesg -c >/dev/null
	rmmod rnull_mod || fail "rmmod rnull_mod failed"
	[ "$(module_figures rnull_mod)" = "0 0 0" ] || fail "lines left after rmmod: $(grep ' \[rnull_mod\] ' /proc/allocinfo)"
	if dmesg | grep 'module rnull_mod has [0-9]* bytes'; then
		fail "rnull_mod left bytes counted at unload"
	fi
}
