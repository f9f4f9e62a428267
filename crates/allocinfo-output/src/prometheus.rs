//! `--prometheus`: the Prometheus text exposition format (0.0.4), for
//! node_exporter's textfile collector.

use crate::split::{Share, Splits};
use crate::{Fields, Meta};
use allocinfo_report::{GroupBy, Report, Row};
use std::io::{self, Write};

/// Escapes a label value: backslash, double quote and newline.
pub fn escape_label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

fn labels(row: &Row, by: GroupBy) -> String {
    let f = Fields::of(&row.key);
    let text = |v: Option<&str>| v.unwrap_or_default().to_owned();
    let mut pairs: Vec<(&str, String)> = match by {
        GroupBy::Site => vec![
            ("file", text(f.file)),
            ("line", f.line.map(|l| l.to_string()).unwrap_or_default()),
            ("module", text(f.module)),
            ("function", text(f.function)),
        ],
        GroupBy::Module => vec![("module", text(f.module))],
        GroupBy::Dir => vec![("dir", text(f.dir))],
        GroupBy::File => vec![("file", text(f.file))],
        GroupBy::Function => vec![("function", text(f.function))],
        GroupBy::Tree => vec![("prefix", text(f.dir))],
    };
    // An unloaded module's call site is a series of its own beside the
    // reloaded module's (no series twice); other rows keep their labels.
    if row.sums.unloaded {
        pairs.push(("unloaded", "yes".to_owned()));
    }
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

type Value = fn(&Row) -> Option<i128>;

pub fn write(out: &mut dyn Write, report: &Report, meta: &Meta) -> io::Result<()> {
    write_split(out, report, meta, None)
}

type ShareValue = fn(&Share) -> Option<i64>;

/// As [`write()`], with the families `allocinfo_split_bytes` and
/// `allocinfo_split_calls` (and their `_delta` in comparisons): each
/// row's shares not all zero, labelled `cpu="N"` (or `node="N"`) besides
/// the row's labels.
pub fn write_split(
    out: &mut dyn Write,
    report: &Report,
    _meta: &Meta,
    splits: Option<&Splits>,
) -> io::Result<()> {
    let per = match report.group_by {
        GroupBy::Site => "call site",
        GroupBy::Module => "module (empty for built-in code)",
        GroupBy::Dir => "source directory",
        GroupBy::File => "source file",
        GroupBy::Function => "function",
        GroupBy::Tree => "source path prefix (a prefix holds all below it)",
    };
    let mut families: Vec<(&str, String, Value)> = vec![
        (
            "allocinfo_bytes",
            format!("Bytes allocated and not yet freed, per {per}."),
            |r| Some(r.sums.bytes.into()),
        ),
        (
            "allocinfo_calls",
            format!("Allocations not yet freed, per {per}."),
            |r| Some(r.sums.calls.into()),
        ),
    ];
    if report.has_changes() {
        families.push((
            "allocinfo_bytes_delta",
            format!("Change of allocinfo_bytes since the previous profile, per {per}."),
            |r| r.change.as_ref().map(|c| c.delta_bytes.into()),
        ));
        families.push((
            "allocinfo_calls_delta",
            format!("Change of allocinfo_calls since the previous profile, per {per}."),
            |r| r.change.as_ref().map(|c| c.delta_calls.into()),
        ));
    }
    let rows: Vec<(String, &Row)> = report
        .rows
        .iter()
        .map(|r| (labels(r, report.group_by), r))
        .collect();
    for (name, help, value) in families {
        writeln!(out, "# HELP {name} {help}")?;
        writeln!(out, "# TYPE {name} gauge")?;
        for (labels, row) in &rows {
            if let Some(v) = value(row) {
                writeln!(out, "{name}{labels} {v}")?;
            }
        }
    }
    if let Some(sp) = splits {
        let by = sp.by.name();
        let mut shares: Vec<(&str, String, ShareValue)> = vec![
            (
                "allocinfo_split_bytes",
                format!("Bytes allocated and not yet freed, per {per} and {by}; may be negative."),
                |s| Some(s.bytes),
            ),
            (
                "allocinfo_split_calls",
                format!("Allocations not yet freed, per {per} and {by}; may be negative."),
                |s| Some(s.calls),
            ),
        ];
        if sp.changes {
            shares.push((
                "allocinfo_split_bytes_delta",
                "Change of allocinfo_split_bytes since the previous profile.".to_owned(),
                |s| s.delta.map(|d| d[0]),
            ));
            shares.push((
                "allocinfo_split_calls_delta",
                "Change of allocinfo_split_calls since the previous profile.".to_owned(),
                |s| s.delta.map(|d| d[1]),
            ));
        }
        // Shares read from the text have bytes only: no calls series.
        if !sp.calls {
            shares.retain(|(name, _, _)| !name.starts_with("allocinfo_split_calls"));
        }
        for (name, help, value) in shares {
            writeln!(out, "# HELP {name} {help}")?;
            writeln!(out, "# TYPE {name} gauge")?;
            for (labels, row) in &rows {
                let inner = &labels[1..labels.len() - 1];
                let sep = if inner.is_empty() { "" } else { "," };
                for s in sp.get(&row.key) {
                    if let Some(v) = value(s) {
                        let index = s.index;
                        writeln!(out, "{name}{{{inner}{sep}{by}=\"{index}\"}} {v}")?;
                    }
                }
            }
        }
    }
    let totals: [(&str, &str, i128); 3] = [
        (
            "allocinfo_total_bytes",
            "Bytes allocated and not yet freed, all call sites.",
            report.total.bytes.into(),
        ),
        (
            "allocinfo_total_calls",
            "Allocations not yet freed, all call sites.",
            report.total.calls.into(),
        ),
        (
            "allocinfo_sites",
            "Number of allocation call sites (tags) in the profile.",
            report.total.tags as i128,
        ),
    ];
    for (name, help, v) in totals {
        writeln!(out, "# HELP {name} {help}")?;
        writeln!(out, "# TYPE {name} gauge")?;
        writeln!(out, "{name} {v}")?;
    }
    Ok(())
}

/// One metric family: its samples are written together after its HELP
/// and TYPE lines.
pub struct Family {
    name: &'static str,
    help: &'static str,
    kind: &'static str,
    samples: Vec<(String, u64)>,
}

impl Family {
    pub fn new(name: &'static str, kind: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            kind,
            samples: Vec::new(),
        }
    }

    pub fn add(&mut self, labels: &[(&str, &str)], value: u64) {
        let inner: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
            .collect();
        let labels = if inner.is_empty() {
            String::new()
        } else {
            format!("{{{}}}", inner.join(","))
        };
        self.samples.push((labels, value));
    }

    /// The family in the text format; a series listed twice is written
    /// once (the first value), so no series is duplicated.
    pub fn write(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = writeln!(out, "# HELP {} {}", self.name, self.help);
        let _ = writeln!(out, "# TYPE {} {}", self.name, self.kind);
        let mut seen = std::collections::BTreeSet::new();
        for (labels, value) in &self.samples {
            if seen.insert(labels.as_str()) {
                let _ = writeln!(out, "{}{labels} {value}", self.name);
            }
        }
    }
}
