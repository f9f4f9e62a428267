//! The waste figures for machines: CSV rows, and Prometheus families that
//! `waste --prometheus` prints and `metrics` exports.

use allocinfo_format::waste::{Waste, WasteSite};
use allocinfo_output::prometheus::Family;
use allocinfo_report::BUILTIN_MODULE;
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
            s.bytes,
            s.requested,
            s.slack,
            (s.ratio() * 1e6).round() / 1e6,
            s.allocs,
            s.frees,
            s.untracked,
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
            s.bytes,
            s.requested,
            s.slack,
            s.untracked,
            s.allocs,
            s.frees,
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
