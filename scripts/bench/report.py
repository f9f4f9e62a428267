#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the console logs of scripts/bench.sh into markdown tables.

Usage: scripts/bench/report.py OUT_DIR BUILD_DIR

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
LABEL = {"nop": "(a) no profiling", "c": "(b) C core", "rust": "(c) Rust core"}
SHORT = {"nop": "(a)", "c": "(b)", "rust": "(c)"}
ALLOC_TESTS = [
    "kmalloc-8", "kmalloc-16", "kmalloc-32", "kmalloc-64", "kmalloc-128",
    "kmalloc-256", "kmalloc-512", "kmalloc-1024", "kmalloc-2048", "kmalloc-4096",
    "kmem_cache-128", "pages-order0", "pages-order3", "vmalloc-16k",
    "c-krealloc-64", "rust-untagged-64", "rust-alloc_hooks-64",
]
READ_SIZES = ["1048576", "4096", "64"]
SIZEOF_ALLOC_TAG = 40       # struct alloc_tag: struct codetag (32) + counters pointer
SIZEOF_COUNTERS = 16        # struct alloc_tag_counters: bytes, calls

LOG_RE = re.compile(r"^boot-(nop|c|rust)-(tcg|icount)-r(\d+)\.log$")
RESULT_RE = re.compile(r"^alloctag-bench-result: kernel=(\S+) phase=(\S+) \S+: (.*)$")
INFO_RE = re.compile(r"^alloctag-bench-info: ([a-zA-Z_]+)=(.*)$")


class Boot:
    """What one boot printed."""

    def __init__(self, path):
        self.results = {}       # (phase, test) -> dict of fields
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
                    fields = dict(kv.split("=", 1) for kv in m.group(3).split() if "=" in kv)
                    if "test" in fields:
                        self.results[(m.group(2), fields["test"])] = fields
                    continue
                m = INFO_RE.match(line)
                if m:
                    self.info[m.group(1)].append(m.group(2))

    def ns(self, phase, test, field="ns_per_op"):
        r = self.results.get((phase, test))
        return float(r[field]) if r and field in r else None

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
                for test in ["rust-alloc_hooks-64", "rust-untagged-64"]:
                    rs = []
                    for r, b in sorted(boots[(k, mode)].items()):
                        x, y = b.ns(phase, test), b.ns(phase, "c-krealloc-64")
                        if x is not None and y:
                            rs.append(x / y)
                    row.append(spread(rs))
                rows.append(row)
    return table(["clock", "profiling", "kernel", "Rust `alloc_hooks!` / C call site",
                  "Rust untagged / C call site"], rows)


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
        row.append(spread(ratios(boots, mode, "rust", "c", "on", test, "ns_per_read")))
        rows.append(row)
    return table(["read buffer", "(b) lines", "(c) lines", "(b) ms per whole file",
                  "(c) ms per whole file", "(c)/(b)"], rows)


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def symbols(vmlinux, names):
    out = {}
    for line in run(["llvm-nm-19", vmlinux]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in names:
            out[parts[2]] = int(parts[0], 16)
    return out


def berkeley(path):
    """(text, data, bss) of an ELF file."""
    lines = run(["llvm-size-19", path]).splitlines()
    if len(lines) < 2:
        return None
    t, d, b = lines[1].split()[:3]
    return int(t), int(d), int(b)


def first_info(boots, kernel, key):
    for _, b in sorted(boots.get((kernel, "tcg"), {}).items()):
        if b.info.get(key):
            return b.info[key][0]
    return None


def info_values(boots, kernel, key):
    out = []
    for _, b in sorted(boots.get((kernel, "tcg"), {}).items()):
        for v in b.info.get(key, [])[:1]:
            try:
                out.append(float(v))
            except ValueError:
                pass
    return out


def memory_table(boots, build_dir):
    rows = collections.OrderedDict()
    for k in KERNELS:
        kb = os.path.join(build_dir, f"kernel-bench-{k}")
        vmlinux = os.path.join(kb, "vmlinux")
        size = berkeley(vmlinux)
        if size:
            rows.setdefault("vmlinux text (bytes)", {})[k] = size[0]
            rows.setdefault("vmlinux data (bytes)", {})[k] = size[1]
            rows.setdefault("vmlinux bss (bytes)", {})[k] = size[2]
            rows.setdefault("vmlinux text+data+bss (bytes)", {})[k] = sum(size)
        bz = os.path.join(kb, "arch/x86/boot/bzImage")
        if os.path.exists(bz):
            rows.setdefault("bzImage (bytes)", {})[k] = os.path.getsize(bz)
        sym = symbols(vmlinux, {"__start_alloc_tags", "__stop_alloc_tags",
                                "__per_cpu_start", "__per_cpu_end"})
        if "__start_alloc_tags" in sym:
            n = sym["__stop_alloc_tags"] - sym["__start_alloc_tags"]
            rows.setdefault("`alloc_tags` section (bytes)", {})[k] = n
            rows.setdefault("tags in vmlinux (section / 40)", {})[k] = n // SIZEOF_ALLOC_TAG
        else:
            rows.setdefault("`alloc_tags` section (bytes)", {})[k] = 0
            rows.setdefault("tags in vmlinux (section / 40)", {})[k] = 0
        if "__per_cpu_start" in sym:
            rows.setdefault("static per-CPU area, per CPU (bytes)", {})[k] = \
                sym["__per_cpu_end"] - sym["__per_cpu_start"]
        possible = first_info(boots, k, "cpus_possible") or ""
        m = re.match(r"^(\d+)(?:-(\d+))?$", possible)
        ncpu = (int(m.group(2) or m.group(1)) + 1) if m else None
        tags = info_values(boots, k, "allocinfo_tags")
        if tags:
            rows.setdefault("tags in /proc/allocinfo after boot", {})[k] = int(statistics.median(tags))
            if ncpu:
                rows.setdefault(f"tag counters, all possible CPUs ({ncpu}) (bytes)", {})[k] = \
                    int(statistics.median(tags)) * SIZEOF_COUNTERS * ncpu
        for key, label in [("MemTotal", "MemTotal (KiB)"), ("MemFree", "MemFree after boot (KiB)"),
                           ("Percpu", "Percpu (KiB)"), ("Slab", "Slab (KiB)"),
                           ("SUnreclaim", "SUnreclaim (KiB)")]:
            v = info_values(boots, k, f"meminfo_{key}")
            if v:
                rows.setdefault(label, {})[k] = int(statistics.median(v))
        used = [t - f for t, f in zip(info_values(boots, k, "meminfo_MemTotal"),
                                      info_values(boots, k, "meminfo_MemFree"))]
        if used:
            rows.setdefault("MemTotal − MemFree after boot (KiB, median)", {})[k] = int(statistics.median(used))
        first = next(iter(sorted(boots.get((k, "tcg"), {}).items())), (None, None))[1]
        for line in first.info.get("dmesg", []) if first else []:
            m = re.search(r"allocated (\d+) bytes of page_ext", line)
            if m:
                rows.setdefault("page_ext (bytes, from the boot log)", {})[k] = int(m.group(1))
    out = []
    for label, per in rows.items():
        row = [label] + [f"{per[k]:,}" if k in per else "-" for k in KERNELS]
        if "nop" in per and "c" in per:
            row.append(f"{per['c'] - per['nop']:+,}")
        else:
            row.append("-")
        if "c" in per and "rust" in per:
            row.append(f"{per['rust'] - per['c']:+,}")
        else:
            row.append("-")
        out.append(row)
    return table(["", "(a)", "(b)", "(c)", "(b) − (a)", "(c) − (b)"], out)


CORE_OBJECTS = {
    "c": ["lib/codetag.o", "lib/alloc_tag.o", "lib/alloctag/src/alloctag.o",
          "lib/alloctag/src/static_key.o"],
    "rust": ["lib/alloctag/src/alloctag.o", "lib/alloctag/src/glue.o",
             "lib/alloctag/src/static_key.o"],
}


def core_table(build_dir):
    rows = []
    for k, objs in CORE_OBJECTS.items():
        total = [0, 0, 0]
        for o in objs:
            s = berkeley(os.path.join(build_dir, f"kernel-bench-{k}", o))
            if s is None:
                continue
            total = [a + b for a, b in zip(total, s)]
            rows.append([SHORT[k], f"`{o}`", f"{s[0]:,}", f"{s[1]:,}", f"{s[2]:,}"])
        rows.append([SHORT[k], "**total**", f"{total[0]:,}", f"{total[1]:,}", f"{total[2]:,}"])
    return table(["kernel", "object", "text", "data", "bss"], rows)


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


def main():
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
    for k in ["date", "command", "commit", "host", "qemu", "kernel", "cmdline", "rounds",
              "icount", "icount_rounds"]:
        if k in env:
            p(f"- {k}: `{env[k]}`")
    for k in KERNELS:
        cs = first_info(boots, k, "clocksource")
        cpus = first_info(boots, k, "cpus_possible")
        p(f"- {LABEL[k]}: {len(boots.get((k, 'tcg'), {}))} TCG boots, "
          f"{len(boots.get((k, 'icount'), {}))} icount boots; clocksource {cs}, possible CPUs {cpus}")
    p()
    p("Ratios pair the boots of the same round (the three kernels boot in turn, in a rotating "
      "order); each cell is median [min–max] over the rounds. One op is one allocation and its "
      "free.")
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
    p("## Rust call site against C call site")
    p()
    p("Per kernel, the cost of a 64-byte `KBox` from Rust over the same allocation from a C "
      "call site (`krealloc(NULL, 64)`, row `c-krealloc-64`), in the same boot.")
    p()
    p(callsite_table(boots))
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
    p("## Memory and size")
    p()
    p(memory_table(boots, build_dir))
    p()
    p("The profiling core's own objects:")
    p()
    p(core_table(build_dir))
    p()
    p("## Differential check: (b) against (c), same command line and initramfs")
    p()
    p(differential(boots))


if __name__ == "__main__":
    main()
