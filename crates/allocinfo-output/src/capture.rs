//! How `allocinfo live` shows the kernel's live objects
//! (`allocinfo_format::capture`): a table of objects, of stacks or of
//! processes, or JSON; and `capture list --json`'s object.

use allocinfo_format::capture::listing::Listing;
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
            crate::printable(&o.comm),
            crate::printable(&o.site)
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
        let comm = crate::printable(&comm);
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

/// The listing as one JSON object: `pool` (or null), `selections`, each
/// with its `sites`.
pub fn listing_json(l: &Listing) -> Value {
    let selections: Vec<Value> = l
        .selections
        .iter()
        .map(|s| {
            let sites: Vec<Value> = l
                .sites
                .iter()
                .filter(|site| site.selection == s.id)
                .map(|site| {
                    json!({
                        "file": site.file, "line": site.line, "module": site.module,
                        "function": site.function, "live": site.live,
                        "live_bytes": site.live_bytes, "untracked": site.untracked,
                        "untracked_bytes": site.untracked_bytes,
                    })
                })
                .collect();
            json!({"id": s.id, "select": s.select, "unmarked": s.unmarked, "sites": sites})
        })
        .collect();
    let pool = l.pool.map(|p| {
        json!({"limit": p.limit, "size": p.size, "used": p.used,
               "dropped": p.dropped, "busy": p.busy})
    });
    json!({"pool": pool, "selections": selections})
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocinfo_format::capture::{by_process, listing, parse};

    const LIVE: &str = include_str!("../../allocinfo-format/tests/data/debugfs/live.txt");
    const LISTING: &str =
        include_str!("../../allocinfo-format/tests/data/debugfs/capture-listing.txt");

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

    #[test]
    fn json_has_the_pool_and_each_selection_with_its_sites() {
        let l = listing::parse(LISTING).unwrap();
        let v = listing_json(&l);
        assert_eq!(v["pool"]["dropped"], 1);
        assert_eq!(v["selections"][0]["sites"][0]["live_bytes"], 2560);
        assert_eq!(v["selections"][1]["sites"], json!([]));
        assert_eq!(
            listing_json(&listing::parse("").unwrap()),
            json!({"pool": null, "selections": []})
        );
    }
}
