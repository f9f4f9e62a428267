// SPDX-License-Identifier: GPL-2.0
/*
 * alloctag test: a module of 5,000 allocation call sites. With static
 * per-CPU counters (6.12's DEFINE_ALLOC_TAG()) their 80,000 bytes exceed
 * the largest per-CPU allocation, so the loader refused it with a warning
 * from mm/percpu.c; the Rust core gives its tags counters when it comes
 * (lib/alloctag/src/alloc_tag/counters.rs), in blocks. The sites are the
 * benchmark's (tests/modules/alloctag_bench_tags.c), listed in a header Kbuild
 * generates.
 */
#define ALLOCTAG_BENCH_TAGS_SITES "alloctag_many_tags_sites.h"
#include "alloctag_bench_tags.c"
