# SPDX-License-Identifier: GPL-2.0
"""The floor table: each -icount row against the instructions profiling cannot do without
(scripts/bench/floors.toml), for (c) with profiling off and on and (f), page tags in page flags.
"""

import os
import statistics
import tomllib

from boots import ALLOC_TESTS, table, values

FLOORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "floors.toml")

# (state, the kernel measured, its phase; (a)'s phase)
STATES = [("off", "rust", "off", "off"), ("on", "rust", "on", "on"),
          ("compressed", "pgflags", "on", "on")]

FIELD = "pair_ns"

GAP_EXPLAINED = 10

# (a)'s two phases run the same code: where they differ by more, the row moves with the state
# the allocator is left in (vmalloc's lazy purge), and a gap read from it means nothing.
A_STABLE = 3


def load_floors(path=FLOORS):
    with open(path, "rb") as f:
        return tomllib.load(f)


def count(floors, pieces):
    """The instructions of a list of "NAME" or "NAME*k", and the pieces summed per name."""
    total, named = 0, {}
    for p in pieces:
        name, _, k = p.partition("*")
        k = int(k or 1)
        if name not in floors["piece"]:
            raise SystemExit(f"floors.toml: unknown piece {name}")
        total += k * floors["piece"][name]["n"]
        named[name] = named.get(name, 0) + k
    return total, named


def pieces_of(row, state):
    """A row group's pieces in a state; compressed is as on where page tags play no part."""
    return row.get(state, row["on"]) if state == "compressed" else row[state]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def floor_rows(boots, floors):
    """(test, state, (a), floor, ours, gap, group) for every test and state measured."""
    group_of = {t: g for g, row in floors["row"].items() for t in row["tests"]}
    out = []
    for test in ALLOC_TESTS:
        group = group_of.get(test)
        if group is None:
            raise SystemExit(f"floors.toml: no row for {test}")
        for state, kernel, phase, a_phase in STATES:
            a = med(values(boots, "icount", "nop", a_phase, test, FIELD))
            ours = med(values(boots, "icount", kernel, phase, test, FIELD))
            if a is None or ours is None:
                continue
            extra, _ = count(floors, pieces_of(floors["row"][group], state))
            floor = a + extra
            out.append((test, state, a, floor, ours, ours - floor, group))
    return out


def next_step(floors, test, group, state):
    nxt = floors.get("next", {})
    for s in (state, "on") if state == "compressed" else (state,):
        text = nxt.get(test, {}).get(s) or nxt.get(group, {}).get(s)
        if text:
            return text
    return None


def floor_table(boots, floors=None):
    floors = floors or load_floors()
    rows, notes = [], []
    for test, state, a, floor, ours, gap, group in floor_rows(boots, floors):
        step = "-"
        a_phases = [med(values(boots, "icount", "nop", ph, test, FIELD)) for ph in ("on", "off")]
        if None not in a_phases and abs(a_phases[0] - a_phases[1]) > A_STABLE:
            rows.append([f"`{test}`", state, f"{a:,.0f}", f"{floor:,.0f} (+{floor - a:.0f})",
                         f"{ours:,.0f}", "not read",
                         f"(a) {a_phases[1]:,.0f} and {a_phases[0]:,.0f} in one boot"])
            continue
        if gap > GAP_EXPLAINED:
            text = next_step(floors, test, group, state)
            if text:
                if text not in [n[2] for n in notes]:
                    notes.append((group, state, text))
                step = f"[{[n[2] for n in notes].index(text) + 1}]"
            else:
                step = "**none written**"
        rows.append([f"`{test}`", state, f"{a:,.0f}", f"{floor:,.0f} (+{floor - a:.0f})",
                     f"{ours:,.0f} (+{ours - a:.0f})", f"{gap:+.0f}", step])
    out = [table(["test", "state", "(a)", "floor", "ours", "gap", "next step"], rows)]
    out.append("")
    for i, (group, state, text) in enumerate(notes, 1):
        out.append(f"[{i}] {group}, {state}: {text}")
    out.append("")
    out.append("The floors' pieces, per row group and state (instructions):")
    out.append("")
    prow = []
    for group, row in floors["row"].items():
        for state, _, _, _ in STATES:
            total, named = count(floors, pieces_of(row, state))
            parts = ", ".join(f"{n}" + (f"×{k}" if k > 1 else "") for n, k in named.items())
            prow.append([group, state, str(total), parts])
    out.append(table(["rows", "state", "over (a)", "pieces"], prow))
    out.append("")
    out.append(table(["piece", "instructions", "what"],
                     [[f"`{n}`", str(p["n"]), p["what"]] for n, p in floors["piece"].items()]))
    return "\n".join(out)


def twin_table(boots):
    """The Rust rows against their C twin (c-krealloc-64), instructions over (a), off."""
    rows = []
    c = [med(values(boots, "icount", k, "off", "c-krealloc-64", FIELD)) for k in ("nop", "rust")]
    for test in ("rust-plain-64", "rust-alloc_hooks-64"):
        r = [med(values(boots, "icount", k, "off", test, FIELD)) for k in ("nop", "rust")]
        if None in c or None in r:
            continue
        dc, dr = c[1] - c[0], r[1] - r[0]
        rows.append([f"`{test}`", f"+{dr:.0f}", f"+{dc:.0f}", f"{dr - dc:+.0f}"])
    return table(["test", "Rust row over (a)", "`c-krealloc-64` over (a)", "difference"], rows)
