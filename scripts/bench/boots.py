# SPDX-License-Identifier: GPL-2.0
"""The benchmark boots of scripts/bench.sh as data: the console logs parsed into
Boot objects, and the helpers every table uses (ratios, spreads, markdown tables).
"""

import collections
import os
import re
import statistics
import subprocess



KERNELS = ["nop", "c", "rust"]


LABEL = {"nop": "(a) no profiling", "c": "(b) C core", "rust": "(c) Rust core",
         "fault": "(d) Rust core with fault injection",
         "capture": "(e) Rust core with capture and waste accounting",
         "waste": "(e) booted with waste accounting's slots reserved",
         "pgflags": "(f) Rust core, page tags in page flags",
         "numanone": "(g) Rust core with capture on two NUMA nodes, per-node counting not built in",
         "numa": "(h) (g) with per-node counting built in, off",
         "numaon": "(i) (h) booted with alloctag.per_node=on"}


SHORT = {"nop": "(a)", "c": "(b)", "rust": "(c)", "fault": "(d)", "capture": "(e)",
         "waste": "(e+slots)", "pgflags": "(f)", "numanone": "(g)", "numa": "(h)",
         "numaon": "(i)"}


ALLOC_TESTS = [
    "kmalloc-8", "kmalloc-16", "kmalloc-32", "kmalloc-64", "kmalloc-128",
    "kmalloc-256", "kmalloc-512", "kmalloc-1024", "kmalloc-2048", "kmalloc-4096",
    "kmem_cache-128", "pages-order0", "pages-order3", "vmalloc-16k",
    "c-krealloc-64", "rust-plain-64", "rust-alloc_hooks-64",
]


READ_SIZES = ["1048576", "4096", "64"]


SIZEOF_ALLOC_TAG = 40       # struct alloc_tag: struct codetag (32) + counters pointer


SIZEOF_COUNTERS = 16        # struct alloc_tag_counters: bytes, calls


# BENCH_PREFIX=big- (scripts/bench.sh with BENCH_BIG=1) or cpus- (BENCH_CPUS=N):
# the kernels are kernel-bench-big-KERNEL, their logs
# boot-big-KERNEL-MODE-rROUND.log (cpus- alike).
PREFIX = os.environ.get("BENCH_PREFIX", "")


LOG_RE = re.compile(r"^boot-(?:big-|cpus-)?(nop|c|rust|fault|capture|waste|pgflags|numanone|numaon|numa)-(tcg|icount)-r(\d+)\.log$")


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


def paired(boots, mode, a, b, phase, test, combine, field="ns_per_op"):
    """combine(a's, b's) per round, pairing the boots of the same round; rounds where
    either has no figure, or combine gives None, are left out."""
    out = []
    for r, x in sorted(boots.get((a, mode), {}).items()):
        y = boots.get((b, mode), {}).get(r)
        if y is None:
            continue
        u, v = x.ns(phase, test, field), y.ns(phase, test, field)
        if u is not None and v is not None:
            c = combine(u, v)
            if c is not None:
                out.append(c)
    return out


def ratios(boots, mode, num, den, phase, test, field="ns_per_op"):
    """num/den per round, pairing the boots of the same round."""
    return paired(boots, mode, num, den, phase, test, lambda x, y: x / y if y else None, field)


def values(boots, mode, kernel, phase, test, field="ns_per_op"):
    return [b.ns(phase, test, field) for _, b in sorted(boots.get((kernel, mode), {}).items())]


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def after_boot(boots, kernel):
    """The boots whose state after boot the report shows: the TCG boots, or the -icount boots
    of a run without TCG rounds (BENCH_ROUNDS=0); what booting leaves is the same."""
    return boots.get((kernel, "tcg")) or boots.get((kernel, "icount"), {})


def first_info(boots, kernel, key):
    for _, b in sorted(after_boot(boots, kernel).items()):
        if b.info.get(key):
            return b.info[key][0]
    return None


def info_values(boots, kernel, key, mode=None):
    out = []
    bb = after_boot(boots, kernel) if mode is None else boots.get((kernel, mode), {})
    for _, b in sorted(bb.items()):
        for v in b.info.get(key, [])[:1]:
            try:
                out.append(float(v))
            except ValueError:
                pass
    return out


def same_boot(boots, mode, kernel, phase, test):
    """Per boot of `kernel`: `phase` over the idle phase ("on": profiling on, nothing else)."""
    return [b.ns(phase, test) / b.ns("on", test)
            for _, b in sorted(boots.get((kernel, mode), {}).items())
            if b.ns(phase, test) and b.ns("on", test)]
