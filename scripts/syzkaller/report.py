#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The figures of a syz-manager run of scripts/syzkaller.sh, as markdown.

Usage: scripts/syzkaller/report.py OUT WORKDIR [KERNEL_SRC]

OUT is $BUILD_DIR/syzkaller: manager.log (the manager's log, whose periodic
line "VMs N, executed N, cover N, signal N/N, crashes N, repro N, ..." gives
the figures) and funccover.csv (its /funccover page: Module, Filename,
Function, Covered PCs, Total PCs, taken before it stopped). WORKDIR is the
manager's: corpus.db and crashes/*/ (description, log, report, repro).
KERNEL_SRC's mm/Makefile says which allocator files KCOV leaves out.
"""

import csv
import os
import re
import sys

STATS_RE = re.compile(r"VMs (\d+), executed (\d+), cover (\d+), signal (\d+)/(\d+), "
                      r"crashes (\d+), repro (\d+)")

# What alloctag adds or hooks in C, which KCOV measures: its C glue, the
# patched allocators' hooks, and the headers' inline hooks (their PCs are
# in the callers' files, under the function they were inlined into).
GLUE = re.compile(r"^lib/alloctag/")
HOOKS = re.compile(r"alloc_tag|alloctag|pgalloc_tag|codetag|allocinfo|mem_profiling|pcpu_alloc_tag")


def kcov_excluded(src):
    """The objects of mm/ built without KCOV (KCOV_INSTRUMENT_x.o := n)."""
    try:
        text = open(os.path.join(src, "mm", "Makefile")).read()
    except OSError:
        return []
    return re.findall(r"^KCOV_INSTRUMENT_(\S+)\.o\s*:=\s*n", text, re.M)


def stats(log):
    """The manager's last line of figures (its match, and the line)."""
    last = line_last = None
    with open(log, errors="replace") as f:
        for line in f:
            m = STATS_RE.search(line)
            if m:
                last, line_last = m, line
    return last, line_last


def coverage(path):
    rows = []
    try:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                rows.append((row["Filename"], row["Function"], int(row["Covered PCs"]),
                             int(row["Total PCs"])))
    except (OSError, KeyError, ValueError):
        pass
    return rows


def crashes(workdir):
    out = []
    d = os.path.join(workdir, "crashes")
    for h in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        p = os.path.join(d, h)
        try:
            desc = open(os.path.join(p, "description"), errors="replace").read().strip()
        except OSError:
            desc = "(no description)"
        files = sorted(os.listdir(p))
        logs = sum(1 for f in files if f.startswith("log"))
        repro = [f for f in files if f.startswith("repro")]
        out.append((desc, h, logs, repro))
    return out


def main():
    out_dir, workdir = sys.argv[1], sys.argv[2]
    p = print
    p("# syzkaller on alloctag")
    p()
    last, line = stats(os.path.join(out_dir, "manager.log"))
    if last is None:
        p("The manager's log has no figures: no VM ran the fuzzer.")
    else:
        vms, executed, cover, signal, max_signal, n_crashes, repro = last.groups()
        p(f"- Last figures of the manager: {executed} programs executed, coverage {cover} "
          f"PCs (the corpus), signal {signal}/{max_signal}, {n_crashes} crashes, {vms} VMs "
          f"fuzzing at the end.")
        p(f"- The line: `{line.strip()}`")
    try:
        corpus = os.path.getsize(os.path.join(workdir, "corpus.db"))
        p(f"- corpus.db: {corpus} bytes")
    except OSError:
        pass
    p()
    rows = coverage(os.path.join(out_dir, "funccover.csv"))
    p("## Coverage of what alloctag adds in C (KCOV, PCs covered/total)")
    p()
    if not rows:
        p("No per-function coverage (funccover.csv missing or empty).")
    else:
        glue = [r for r in rows if GLUE.search(r[0])]
        hooks = [r for r in rows if not GLUE.search(r[0]) and HOOKS.search(r[1])]
        for title, sel in (("alloctag's C glue (lib/alloctag/)", glue),
                           ("functions named for allocation tags elsewhere (mm/, lib/, fs/proc/)", hooks)):
            cov = sum(r[2] for r in sel)
            tot = sum(r[3] for r in sel)
            p(f"### {title}: {cov}/{tot} PCs, {sum(1 for r in sel if r[2])}/{len(sel)} functions reached")
            p()
            p("| file | function | covered | total |")
            p("|---|---|---|---|")
            for r in sorted(sel):
                p(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} |")
            p()
        excluded = kcov_excluded(sys.argv[3]) if len(sys.argv) > 3 else []
        if excluded:
            p("Not measured: mm/'s " + ", ".join(f"{o}.c" for o in excluded) + " are built "
              "without KCOV (mm/Makefile), so the allocation hooks inlined there (slab, page "
              "allocator) have no PCs; nor has alloctag's Rust, which 6.12 does not instrument.")
            p()
        tot_c = sum(r[2] for r in rows)
        tot_t = sum(r[3] for r in rows)
        p(f"The whole kernel: {tot_c}/{tot_t} PCs.")
        p()
    p("## Crashes")
    p()
    cs = crashes(workdir)
    if not cs:
        p("None.")
    for desc, h, logs, repro in cs:
        p(f"- `{desc}` ({workdir}/crashes/{h}: {logs} logs; reproducer: {', '.join(repro) or 'none'})")


if __name__ == "__main__":
    main()
