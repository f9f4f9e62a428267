// SPDX-License-Identifier: GPL-2.0
/*
 * alloctag benchmark: CONFIG_ALLOCTAG_BENCH_BUILTIN_TAGS call sites built
 * into vmlinux (scripts/bench.sh with BENCH_CPUS=N), the benchmark's sites
 * (tests/modules/alloctag_bench_tags.c) in a header Kbuild generates. In
 * vmlinux both cores keep a tag's counters in the static per-CPU area, so a
 * distribution's tag count can be measured on 6.12's C core too: as modules,
 * that many tags exhaust its module per-CPU reserve. Each site allocates once
 * at boot, from site 0 (alloctag_bench_builtin.site= picks another).
 */
#define ALLOCTAG_BENCH_TAGS_SITES "alloctag_bench_builtin_sites.h"
#include "../modules/alloctag_bench_tags.c"
