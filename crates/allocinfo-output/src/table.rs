//! The human-readable table (also the frames of `allocinfo watch`).

use crate::split::{Share, SplitBy, Splits};
use crate::{Meta, Rates, group_plural, source_name};
use allocinfo_format::Totals;
use allocinfo_format::size::{format_iec, format_iec_delta};
use allocinfo_report::{GroupBy, Report, Row, Status};

/// Layout options.
#[derive(Clone, Debug, Default)]
pub struct TableOptions {
    /// Cut lines to this many characters (a terminal's width).
    pub width: Option<usize>,
    /// A first line, such as the status line of `watch`.
    pub title: Option<String>,
    /// Print exact byte counts instead of KiB/MiB/GiB.
    pub exact: bool,
    /// Leave the "-n 0 shows all" hint out of the footer (when the number
    /// of rows is not up to `-n`, as in full-screen `watch`).
    pub no_limit_hint: bool,
    /// JSON only: indent it (`--pretty`) instead of one document per line.
    pub pretty: bool,
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn summary(t: &Totals) -> String {
    format!(
        "{} in {} at {}",
        format_iec(t.bytes),
        plural(t.calls as usize, "call"),
        plural(t.tags, "call site")
    )
}

fn signed(v: i64) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

struct Column {
    title: &'static str,
    /// Left-aligned (text) or right-aligned (numbers).
    left: bool,
    cell: Box<dyn Fn(&Row) -> String>,
}

fn column(title: &'static str, cell: impl Fn(&Row) -> String + 'static) -> Column {
    Column {
        title,
        left: false,
        cell: Box::new(cell),
    }
}

/// Renders the report as lines of text, without escape codes.
pub fn render(report: &Report, meta: &Meta, opts: &TableOptions) -> Vec<String> {
    render_with_rates(report, meta, opts, None)
}

/// A rate of allocations per second as the `ALLOCS/S` column shows it.
pub fn rate(v: f64) -> String {
    format!("{v:.1}")
}

/// As [`render`], with an `ALLOCS/S` column after the changes when `rates`
/// is given (`-` for a row without a rate).
pub fn render_with_rates(
    report: &Report,
    meta: &Meta,
    opts: &TableOptions,
    rates: Option<&Rates>,
) -> Vec<String> {
    render_split(report, meta, opts, rates, None)
}

/// A share's cell in the column titled `title`: its figures under BYTES
/// and CALLS (and the changes), `cpuN` indented under the row's name.
fn share_cell(
    title: &str,
    s: &Share,
    (by, calls): (SplitBy, bool),
    size: &dyn Fn(i64) -> String,
    delta: &dyn Fn(i64) -> String,
) -> String {
    match (title, s.delta) {
        ("+BYTES", Some([b, _])) => delta(b),
        ("+CALLS", Some([_, c])) if calls => signed(c),
        ("BYTES", _) => size(s.bytes),
        ("CALLS", _) if calls => s.calls.to_string(),
        ("CALL SITE" | "MODULE" | "DIRECTORY" | "FILE" | "FUNCTION" | "PATH PREFIX", _) => {
            format!("  {}{}", by.name(), s.index)
        }
        _ => String::new(),
    }
}

/// As [`render_with_rates`], each row followed by its shares by CPU or
/// node that are not all zero, one line each (`--split`), in the row's
/// columns.
pub fn render_split(
    report: &Report,
    meta: &Meta,
    opts: &TableOptions,
    rates: Option<&Rates>,
    splits: Option<&Splits>,
) -> Vec<String> {
    let mut lines = Vec::new();
    lines.extend(opts.title.clone());
    let src = &meta.source;
    match (&meta.old_source, &report.old_total) {
        (Some(old), Some(old_total)) if old.path != src.path => {
            lines.push(format!(
                "old: {} (format {}): {}",
                source_name(&old.path),
                old.version,
                summary(old_total)
            ));
            lines.push(format!(
                "new: {} (format {}): {}",
                source_name(&src.path),
                src.version,
                summary(&report.total)
            ));
        }
        _ => lines.push(format!(
            "{} (format {}): {}",
            source_name(&src.path),
            src.version,
            summary(&report.total)
        )),
    }
    if let Some(old_total) = &report.old_total {
        let c = &report.counts;
        lines.push(format!(
            "change: {}, {} calls; {}: {} new, {} gone, {} changed",
            format_iec_delta(report.total.bytes.saturating_sub(old_total.bytes)),
            signed(
                (i128::from(report.total.calls) - i128::from(old_total.calls))
                    .clamp(i64::MIN.into(), i64::MAX.into()) as i64
            ),
            group_plural(report.group_by),
            c.new,
            c.gone,
            c.changed,
        ));
    }

    let exact = opts.exact;
    let size = move |v: i64| if exact { v.to_string() } else { format_iec(v) };
    let delta = move |v: i64| {
        if exact {
            signed(v)
        } else {
            format_iec_delta(v)
        }
    };
    let mut columns = Vec::new();
    if report.has_changes() {
        columns.push(column("+BYTES", move |r| {
            r.change
                .as_ref()
                .map_or(String::new(), |c| delta(c.delta_bytes))
        }));
        columns.push(column("+CALLS", |r| {
            r.change
                .as_ref()
                .map_or(String::new(), |c| signed(c.delta_calls))
        }));
    }
    if let Some(rates) = rates {
        let rates = rates.clone();
        columns.push(column("ALLOCS/S", move |r| {
            rates
                .get(&r.key)
                .map_or_else(|| "-".to_owned(), |&v| rate(v))
        }));
    }
    columns.push(column("BYTES", move |r| size(r.sums.bytes)));
    columns.push(column("CALLS", |r| r.sums.calls.to_string()));
    if report.group_by != GroupBy::Site {
        columns.push(column("SITES", |r| r.sums.tags.to_string()));
    }
    if report.has_changes() {
        let mut status = column("STATUS", |r| match r.change.as_ref().map(|c| c.status) {
            Some(Status::New) => "new".into(),
            Some(Status::Gone) => "gone".into(),
            _ => String::new(),
        });
        status.left = true;
        columns.push(status);
    } else {
        let total = report.total;
        columns.push(column("SHARE", move |r| {
            // A share that rounds to zero has no sign ("-0.0%").
            let percent = 100.0 * r.share(&total);
            let percent = if (percent * 10.0).round() == 0.0 {
                0.0
            } else {
                percent
            };
            format!("{percent:.1}%")
        }));
    }
    let key_title = match report.group_by {
        GroupBy::Site => "CALL SITE",
        GroupBy::Module => "MODULE",
        GroupBy::Dir => "DIRECTORY",
        GroupBy::File => "FILE",
        GroupBy::Function => "FUNCTION",
        GroupBy::Tree => "PATH PREFIX",
    };
    let mut key = column(key_title, |r| {
        let mut k = crate::printable(&r.key.to_string()).into_owned();
        let by = r.key.group_by();
        // The pairs as format 2.0 prints them after a call site; a module
        // marked unloaded when none of its tags is a loaded one's.
        if !r.sums.accurate && by == GroupBy::Site {
            k.push_str(" accurate:no");
        }
        if r.sums.unloaded && matches!(by, GroupBy::Site | GroupBy::Module) {
            k.push_str(" unloaded:yes");
        }
        k
    });
    key.left = true;
    columns.push(key);

    let mut cells: Vec<Vec<String>> = Vec::new();
    for r in &report.rows {
        cells.push(columns.iter().map(|c| (c.cell)(r)).collect());
        for s in splits.map_or(&[][..], |sp| sp.get(&r.key)) {
            let by = splits.map_or((SplitBy::Cpu, true), |sp| (sp.by, sp.calls));
            cells.push(
                columns
                    .iter()
                    .map(|c| share_cell(c.title, s, by, &size, &delta))
                    .collect(),
            );
        }
    }
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|row| row[i].chars().count())
                .chain([c.title.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let format_row = |values: &[&str]| {
        let mut line = String::new();
        for (i, (v, c)) in values.iter().zip(&columns).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = widths[i].saturating_sub(v.chars().count());
            let last = i + 1 == columns.len();
            match (c.left, last) {
                (true, true) => line.push_str(v),
                (true, false) => {
                    line.extend(std::iter::once(*v).chain(std::iter::repeat_n(" ", pad)))
                }
                (false, _) => line.extend(std::iter::repeat_n(" ", pad).chain(std::iter::once(*v))),
            }
        }
        line
    };
    lines.push(format_row(
        &columns.iter().map(|c| c.title).collect::<Vec<_>>(),
    ));
    for row in &cells {
        lines.push(format_row(
            &row.iter().map(String::as_str).collect::<Vec<_>>(),
        ));
    }
    if report.rows.is_empty()
        && report.has_changes()
        && report.counts.new + report.counts.gone + report.counts.changed == 0
    {
        // Two profiles that differ in nothing matched (identical files).
        lines.push("(no changes)".to_owned());
    } else if report.rows.is_empty() {
        lines.push("(nothing matched)".to_owned());
    } else if report.rows.len() < report.matched_rows {
        let hint = if opts.no_limit_hint {
            ""
        } else {
            "; -n 0 shows all"
        };
        lines.push(format!(
            "({} of {} rows{hint})",
            report.rows.len(),
            report.matched_rows
        ));
    }
    if let Some(width) = opts.width {
        // Cut lines say so with an ellipsis in their last column.
        for line in &mut lines {
            if let Some((i, _)) = line.char_indices().nth(width) {
                line.truncate(i);
                if width > 0 {
                    line.pop();
                    line.push('…');
                }
            }
        }
    }
    lines
}
