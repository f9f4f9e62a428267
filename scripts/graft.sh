#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Grafts alloctag into a Linux 6.12 source tree, idempotently:
#  - lib/alloctag/{Kconfig,Kbuild,src,include,tests} become symlinks into
#    this checkout, so the project's files stay the single source;
#  - lib/Kconfig.debug sources our Kconfig;
#  - lib/Makefile descends into lib/alloctag/ and leaves out the C core
#    (codetag.o, alloc_tag.o) when our Rust core is selected;
#  - rust/bindings/bindings_helper.h includes our bindgen header;
#  - Makefile maps the source tree's path out of Rust's file!();
#  - kernel/module/main.c keeps a module's per-CPU area with its tags;
#  - mm/slub.c and mm/page_alloc.c ask per-call-site fault injection;
#  - rust/kernel/ gets alloc_tag.rs (the alloc_hooks! call-site API) and
#    rust/helpers/ allocate under the Rust caller's tag;
#  - rust/kernel/'s allocating APIs get #[track_caller] (track_caller.patch).
# Every edit is guarded by a marker so that re-running changes nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=${1:-$SRC_TREE}
[ -f "$tree/lib/alloc_tag.c" ] || die "$tree is not a Linux 6.12 tree"
MARK=alloctag-graft
export MARK

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

# Rust's file!() names sources relative to the tree, as C's __FILE__ does with
# -fmacro-prefix-map: tags then read lib/..., not the build's absolute path.
if ! grep -q "$MARK" "$tree/Makefile"; then
	sed -i "s|^KBUILD_CPPFLAGS += \$(call cc-option,-fmacro-prefix-map=\$(srctree)/=)$|&\nKBUILD_RUSTFLAGS += --remap-path-prefix=\$(srctree)/= # $MARK|" \
		"$tree/Makefile"
	grep -q "$MARK" "$tree/Makefile" || die "Makefile: graft failed"
	log "grafted Makefile"
fi

# The kernel crate gets alloctag's Rust call-site API (src/kernel/alloc_tag.rs),
# which names call sites with const type_name().
# Its inline static-key test (src/kernel/jump_label.rs) needs asm goto and
# const operands, stable since rustc 1.87 and 1.82, later than 6.12's minimum.
ln -sfn "$ALLOCTAG_ROOT/src/kernel/alloc_tag.rs" "$tree/rust/kernel/alloc_tag.rs"
ln -sfn "$ALLOCTAG_ROOT/src/kernel/jump_label.rs" "$tree/rust/kernel/jump_label.rs"
lib_rs=$tree/rust/kernel/lib.rs
if ! grep -q "$MARK" "$lib_rs"; then
	sed -i -e "s|^#!\[feature(used_with_arg)\]$|&\n#![feature(const_type_name, asm_goto, asm_const)] // $MARK|" \
		-e "s|^pub mod alloc;$|&\npub mod alloc_tag; // $MARK|" \
		-e "s|^pub mod ioctl;$|&\npub mod jump_label; // $MARK|" "$lib_rs"
	[ "$(grep -c "$MARK" "$lib_rs")" = 3 ] || die "rust/kernel/lib.rs: graft failed"
	log "grafted rust/kernel/lib.rs"
fi

# Every allocation through the kernel crate's plain APIs (KBox::new, KVec::push,
# Arc::new, CString::try_from_fmt, ...) is charged to the line of the code
# that called the API: src/kernel/track_caller.patch puts #[track_caller] on
# the allocating entry points and on every function between them and the
# allocator, where charge_caller() (src/kernel/alloc_tag.rs) finds the
# caller's dynamic tag by Location::caller(). Each edited line carries the
# marker; the patch applies once, to all its files or none.
tc_patch=$ALLOCTAG_ROOT/src/kernel/track_caller.patch
tc_files=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$tc_patch")
tc_marked=0 tc_total=0
for f in $tc_files; do
	tc_total=$((tc_total + 1))
	grep -q "$MARK" "$tree/$f" && tc_marked=$((tc_marked + 1))
done
if [ "$tc_marked" = 0 ]; then
	patch -d "$tree" -p1 --forward --silent <"$tc_patch" || die "track_caller.patch does not apply"
	log "grafted track_caller.patch ($tc_total files)"
elif [ "$tc_marked" != "$tc_total" ]; then
	die "track_caller.patch: only $tc_marked of $tc_total files carry $MARK"
fi

# The Rust helpers allocate with the _noprof variants under the caller's tag.
graft_helper() {
	local name=$1 file=$tree/rust/helpers/$1
	shift
	grep -q "$MARK" "$file" && return 0
	local expr
	for expr in "$@"; do
		sed -i "$expr" "$file"
	done
	sed -i "0,/^#include/s||#include \"../../lib/alloctag/include/alloctag_rust.h\" /* $MARK */\n&|" "$file"
	[ "$(grep -c 'alloctag_rust_call' "$file")" -ge 1 ] || die "rust/helpers/$name: graft failed"
	log "grafted rust/helpers/$name"
}
graft_helper slab.c \
	's|return krealloc(objp, new_size, flags);|return alloctag_rust_call(krealloc_noprof(objp, new_size, flags),\n\t\t\t\t  alloctag_rust_untagged_krealloc);|' \
	's|return kvrealloc(p, size, flags);|return alloctag_rust_call(kvrealloc_noprof(p, size, flags),\n\t\t\t\t  alloctag_rust_untagged_kvrealloc);|'
graft_helper vmalloc.c \
	's|return vrealloc(p, size, flags);|return alloctag_rust_call(vrealloc_noprof(p, size, flags),\n\t\t\t\t  alloctag_rust_untagged_vrealloc);|'
graft_helper page.c \
	's|return alloc_pages(gfp_mask, order);|return alloctag_rust_call(alloc_pages_noprof(gfp_mask, order),\n\t\t\t\t  alloctag_rust_untagged_alloc_pages);|'

# A module unloaded with live allocations keeps its data, and so its tags
# (6.12), but its per-CPU area, where its tags' counters are, was freed: a
# later free of such an allocation wrote into freed per-CPU memory. Keep the
# area too when the code-tag core says the module's memory must stay.
main_c=$tree/kernel/module/main.c
if ! grep -q "$MARK" "$main_c"; then
	perl -0pi -e 's|(\tkfree\(mod->args\);\n)\tpercpu_modfree\(mod\);\n|$1\t/* $ENV{MARK}: kept tags still count into this per-CPU area */\n\tif (unload_codetags)\n\t\tpercpu_modfree(mod);\n|' "$main_c"
	[ "$(grep -c "$MARK" "$main_c")" = 1 ] || die "kernel/module/main.c: graft failed"
	log "grafted kernel/module/main.c"
fi

# Per-call-site fault injection: the slab and page allocators ask it
# (include/alloctag_fail.h: a static key, then Rust) in the hooks where they
# ask failslab and fail_page_alloc, where the call site's tag is current.
# The slab hook goes first in slab_pre_alloc_hook() and is given only s and
# the flags, which are in registers: had it come after the masking of the
# flags, the compiler would load gfp_allowed_mask and s->object_size before
# the patched-out jump, on every allocation.
graft_fail() {
	local file=$tree/$1 anchor=$2 call=$3
	grep -q "$MARK" "$file" && return 0
	perl -0pi -e "s|$anchor|\$&\t/* \$ENV{MARK}: fail the call site if armed */\n\tif ($call)\n\t\treturn \$ENV{RET};\n|" "$file"
	sed -i "0,/^#include \"/s||#include \"../lib/alloctag/include/alloctag_fail.h\" /* $MARK */\n&|" "$file"
	[ "$(grep -c "$MARK" "$file")" = 2 ] || die "$1: graft failed"
	log "grafted $1"
}
RET=NULL graft_fail mm/slub.c \
	'struct kmem_cache \*slab_pre_alloc_hook\(struct kmem_cache \*s, gfp_t flags\)\n\{\n' \
	'alloctag_fail_slab(s, flags)'
RET=false graft_fail mm/page_alloc.c \
	'\tif \(should_fail_alloc_page\(gfp_mask, order\)\)\n\t\treturn false;\n' \
	'alloctag_fail_pages(gfp_mask, order)'

# Headers under include/ go into the tree as files, not links: the headers
# package (scripts/package/install-extmod-build) copies include/ as it is, and
# a link to this checkout would dangle wherever the package is installed.
# Copied only when they differ, so an unchanged header rebuilds nothing.
install_header() {
	[ ! -L "$tree/$1" ] || rm -f "$tree/$1"
	cmp -s "$ALLOCTAG_ROOT/$1" "$tree/$1" || cp "$ALLOCTAG_ROOT/$1" "$tree/$1"
}
# Mainline's allocinfo ioctl ABI (include/uapi/linux/alloc_tag.h), which our
# /proc/allocinfo serves: tools built against the tree find the header.
install_header include/uapi/linux/alloc_tag.h
# The capture hooks, which include/linux/alloc_tag.h includes.
install_header include/linux/alloctag_capture.h

# 6.12's debug check dereferences the empty-tag marker CODETAG_EMPTY (1)
# when a slab whose extension vector once failed gets a new vector: an oops
# at address 0x19. Mainline skips empty references there; so do we.
at_h=$tree/include/linux/alloc_tag.h
if ! grep -q "$MARK" "$at_h"; then
	perl -0pi -e 's|\tWARN_ONCE\(ref && ref->ct,\n|\t/* $ENV{MARK}: CODETAG_EMPTY is no tag, as in mainline */\n\tWARN_ONCE(ref && ref->ct && !is_codetag_empty(ref),\n|' "$at_h"
	[ "$(grep -c "$MARK" "$at_h")" = 1 ] || die "include/linux/alloc_tag.h: graft failed"
	log "grafted include/linux/alloc_tag.h"
fi

# Accuracy: when a slab's extension vector cannot be allocated, 6.12 WARNs
# (a kernel report, and a panic under panic_on_warn) and the object's tag
# silently misses its bytes. As mainline does, log it once and mark the tag
# inaccurate (include/alloctag_accuracy.h), which /proc/allocinfo's ioctl
# reports.
slub_c=$tree/mm/slub.c
ACC_MARK=alloctag-graft-accuracy
if ! grep -q "$ACC_MARK" "$slub_c"; then
	ACC_MARK=$ACC_MARK perl -0pi -e '
		s|\tif \(!slab_obj_exts\(slab\) &&\n\t    WARN\(alloc_slab_obj_exts\(slab, s, flags, false\),\n\t\t "%s, %s: Failed to create slab extension vector!\\n",\n\t\t __func__, s->name\)\)\n\t\treturn NULL;\n|\t/* $ENV{ACC_MARK}: counts lost, not a kernel bug: no WARN */\n\tif (!slab_obj_exts(slab) &&\n\t    alloc_slab_obj_exts(slab, s, flags, false)) {\n\t\tpr_warn_once("%s, %s: Failed to create slab extension vector!\\n",\n\t\t\t     __func__, s->name);\n\t\talloctag_set_inaccurate(current->alloc_tag);\n\t\treturn NULL;\n\t}\n| or die "anchor 1";
		s|(#include "../lib/alloctag/include/alloctag_fail.h"[^\n]*\n)|$1#include "../lib/alloctag/include/alloctag_accuracy.h" /* $ENV{ACC_MARK} */\n| or die "anchor 2";
	' "$slub_c"
	[ "$(grep -c "$ACC_MARK" "$slub_c")" = 2 ] || die "mm/slub.c: accuracy graft failed"
	log "grafted mm/slub.c (accuracy)"
fi

# Capture of live objects at selected call sites (include/linux/alloctag_capture.h,
# src/capture/): each hook sits where the tag reference of an object is set,
# cleared or moved, behind a static key that is off while nothing is
# selected. The allocation hooks are where the object, its size and the flags
# are known; the free hooks are where a reference is cleared before
# alloc_tag_sub(); split and copy are where a page's reference moves. The
# slab hooks test one key for both profiling and capture (the header says
# why): their capture variants share the body through a constant argument.
CAP_MARK=alloctag-graft-capture
export CAP_MARK
if ! grep -q "$CAP_MARK" "$at_h"; then
	perl -0pi -e '
		s|(#endif /\* CONFIG_MEM_ALLOC_PROFILING_DEBUG \*/\n)|$1\n/* $ENV{CAP_MARK}: the capture hooks, which need struct alloc_tag and is_codetag_empty() */\n#include <linux/alloctag_capture.h>\n| or die "anchor";
	' "$at_h"
	[ "$(grep -c "$CAP_MARK" "$at_h")" = 1 ] || die "include/linux/alloc_tag.h: capture graft failed"
	log "grafted include/linux/alloc_tag.h (capture)"
fi
pt_h=$tree/include/linux/pgalloc_tag.h
if ! grep -q "$CAP_MARK" "$pt_h"; then
	perl -0pi -e '
		s|(\t\tif \(ref\) \{\n)(\t\t\talloc_tag_sub\(ref, PAGE_SIZE \* nr\);\n)|$1\t\t\t/* $ENV{CAP_MARK}: the pages go; so does their record */\n\t\t\talloctag_capture_free(ref);\n$2| or die "anchor";
	' "$pt_h"
	[ "$(grep -c "$CAP_MARK" "$pt_h")" = 1 ] || die "include/linux/pgalloc_tag.h: capture graft failed"
	log "grafted include/linux/pgalloc_tag.h (capture)"
fi
if ! grep -q "$CAP_MARK" "$slub_c"; then
	perl -0pi -e '
		my $alloc = <<"END";
/*
 * $ENV{CAP_MARK}: one static branch while nothing is selected, as in
 * 6.12: the slab-plain key (profiling on, capture off) instead of
 * mem_alloc_profiling_enabled(); only when it is off, the capture key and
 * the same body with the capture hooks. Inline both, and force it (the
 * two bodies made clang call the hook out of line): out of line, every
 * site would pay a call while something is selected.
 */
static __always_inline void
__alloc_tagging_slab_alloc_hook(struct kmem_cache *s, void *object, gfp_t flags,
				const bool capture)
{
	struct slabobj_ext *obj_exts;

	obj_exts = prepare_slab_obj_exts_hook(s, flags, object);
	if (likely(obj_exts)) {
		alloc_tag_add(&obj_exts->ref, current->alloc_tag, s->size);
		if (capture)
			alloctag_capture_slab(&obj_exts->ref, object, s, flags);
	}
}

static __fastpath_inline void
alloc_tagging_slab_alloc_hook(struct kmem_cache *s, void *object, gfp_t flags)
{
	if (alloctag_slab_plain())
		__alloc_tagging_slab_alloc_hook(s, object, flags, false);
	else if (alloctag_capture_on() && mem_alloc_profiling_enabled())
		__alloc_tagging_slab_alloc_hook(s, object, flags, true);
}
END
		my $free = <<"END";
/* $ENV{CAP_MARK}: as the allocation hook above */
static __always_inline void
__alloc_tagging_slab_free_hook(struct kmem_cache *s, struct slab *slab, void **p,
			       int objects, const bool capture)
{
	struct slabobj_ext *obj_exts;
	int i;

	/* slab->obj_exts might not be NULL if it was created for MEMCG accounting. */
	if (s->flags & (SLAB_NO_OBJ_EXT | SLAB_NOLEAKTRACE))
		return;

	obj_exts = slab_obj_exts(slab);
	if (!obj_exts)
		return;

	for (i = 0; i < objects; i++) {
		unsigned int off = obj_to_index(s, slab, p[i]);

		if (capture)
			alloctag_capture_free(&obj_exts[off].ref);
		alloc_tag_sub(&obj_exts[off].ref, s->size);
	}
}

static __fastpath_inline void
alloc_tagging_slab_free_hook(struct kmem_cache *s, struct slab *slab, void **p,
			     int objects)
{
	if (alloctag_slab_plain())
		__alloc_tagging_slab_free_hook(s, slab, p, objects, false);
	else if (alloctag_capture_on() && mem_alloc_profiling_enabled())
		__alloc_tagging_slab_free_hook(s, slab, p, objects, true);
}
END
		s|static inline void\nalloc_tagging_slab_alloc_hook\(struct kmem_cache \*s, void \*object, gfp_t flags\)\n\{\n\tif \(mem_alloc_profiling_enabled\(\)\) \{\n.*?\t\tif \(likely\(obj_exts\)\)\n\t\t\talloc_tag_add\(&obj_exts->ref, current->alloc_tag, s->size\);\n\t\}\n\}\n|$alloc|s or die "anchor 1";
		s|static inline void\nalloc_tagging_slab_free_hook\(struct kmem_cache \*s, struct slab \*slab, void \*\*p,\n\t\t\t     int objects\)\n\{\n.*?\t\talloc_tag_sub\(&obj_exts\[off\]\.ref, s->size\);\n\t\}\n\}\n|$free|s or die "anchor 2";
	' "$slub_c"
	[ "$(grep -c "$CAP_MARK" "$slub_c")" = 2 ] || die "mm/slub.c: capture graft failed"
	log "grafted mm/slub.c (capture)"
fi
pa_c=$tree/mm/page_alloc.c
if ! grep -q "$CAP_MARK" "$pa_c"; then
	perl -0pi -e '
		s|(\tset_page_owner\(page, order, gfp_flags\);\n\tpage_table_check_alloc\(page, order\);\n\tpgalloc_tag_add\(page, current, 1 << order\);\n)|#ifdef CONFIG_MEM_ALLOC_PROFILING /* $ENV{CAP_MARK}: record the pages if their site is selected; here, where page, order and gfp are live anyway */\n\talloctag_capture_pages(page, &current->alloc_tag, order, gfp_flags);\n#endif\n$1| or die "anchor";
	' "$pa_c"
	[ "$(grep -c "$CAP_MARK" "$pa_c")" = 1 ] || die "mm/page_alloc.c: capture graft failed"
	log "grafted mm/page_alloc.c (capture)"
fi
mm_h=$tree/include/linux/mm.h
if ! grep -q "$CAP_MARK" "$mm_h"; then
	perl -0pi -e '
		s|(\t\t\talloc_tag_ref_set\(ref, tag\);\n\t\t\tput_page_tag_ref\(ref\);\n\t\t\}\n\t\}\n)|$1\t/* $ENV{CAP_MARK}: each piece gets its own record */\n\talloctag_capture_split(folio, &tag->ct, old_order, new_order);\n| or die "anchor 1";
		s|(\talloc_tag_sub\(ref, folio_nr_pages\(new\)\);\n)|\t/* $ENV{CAP_MARK}: the target loses its own record, if any */\n\talloctag_capture_free(ref);\n$1\t/* $ENV{CAP_MARK}: the record moves with the charge */\n\talloctag_capture_copy(ref, &tag->ct, new, old);\n| or die "anchor 2";
	' "$mm_h"
	[ "$(grep -c "$CAP_MARK" "$mm_h")" = 3 ] || die "include/linux/mm.h: capture graft failed"
	log "grafted include/linux/mm.h (capture)"
fi
# 6.12's pgalloc_tag_copy() (migration) takes back the target folio's own
# charge with folio_nr_pages() as the byte count, so each migrated page left
# PAGE_SIZE - 1 bytes charged for good to the target's allocation site
# (compaction_alloc, alloc_migration_target...). Mainline later replaced the
# function with pgalloc_tag_swap(); here the one argument is corrected. The
# KUnit case migration_moves_the_record checks the target site's counters.
FIX_MARK=alloctag-graft-fix
export FIX_MARK
if ! grep -q "$FIX_MARK" "$mm_h"; then
	perl -0pi -e '
		s|\talloc_tag_sub\(ref, folio_nr_pages\(new\)\);\n|\t/* $ENV{FIX_MARK}: bytes, not pages (mainline now swaps the tags) */\n\talloc_tag_sub(ref, folio_size(new));\n| or die "anchor";
	' "$mm_h"
	[ "$(grep -c "$FIX_MARK" "$mm_h")" = 1 ] || die "include/linux/mm.h: migration bytes fix failed"
	log "grafted include/linux/mm.h (migration bytes)"
fi

bh=$tree/rust/bindings/bindings_helper.h
if ! grep -q "$MARK" "$bh"; then
	printf '\n/* %s: declarations used by lib/alloctag */\n#include "../../lib/alloctag/include/alloctag_bindings.h"\n' \
		"$MARK" >>"$bh"
	log "grafted rust/bindings/bindings_helper.h"
fi
