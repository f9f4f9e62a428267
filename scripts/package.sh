#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian packages of a grafted kernel: runs the kernel's own `make
# bindeb-pkg` in the build of configuration NAME (nodebug, test, ...;
# built first from scripts/configs/NAME.config if it is not there) and puts
# linux-image, linux-headers and linux-libc-dev into
# $BUILD_DIR/packages/NAME/. The headers package carries every header a
# module can reach, as files, so out-of-tree modules (DKMS) build against it
# (the test command checks that with tests/extmod, scripts/build-extmod.sh).
#
# Usage: scripts/package.sh NAME
set -euo pipefail
. "$(dirname "$0")/lib.sh"

name=${1:?usage: scripts/package.sh NAME}
out=$BUILD_DIR/kernel-$name
"$ALLOCTAG_ROOT/scripts/install-deps.sh" --packages
"$ALLOCTAG_ROOT/scripts/prepare-tree.sh"
if [ ! -f "$out/.config" ]; then
	[ -f "$ALLOCTAG_ROOT/scripts/configs/$name.config" ] ||
		die "no build $out and no scripts/configs/$name.config to make it from"
	"$ALLOCTAG_ROOT/scripts/build-kernel.sh" "$name"
fi

# bindeb-pkg writes next to the build directory: start from a clean slate
# there, so that only this build's packages are moved.
version=$(make -s -C "$SRC_TREE" kernelversion)
dest=$BUILD_DIR/packages/$name
rm -rf "$dest"
mkdir -p "$dest"
rm -f "$BUILD_DIR"/linux-*.deb "$BUILD_DIR"/linux-upstream_*.{buildinfo,changes}
log "packaging kernel-$name (Linux $version): make bindeb-pkg"
"$ALLOCTAG_ROOT/scripts/kmake.sh" "$name" bindeb-pkg >"$dest/build.log" 2>&1 ||
	die "bindeb-pkg failed: $(tail -n 20 "$dest/build.log")"
mv "$BUILD_DIR"/linux-*.deb "$BUILD_DIR"/linux-upstream_*.{buildinfo,changes} "$dest/"
ls -1 "$dest"/*.deb
