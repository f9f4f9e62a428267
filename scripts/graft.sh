#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Grafts alloctag into a Linux 6.12 source tree, idempotently:
#  - lib/alloctag/{Kconfig,Kbuild,src,include,tests} become symlinks into
#    this checkout, so the project's files stay the single source;
#  - lib/Kconfig.debug sources our Kconfig;
#  - lib/Makefile descends into lib/alloctag/ and leaves out the C core
#    (codetag.o, alloc_tag.o) when our Rust core is selected;
#  - rust/bindings/bindings_helper.h includes our bindgen header.
# Every edit is guarded by a marker so that re-running changes nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=${1:-$SRC_TREE}
[ -f "$tree/lib/alloc_tag.c" ] || die "$tree is not a Linux 6.12 tree"
MARK=alloctag-graft

mkdir -p "$tree/lib/alloctag"
for f in Kconfig Kbuild src include tests; do
	ln -sfn "$ALLOCTAG_ROOT/$f" "$tree/lib/alloctag/$f"
done

# Inserts line $2 before the first line matching regex $3 in file $1, once.
insert_before() {
	local file=$tree/$1 text=$2 anchor=$3
	grep -q "$MARK" "$file" && return 0
	grep -q "$anchor" "$file" || die "$1: anchor '$anchor' not found"
	awk -v text="$text" -v anchor="$anchor" '
		!done && $0 ~ anchor { print text; done = 1 }
		{ print }' "$file" >"$file.tmp"
	mv "$file.tmp" "$file"
	log "grafted $1"
}

insert_before lib/Kconfig.debug \
	"source \"lib/alloctag/Kconfig\" # $MARK" \
	'^source "lib/Kconfig.kasan"'

if ! grep -q "$MARK" "$tree/lib/Makefile"; then
	sed -i \
		-e "s|^obj-\$(CONFIG_CODE_TAGGING) += codetag.o|ifndef CONFIG_MEM_ALLOC_PROFILING_RUST # $MARK\n&|" \
		-e "s|^obj-\$(CONFIG_MEM_ALLOC_PROFILING) += alloc_tag.o|&\nendif\nobj-y += alloctag/|" \
		"$tree/lib/Makefile"
	grep -q "^obj-y += alloctag/" "$tree/lib/Makefile" || die "lib/Makefile: graft failed"
	log "grafted lib/Makefile"
fi

bh=$tree/rust/bindings/bindings_helper.h
if ! grep -q "$MARK" "$bh"; then
	printf '\n/* %s: declarations used by lib/alloctag */\n#include "../../lib/alloctag/include/alloctag_bindings.h"\n' \
		"$MARK" >>"$bh"
	log "grafted rust/bindings/bindings_helper.h"
fi
