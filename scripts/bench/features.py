# SPDX-License-Identifier: GPL-2.0
"""The reports of the feature runs of scripts/bench.sh: fault injection (--fault),
capture (--capture), page tags in page flags (--pgflags) and per-node counting (--node).
"""

import os
import re
import statistics

from boots import (ALLOC_TESTS, LABEL, LOG_RE, SHORT, load, paired, ratios, same_boot, spread, table,
                   values)
from floors import floor_table, twin_table


def feature_table(boots, kernel, idle_title, phases, mode="icount", extra=()):
    """Per allocation test: kernel/(c) with the feature idle, each of `phases` (phase,
    column title) over the idle phase of the same boot of `kernel`, and each of `extra`
    (column title, function of the test giving ratios)."""
    k = SHORT[kernel]
    rows = []
    for test in ALLOC_TESTS:
        idle = ratios(boots, mode, kernel, "rust", "on", test)
        rows.append([
            f"`{test}`",
            spread(values(boots, mode, "rust", "on", test)),
            spread(values(boots, mode, kernel, "on", test)),
            spread(idle, 4),
            ("-" if not idle else "yes" if statistics.median(idle) <= 1.005 else "**no**"),
        ] + [spread(same_boot(boots, mode, kernel, phase, test), 4) for phase, _ in phases]
            + [spread(f(test), 4) for _, f in extra])
    return table(["test", "(c) ns/op", f"{k} ns/op", f"{k}/(c) {idle_title}", "≤ 1.005"]
                 + [title for _, title in phases] + [title for title, _ in extra], rows)


def fault_table(boots, mode="icount"):
    """Per allocation test: (d)/(c) with nothing armed, and (d) armed over (d) unarmed."""
    return feature_table(boots, "fault", "nothing armed", [("armed-elsewhere", "(d) armed elsewhere / unarmed"),
                                          ("armed-p0", "(d) site armed p=0 / unarmed")], mode)


def capture_table(boots, mode="icount"):
    """Per allocation test: (e)/(c) with nothing selected (waste accounting off, no slots),
    (e) selected over unselected; booted with waste accounting's slots reserved, over (c) with
    it off, and on over off in the same boot."""
    return feature_table(boots, "capture", "nothing selected",
                         [("selected-elsewhere", "(e) selected elsewhere / none"),
                          ("selected", "(e) site selected / none")], mode,
                         [("(e+slots)/(c) waste off",
                           lambda test: ratios(boots, mode, "waste", "rust", "on", test)),
                          ("(e+slots) waste on / off",
                           lambda test: same_boot(boots, mode, "waste", "waste-on", test))])


def print_run_env(out_dir):
    """Prints run.env's settings as a list."""
    try:
        with open(os.path.join(out_dir, "run.env")) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    print(f"- {k}: `{v}`")
    except OSError:
        pass


def print_header(out_dir, title, kernels, note=lambda k: ""):
    """Prints the title, run.env's settings and each kernel's icount boots; returns the boots."""
    boots = load(out_dir)
    print(f"# alloctag benchmark: {title}")
    print()
    print_run_env(out_dir)
    for k in kernels:
        print(f"- {LABEL[k]}: {len(boots.get((k, 'icount'), {}))} icount boots{note(k)}")
    return boots


def capture_main(out_dir):
    p = print
    boots = print_header(out_dir, "capture of live objects and waste accounting",
                         ["rust", "capture", "waste"])
    status = next((b.info["capture_status"][0]
                   for _, b in sorted(boots.get(("capture", "icount"), {}).items())
                   if b.info.get("capture_status")), None)
    if status:
        p(f"- capture status after the selected phase: `{status}`")
    pool = next((b.info["capture_pool_bytes"][0]
                 for _, b in sorted(boots.get(("capture", "icount"), {}).items())
                 if b.info.get("capture_pool_bytes")), None)
    limit = re.search(r"limit=(\d+)", status or "")
    if pool and limit and int(pool) > 0:
        p(f"- the record pool, from /proc/allocinfo's src/capture/pool.rs lines while "
          f"capture is on: {pool} bytes for {limit.group(1)} records, "
          f"{int(pool) / int(limit.group(1)):.1f} bytes per record")
    def slab_kb(kernel):
        kb = [int(b.info["meminfo_Slab"][0])
              for _, b in sorted(boots.get((kernel, "icount"), {}).items())
              if b.info.get("meminfo_Slab")]
        return statistics.median(kb) if kb else None

    plain, slotted = slab_kb("capture"), slab_kb("waste")
    if plain and slotted:
        p(f"- /proc/meminfo's Slab right after boot, median: (e) {plain:.0f} kB, (e+slots) "
          f"{slotted:.0f} kB ({slotted - plain:+.0f} kB: the slots of every slab vector, and "
          f"the larger kmalloc() caches some vectors then need)")
    vec = next((b.info["waste_vector_bytes"][0]
                for _, b in sorted(boots.get(("waste", "icount"), {}).items())
                if b.info.get("waste_vector_bytes")), None)
    if vec:
        p(f"- slab extension vectors of the caches other than kmalloc()'s (alloc_slab_obj_exts "
          f"in /proc/allocinfo, 4 bytes per object their waste slots) after the waste phase "
          f"of (e+slots): {vec} bytes")
    p()
    p("Instructions per allocation and free under -icount (1 ns per instruction), profiling "
      "on. (e)/(c) pairs the boots of one round with nothing selected and waste accounting "
      "off, as (e) boots by default (no slots); the selected columns compare phases of the "
      "same (e) boot: a selection of a site that never allocates (the static key on), and "
      "every benchmark site selected (each allocation recorded with its stack, each free "
      "dropping the record). (e+slots) is (e) booted with alloctag.waste_slots=on: over (c) "
      "with waste accounting off (the slots' cost off), and waste accounting on over off in "
      "the same boot.")
    p()
    p(capture_table(boots))


def rust_sites_table(boots, kernels, mode="icount"):
    """Per kernel: a plain-API Rust call site (dynamic tag) against alloc_hooks! (static tag)
    and a C call site, in the same boot; and the first use of a new line."""
    rows = []
    for k in kernels:
        bb = [b for _, b in sorted(boots.get((k, mode), {}).items())]
        if not bb:
            continue
        per = lambda num, den: [b.ns("on", num) / b.ns("on", den) for b in bb
                                if b.ns("on", num) and b.ns("on", den)]
        plain_hooks = per("rust-plain-64", "rust-alloc_hooks-64")
        rows.append([
            SHORT[k],
            spread([b.ns("on", "rust-plain-64") for b in bb], 1),
            spread([b.ns("on", "rust-alloc_hooks-64") for b in bb], 1),
            spread([b.ns("on", "c-krealloc-64") for b in bb], 1),
            spread(plain_hooks, 4),
            ("-" if not plain_hooks else "yes" if statistics.median(plain_hooks) <= 1.1
             else "**no**"),
            spread(per("rust-plain-64", "c-krealloc-64"), 4),
            spread([b.ns("on", "rust-first-use-64") for b in bb], 0),
            spread([b.ns("on", "rust-first-use-64", "alloc_ns") for b in bb], 0),
        ])
    return table(["kernel", "plain ns/op", "`alloc_hooks!` ns/op", "C ns/op",
                  "plain / `alloc_hooks!`", "≤ 1.1", "plain / C", "first use ns/op",
                  "first use: allocation ns"], rows)


def fault_main(out_dir):
    p = print
    boots = print_header(out_dir, "per-call-site fault injection", ["rust", "fault"])
    p()
    p("Instructions per allocation and free under -icount (1 ns per instruction), profiling "
      "on. (d)/(c) pairs the boots of one round; the armed columns compare phases of the same "
      "(d) boot.")
    p()
    p(fault_table(boots))
    p()
    p("## Rust call sites, profiling on")
    p()
    p("A 64-byte `KBox` through the plain API (`rust-plain-64`, charged to its line through a "
      "dynamic tag) against `alloc_hooks!` (`rust-alloc_hooks-64`, a static tag) and a C call "
      "site (`c-krealloc-64`), in the same boot; the first use is the first allocation and free "
      "at each of 16 new lines, which makes each line's tag.")
    p()
    p(rust_sites_table(boots, ["rust", "fault"]))


# Issue 24's goals for page tags in page flags, (f)/(a) with profiling on.
PGFLAGS_GOALS = {"pages-order0": 1.06, "pages-order3": 1.04}


def page_ext_line(out_dir, kernel):
    """What the first boot of `kernel` logged about page_ext and page tags."""
    for name in sorted(os.listdir(out_dir)):
        m = LOG_RE.match(name)
        if not m or m.group(1) != kernel:
            continue
        with open(os.path.join(out_dir, name), errors="replace") as f:
            lines = [l.strip()[len("alloctag-bench-info: dmesg="):] for l in f
                     if l.startswith("alloctag-bench-info: dmesg=")
                     and ("page_ext" in l or "page tags in page flags" in l)]
        return "; ".join(f"`{l}`" for l in lines) or "no page_ext, no page tags in page flags"
    return "-"


def pgflags_table(boots, phase, mode="icount"):
    """Per allocation test: (c)/(a) and (f)/(a), boots of one round paired, and (f)/(c)."""
    rows = []
    for test in ALLOC_TESTS:
        f_a = ratios(boots, mode, "pgflags", "nop", phase, test)
        goal = PGFLAGS_GOALS.get(test) if phase == "on" else 1.01
        met = "-" if not f_a or goal is None else (
            "yes" if statistics.median(f_a) <= goal else "**no**")
        rows.append([
            f"`{test}`",
            spread(values(boots, mode, "nop", phase, test)),
            spread(ratios(boots, mode, "rust", "nop", phase, test)),
            spread(f_a),
            spread(ratios(boots, mode, "pgflags", "rust", phase, test)),
            f"≤ {goal}: {met}" if goal else "-",
        ])
    return table(["test", "(a) ns/op", "(c)/(a)", "(f)/(a)", "(f)/(c)", "goal"], rows)


def pgflags_main(out_dir):
    p = print
    boots = print_header(out_dir, "page tags in page flags", ["nop", "rust", "pgflags"],
                         lambda k: f"; boot log: {page_ext_line(out_dir, k)}")
    p()
    p("Instructions per allocation and free under -icount (1 ns per instruction). (f) is "
      "kernel (c) booted with `sysctl.vm.mem_profiling=1,compressed`; ratios pair the boots of "
      "one round.")
    for phase, title in [("on", "profiling enabled (vm.mem_profiling=1)"),
                         ("off", "profiling disabled at run time (vm.mem_profiling=0)")]:
        p()
        p(f"## Allocators, {title}, -icount")
        p()
        p(pgflags_table(boots, phase))
    p()
    p("## Each row against its floor, -icount")
    p()
    p("Instructions of an allocation and its free made one at a time (`pair_ns`), medians over "
      "the boots: (a)'s; the floor, (a)'s and the instructions profiling cannot do without "
      "(scripts/bench/floors.toml, counted from the disassembly); the Rust core's, (c) off and "
      "on, (f) compressed; the gap between the last two. A gap over 10 instructions has its next "
      "step written beside it.")
    p()
    p(floor_table(boots))
    p()
    p("## The Rust rows against their C twin, profiling off, -icount")
    p()
    p(twin_table(boots))


def differences(boots, mode, a, b, phase, test, field):
    """b - a per round, pairing the boots of the same round (instructions under -icount)."""
    return paired(boots, mode, b, a, phase, test, lambda x, y: x - y, field)


# The goal for per-node counting on, in instructions over profiling on, for these rows.
NODE_GOAL = {"kmalloc-64": 5, "kmem_cache-128": 5, "pages-order0": 5, "pages-order3": 5}


def node_table(boots, phase, field, mode="icount"):
    """Per allocation test: (g)'s instructions, and what (h) and (i) execute more."""
    rows = []
    for test in ALLOC_TESTS:
        off = differences(boots, mode, "numanone", "numa", phase, test, field)
        on = differences(boots, mode, "numa", "numaon", phase, test, field)
        goal = NODE_GOAL.get(test) if phase == "on" else None
        met = "-" if goal is None or not on else (
            "yes" if statistics.median(on) <= goal else "**no**")
        rows.append([
            f"`{test}`",
            spread(values(boots, mode, "numanone", phase, test, field), 0),
            spread(off, 0),
            ("-" if not off else "yes" if statistics.median(off) == 0 else "**no**"),
            spread(on, 0),
            f"≤ {goal}: {met}" if goal else "-",
        ])
    return table(["test", "(g) instr/op", "(h) − (g)", "(h) = (g)", "(i) − (h)", "goal"], rows)


def node_main(out_dir):
    p = print
    boots = print_header(out_dir, "per-node counting", ["numanone", "numa", "numaon"],
                         lambda k: node_note(load(out_dir), k))
    p()
    p("Instructions per allocation and free under -icount (1 ns per instruction), on two NUMA "
      "nodes of one vCPU each; the benchmark's memory is its CPU's node's. (h) − (g): what "
      "per-node counting built in costs while off; (i) − (h): what it costs on. Differences "
      "pair the boots of one round.")
    for phase, title in [("on", "profiling enabled (vm.mem_profiling=1)"),
                         ("off", "profiling disabled at run time (vm.mem_profiling=0)")]:
        for field, what in [("ns_per_op", "in a loop (`ns_per_op`)"),
                            ("pair_ns", "one at a time (`pair_ns`)")]:
            p()
            p(f"## Allocators, {title}, {what}, -icount")
            p()
            p(node_table(boots, phase, field))


def node_note(boots, kernel):
    """What the first icount boot of `kernel` said of its nodes and per-node counting."""
    said = []
    for key in ("nodes", "per_node"):
        v = next((b.info[key][0] for _, b in sorted(boots.get((kernel, "icount"), {}).items())
                  if b.info.get(key)), "-")
        said.append(f"{key} `{v}`")
    return "; " + ", ".join(said)
