#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Unpacks Debian's linux-source-6.12 into $BUILD_DIR/linux once, then
# grafts this project into it. Re-running is cheap: the tree is unpacked
# again only when the tarball changes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
[ -f "$TARBALL" ] || die "$TARBALL missing: run scripts/install-deps.sh"

stamp=$BUILD_DIR/.tree-stamp
want=$(stat -c '%s %Y' "$TARBALL")
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -f "$SRC_TREE/Makefile" ]; then
	log "unpacking $TARBALL"
	rm -rf "$SRC_TREE" "$BUILD_DIR/linux-source-6.12"
	mkdir -p "$BUILD_DIR"
	tar -xJf "$TARBALL" -C "$BUILD_DIR"
	mv "$BUILD_DIR/linux-source-6.12" "$SRC_TREE"
	echo "$want" >"$stamp"
fi

version=$(make -s -C "$SRC_TREE" kernelversion)
log "kernel tree: Linux $version at $SRC_TREE"
"$ALLOCTAG_ROOT/scripts/graft.sh" "$SRC_TREE"
