#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds a guest initramfs: busybox-static and our /init (scripts/guest/init),
# with either
#
#   - for a kernel build (the test, demo and matrix kernels): the demo and
#     the in-guest tests with their static tools, the test modules of that
#     kernel build and, when they have been built, the static allocinfo,
#     allocinfo-check and allocinfo-fuzz tools. Each kernel gets its own (the
#     modules must match it). For an arm64 kernel (the build matrix's smoke
#     test) the busybox is Debian's arm64 one (scripts/install-deps.sh) and
#     the x86_64 tools are left out;
#   - with --bench, one for all the benchmark kernels (scripts/bench.sh): the
#     guest script (scripts/bench/guest.sh as /alloctag/bench.sh, and
#     scripts/bench/scale.sh, booted by hand with alloctag_run=scale),
#     tests/bench/allocinfo_query.c built static as /alloctag/allocinfo_query,
#     and the benchmark modules of each kernel of BENCH_KERNELS (default nop c
#     rust) under /lib/modules/bench-KERNEL/, of which the guest script picks
#     the kernel's own. With BENCH_TAGS=N, also alloctag_bench_tags_*.ko, N
#     allocation call sites (tests/modules/alloctag_bench_tags.c).
#
# The archive depends only on its files (fixed order and times).
#
# Usage: scripts/mkinitramfs.sh KERNEL_BUILD_DIR OUTPUT.cpio.gz
#        scripts/mkinitramfs.sh --bench OUTPUT.cpio.gz
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bench=
if [ "${1:-}" = --bench ]; then
	bench=1
	out=${2:?usage: scripts/mkinitramfs.sh --bench OUTPUT.cpio.gz}
else
	kbuild=${1:?kernel build dir}
	out=${2:?output file}
fi
busybox=/bin/busybox
file -L "$busybox" | grep -q 'statically linked' || die "$busybox is not static: install busybox-static"
arch=x86_64
guest_busybox=$busybox
if [ -z "$bench" ] && grep -qx 'CONFIG_ARM64=y' "$kbuild/.config"; then
	arch=arm64
	guest_busybox=$BUILD_DIR/arm64/busybox
	[ -x "$guest_busybox" ] || die "no $guest_busybox: run scripts/install-deps.sh"
	# It cannot run here to list its applets: the host's busybox lists them,
	# which must then be the same Debian build of the same package.
	[ "$(grep -ao 'BusyBox v[^ ]* ([^)]*)' "$guest_busybox")" = "$(grep -ao 'BusyBox v[^ ]* ([^)]*)' "$busybox")" ] ||
		die "$guest_busybox and $busybox are different busybox versions: run scripts/install-deps.sh"
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,root,alloctag,lib/modules}
cp "$guest_busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done
install -m 755 "$ALLOCTAG_ROOT/scripts/guest/init" "$stage/init"
install -m 644 "$ALLOCTAG_ROOT/scripts/guest/report.sh" "$stage/alloctag/report.sh"

# The benchmark guest's files.
bench_files() {
	install -m 755 "$ALLOCTAG_ROOT/scripts/bench/guest.sh" "$stage/alloctag/bench.sh"
	install -m 755 "$ALLOCTAG_ROOT/scripts/bench/scale.sh" "$stage/alloctag/scale.sh"
	# The user-space side of the /proc/allocinfo benchmark: the text against the
	# ioctls (mainline's ABI, the project's copy of the uapi header).
	gcc -static -O2 -Wall -I"$ALLOCTAG_ROOT/include/uapi" -o "$stage/alloctag/allocinfo_query" \
		"$ALLOCTAG_ROOT/tests/bench/allocinfo_query.c" || die "allocinfo_query does not build"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
	printf 'root:x:0:\n' >"$stage/etc/group"

	local k dir m mdir first last i
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
}

# The archive: fixed order and times, so that it depends only on its files.
pack() {
	find "$stage" -exec touch -h -d @0 {} +
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) | gzip -1 -n >"$out"
}

if [ -n "$bench" ]; then
	bench_files
	pack
	exit 0
fi

# It becomes the guest's /: mktemp's 0700 would let no user but root run
# anything there (the privilege tests run commands as nobody).
chmod 755 "$stage"
mkdir -p "$stage/alloctag/tests"
install -m 755 "$ALLOCTAG_ROOT/scripts/guest/demo.sh" "$stage/alloctag/demo.sh"
install -m 755 "$ALLOCTAG_ROOT/scripts/guest/smoke.sh" "$stage/alloctag/smoke.sh" # scripts/build-matrix.sh
install -m 755 "$ALLOCTAG_ROOT/scripts/guest/memory.sh" "$stage/alloctag/memory.sh" # scripts/memory.sh
install -m 755 "$ALLOCTAG_ROOT/scripts/guest/pictures.sh" "$stage/alloctag/pictures.sh" # scripts/docs-pictures.sh
install -m 755 "$ALLOCTAG_ROOT/tests/guest/run.sh" "$stage/alloctag/tests.sh"
# The kernel's KTAP helpers, which the runner reports its results with.
install -m 644 "$SRC_TREE/tools/testing/selftests/kselftest/ktap_helpers.sh" "$stage/alloctag/ktap_helpers.sh"
for t in "$ALLOCTAG_ROOT"/tests/guest/*.sh; do
	[ "$(basename "$t")" = run.sh ] || install -m 644 "$t" "$stage/alloctag/tests/"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"

# Our test modules, wherever the tree built them, and the sources the tests
# compare /proc/allocinfo's lines with.
find "$kbuild/lib/alloctag" -name '*.ko' -exec cp {} "$stage/lib/modules/" \; 2>/dev/null || true
# The kernel's own allocator suites, where the kernel builds them as modules
# (tests/guest/suites.sh).
mkdir -p "$stage/lib/modules/suites"
for m in lib/slub_kunit.ko mm/kasan/kasan_test.ko mm/kfence/kfence_test.ko; do
	[ ! -f "$kbuild/$m" ] || cp "$kbuild/$m" "$stage/lib/modules/suites/"
done
# An in-tree module for the error-path sweeper (tests/guest/inject.sh).
find "$kbuild/drivers/char/hw_random" -name 'rng-core.ko' -exec cp {} "$stage/lib/modules/" \; 2>/dev/null || true
# The in-tree Rust null block driver, where the kernel builds it (the nodebug
# kernel: tests/guest/rnull.sh).
[ ! -f "$kbuild/drivers/block/rnull_mod.ko" ] || cp "$kbuild/drivers/block/rnull_mod.ko" "$stage/lib/modules/"
# The out-of-tree module built against this kernel's headers package
# (scripts/build-extmod.sh, tests/guest/extmod.sh), only when built after the
# kernel and its sources: an older one is another build's.
extmod=$BUILD_DIR/extmod/${kbuild##*/kernel-}/alloctag_extmod.ko
if [ -f "$extmod" ] && [ -z "$(find "$kbuild/Module.symvers" "$ALLOCTAG_ROOT/tests/extmod" -newer "$extmod" -print -quit)" ]; then
	mkdir -p "$stage/lib/modules/extmod"
	cp "$extmod" "$stage/lib/modules/extmod/"
elif [ "$arch" = x86_64 ]; then # the guest tests run on x86_64 kernels only
	log "mkinitramfs: no fresh $extmod (scripts/build-extmod.sh builds it): its guest test will fail"
fi
install -m 755 "$ALLOCTAG_ROOT/scripts/sweep-error-paths.sh" "$stage/alloctag/sweep-error-paths.sh"
install -m 755 "$ALLOCTAG_ROOT/scripts/guest/sweep.sh" "$stage/alloctag/sweep.sh" # scripts/sweep.sh
mkdir -p "$stage/alloctag/src"
cp "$ALLOCTAG_ROOT"/tests/modules/*.rs "$stage/alloctag/src/"

# The host's tools and the ones built for it, x86_64 binaries: an arm64
# guest runs the smoke test, which needs none of them.
if [ "$arch" = x86_64 ]; then
	# GNU sort and numfmt, as users run them on /proc/allocinfo (busybox's sort
	# has no -h), with the libraries they need, ahead of busybox in PATH.
	mkdir -p "$stage/usr/bin"
	for bin in /usr/bin/sort /usr/bin/numfmt; do
		cp "$bin" "$stage/usr/bin/"
		for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib"
		done
	done

	# The guest tests' own C tools, one per tests/guest/tools/*.c, into /bin.
	# Static, like busybox, so that they do not depend on which libraries the
	# loop above happened to copy. <linux/alloc_tag.h> (the allocinfo ioctls) is
	# ours: the build machine's kernel headers are older than it.
	for src in "$ALLOCTAG_ROOT"/tests/guest/tools/*.c; do
		gcc -static -O2 -Wall -Werror -I"$ALLOCTAG_ROOT/include/uapi" \
			-o "$stage/bin/$(basename "$src" .c)" "$src" ||
			die "building $src failed (needs gcc and libc6-dev)"
	done

	# The allocation storm of tests/guest/stress.sh, static for the same reason.
	gcc -static -O2 -Wall -Werror -o "$stage/bin/alloctag-storm" "$ALLOCTAG_ROOT/tests/guest/stress/storm.c" ||
		die "building tests/guest/stress/storm.c failed (needs gcc and libc6-dev)"

	# The tools (scripts/build-tool.sh), each only as built from the sources
	# now in the checkout: a binary older than any of its sources is an earlier
	# build's (build-tool.sh deletes it before building, so a failed build
	# leaves none), and without it the guest tests that need it fail instead of
	# testing old code. A tool's sources are the files its cargo dep-info
	# (TOOL.d) names and their crates' Cargo.toml and build.rs: cargo relinks
	# the binary when one of them changes, so a fresh build is never older than
	# them, and a change to another tool's crate does not make it look old.
	# (The paths of the dep-info have no spaces: the checkout's path has none.)
	release=$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release
	for name in allocinfo allocinfo-check allocinfo-fuzz; do
		tool=$release/$name
		if [ ! -x "$tool" ]; then
			log "mkinitramfs: no $tool (scripts/build-tool.sh builds it): the guest tests of $name will fail"
			continue
		fi
		if [ ! -f "$tool.d" ]; then
			log "mkinitramfs: not packing $tool: no $tool.d to name its sources (scripts/build-tool.sh builds it)"
			continue
		fi
		mapfile -t srcs < <(sed 's/^[^:]*: *//' "$tool.d" | tr ' ' '\n' | grep -v '^$' || true)
		[ "${#srcs[@]}" -gt 0 ] || die "mkinitramfs: $tool.d names no source"
		# The build directory's cargo outputs serve every checkout that
		# uses it: a binary that another checkout built is not this one's.
		if ! printf '%s\n' "${srcs[@]}" | grep -qx "$ALLOCTAG_ROOT/crates/$name/src/main.rs"; then
			log "mkinitramfs: not packing $tool: built from another checkout than $ALLOCTAG_ROOT (scripts/build-tool.sh builds it)"
			continue
		fi
		for c in $(printf '%s\n' "${srcs[@]}" | sed -n 's|/src/.*||p' | sort -u); do
			srcs+=("$c/Cargo.toml")
			[ ! -e "$c/build.rs" ] || srcs+=("$c/build.rs")
		done
		newer=$(find "${srcs[@]}" -newer "$tool" -print 2>/dev/null | head -n 3 || true)
		if [ -n "$newer" ]; then
			log "mkinitramfs: not packing $tool: older than $(echo "$newer" | tr '\n' ' ')(scripts/build-tool.sh builds it)"
		else
			cp "$tool" "$stage/bin/$name"
		fi
	done
fi

pack
