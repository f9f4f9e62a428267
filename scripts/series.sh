# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The series: alloctag's changes to a Linux 6.12 tree, patch by patch. Each
# patch has two parts:
#
#   - its edits of kernel files, with its commit message: the patch file
#     patches/NNNN-*.patch (git format-patch's, for Debian's
#     linux-source-6.12), listed in order in patches/series. The files it
#     creates in lib/alloctag/ that later patches extend (Kconfig, Kbuild)
#     are kernel files too: each patch's diff adds its own lines to them;
#   - the files of this checkout that it adds to the tree, whole: listed
#     under its name in patches/files (whose header says how).
#
# scripts/graft.sh applies the patch files to a development tree with git
# apply and places the files as symlinks into this checkout;
# scripts/export-patches.sh applies them with git am to a git copy of the
# pristine tree and amends each commit with the files, copied: so the
# exported series and the graft are made from the same patch files, and
# scripts/check-series.sh checks that the series, applied with git am to the
# pristine tree, gives exactly the grafted tree. Documentation/patches.rst
# says how to change a patch.
#
# Needs: $tree (the tree), $SERIES_MODE (graft or export), and lib.sh's log,
# die and $ALLOCTAG_ROOT.

PATCHES_DIR=$ALLOCTAG_ROOT/patches

# The patch files in order (patches/series, without comments and blank
# lines): series_patches prints their paths.
series_patches() {
	local p
	while read -r p; do
		case "$p" in '' | '#'*) continue ;; esac
		[ -f "$PATCHES_DIR/$p" ] || die "patches/series names $p, which is not in patches/"
		echo "$PATCHES_DIR/$p"
	done <"$PATCHES_DIR/series"
}

# patches/files, checked, one line per file: PATCH place|install SRC DEST,
# PATCH a file name of patches/series, DEST with its default filled in.
series_files() {
	local line patch='' verb src dest extra n=0 p
	declare -A listed=() seen=()
	while read -r p; do
		case "$p" in '' | '#'*) continue ;; esac
		listed[$p]=1
	done <"$PATCHES_DIR/series"
	while IFS= read -r line; do
		n=$((n + 1))
		# Blank lines and comments, indented or not.
		case "${line#"${line%%[![:space:]]*}"}" in '' | '#'*) continue ;; esac
		case "$line" in
		[[:space:]]*)
			read -r verb src dest extra <<<"$line"
			[ -n "$patch" ] || die "patches/files:$n: a file before any patch's name"
			case "$verb" in
			place) dest=${dest:-lib/alloctag/$src} ;;
			install) dest=${dest:-$src} ;;
			*) die "patches/files:$n: '$verb' is neither place nor install" ;;
			esac
			[ -n "$src" ] && [ -z "$extra" ] || die "patches/files:$n: want '$verb SRC [DEST]'"
			[ -e "$ALLOCTAG_ROOT/$src" ] || die "patches/files:$n: $src is not in the checkout"
			[ -z "${seen[$dest]:-}" ] || die "patches/files:$n: $dest is placed twice"
			seen[$dest]=1
			echo "$patch $verb $src $dest"
			;;
		*)
			patch=$line
			[ -n "${listed[$patch]:-}" ] || die "patches/files:$n: $patch is not in patches/series"
			;;
		esac
	done <"$PATCHES_DIR/files"
}

# The parent directories of $1 in the tree, as real directories: a link
# there (a layout where a whole directory was one link) is replaced.
tree_parent() {
	local dir
	dir=$(dirname "$1")
	if [ -L "$tree/$dir" ]; then
		rm -f "$tree/$dir"
	fi
	mkdir -p "$tree/$dir"
}

place() {
	local src=$1 dest=$2
	tree_parent "$dest"
	if [ "$SERIES_MODE" = graft ]; then
		ln -sfn "$ALLOCTAG_ROOT/$src" "$tree/$dest"
	else
		rm -rf "${tree:?}/$dest"
		cp -R --dereference "$ALLOCTAG_ROOT/$src" "$tree/$dest"
	fi
}

# Copied only when they differ, so an unchanged header rebuilds nothing.
install() {
	local src=$1 dest=$2
	tree_parent "$dest"
	[ ! -L "$tree/$dest" ] || rm -f "$tree/$dest"
	cmp -s "$ALLOCTAG_ROOT/$src" "$tree/$dest" || cp "$ALLOCTAG_ROOT/$src" "$tree/$dest"
}

# Adds the files of patch $1 (its path or file name) to the tree, from
# $SERIES_FILES (series_files' output).
add_files() {
	local name=${1##*/} patch verb src dest
	while read -r patch verb src dest; do
		[ "$patch" = "$name" ] || continue
		"$verb" "$src" "$dest"
	done <<<"$SERIES_FILES"
}
