//! `--csv`: RFC 4180 CSV with a header row.

use crate::split::Splits;
use crate::{Fields, share};
use allocinfo_report::Report;
use std::io::{self, Write};

/// Columns of every report.
pub const COLUMNS: [&str; 13] = [
    "group", "key", "module", "dir", "file", "line", "function", "sites", "bytes", "calls",
    "share", "accurate", "unloaded",
];
/// Columns added by comparisons (diff, watch).
pub const CHANGE_COLUMNS: [&str; 5] = [
    "status",
    "old_bytes",
    "old_calls",
    "delta_bytes",
    "delta_calls",
];

/// With `--split`, each row is one record per share not all zero, with
/// the share's index (`cpu` or `node`) and figures in the columns
/// `cpu`, `cpu_bytes`, `cpu_calls` (and `cpu_delta_bytes`,
/// `cpu_delta_calls` in comparisons), empty in the one record of a row
/// without any. Shares read from the text have no calls: their calls
/// columns are empty.
pub fn write(out: &mut dyn Write, report: &Report, splits: Option<&Splits>) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let changes = report.has_changes();
    let mut header: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    if changes {
        header.extend(CHANGE_COLUMNS.iter().map(|c| c.to_string()));
    }
    if let Some(sp) = splits {
        let by = sp.by.name();
        header.extend([by.to_owned(), format!("{by}_bytes"), format!("{by}_calls")]);
        if sp.changes {
            header.extend([format!("{by}_delta_bytes"), format!("{by}_delta_calls")]);
        }
    }
    w.write_record(&header)?;
    for r in &report.rows {
        let f = Fields::of(&r.key);
        let opt = |v: Option<&str>| v.unwrap_or_default().to_owned();
        let mut record = vec![
            report.group_by.name().to_owned(),
            r.key.to_string(),
            opt(f.module),
            opt(f.dir),
            opt(f.file),
            f.line.map(|l| l.to_string()).unwrap_or_default(),
            opt(f.function),
            r.sums.tags.to_string(),
            r.sums.bytes.to_string(),
            r.sums.calls.to_string(),
            share(r, &report.total).to_string(),
            r.sums.accurate.to_string(),
            r.sums.unloaded.to_string(),
        ];
        if let Some(c) = &r.change {
            record.extend([
                c.status.name().to_owned(),
                c.old_bytes.to_string(),
                c.old_calls.to_string(),
                c.delta_bytes.to_string(),
                c.delta_calls.to_string(),
            ]);
        }
        let Some(sp) = splits else {
            w.write_record(&record)?;
            continue;
        };
        let width = if sp.changes { 5 } else { 3 };
        let shares = sp.get(&r.key);
        if shares.is_empty() {
            record.extend(std::iter::repeat_n(String::new(), width));
            w.write_record(&record)?;
        }
        for s in shares {
            let mut rec = record.clone();
            let calls = |c: i64| {
                if sp.calls {
                    c.to_string()
                } else {
                    String::new()
                }
            };
            rec.extend([s.index.to_string(), s.bytes.to_string(), calls(s.calls)]);
            if sp.changes {
                let [b, c] = s.delta.unwrap_or_default();
                rec.extend([b.to_string(), calls(c)]);
            }
            w.write_record(&rec)?;
        }
    }
    w.flush()
}
