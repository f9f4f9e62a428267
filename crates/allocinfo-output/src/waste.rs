//! `allocinfo waste`'s outputs: the table for people, the JSON document,
//! CSV rows, and the Prometheus families that `waste --prometheus` prints
//! and `metrics` exports.

use crate::prometheus::Family;
use allocinfo_format::duration::age;
use allocinfo_format::size::format_iec_u64;
use allocinfo_format::waste::{Totals, Waste, WasteSite, share};
use allocinfo_report::BUILTIN_MODULE;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// CSV with a header row, one row per site shown.
pub fn csv(rows: &[&WasteSite]) -> String {
    let field = |s: &str| {
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_owned()
        }
    };
    let mut out = String::from(
        "file,line,module,function,bytes,requested,slack,ratio,allocs,frees,untracked,accurate\n",
    );
    for s in rows {
        let t = &s.tag;
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n",
            field(&t.file),
            t.line,
            field(t.module.as_deref().unwrap_or(BUILTIN_MODULE)),
            field(&t.function),
            s.counts.bytes,
            s.counts.requested,
            s.counts.slack,
            rounded(s.ratio()),
            s.counts.allocs,
            s.counts.frees,
            s.counts.untracked,
            t.is_accurate()
        ));
    }
    out
}

/// The families of the sites given (identical call sites merged, so no
/// series appears twice) and whether the accounting is on.
pub fn families(waste: &Waste, rows: &[&WasteSite]) -> Vec<Family> {
    let mut sums: BTreeMap<(String, String, String, String), [u64; 6]> = BTreeMap::new();
    for s in rows {
        let t = &s.tag;
        let key = (
            t.file.clone(),
            t.line.to_string(),
            t.module
                .clone()
                .unwrap_or_else(|| BUILTIN_MODULE.to_owned()),
            t.function.clone(),
        );
        let e = sums.entry(key).or_default();
        for (sum, v) in e.iter_mut().zip([
            s.counts.bytes,
            s.counts.requested,
            s.counts.slack,
            s.counts.untracked,
            s.counts.allocs,
            s.counts.frees,
        ]) {
            *sum = sum.saturating_add(v);
        }
    }
    let mut families = [
        (
            "allocinfo_waste_bytes",
            "gauge",
            "Bytes allocated at the call site, counted while waste accounting was on.",
        ),
        (
            "allocinfo_waste_requested_bytes",
            "gauge",
            "Bytes the call site's callers asked for.",
        ),
        (
            "allocinfo_waste_slack_bytes",
            "gauge",
            "Bytes allocated beyond those requested (slack).",
        ),
        (
            "allocinfo_waste_untracked_bytes",
            "gauge",
            "Bytes /proc/allocinfo counts that the waste accounting does not.",
        ),
        (
            "allocinfo_waste_allocs_total",
            "counter",
            "Allocations counted since the accounting was turned on.",
        ),
        (
            "allocinfo_waste_frees_total",
            "counter",
            "Frees counted since the accounting was turned on.",
        ),
    ]
    .map(|(name, kind, help)| Family::new(name, kind, help));
    for ((file, line, module, function), values) in &sums {
        let labels = [
            ("file", file.as_str()),
            ("line", line.as_str()),
            ("module", module.as_str()),
            ("function", function.as_str()),
        ];
        for (family, v) in families.iter_mut().zip(values) {
            family.add(&labels, *v);
        }
    }
    let mut on = Family::new(
        "allocinfo_waste_accounting_on",
        "gauge",
        "1 while the kernel's waste accounting is on, 0 when off (the figures frozen).",
    );
    on.add(&[], u64::from(waste.on));
    let mut out: Vec<Family> = families.into_iter().collect();
    out.push(on);
    out
}

/// `waste --prometheus`: the families as text.
pub fn prometheus(waste: &Waste, rows: &[&WasteSite]) -> String {
    let mut out = String::new();
    families(waste, rows).iter().for_each(|f| f.write(&mut out));
    out
}

/// The schema of `waste --json`, as top's is allocinfo-report/1.
pub const SCHEMA: &str = "allocinfo-waste/1";

/// The JSON document: the header's figures, the sites shown and the
/// totals over all sites.
pub fn json(waste: &Waste, t: &Totals, rows: &[&WasteSite], slab: Option<u64>) -> Value {
    let sites: Vec<Value> = rows
        .iter()
        .map(|s| {
            let extra: serde_json::Map<String, Value> = s
                .tag
                .extra
                .iter()
                .filter(|(k, _)| k != "accurate")
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect();
            json!({
                "site": format!("{}:{}", s.tag.file, s.tag.line),
                "function": s.tag.function,
                "module": s.tag.module,
                "bytes": s.counts.bytes,
                "requested": s.counts.requested,
                "slack": s.counts.slack,
                "ratio": rounded(s.ratio()),
                "allocs": s.counts.allocs,
                "frees": s.counts.frees,
                "untracked": s.counts.untracked,
                "accurate": s.tag.is_accurate(),
                "extra": extra,
            })
        })
        .collect();
    json!({
        "schema": SCHEMA,
        "version": waste.version.to_string(),
        "state": waste.state(),
        "since_ns": waste.since_ns,
        "now_ns": waste.now_ns,
        "sites": sites,
        "totals": {
            "sites": t.sites,
            "bytes": t.counts.bytes,
            "requested": t.counts.requested,
            "slack": t.counts.slack,
            "ratio": rounded(t.counts.ratio()),
            "allocs": t.counts.allocs,
            "frees": t.counts.frees,
            "untracked": t.counts.untracked,
            "slab_bytes": slab,
            "slab_share": slab.map(|s| rounded(share(t.counts.slack, s))),
        },
    })
}

fn percent(v: f64) -> String {
    format!("{:.1}%", 100.0 * v)
}

/// The table: a header line, one row per site (at most `limit`), then the totals.
pub fn table(
    waste: &Waste,
    t: &Totals,
    name: &str,
    shown: &[&WasteSite],
    matched: usize,
    slab: Option<u64>,
    exact: bool,
) -> String {
    let size = |v: u64| {
        if exact {
            v.to_string()
        } else {
            format_iec_u64(v)
        }
    };
    let state = if waste.on {
        format!(
            "accounting on for {}",
            age(waste.now_ns.saturating_sub(waste.since_ns))
        )
    } else {
        "accounting off (the figures are frozen)".to_owned()
    };
    let n = waste.sites.len();
    let mut out = format!(
        "{name} (format {}): {state}, {n} call site{}\n",
        waste.version,
        if n == 1 { "" } else { "s" }
    );
    let titles = [
        "SLACK",
        "RATIO",
        "BYTES",
        "REQUESTED",
        "ALLOCS",
        "FREES",
        "UNTRACKED",
        "CALL SITE",
    ];
    let rows: Vec<[String; 8]> = shown
        .iter()
        .map(|s| {
            let mut site = s.tag.location().to_string();
            for (k, v) in &s.tag.extra {
                site.push_str(&format!(" {k}:{v}"));
            }
            [
                size(s.counts.slack),
                percent(s.ratio()),
                size(s.counts.bytes),
                size(s.counts.requested),
                s.counts.allocs.to_string(),
                s.counts.frees.to_string(),
                size(s.counts.untracked),
                site,
            ]
        })
        .collect();
    let mut widths = titles.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut l = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                l.push_str(cell);
            } else {
                let pad = widths[i].saturating_sub(cell.chars().count());
                l.push_str(&" ".repeat(pad));
                l.push_str(cell);
                l.push_str("  ");
            }
        }
        l.push('\n');
        l
    };
    out.push_str(&line(&titles));
    for row in &rows {
        out.push_str(&line(&row.each_ref().map(String::as_str)));
    }
    if rows.is_empty() {
        out.push_str("(no call sites)\n");
    } else if rows.len() < matched {
        out.push_str(&format!(
            "({} of {matched} rows; -n 0 shows all)\n",
            rows.len()
        ));
    }
    out.push_str(&format!(
        "total: {} allocated, {} requested, {} slack ({} of the bytes), {} untracked\n",
        size(t.counts.bytes),
        size(t.counts.requested),
        size(t.counts.slack),
        percent(t.counts.ratio()),
        size(t.counts.untracked)
    ));
    if let Some(slab) = slab {
        out.push_str(&format!(
            "slack: {} of Slab: in meminfo ({})\n",
            percent(share(t.counts.slack, slab)),
            size(slab)
        ));
    }
    out
}

/// A ratio to 6 decimals, as the JSON and CSV show it.
fn rounded(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}
