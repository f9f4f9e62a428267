//! `--csv`: RFC 4180 CSV with a header row.

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

pub fn write(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let changes = report.has_changes();
    let mut header: Vec<&str> = COLUMNS.to_vec();
    if changes {
        header.extend(CHANGE_COLUMNS);
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
        w.write_record(&record)?;
    }
    w.flush()
}
