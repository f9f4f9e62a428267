#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds an out-of-tree C module (tests/extmod/) as distributions' users
# build theirs (DKMS): against the content of the kernel's headers package
# alone, written by 6.12's own scripts/package/install-extmod-build (what
# `make bindeb-pkg` puts in linux-headers), with the source tree, the build
# tree and this checkout hidden (a private mount namespace covers them). The
# headers must hold no link out of themselves and no path of the checkout:
# either would dangle wherever the package is installed.
#
# The module goes to $BUILD_DIR/extmod/KERNEL/alloctag_extmod.ko, which
# scripts/mkinitramfs.sh packs for tests/guest/extmod.sh. The earlier one is
# deleted first: a failed build leaves none, and the guest test fails.
#
# Usage: scripts/build-extmod.sh KERNEL   (a build: test, nodebug, debian)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kernel_env

k=${1:?usage: scripts/build-extmod.sh KERNEL}
kernel_compiler "$k"
kbuild=$BUILD_DIR/kernel-$k
out=$BUILD_DIR/extmod/$k
[ -f "$kbuild/Module.symvers" ] || die "$kbuild has no finished build"
rm -rf "$out"
mkdir -p "$out/src"

make -s -C "$SRC_TREE" O="$kbuild" ARCH=x86_64 "${KMAKE_OPTS[@]}" run-command \
	KBUILD_RUN_COMMAND="$SRC_TREE/scripts/package/install-extmod-build $out/headers"

# 6.12's own relative links (dt-bindings, dummy-tools) stay inside.
while IFS= read -r link; do
	case $(readlink "$link") in
	/*) die "the headers hold a link to an absolute path: $link -> $(readlink "$link")" ;;
	esac
	case $(realpath -m "$link") in
	"$out/headers"/*) ;;
	*) die "the headers hold a link out of themselves: $link -> $(readlink "$link")" ;;
	esac
done < <(find "$out/headers" -type l)
# No file names the checkout; no text file names the source tree (6.12's own
# host programs, objtool and generate_rust_target, record its path in their
# debug information, as in any headers package; and with GCC, the comments
# of -fverbose-asm in scripts/mod/devicetable-offsets.s, which nothing reads
# back). Both as directories, with their slash: a checkout at ~/alloctag is no
# prefix of ~/alloctag-build/.
leaks=$( (grep -rlF -e "$ALLOCTAG_ROOT/" "$out/headers"
	grep -rlIF --exclude='*.s' -e "$SRC_TREE/" "$out/headers") || true)
[ -z "$leaks" ] || die "the headers name the checkout or the source tree: $(echo "$leaks" | head -n 5 | tr '\n' ' ')"

cp "$ALLOCTAG_ROOT/tests/extmod/alloctag_extmod.c" "$ALLOCTAG_ROOT/tests/extmod/Kbuild" "$out/src/"
# The hidden directories are covered by empty ones; the headers and the
# module's source are elsewhere in $BUILD_DIR.
OUT=$out OPTS="${KMAKE_OPTS[*]}" JOBS=$JOBS unshare -m bash -euc '
	for d in "$@"; do mount -t tmpfs -o ro none "$d"; done
	# shellcheck disable=SC2086 # OPTS is a list of words
	make -C "$OUT/headers" M="$OUT/src" ARCH=x86_64 $OPTS -j"$JOBS" modules
' hide "$SRC_TREE" "$kbuild" "$ALLOCTAG_ROOT" </dev/null
[ -f "$out/src/alloctag_extmod.ko" ] || die "no $out/src/alloctag_extmod.ko"
cp "$out/src/alloctag_extmod.ko" "$out/alloctag_extmod.ko"
log "built $out/alloctag_extmod.ko against the headers package of kernel-$k"
