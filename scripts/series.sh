# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The series: alloctag's changes to a Linux 6.12 tree, patch by patch. Each
# patch has two parts:
#
#   - its edits of the kernel's own files, with its commit message: the
#     patch file patches/NNNN-*.patch (git format-patch's, for Debian's
#     linux-source-6.12), listed in order in patches/series;
#   - the files of this checkout that it adds to the tree: the function
#     files_STEP below, STEP being the patch's entry in STEPS, in the same
#     order as patches/series (a patch that adds none has an empty one).
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
# A files_STEP function uses:
#   place SRC DEST     a file of this checkout at DEST in the tree (a symlink
#                      when grafting, a copy when exporting);
#   install SRC DEST   a copy in both modes: headers that the headers package
#                      carries, where a link would dangle;
#   introduce SYM...   Kconfig symbols this patch adds. lib/alloctag/Kconfig
#                      and Kbuild are placed whole by the first patch, and an
#                      export writes, at each step, only their paragraphs
#                      (lines between blank lines) that belong to the symbols
#                      introduced so far: a paragraph with a `config SYM`
#                      line belongs to SYM, any other to the first of our
#                      symbols it names (none: to every step). A blank line
#                      inside a make conditional, or before an indented line
#                      (Kconfig's help text), does not end a paragraph.
#
# Needs: $tree (the tree), $SERIES_MODE (graft or export), and lib.sh's log,
# die and $ALLOCTAG_ROOT.

PATCHES_DIR=$ALLOCTAG_ROOT/patches
STEPS=(
	module_percpu codetag_empty migration_bytes
	uapi plumbing callsite pgflags core fault accuracy capture waste tests bench docs
	rust_modversions slab_held page_free
)

# The patch files in order (patches/series, without comments and blank
# lines), one per step: series_patches prints their paths.
series_patches() {
	local n=0 p
	while read -r p; do
		case "$p" in '' | '#'*) continue ;; esac
		[ -f "$PATCHES_DIR/$p" ] || die "patches/series names $p, which is not in patches/"
		echo "$PATCHES_DIR/$p"
		n=$((n + 1))
	done <"$PATCHES_DIR/series"
	[ "$n" = "${#STEPS[@]}" ] ||
		die "patches/series lists $n patches, scripts/series.sh has ${#STEPS[@]} steps: one each, in the same order"
}

# Files that an export writes paragraph by paragraph (see above).
PARAGRAPH_FILES=(Kconfig Kbuild)
INTRODUCED=()

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
	[ -e "$ALLOCTAG_ROOT/$src" ] || die "series: $src is not in the checkout"
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

introduce() {
	INTRODUCED+=("$@")
}

# Our Kconfig symbols, those lib/alloctag/Kconfig defines.
our_symbols() {
	sed -n 's/^config \([A-Z0-9_]*\)$/\1/p' "$ALLOCTAG_ROOT/Kconfig"
}

# Writes the paragraphs of $ALLOCTAG_ROOT/$1 that belong to the symbols
# introduced so far to lib/alloctag/$1. With every symbol introduced the
# file comes out byte for byte as it is.
write_paragraphs() {
	local file=$1
	awk -v ours="$(our_symbols | tr '\n' ' ')" -v have="${INTRODUCED[*]}" '
		BEGIN {
			n = split(ours, o, " "); for (i = 1; i <= n; i++) is_ours[o[i]] = 1
			n = split(have, h, " "); for (i = 1; i <= n; i++) introduced[h[i]] = 1
		}
		function owner(text,    lines, i, n, w, words, j, m, sym) {
			n = split(text, lines, "\n")
			for (i = 1; i <= n; i++)
				if (lines[i] ~ /^config [A-Z0-9_]+$/)
					return substr(lines[i], 8)
			m = split(text, words, /[^A-Za-z0-9_]+/)
			for (j = 1; j <= m; j++) {
				sym = words[j]
				sub(/^CONFIG_/, "", sym)
				if (sym in is_ours)
					return sym
			}
			return ""
		}
		function flush(    who) {
			if (para == "")
				return
			who = owner(para)
			if (who == "" || who in introduced)
				printf "%s", para
			para = ""
		}
		# A paragraph is its lines and the blank lines after them; a blank
		# line ends it only outside make conditionals and before a line
		# that is not indented (a Kconfig help text has blank lines).
		/^$/ { para = para "\n"; blank = 1; next }
		{
			if (blank && depth == 0 && $0 !~ /^[ \t]/)
				flush()
			blank = 0
			para = para $0 "\n"
			if ($0 ~ /^(ifeq|ifneq|ifdef|ifndef)[ \t(]/)
				depth++
			else if ($0 ~ /^endif/)
				depth--
		}
		END { flush() }
	' "$ALLOCTAG_ROOT/$file" |
		# A file does not end in blank lines (git am refuses them).
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$tree/lib/alloctag/$file"
}

# Runs files_$1; an export then brings the paragraph files to this step.
run_files() {
	"files_$1"
	if [ "$SERIES_MODE" = export ] && [ -d "$tree/lib/alloctag" ]; then
		local f
		for f in "${PARAGRAPH_FILES[@]}"; do
			[ ! -e "$tree/lib/alloctag/$f" ] || write_paragraphs "$f"
		done
	fi
}

# --- the files each patch adds ---

files_module_percpu() {
	install include/linux/alloctag_module.h include/linux/alloctag_module.h
}
files_codetag_empty() { :; }
files_migration_bytes() { :; }
files_rust_modversions() { :; }

files_slab_held() { :; }

files_page_free() { :; }

files_uapi() {
	install include/uapi/linux/alloc_tag.h include/uapi/linux/alloc_tag.h
}

files_plumbing() {
	place Kconfig lib/alloctag/Kconfig
	place Kbuild lib/alloctag/Kbuild
	introduce ALLOCTAG_RUST
	local f
	for f in alloctag_bindings.h alloctag_glue.h alloctag_fail.h alloctag_accuracy.h \
		alloctag_capture_info.h alloctag_waste.h; do
		place "include/$f" "lib/alloctag/include/$f"
	done
	# The hooks above call capture's, empty until the capture patch.
	install include/linux/alloctag_capture.h include/linux/alloctag_capture.h
}

files_callsite() {
	place src/kernel/alloc_tag.rs rust/kernel/alloc_tag.rs
	place src/kernel/jump_label.rs rust/kernel/jump_label.rs
	place include/alloctag_rust.h lib/alloctag/include/alloctag_rust.h
	introduce ALLOCTAG_RUST_ASM_GOTO
}

files_pgflags() {
	install include/linux/alloctag_pgflags.h include/linux/alloctag_pgflags.h
}

files_core() {
	local f
	for f in alloctag.rs alloc_tag/mod.rs alloc_tag/counters.rs alloc_tag/demangle.rs alloc_tag/dynamic.rs \
		alloc_tag/dynamic/naming.rs alloc_tag/dynamic/chunk.rs alloc_tag/dynamic/unload.rs alloc_tag/early.rs alloc_tag/index.rs alloc_tag/leaks.rs allocinfo.rs \
		allocinfo/filter.rs allocinfo/ioctl.rs allocinfo/out.rs allocinfo/text.rs codetag.rs codetag/tag.rs \
		codetag/registry.rs codetag/registry/cursor.rs codetag/registry/index.rs \
		codetag/registry/area.rs codetag/registry/module.rs codetag/registry/names.rs \
		codetag/registry/reader.rs codetag/registry/reap.rs keys.rs keys/tag.rs layout.c layout.rs \
		percpu.rs profiling.rs rwsem.rs seq.rs debugfs.rs status.rs glue.c static_key.c; do
		place "src/$f" "lib/alloctag/src/$f"
	done
	introduce MEM_ALLOC_PROFILING_RUST
}

files_fault() {
	local f
	for f in fault.rs fault/control.rs fault/hook.rs fault/rule.rs fault/sites.rs \
		codetag/select.rs codetag/glob.rs codetag/sites.rs codetag/registry/selections.rs; do
		place "src/$f" "lib/alloctag/src/$f"
	done
	introduce ALLOCTAG_SELECTION ALLOCTAG_FAULT_INJECTION
}

files_accuracy() { :; }

files_capture() {
	local f
	for f in capture.rs capture/boot.rs capture/control.rs capture/hook.rs capture/pool.rs capture/report.rs \
		capture/site_table.rs capture/sites.rs capture/sort.rs glue_capture.c; do
		place "src/$f" "lib/alloctag/src/$f"
	done
	introduce ALLOCTAG_STACKDEPOT ALLOCTAG_CAPTURE
}

files_waste() {
	local f
	for f in waste.rs waste/control.rs waste/report.rs alloc_tag/waste.rs glue_waste.c; do
		place "src/$f" "lib/alloctag/src/$f"
	done
	introduce ALLOCTAG_WASTE
}

files_tests() {
	local f
	for f in kunit.rs tests.rs tests glue_test.c codetag/registry/testing.rs; do
		place "src/$f" "lib/alloctag/src/$f"
	done
	place tests/modules lib/alloctag/tests/modules
	introduce ALLOCTAG_KUNIT_TEST ALLOCTAG_TEST_MODULE
}

files_bench() {
	place tests/bench lib/alloctag/tests/bench
	introduce ALLOCTAG_BENCH ALLOCTAG_BENCH_BUILTIN_TAGS
}

files_docs() {
	place Documentation/alloctag.rst Documentation/mm/alloctag.rst
	place Documentation/capture.rst Documentation/mm/alloctag-capture.rst
}
