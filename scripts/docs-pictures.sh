#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The flame graphs of Documentation/allocinfo-tool.rst, from a real guest,
# looked at in a real browser. Not part of scripts/test.sh.
#
# Boots KERNEL_DIR (a built kernel with CONFIG_ALLOCTAG_CAPTURE, default
# $BUILD_DIR/kernel-nodebug) with INITRAMFS (made by scripts/mkinitramfs.sh
# from it) running scripts/guest/pictures.sh: the live objects of fs/'s call
# sites are captured while the guest walks its file systems, and the live
# report and /proc/allocinfo come back on the console. Draws both with
# allocinfo flame (an icicle of the call sites, a flame graph of the live
# stacks), writes their pprof profiles and checks that go tool pprof reads
# them, and screenshots the SVGs with headless Chromium (Debian's chromium)
# into Documentation/images/. The inputs and outputs stay in
# $BUILD_DIR/pictures.
#
# Usage: scripts/docs-pictures.sh [KERNEL_DIR [INITRAMFS]]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel=${1:-$BUILD_DIR/kernel-nodebug}
initrd=${2:-$BUILD_DIR/initramfs-nodebug.cpio.gz}
out=$BUILD_DIR/pictures
images=$ALLOCTAG_ROOT/Documentation/images
mkdir -p "$out" "$images"
grep -q '^CONFIG_ALLOCTAG_CAPTURE=y' "$kernel/.config" || die "$kernel has no CONFIG_ALLOCTAG_CAPTURE"
command -v chromium >/dev/null || die "no chromium (apt-get install chromium)"

log "pictures: booting $kernel with scripts/guest/pictures.sh"
QEMU_SMP=2 "$ALLOCTAG_ROOT/scripts/run-qemu.sh" "$kernel/arch/x86/boot/bzImage" "$initrd" \
	"$out/console.log" alloctag_run=pictures >"$out/qemu.log" 2>&1 ||
	die "the boot failed ($out/console.log)"
grep -q 'pictures: done' "$out/console.log" || die "the guest did not finish ($out/console.log)"
sed -n 's/^.*pic-live: //p' "$out/console.log" | tr -d '\r' >"$out/live.txt"
sed -n 's/^.*pic-info: //p' "$out/console.log" | tr -d '\r' >"$out/allocinfo.txt"

(cd "$ALLOCTAG_ROOT" && cargo build --quiet --release -p allocinfo) || die "building allocinfo failed"
allocinfo=$CARGO_TARGET_DIR/release/allocinfo
"$allocinfo" flame "$out/allocinfo.txt" -o "$out/sites.svg" \
	--title "allocinfo flame: a guest's /proc/allocinfo, live bytes by directory, file, function, line"
"$allocinfo" flame --live "$out/live.txt" -o "$out/live.svg" \
	--title "allocinfo flame --live: live objects of fs/'s call sites, by stack"
"$allocinfo" pprof "$out/allocinfo.txt" -o "$out/sites.pb.gz"
"$allocinfo" pprof --live "$out/live.txt" -o "$out/live.pb.gz"
for p in sites live; do
	go tool pprof -top "$out/$p.pb.gz" >"$out/$p.top" || die "go tool pprof cannot read $out/$p.pb.gz"
done

for p in sites live; do
	h=$(grep -o 'height="[0-9]*"' "$out/$p.svg" | head -n 1 | tr -dc 0-9)
	profile=$(mktemp -d)
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" --hide-scrollbars --window-size="1200,$h" \
		--screenshot="$images/flame-$p.png" "file://$out/$p.svg" >"$out/chromium-$p.log" 2>&1 ||
		die "chromium failed ($out/chromium-$p.log)"
	rm -rf "$profile"
	log "pictures: wrote $images/flame-$p.png (1200x$h)"
done
