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

# graft.sh's edits are guarded by their marker, so a tree grafted by another
# version of it would keep that version's edits. When the graft's inputs
# change, the files it edited (they carry the marker) are put back as the
# tarball has them and grafted again; a file whose content comes out the same
# keeps its old time, so that make rebuilds only what really changed.
graft_stamp=$BUILD_DIR/.graft-stamp
graft_want=$(cat "$ALLOCTAG_ROOT/scripts/graft.sh" "$ALLOCTAG_ROOT/scripts/series.sh" "$ALLOCTAG_ROOT"/src/kernel/*.patch | sha256sum)
graft_old=$BUILD_DIR/graft-old
rm -rf "$graft_old"
if [ "$(cat "$graft_stamp" 2>/dev/null)" != "$graft_want" ]; then
	mapfile -t edited < <(cd "$SRC_TREE" && grep -rlI --exclude-dir=alloctag -e alloctag-graft \
		Makefile lib mm kernel include rust || true)
	if [ "${#edited[@]}" -gt 0 ]; then
		log "graft changed: restoring ${#edited[@]} edited files from $TARBALL"
		mkdir -p "$graft_old/pristine"
		(cd "$SRC_TREE" && cp --parents -p "${edited[@]}" "$graft_old/")
		tar -xJf "$TARBALL" -C "$graft_old/pristine" "${edited[@]/#/linux-source-6.12/}"
		for f in "${edited[@]}"; do
			cp "$graft_old/pristine/linux-source-6.12/$f" "$SRC_TREE/$f"
		done
	fi
fi
"$ALLOCTAG_ROOT/scripts/graft.sh" "$SRC_TREE"
if [ -d "$graft_old" ]; then
	for f in "${edited[@]}"; do
		if cmp -s "$graft_old/$f" "$SRC_TREE/$f"; then
			touch -r "$graft_old/$f" "$SRC_TREE/$f"
		fi
	done
	rm -rf "$graft_old"
fi
echo "$graft_want" >"$graft_stamp"
