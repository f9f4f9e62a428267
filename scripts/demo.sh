#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo: installs what is missing, builds a kernel with alloctag grafted
# in, boots it in QEMU and shows /proc/allocinfo and the vm.mem_profiling
# sysctl at work on the terminal. The kernel is the guest tests' nodebug
# kernel (tinyconfig plus scripts/configs/nodebug.config: the sysctl
# writable, the test modules, debugfs), so the test command, which runs this
# script as the README prints it (scripts/check-readme.sh), builds no kernel
# for it. Exits 0 only when the guest's demo script finished with 0.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$ALLOCTAG_ROOT/scripts/install-deps.sh"
"$ALLOCTAG_ROOT/scripts/prepare-tree.sh"
"$ALLOCTAG_ROOT/scripts/build-kernel.sh" nodebug
"$ALLOCTAG_ROOT/scripts/build-tool.sh" || log "allocinfo tool not built; the demo goes on without it"
"$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$BUILD_DIR/kernel-nodebug" "$BUILD_DIR/initramfs-demo.cpio.gz"
log "booting the demo kernel"
VERBOSE=1 "$ALLOCTAG_ROOT/scripts/run-qemu.sh" \
	"$BUILD_DIR/kernel-nodebug/arch/x86/boot/bzImage" "$BUILD_DIR/initramfs-demo.cpio.gz" \
	"$BUILD_DIR/demo-console.log" quiet alloctag_run=demo alloctag.waste_slots=on
