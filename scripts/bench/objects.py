# SPDX-License-Identifier: GPL-2.0
"""What the kernels of scripts/bench.sh cost in memory and code: vmlinux's sections
and symbols, the core's objects, and the objects the two cores share.
"""

import collections
import os
import re
import statistics
import subprocess

from boots import (
    KERNELS,
    PREFIX,
    SHORT,
    SIZEOF_ALLOC_TAG,
    SIZEOF_COUNTERS,
    after_boot,
    first_info,
    info_values,
    run,
    table,
)


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
        first = next(iter(sorted(after_boot(boots, k).items())), (None, None))[1]
        for line in first.info.get("dmesg", []) if first else []:
            m = re.search(r"allocated (\d+) bytes of page_ext", line)
            if m:
                put("page_ext (boot log)", k, int(m.group(1)))
        if n:
            put_range("tags in /proc/allocinfo after boot (count)", k,
                      [len(b.tags()) for _, b in sorted(after_boot(boots, k).items()) if b.allocinfo])
            put_range("sum of /proc/allocinfo bytes after boot", k,
                      [sum(t[1] for t in b.tags()) for _, b in sorted(after_boot(boots, k).items())
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
