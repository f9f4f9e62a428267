#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the console logs of scripts/bench.sh into markdown tables.

Usage: scripts/bench/report.py [--fault|--capture|--pgflags] OUT_DIR BUILD_DIR

With --fault (scripts/bench.sh with BENCH_FAULT=1) it prints only the
fault-injection table: kernel (d) against (c), and (d) with rules armed. With
--pgflags (BENCH_PGFLAGS=1), the tables of (a), (c) and (f), kernel (c) booted
with page tags in page flags.

OUT_DIR holds the console logs boot-KERNEL-MODE-rROUND.log (KERNEL: nop, c,
rust; MODE: tcg, icount) and run.env (what bench.sh ran). BUILD_DIR holds the
kernel builds kernel-bench-KERNEL, whose vmlinux and objects are measured.
Prints the tables on stdout; see Documentation/benchmarks.rst for what each
figure means.
"""

import collections
import os
import re
import statistics
import subprocess
import sys

KERNELS = ["nop", "c", "rust"]
LABEL = {"nop": "(a) no profiling", "c": "(b) C core", "rust": "(c) Rust core",
         "fault": "(d) Rust core with fault injection",
         "capture": "(e) Rust core with capture and waste accounting",
         "waste": "(e) booted with waste accounting's slots reserved",
         "pgflags": "(f) Rust core, page tags in page flags"}
SHORT = {"nop": "(a)", "c": "(b)", "rust": "(c)", "fault": "(d)", "capture": "(e)",
         "waste": "(e+slots)", "pgflags": "(f)"}
ALLOC_TESTS = [
    "kmalloc-8", "kmalloc-16", "kmalloc-32", "kmalloc-64", "kmalloc-128",
    "kmalloc-256", "kmalloc-512", "kmalloc-1024", "kmalloc-2048", "kmalloc-4096",
    "kmem_cache-128", "pages-order0", "pages-order3", "vmalloc-16k",
    "c-krealloc-64", "rust-plain-64", "rust-alloc_hooks-64",
]
READ_SIZES = ["1048576", "4096", "64"]
SIZEOF_ALLOC_TAG = 40       # struct alloc_tag: struct codetag (32) + counters pointer
SIZEOF_COUNTERS = 16        # struct alloc_tag_counters: bytes, calls

# BENCH_PREFIX=big- (scripts/bench.sh with BENCH_BIG=1): the kernels are
# kernel-bench-big-KERNEL, their logs boot-big-KERNEL-MODE-rROUND.log.
PREFIX = os.environ.get("BENCH_PREFIX", "")
LOG_RE = re.compile(r"^boot-(?:big-)?(nop|c|rust|fault|capture|waste|pgflags)-(tcg|icount)-r(\d+)\.log$")
RESULT_RE = re.compile(r"^alloctag-bench-result: kernel=(\S+) phase=(\S+) pass=(\d+) \S+: (.*)$")
INFO_RE = re.compile(r"^alloctag-bench-info: ([a-zA-Z_]+)=(.*)$")


class Boot:
    """What one boot printed."""

    def __init__(self, path):
        self.results = {}       # (phase, test) -> dict of fields of the first pass
        self.passes = collections.defaultdict(list)  # (phase, test) -> [fields of each pass]
        self.info = collections.defaultdict(list)
        self.allocinfo = []     # lines of /proc/allocinfo after boot
        inside = False
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if line == "alloctag-bench-allocinfo-begin":
                    inside = True
                    continue
                if line == "alloctag-bench-allocinfo-end":
                    inside = False
                    continue
                if inside:
                    self.allocinfo.append(line)
                    continue
                m = RESULT_RE.match(line)
                if m:
                    fields = dict(kv.split("=", 1) for kv in m.group(4).split() if "=" in kv)
                    if "test" in fields:
                        self.results.setdefault((m.group(2), fields["test"]), fields)
                        self.passes[(m.group(2), fields["test"])].append(fields)
                    continue
                m = INFO_RE.match(line)
                if m:
                    self.info[m.group(1)].append(m.group(2))

    def ns(self, phase, test, field="ns_per_op"):
        """The median over the boot's passes."""
        v = [float(r[field]) for r in self.passes.get((phase, test), []) if field in r]
        return statistics.median(v) if v else None

    def tags(self):
        """The tags of the allocinfo dump: (key, bytes, calls), key = 'file:line [module] func:name'."""
        out = []
        for line in self.allocinfo:
            if line.startswith("allocinfo") or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                continue
            try:
                out.append((parts[2].strip(), int(parts[0]), int(parts[1])))
            except ValueError:
                pass
        return out


def load(out_dir):
    boots = collections.defaultdict(dict)  # (kernel, mode) -> {round: Boot}
    for name in sorted(os.listdir(out_dir)):
        m = LOG_RE.match(name)
        if m:
            boots[(m.group(1), m.group(2))][int(m.group(3))] = Boot(os.path.join(out_dir, name))
    return boots


def fmt(x, digits=3):
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}f}" if digits else f"{x:.0f}"


def spread(values, digits=3):
    """'median [min–max]' of a list, or the single value."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if len(values) == 1 or min(values) == max(values):
        return fmt(values[0], digits) + ("" if len(values) == 1 else " (all equal)")
    return f"{fmt(statistics.median(values), digits)} [{fmt(min(values), digits)}–{fmt(max(values), digits)}]"


def ratios(boots, mode, num, den, phase, test, field="ns_per_op"):
    """num/den per round, pairing the boots of the same round."""
    out = []
    for r, b in sorted(boots.get((num, mode), {}).items()):
        d = boots.get((den, mode), {}).get(r)
        if d is None:
            continue
        x, y = b.ns(phase, test, field), d.ns(phase, test, field)
        if x is not None and y:
            out.append(x / y)
    return out


def values(boots, mode, kernel, phase, test, field="ns_per_op"):
    return [b.ns(phase, test, field) for _, b in sorted(boots.get((kernel, mode), {}).items())]


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


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


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def nm(path):
    """{name: (address, size)} of the defined symbols of an ELF file, and [(address, size, type)]."""
    names, syms = {}, []
    for line in run(["llvm-nm-19", "-S", "--defined-only", path]).splitlines():
        parts = line.split()
        try:
            if len(parts) == 4:
                addr, size, typ, name = int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]
            elif len(parts) == 3:
                addr, size, typ, name = int(parts[0], 16), 0, parts[1], parts[2]
            else:
                continue
        except ValueError:
            continue
        names[name] = (addr, size)
        syms.append((addr, size, typ))
    return names, syms


def sections(path):
    """{section: size} of an ELF file."""
    out = {}
    for line in run(["llvm-size-19", "-A", path]).splitlines()[2:]:
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def first_info(boots, kernel, key):
    for _, b in sorted(boots.get((kernel, "tcg"), {}).items()):
        if b.info.get(key):
            return b.info[key][0]
    return None


def info_values(boots, kernel, key, mode="tcg"):
    out = []
    for _, b in sorted(boots.get((kernel, mode), {}).items()):
        for v in b.info.get(key, [])[:1]:
            try:
                out.append(float(v))
            except ValueError:
                pass
    return out


def memory_table(boots, build_dir):
    rows = collections.OrderedDict()   # label -> {kernel: value or (median, min, max)}

    def put(label, k, v):
        rows.setdefault(label, {})[k] = v

    def put_range(label, k, vs):
        vs = [v for v in vs if v is not None]
        if vs:
            put(label, k, (statistics.median(vs), min(vs), max(vs)))

    for k in KERNELS:
        kb = os.path.join(build_dir, f"kernel-bench-{PREFIX}{k}")
        vmlinux = os.path.join(kb, "vmlinux")
        names, syms = nm(vmlinux)

        def span(a, b):
            return names[b][0] - names[a][0] if a in names and b in names else None

        if "_stext" in names and "_etext" in names:
            lo, hi = names["_stext"][0], names["_etext"][0]
            put("vmlinux functions in .text (sum of sizes)", k,
                sum(sz for addr, sz, typ in syms if typ in "tTwW" and lo <= addr < hi))
        for label, a, b in [("vmlinux .rodata", "__start_rodata", "__end_rodata"),
                            ("vmlinux .data", "_sdata", "_edata"),
                            ("vmlinux init sections (freed after boot)", "__init_begin", "__init_end"),
                            ("vmlinux .bss", "__bss_start", "__bss_stop"),
                            ("static per-CPU area, per CPU", "__per_cpu_start", "__per_cpu_end")]:
            v = span(a, b)
            if v is not None:
                put(label, k, v)
        bz = os.path.join(kb, "arch/x86/boot/bzImage")
        if os.path.exists(bz):
            put("bzImage", k, os.path.getsize(bz))
        n = span("__start_alloc_tags", "__stop_alloc_tags") or 0
        put("`alloc_tags` section", k, n)
        possible = first_info(boots, k, "cpus_possible") or ""
        m = re.match(r"^(\d+)(?:-(\d+))?$", possible)
        ncpu = (int(m.group(2) or m.group(1)) + 1) if m else None
        if n and ncpu:
            put(f"their counters, {ncpu} possible CPUs ({SIZEOF_COUNTERS} bytes per tag per CPU)", k,
                n // SIZEOF_ALLOC_TAG * SIZEOF_COUNTERS * ncpu)
        first = next(iter(sorted(boots.get((k, "tcg"), {}).items())), (None, None))[1]
        for line in first.info.get("dmesg", []) if first else []:
            m = re.search(r"allocated (\d+) bytes of page_ext", line)
            if m:
                put("page_ext (boot log)", k, int(m.group(1)))
        if n:
            put_range("tags in /proc/allocinfo after boot (count)", k,
                      [len(b.tags()) for _, b in sorted(boots.get((k, "tcg"), {}).items()) if b.allocinfo])
            put_range("sum of /proc/allocinfo bytes after boot", k,
                      [sum(t[1] for t in b.tags()) for _, b in sorted(boots.get((k, "tcg"), {}).items())
                       if b.allocinfo])
        used = [(t - f) * 1024 for t, f in zip(info_values(boots, k, "meminfo_MemTotal"),
                                              info_values(boots, k, "meminfo_MemFree"))]
        put_range("MemTotal − MemFree after boot", k, used)
        for key in ["MemTotal", "Slab", "SUnreclaim", "Percpu", "PageTables", "KernelStack"]:
            put_range(f"meminfo {key} after boot", k,
                      [v * 1024 for v in info_values(boots, k, f"meminfo_{key}")])

    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, tuple):
            med, lo, hi = v
            return f"{med:,.0f}" if lo == hi else f"{med:,.0f} [{lo:,.0f}–{hi:,.0f}]"
        return f"{v:,}"

    def delta(a, b):
        if a is None or b is None:
            return "-"
        a = a[0] if isinstance(a, tuple) else a
        b = b[0] if isinstance(b, tuple) else b
        return f"{b - a:+,.0f}"

    out = []
    for label, per in rows.items():
        out.append([label] + [cell(per.get(k)) for k in KERNELS] +
                   [delta(per.get("nop"), per.get("c")), delta(per.get("c"), per.get("rust"))])
    return table(["bytes", "(a)", "(b)", "(c)", "(b) − (a)", "(c) − (b)"], out)


CORE_OBJECTS = {
    "c": ["lib/codetag.o", "lib/alloc_tag.o", "lib/alloctag/src/alloctag.o",
          "lib/alloctag/src/static_key.o"],
    "rust": ["lib/alloctag/src/alloctag.o", "lib/alloctag/src/glue.o",
             "lib/alloctag/src/static_key.o"],
}
CORE_COLUMNS = [
    ("code", lambda n: n.startswith(".text")),
    ("init code", lambda n: n in (".init.text", ".exit.text")),
    ("read-only data", lambda n: n.startswith(".rodata")),
    ("data", lambda n: n.startswith(".data") or n in ("alloc_tags", ".init.data", ".init.setup",
                                                        ".init.rodata")),
    ("bss", lambda n: n == ".bss"),
    ("ORC unwind", lambda n: n.startswith(".orc_unwind")),
]


def core_table(build_dir):
    rows = []
    for k, objs in CORE_OBJECTS.items():
        total = [0] * len(CORE_COLUMNS)
        for o in objs:
            secs = sections(os.path.join(build_dir, f"kernel-bench-{PREFIX}{k}", o))
            if not secs:
                continue
            v = [sum(sz for n, sz in secs.items() if pred(n)) for _, pred in CORE_COLUMNS]
            total = [a + b for a, b in zip(total, v)]
            rows.append([SHORT[k], f"`{o}`"] + [f"{x:,}" for x in v])
        rows.append([SHORT[k], "**total**"] + [f"{x:,}" for x in total])
    return table(["kernel", "object"] + [c for c, _ in CORE_COLUMNS], rows)


def object_diff(build_dir):
    """The objects linked into vmlinux (vmlinux.a) that differ between (b) and (c)."""
    import filecmp
    bdir = os.path.join(build_dir, f"kernel-bench-{PREFIX}c")
    cdir = os.path.join(build_dir, f"kernel-bench-{PREFIX}rust")

    def objects(root):
        try:
            out = subprocess.run(["llvm-ar-19", "t", "vmlinux.a"], cwd=root, capture_output=True,
                                 text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return set()
        return set(out.split())

    ob, oc = objects(bdir), objects(cdir)
    if not ob or not oc:
        return "(builds missing)"
    same, differ = 0, []
    for o in sorted(ob & oc):
        if filecmp.cmp(os.path.join(bdir, o), os.path.join(cdir, o), shallow=False):
            same += 1
        else:
            differ.append(o)
    hot = ["mm/slub.o", "mm/slab_common.o", "mm/page_alloc.o", "mm/vmalloc.o", "mm/util.o",
           "mm/page_ext.o", "rust/helpers/helpers.o", "rust/kernel.o"]
    lines = [f"Objects linked into vmlinux (vmlinux.a): (b) {len(ob)}, (c) {len(oc)}; in both "
             f"{same + len(differ)}, of which byte-identical {same}. The allocators and the Rust "
             f"kernel crate: " +
             ", ".join(f"`{o}` {'identical' if o in ob & oc and o not in differ else 'DIFFERS'}"
                       for o in hot) + "."]
    lines.append("")
    lines.append(f"Only in (b): {', '.join(f'`{o}`' for o in sorted(ob - oc)) or 'none'}. "
                 f"Only in (c): {', '.join(f'`{o}`' for o in sorted(oc - ob)) or 'none'}. "
                 f"In both but different: {', '.join(f'`{o}`' for o in differ) or 'none'}.")
    return "\n".join(lines)


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


def same_boot(boots, mode, kernel, phase, test):
    """Per boot of `kernel`: `phase` over the idle phase ("on": profiling on, nothing else)."""
    return [b.ns(phase, test) / b.ns("on", test)
            for _, b in sorted(boots.get((kernel, mode), {}).items())
            if b.ns(phase, test) and b.ns("on", test)]


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


def main():
    if sys.argv[1] == "--pgflags":
        pgflags_main(sys.argv[2])
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
    for mode in ["tcg", "icount"]:
        if any(boots.get((k, mode)) for k in KERNELS):
            p("TCG:" if mode == "tcg" else f"-icount {env.get('icount', '')}:")
            p()
            p(uread_table(boots, mode))
            p()
    p("## Selecting tags: the ioctls against the text")
    p()
    p("`allocinfo_query` (tests/bench/allocinfo_query.c), per query: open /proc/allocinfo, "
      "select, close; the tags of one source file, and the tags of at least 1 MiB. The C core "
      "has no ioctls (ENOTTY). Last column: how many times the ioctl query is faster than "
      "this method, in the same boot of (c).")
    p()
    for mode in ["tcg", "icount"]:
        if any(boots.get((k, mode)) for k in KERNELS):
            p("TCG:" if mode == "tcg" else f"-icount {env.get('icount', '')}:")
            p()
            p(query_table(boots, mode))
            p()
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
