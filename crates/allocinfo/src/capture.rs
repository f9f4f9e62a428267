//! How `allocinfo live` shows the kernel's live objects: a table of
//! objects, of stacks or of processes, or JSON (the `live` report's model
//! and parser are `allocinfo_format::capture`); [`control`] talks to the
//! files.

pub mod args;
pub mod control;
pub mod listing;

use allocinfo_format::capture::{Group, Object, Untracked};
use allocinfo_format::duration::age;
use serde_json::{Value, json};
use std::fmt::Write;

fn frames(out: &mut String, stack: &[String]) {
    for f in stack {
        let _ = writeln!(out, "    {f}");
    }
}

fn processes(g: &Group) -> String {
    let mut s: Vec<String> = g
        .processes
        .iter()
        .take(8)
        .map(|(t, c)| format!("{t}:{c}"))
        .collect();
    if g.processes.len() > 8 {
        s.push("...".to_owned());
    }
    s.join(",")
}

fn untracked_line(u: &Untracked) -> String {
    format!(
        "untracked (allocated before capture started, or dropped): {} objects, {} bytes; \
         dropped {}, busy {}\n",
        u.objects, u.bytes, u.dropped, u.busy
    )
}

/// The objects, oldest first, each with its stack.
pub fn objects_table(objects: &[&Object], u: &Untracked) -> String {
    let mut out = format!(
        "{:>9} {:>9} {:>7} {:>7} {:<16} SITE\n",
        "AGE", "BYTES", "PID", "TGID", "COMM"
    );
    for o in objects {
        let _ = writeln!(
            out,
            "{:>9} {:>9} {:>7} {:>7} {:<16} {}",
            age(o.age_ns),
            o.bytes,
            o.pid,
            o.tgid,
            allocinfo_output::printable(&o.comm),
            allocinfo_output::printable(&o.site)
        );
        frames(&mut out, &o.stack);
    }
    out.push_str(&untracked_line(u));
    out
}

/// The stacks, most bytes first, as slub's alloc_traces shows them.
pub fn stacks_table(groups: &[Group], u: &Untracked) -> String {
    let mut out = String::new();
    for g in groups {
        let _ = writeln!(
            out,
            "{} objects, {} bytes, age {}/{}/{} (min/avg/max), processes {}\n  {}",
            g.count,
            g.bytes,
            age(g.age_min),
            age(g.age_avg()),
            age(g.age_max),
            processes(g),
            g.site
        );
        frames(&mut out, &g.stack);
    }
    out.push_str(&untracked_line(u));
    out
}

/// The processes, most bytes first.
pub fn processes_table(groups: &[Group], u: &Untracked) -> String {
    let mut out = format!(
        "{:>7} {:<16} {:>9} {:>12}\n",
        "TGID", "COMM", "OBJECTS", "BYTES"
    );
    for g in groups {
        let (tgid, comm) = g.processes.first().cloned().unwrap_or_default();
        let comm = allocinfo_output::printable(&comm);
        let _ = writeln!(out, "{tgid:>7} {comm:<16} {:>9} {:>12}", g.count, g.bytes);
    }
    out.push_str(&untracked_line(u));
    out
}

fn object_json(o: &Object) -> Value {
    json!({
        "age_ns": o.age_ns, "bytes": o.bytes, "pid": o.pid, "tgid": o.tgid,
        "comm": o.comm, "cpu": o.cpu, "context": o.ctx, "gfp": o.gfp,
        "kind": o.kind, "object": o.object, "order": o.order,
        "site": o.site, "stack": o.stack,
    })
}

fn group_json(g: &Group) -> Value {
    json!({
        "count": g.count, "bytes": g.bytes,
        "age_min_ns": g.age_min, "age_avg_ns": g.age_avg(), "age_max_ns": g.age_max,
        "processes": g.processes.iter().map(|(t, c)| json!({"tgid": t, "comm": c})).collect::<Vec<_>>(),
        "site": g.site, "stack": g.stack,
    })
}

/// A report as JSON: `view` is `objects`, `stacks` or `processes`.
pub fn json(view: &str, objects: &[&Object], groups: &[Group], u: &Untracked) -> Value {
    let rows: Vec<Value> = if view == "objects" {
        objects.iter().map(|o| object_json(o)).collect()
    } else {
        groups.iter().map(group_json).collect()
    };
    json!({
        "view": view,
        view: rows,
        "untracked": {"objects": u.objects, "bytes": u.bytes, "dropped": u.dropped, "busy": u.busy},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocinfo_format::capture::{by_process, parse};

    const LIVE: &str = "\
object age_ns=3000000000 bytes=256 pid=7 tgid=7 comm=cat cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0xffff888001 site=lib/m.c:42 [m] func:f
  f+0x1a/0x40 [m]
  do_one_initcall+0x5c/0x2f0
object age_ns=1000000 bytes=4096 pid=9 tgid=8 comm=sh cpu=1 ctx=task gfp=0xcc0 kind=pages order=0 pfn=0x1234 site=lib/m.c:42 [m] func:f
  f+0x1a/0x40 [m]
  do_one_initcall+0x5c/0x2f0
object age_ns=2000000 bytes=256 pid=7 tgid=7 comm=cat cpu=0 ctx=hardirq gfp=0x820 kind=slab addr=0xffff888002 site=lib/m.c:50 [m] func:g
  g+0x10/0x20 [m]
untracked objects=2 bytes=512 dropped=1 busy=0
";

    #[test]
    fn processes_table_has_a_row_per_process() {
        let live = parse(LIVE).unwrap();
        let all: Vec<&Object> = live.objects.iter().collect();
        let procs = by_process(&all).unwrap();
        let table = processes_table(&procs, &live.untracked);
        assert!(
            table
                .lines()
                .nth(1)
                .unwrap()
                .contains("      8 sh                       1         4096")
        );
    }

    #[test]
    fn json_has_rows_and_untracked() {
        let live = parse(LIVE).unwrap();
        let all: Vec<&Object> = live.objects.iter().collect();
        let v = json("objects", &all, &[], &live.untracked);
        assert_eq!(v["objects"][0]["comm"], "cat");
        assert_eq!(v["objects"][0]["stack"][0], "f+0x1a/0x40 [m]");
        assert_eq!(v["untracked"]["objects"], 2);
        let v = json(
            "processes",
            &all,
            &by_process(&all).unwrap(),
            &live.untracked,
        );
        assert_eq!(v["processes"][0]["processes"][0]["tgid"], 8);
    }
}
