#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the benchmark initramfs, one for all three benchmark kernels:
# busybox-static, the project's /init (scripts/guest/init), the guest script
# (scripts/bench/guest.sh as /alloctag/bench.sh, and scripts/bench/scale.sh,
# booted by hand with alloctag_run=scale), tests/bench/allocinfo_query.c
# built static as /alloctag/allocinfo_query, and the benchmark modules of
# each kernel of BENCH_KERNELS (default nop c rust) under
# /lib/modules/bench-KERNEL/. The guest script picks
# the modules of the kernel it runs on. With BENCH_TAGS=N, also
# alloctag_bench_tags_*.ko, N allocation call sites (tests/modules/alloctag_bench_tags.c).
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
install -m 644 "$ALLOCTAG_ROOT/scripts/guest/report.sh" "$stage/alloctag/report.sh"
install -m 755 "$ALLOCTAG_ROOT/scripts/bench/guest.sh" "$stage/alloctag/bench.sh"
install -m 755 "$ALLOCTAG_ROOT/scripts/bench/scale.sh" "$stage/alloctag/scale.sh"
# The user-space side of the /proc/allocinfo benchmark: the text against the
# ioctls (mainline's ABI, the project's copy of the uapi header).
gcc -static -O2 -Wall -I"$ALLOCTAG_ROOT/include/uapi" -o "$stage/alloctag/allocinfo_query" \
	"$ALLOCTAG_ROOT/tests/bench/allocinfo_query.c" || die "allocinfo_query does not build"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
printf 'root:x:0:\n' >"$stage/etc/group"

for k in ${BENCH_KERNELS:-nop c rust}; do
	dir=$BUILD_DIR/kernel-bench-$k/lib/alloctag/tests/bench
	mkdir -p "$stage/lib/modules/bench-$k"
	for m in alloctag_bench alloctag_bench_rust; do
		[ -f "$dir/$m.ko" ] || die "$dir/$m.ko missing: build kernel-bench-$k first"
		cp "$dir/$m.ko" "$stage/lib/modules/bench-$k/"
	done
	# BENCH_TAGS=N: N call sites of tests/modules/alloctag_bench_tags.c, 1,000
	# a module, built out of tree against the kernel, loaded by the guest.
	if [ "${BENCH_TAGS:-0}" -gt 0 ]; then
		kernel_env
		mdir=$BUILD_DIR/bench-tags-module/$k
		rm -rf "$mdir"
		mkdir -p "$mdir"
		cp "$ALLOCTAG_ROOT/tests/modules/alloctag_bench_tags.c" "$mdir/"
		: >"$mdir/Kbuild"
		for ((first = 1, i = 1; first <= BENCH_TAGS; first += 1000, i++)); do
			last=$((first + 999 < BENCH_TAGS ? first + 999 : BENCH_TAGS))
			seq "$first" "$last" | sed 's/.*/SITE(&)/' >"$mdir/sites_$i.h"
			printf '#define ALLOCTAG_BENCH_TAGS_SITES "sites_%d.h"\n#include "alloctag_bench_tags.c"\n' \
				"$i" >"$mdir/alloctag_bench_tags_$i.c"
			echo "obj-m += alloctag_bench_tags_$i.o" >>"$mdir/Kbuild"
		done
		nice -n 19 make -s -C "$SRC_TREE" O="$BUILD_DIR/kernel-bench-$k" M="$mdir" ARCH=x86_64 \
			"${KMAKE_OPTS[@]}" modules || die "alloctag_bench_tags_*.ko do not build for kernel-bench-$k"
		cp "$mdir"/alloctag_bench_tags_*.ko "$stage/lib/modules/bench-$k/"
	fi
done

# Fixed order and times, so that the archive depends only on its files.
find "$stage" -exec touch -h -d @0 {} +
(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) | gzip -1 -n >"$out"
