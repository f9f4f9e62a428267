#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the console logs of scripts/bench.sh into markdown tables.

Usage: scripts/bench/report.py [--fault|--capture|--pgflags|--node] OUT_DIR BUILD_DIR

With --fault (scripts/bench.sh with BENCH_FAULT=1) it prints only the
fault-injection table: kernel (d) against (c), and (d) with rules armed. With
--pgflags (BENCH_PGFLAGS=1), the tables of (a), (c) and (f), kernel (c) booted
with page tags in page flags. With --node (BENCH_NODE=1), the instructions that
per-node counting adds, built in and off, and on: kernels (g), (h) and (i).

OUT_DIR holds the console logs boot-KERNEL-MODE-rROUND.log (KERNEL: nop, c,
rust; MODE: tcg, icount) and run.env (what bench.sh ran). BUILD_DIR holds the
kernel builds kernel-bench-KERNEL, whose vmlinux and objects are measured.
Prints the tables on stdout; see Documentation/benchmarks.rst for what each
figure means.
"""


import collections
import os
import statistics
import sys

from boots import (
    ALLOC_TESTS,
    KERNELS,
    LABEL,
    READ_SIZES,
    SHORT,
    first_info,
    fmt,
    load,
    ratios,
    spread,
    table,
    values,
)
from objects import core_table, memory_table, object_diff
from features import capture_main, fault_main, node_main, pgflags_main, rust_sites_table


def alloc_table(boots, mode, phase):
    rows = []
    for test in ALLOC_TESTS:
        rows.append([
            f"`{test}`",
            spread(values(boots, mode, "nop", phase, test)),
            spread(ratios(boots, mode, "c", "nop", phase, test)),
            spread(ratios(boots, mode, "rust", "nop", phase, test)),
            spread(ratios(boots, mode, "rust", "c", phase, test)),
        ])
    return table(["test", "(a) ns/op", "(b)/(a)", "(c)/(a)", "(c)/(b)"], rows)


def split_table(boots, mode="icount"):
    """Rows where (c) and (b) differ by more than 0.5%, split into allocation and free."""
    rows = []
    for phase in ["on", "off"]:
        for test in ALLOC_TESTS:
            r = ratios(boots, mode, "rust", "c", phase, test)
            if not r or abs(statistics.median(r) - 1) <= 0.005:
                continue
            row = [phase, f"`{test}`"]
            for k in KERNELS:
                for field in ["alloc_ns", "free_ns"]:
                    v = values(boots, mode, k, phase, test, field)
                    row.append(spread(v, 1))
            rows.append(row)
    if not rows:
        return "(none)"
    return table(["profiling", "test", "(a) alloc", "(a) free", "(b) alloc", "(b) free",
                  "(c) alloc", "(c) free"], rows)


def callsite_table(boots):
    rows = []
    for mode in ["tcg", "icount"]:
        for phase in ["on", "off"]:
            for k in KERNELS:
                if not boots.get((k, mode)):
                    continue
                if k == "nop" and phase == "off":
                    continue
                row = [mode, phase if k != "nop" else "-", SHORT[k]]
                for test in ["rust-alloc_hooks-64", "rust-plain-64"]:
                    rs = []
                    for r, b in sorted(boots[(k, mode)].items()):
                        x, y = b.ns(phase, test), b.ns(phase, "c-krealloc-64")
                        if x is not None and y:
                            rs.append(x / y)
                    row.append(spread(rs))
                rows.append(row)
    return table(["clock", "profiling", "kernel", "Rust `alloc_hooks!` / C call site",
                  "Rust plain API / C call site"], rows)


def allocinfo_table(boots, mode):
    rows = []
    for bs in READ_SIZES:
        test = f"allocinfo-bs={bs}"
        row = [f"{int(bs):,}" if bs != "1048576" else "1 MiB"]
        for k in ["c", "rust"]:
            bb = boots.get((k, mode), {})
            first = next(iter(bb.values()), None)
            row.append(first.results.get(("on", test), {}).get("lines", "-") if first else "-")
        for k in ["c", "rust"]:
            row.append(spread([v / 1e6 if v is not None else None
                               for v in values(boots, mode, k, "on", test, "ns_per_read")]))
        r = ratios(boots, mode, "rust", "c", "on", test, "ns_per_read")
        row.append(spread(r))
        row += goal(bs, r)
        rows.append(row)
    return table(["read buffer", "(b) lines", "(c) lines", "(b) ms per whole file",
                  "(c) ms per whole file", "(c)/(b)", "goal", "met"], rows)


READ_GOAL = {"1048576": 0.8, "4096": 0.8, "64": 1 / 3}


def goal(bs, r):
    """The goal of issue 12 for reads of bs bytes, and whether the median meets it."""
    lim = READ_GOAL[bs]
    text = "(c)/(b) ≤ 0.8" if lim == 0.8 else "(b)/(c) ≥ 3"
    if not r:
        return [text, "-"]
    med = statistics.median(r)
    return [text, ("yes" if med <= lim else "**no**") + f" ({'(b)/(c) = ' + fmt(1 / med) if lim < 0.5 else fmt(med)})"]


def uread_table(boots, mode):
    """Whole-file reads from user space (allocinfo_query read BS)."""
    rows = []
    for bs in READ_SIZES:
        test = f"uread-bs={bs}"
        row = [f"{int(bs):,}" if bs != "1048576" else "1 MiB"]
        for k in ["c", "rust"]:
            bb = boots.get((k, mode), {})
            first = next(iter(bb.values()), None)
            row.append(first.results.get(("on", test), {}).get("bytes", "-") if first else "-")
        for k in ["c", "rust"]:
            row.append(spread([v / 1e6 if v is not None else None
                               for v in values(boots, mode, k, "on", test, "ns_per_query")]))
        r = ratios(boots, mode, "rust", "c", "on", test, "ns_per_query")
        row.append(spread(r))
        row += goal(bs, r)
        rows.append(row)
    return table(["read buffer", "(b) bytes", "(c) bytes", "(b) ms per whole file",
                  "(c) ms per whole file", "(c)/(b)", "goal", "met"], rows)


QUERIES = [
    ("file", "mm/slub.c", [("text-file", "text read (64 KiB reads) and selected in C"),
                           ("exec-file", "`grep ' mm/slub.c:' /proc/allocinfo` (busybox process)"),
                           ("ioctl-file", "ioctl: `GET_AT` + `GET_NEXT`, `FILENAME` filter")]),
    ("size", "≥ 1 MiB", [("text-min", "text read (64 KiB reads) and selected in C"),
                         ("exec-min", "`awk '$1 + 0 >= 1048576' /proc/allocinfo` (busybox process)"),
                         ("ioctl-min", "ioctl: `GET_AT` + `GET_NEXT`, `MIN_SIZE` filter")]),
]


def query_table(boots, mode):
    """Selecting tags: the text against the ioctls."""
    rows = []
    for what, arg, methods in QUERIES:
        ioctl_test = methods[-1][0]
        for test, label in methods:
            row = [f"{what} ({arg})", label]
            for k in ["c", "rust"]:
                bb = boots.get((k, mode), {})
                first = next(iter(bb.values()), None)
                res = first.results.get(("on", test), {}) if first else {}
                if "unsupported" in res:
                    row.append("n/a (" + res["unsupported"] + ")")
                elif test.startswith("exec"):
                    row.append("-")
                else:
                    row.append(res.get("matches", "-"))
            for k in ["c", "rust"]:
                bb = boots.get((k, mode), {})
                first = next(iter(bb.values()), None)
                if first and "unsupported" in first.results.get(("on", test), {}):
                    row.append("n/a")
                    continue
                row.append(spread([v / 1e6 if v is not None else None
                                   for v in values(boots, mode, k, "on", test, "ns_per_query")]))
            # How many times the ioctl is faster than this method, in the same (c) boot.
            rs = []
            for _, b in sorted(boots.get(("rust", mode), {}).items()):
                x, y = b.ns("on", test, "ns_per_query"), b.ns("on", ioctl_test, "ns_per_query")
                if x is not None and y:
                    rs.append(x / y)
            row.append(spread(rs, 1))
            rows.append(row)
    return table(["selection", "method", "(b) tags selected", "(c) tags selected",
                  "(b) ms per query", "(c) ms per query", "(c): this / ioctl"], rows)


def showmem_table(boots, mode):
    """show_mem() (sysrq m), profiling on and off, and the difference."""
    test = "sysrq-m"
    rows = []
    per = {}
    for k in KERNELS:
        on = values(boots, mode, k, "on", test, "ns_per_query")
        off = values(boots, mode, k, "off", test, "ns_per_query")
        per[k] = [a - b for a, b in zip(on, off) if a is not None and b is not None]
        rows.append([SHORT.get(k, k),
                     spread([v / 1e6 if v is not None else None for v in on]),
                     spread([v / 1e6 if v is not None else None for v in off]),
                     spread([v / 1e6 for v in per[k]]) if k != "nop" else "-"])
    if per.get("c") and per.get("rust"):
        rows.append(["(c)/(b), on − off", "", "",
                     spread([r / c for r, c in zip(per["rust"], per["c"]) if c])])
    return table(["kernel", "ms, profiling on", "ms, profiling off", "ms, on − off"],
                 rows)


def lines_table(boots):
    """Making one /proc/allocinfo line, as the Rust core does and by copying bytes."""
    rows = []
    for mode in ["tcg", "icount"]:
        if not boots.get(("rust", mode)):
            continue
        fmt_ns = values(boots, mode, "rust", "on", "fmt-line")
        bytes_ns = values(boots, mode, "rust", "on", "bytes-line")
        reads = {k: values(boots, mode, k, "on", "allocinfo-bs=1048576", "ns_per_read")
                 for k in ["c", "rust"]}
        lines = {}
        for k in ["c", "rust"]:
            first = next(iter(sorted(boots.get((k, mode), {}).items())), (None, None))[1]
            r = first.results.get(("on", "allocinfo-bs=1048576"), {}) if first else {}
            lines[k] = int(r.get("lines", 0)) - 2 if r else None
        per_line = {k: [v / lines[k] for v in reads[k] if v is not None]
                    if lines.get(k) else [] for k in reads}
        rows.append([mode, spread(per_line["c"]), spread(per_line["rust"]),
                     spread(fmt_ns), spread(bytes_ns),
                     spread([a - b for a, b in zip(fmt_ns, bytes_ns)
                             if a is not None and b is not None])])
    return table(["clock", "(b) read, ns per tag", "(c) read, ns per tag",
                  "`fmt-line` ns", "`bytes-line` ns", "difference"], rows)


def differential(boots):
    """Tag sets and boot counters of (b) and (c)."""
    out = []
    b_boots = boots.get(("c", "tcg"), {})
    c_boots = boots.get(("rust", "tcg"), {})
    if not b_boots or not c_boots:
        return "no boots of (b) and (c) to compare"

    def multiset(boot):
        return collections.Counter(key for key, _, _ in boot.tags())

    def totals(boot):
        t = collections.defaultdict(lambda: [0, 0])
        for key, nbytes, calls in boot.tags():
            t[key][0] += nbytes
            t[key][1] += calls
        return t

    b1, c1 = b_boots[min(b_boots)], c_boots[min(c_boots)]
    mb, mc = multiset(b1), multiset(c1)
    only_b = sorted(set(mb) - set(mc))
    only_c = sorted(set(mc) - set(mb))
    diff_count = sorted(k for k in set(mb) & set(mc) if mb[k] != mc[k])
    out.append(f"Tags after boot: (b) {sum(mb.values())} lines, {len(mb)} distinct "
               f"`file:line [module] func:name`; (c) {sum(mc.values())} lines, {len(mc)} distinct. "
               f"Common: {len(set(mb) & set(mc))}.")
    out.append("")

    def classify(key, side):
        f = key.split(":", 1)[0]
        if side == "c" and f in ("lib/codetag.c", "lib/alloc_tag.c"):
            return "expected: a call site of the C core, not built in (c)"
        if side == "rust" and f.startswith("lib/alloctag/"):
            return "expected: a call site of the Rust core, not built in (b)"
        return "**unexpected**"

    rows = [[SHORT["c"] + " only", f"`{k}`", classify(k, "c")] for k in only_b]
    rows += [[SHORT["rust"] + " only", f"`{k}`", classify(k, "rust")] for k in only_c]
    rows += [["both, count differs", f"`{k}`", f"(b) {mb[k]}, (c) {mc[k]}"] for k in diff_count]
    if rows:
        out.append(table(["where", "tag", "why"], rows))
    else:
        out.append("The two sets are identical.")
    unexpected = sum(1 for r in rows if "unexpected" in r[2]) + len(diff_count)
    out.append("")
    out.append(f"Unexpected differences: {unexpected}.")
    out.append("")

    # Counters: a tag is deterministic in a kernel when all its boots agree.
    def stable(bs):
        per = [totals(b) for _, b in sorted(bs.items())]
        keys = set(per[0])
        for p in per[1:]:
            keys &= set(p)
        return per[0], {k for k in keys if all(p[k] == per[0][k] for p in per)}, len(per)

    tb, sb, nb = stable(b_boots)
    tc, sc, nc = stable(c_boots)
    common = set(tb) & set(tc)
    det = sorted(common & sb & sc)
    same = [k for k in det if tb[k] == tc[k]]
    out.append(f"Counters: {len(common)} tags in both; {len(det)} of them have the same "
               f"counters in every boot of (b) ({nb} boots) and of (c) ({nc} boots), i.e. count "
               f"allocations that happen deterministically during boot. Of those, {len(same)} "
               f"agree exactly between (b) and (c); the largest disagreements:")
    out.append("")
    worst = sorted(det, key=lambda k: (-abs(tc[k][0] - tb[k][0]), -abs(tc[k][1] - tb[k][1]), k))
    rows = []
    for k in worst[:15]:
        if tb[k] == tc[k]:
            break
        rows.append([f"`{k}`", f"{tb[k][0]:,}", f"{tc[k][0]:,}", f"{tc[k][0] - tb[k][0]:+,}",
                     f"{tb[k][1]:,}", f"{tc[k][1]:,}", f"{tc[k][1] - tb[k][1]:+,}"])
    if rows:
        out.append(table(["tag", "(b) bytes", "(c) bytes", "Δ bytes", "(b) calls", "(c) calls",
                          "Δ calls"], rows))
    else:
        out.append("(none: all deterministic counters agree)")
    nondet = sorted(common - set(det))
    out.append("")
    out.append(f"Tags whose counters vary from boot to boot in (b) or (c) (not compared): "
               f"{len(nondet)}; largest difference of medians among them:")
    out.append("")

    def med(bs, k):
        v = [totals(b)[k] for _, b in sorted(bs.items())]
        return [statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)]

    if nondet:
        tot_b = [totals(b) for _, b in sorted(b_boots.items())]
        tot_c = [totals(b) for _, b in sorted(c_boots.items())]

        def medk(per, k):
            return (statistics.median(p[k][0] for p in per if k in p),
                    statistics.median(p[k][1] for p in per if k in p))

        meds = {k: (medk(tot_b, k), medk(tot_c, k)) for k in nondet}
        rows = []
        for k in sorted(nondet, key=lambda k: -abs(meds[k][1][0] - meds[k][0][0]))[:10]:
            (bb, bc), (cb, cc) = meds[k]
            rows.append([f"`{k}`", f"{bb:,.0f}", f"{cb:,.0f}", f"{cb - bb:+,.0f}",
                         f"{bc:,.0f}", f"{cc:,.0f}", f"{cc - bc:+,.0f}"])
        out.append(table(["tag", "(b) bytes", "(c) bytes", "Δ bytes", "(b) calls", "(c) calls",
                          "Δ calls"], rows))
    return "\n".join(out)


def per_mode(p, boots, env, table_fn):
    """Prints table_fn's table for TCG and for -icount, each where a kernel booted so."""
    for mode in ["tcg", "icount"]:
        if any(boots.get((k, mode)) for k in KERNELS):
            p("TCG:" if mode == "tcg" else f"-icount {env.get('icount', '')}:")
            p()
            p(table_fn(boots, mode))
            p()


def main():
    if sys.argv[1] == "--pgflags":
        pgflags_main(sys.argv[2])
        return
    if sys.argv[1] == "--node":
        node_main(sys.argv[2])
        return
    if sys.argv[1] == "--fault":
        fault_main(sys.argv[2])
        return
    if sys.argv[1] == "--capture":
        capture_main(sys.argv[2])
        return
    out_dir, build_dir = sys.argv[1], sys.argv[2]
    boots = load(out_dir)
    env = {}
    try:
        with open(os.path.join(out_dir, "run.env")) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
    except OSError:
        pass

    p = print
    p("# alloctag benchmark")
    p()
    for k in ["date", "command", "commit", "host", "qemu", "kernel", "kernels", "cmdline",
              "icount_cmdline", "rounds", "passes", "icount", "icount_rounds"]:
        if k in env:
            p(f"- {k}: `{env[k]}`")
    for k in KERNELS:
        cs = first_info(boots, k, "clocksource")
        cpus = first_info(boots, k, "cpus_possible")
        p(f"- {LABEL[k]}: {len(boots.get((k, 'tcg'), {}))} TCG boots, "
          f"{len(boots.get((k, 'icount'), {}))} icount boots; clocksource {cs}, possible CPUs {cpus}")
    p()
    p("Each TCG boot runs the benchmark `passes` times, alternating profiling on and off, and "
      "its figure is the median of its passes. Ratios pair the boots of the same round (the "
      "three kernels boot in turn, in a rotating order); each cell is median [min–max] over the "
      "rounds. One op is one allocation and its free.")
    p()
    p("## Allocators, profiling enabled at run time (vm.mem_profiling=1), TCG")
    p()
    p(alloc_table(boots, "tcg", "on"))
    p()
    p("## Allocators, profiling disabled at run time (vm.mem_profiling=0), TCG")
    p()
    p(alloc_table(boots, "tcg", "off"))
    p()
    if any(boots.get((k, "icount")) for k in KERNELS):
        p(f"## Allocators, profiling enabled, -icount {env.get('icount', '')}")
        p()
        p("With -icount shift=0 the guest clock advances 1 ns per instruction: ns/op is "
          "instructions per op, and the figures do not depend on the host.")
        p()
        p(alloc_table(boots, "icount", "on"))
        p()
        p(f"## Allocators, profiling disabled, -icount {env.get('icount', '')}")
        p()
        p(alloc_table(boots, "icount", "off"))
        p()
        p("Rows where (c)/(b) is off 1 by more than 0.5% under -icount, split into the "
          "allocation and the free (ns per op):")
        p()
        p(split_table(boots))
        p()
    p("## Rust call site against C call site")
    p()
    p("Per kernel, the cost of a 64-byte `KBox` from Rust over the same allocation from a C "
      "call site (`krealloc(NULL, 64)`, row `c-krealloc-64`), in the same boot.")
    p()
    p(callsite_table(boots))
    p()
    p(rust_sites_table(boots, KERNELS))
    p()
    p("## Reading /proc/allocinfo, profiling enabled")
    p()
    p("Time to read the whole file from open to close with read() buffers of the given size, "
      "from a module (kernel_read), in (b) and (c); (a) has no /proc/allocinfo. Lines include "
      "the two header lines.")
    p()
    p("TCG:")
    p()
    p(allocinfo_table(boots, "tcg"))
    p()
    if any(boots.get((k, "icount")) for k in KERNELS):
        p(f"-icount {env.get('icount', '')}:")
        p()
        p(allocinfo_table(boots, "icount"))
        p()
    p("From user space: `allocinfo_query read BS` (tests/bench/allocinfo_query.c) reads the "
      "whole file with read() buffers of BS bytes, as `dd bs=BS` does, timed with "
      "CLOCK_MONOTONIC (bytes: the file's size).")
    p()
    per_mode(p, boots, env, uread_table)
    p("## Selecting tags: the ioctls against the text")
    p()
    p("`allocinfo_query` (tests/bench/allocinfo_query.c), per query: open /proc/allocinfo, "
      "select, close; the tags of one source file, and the tags of at least 1 MiB. The C core "
      "has no ioctls (ENOTTY). Last column: how many times the ioctl query is faster than "
      "this method, in the same boot of (c).")
    p()
    per_mode(p, boots, env, query_table)
    if any(b.results.get(("on", "sysrq-m")) for bb in boots.values() for b in bb.values()):
        p("## The OOM report's top users")
        p()
        p("`allocinfo_query sysrq m`: show_mem(), as the OOM killer and sysrq m print it, its "
          "lines kept off the console. Its last part lists the 10 largest call sites "
          "(`alloc_tag_top_users()`, which reads every tag's counters); 6.12 calls it with "
          "profiling off too, and lists nothing then.")
        p()
        per_mode(p, boots, env, showmem_table)
    p("What a line costs: the whole-file read (1 MiB buffer) over the number of tags, in (b) "
      "and (c); and, from the Rust module in (c), making one line as the Rust core did before "
      "commit 8431f41 (`fmt-line`: `writeln!` with `{:12} {:8}` and the tag's `Display`, whose "
      "`CStr`s are written a character at a time) and the same bytes copied (`bytes-line`), "
      "which is close to what it does now.")
    p()
    p(lines_table(boots))
    p()
    p("## Memory and size")
    p()
    p(memory_table(boots, build_dir))
    p()
    p("The profiling core's own objects:")
    p()
    p(core_table(build_dir))
    p()
    p("## What differs between the (b) and (c) builds")
    p()
    p(object_diff(build_dir))
    p()
    p("## Differential check: (b) against (c), same command line and initramfs")
    p()
    p(differential(boots))


if __name__ == "__main__":
    main()
