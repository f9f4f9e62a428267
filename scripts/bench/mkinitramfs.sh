#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the benchmark initramfs, one for all three benchmark kernels:
# busybox-static, the project's /init (scripts/guest/init), the guest script
# (scripts/bench/guest.sh as /alloctag/bench.sh) and the benchmark modules of
# each kernel of BENCH_KERNELS (default nop c rust) under
# /lib/modules/bench-KERNEL/. The guest script picks
# the modules of the kernel it runs on.
#
# Usage: scripts/bench/mkinitramfs.sh OUTPUT.cpio.gz
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

out=${1:?output file}
busybox=/bin/busybox
file -L "$busybox" | grep -q 'statically linked' || die "$busybox is not static: install busybox-static"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,root,alloctag,lib/modules}
cp "$busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done
install -m 755 "$ALLOCTAG_ROOT/scripts/guest/init" "$stage/init"
install -m 755 "$ALLOCTAG_ROOT/scripts/bench/guest.sh" "$stage/alloctag/bench.sh"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
printf 'root:x:0:\n' >"$stage/etc/group"

for k in ${BENCH_KERNELS:-nop c rust}; do
	dir=$BUILD_DIR/kernel-bench-$k/lib/alloctag/tests/bench
	mkdir -p "$stage/lib/modules/bench-$k"
	for m in alloctag_bench alloctag_bench_rust; do
		[ -f "$dir/$m.ko" ] || die "$dir/$m.ko missing: build kernel-bench-$k first"
		cp "$dir/$m.ko" "$stage/lib/modules/bench-$k/"
	done
done

# Fixed order and times, so that the archive depends only on its files.
find "$stage" -exec touch -h -d @0 {} +
(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) | gzip -1 -n >"$out"
