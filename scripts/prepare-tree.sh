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

# Unpacked and grafted while no kernel build reads it (lib.sh).
tree_lock -x "$SRC_TREE"
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

# A tree grafted before the series became patch files (patches/) carries
# that graft's edits, each marked "alloctag-graft", and no pristine copies
# for scripts/graft.sh: the files it edited are put back as the tarball has
# them, once, and grafted again (a one-time migration).
if [ ! -f "$SRC_TREE/.alloctag-graft/files" ]; then
	mapfile -t edited < <(cd "$SRC_TREE" && grep -rlI --exclude-dir=alloctag -e alloctag-graft \
		Makefile lib mm kernel include rust 2>/dev/null || true)
	# Its one unmarked edit.
	if grep -qx '   alloctag' "$SRC_TREE/Documentation/mm/index.rst"; then
		edited+=(Documentation/mm/index.rst)
	fi
	if [ "${#edited[@]}" -gt 0 ]; then
		log "restoring ${#edited[@]} files of an older graft from $TARBALL"
		old=$BUILD_DIR/graft-old
		rm -rf "$old"
		mkdir -p "$old"
		tar -xJf "$TARBALL" -C "$old" "${edited[@]/#/linux-source-6.12/}"
		for f in "${edited[@]}"; do
			cp "$old/linux-source-6.12/$f" "$SRC_TREE/$f"
		done
		rm -rf "$old"
	fi
fi
"$ALLOCTAG_ROOT/scripts/graft.sh" "$SRC_TREE"
