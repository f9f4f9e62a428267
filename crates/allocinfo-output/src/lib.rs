//! Prints [`Report`]s. One report, four formats chosen by flag: a table for
//! people, and JSON, CSV and the Prometheus text format for machines. All
//! formats take the fields of a row from [`Fields`], so they agree.
//! [`tags`] prints plain lists of tags (`allocinfo query`); a [`Document`]
//! is the output of a command that prints one text or one JSON value.
//! The schemas are documented in `Documentation/allocinfo-tool.rst`.

use allocinfo_format::{Totals, Version};
use allocinfo_report::{GroupBy, Key, Report, Row};
use std::io::{self, Write};

pub mod capture;
mod csv_out;
mod document;
pub mod fail;
mod json;
pub mod prometheus;
pub mod split;
pub mod status;
pub mod table;
pub mod tags;
pub mod waste;

pub use document::Document;
pub use split::{SplitBy, Splits};
pub use table::TableOptions;

/// Output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Table,
    Json,
    Csv,
    Prometheus,
}

impl Format {
    /// Rows shown when `-n` is not given: a screenful for people, all for machines.
    pub fn default_limit(self) -> Option<usize> {
        match self {
            Format::Table => Some(20),
            _ => None,
        }
    }
}

/// Which command made the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Top,
    Diff,
    Watch,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Top => "top",
            Command::Diff => "diff",
            Command::Watch => "watch",
        }
    }
}

/// Where a profile came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Path as given, `-` for standard input.
    pub path: String,
    pub version: Version,
}

/// What the report is about, beyond its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    pub command: Command,
    /// The profile (the new one in a comparison).
    pub source: Source,
    /// The old profile in a comparison.
    pub old_source: Option<Source>,
}

pub use allocinfo_report::rates::Rates;

/// Writes `report` in `format`; `table` only matters for [`Format::Table`].
pub fn write(
    out: &mut dyn Write,
    format: Format,
    report: &Report,
    meta: &Meta,
    table: &TableOptions,
) -> io::Result<()> {
    write_with_rates(out, format, report, meta, table, None)
}

/// As [`write()`], with an allocations-per-second column (the table's
/// `ALLOCS/S`, JSON's `allocs_per_sec`) when `rates` is given. CSV and the
/// Prometheus format are as without.
pub fn write_with_rates(
    out: &mut dyn Write,
    format: Format,
    report: &Report,
    meta: &Meta,
    table: &TableOptions,
    rates: Option<&Rates>,
) -> io::Result<()> {
    write_split(out, format, report, meta, table, rates, None)
}

/// As [`write_with_rates`], with each row's shares by CPU or node
/// (`--split`) when `splits` is given.
pub fn write_split(
    out: &mut dyn Write,
    format: Format,
    report: &Report,
    meta: &Meta,
    table: &TableOptions,
    rates: Option<&Rates>,
    splits: Option<&Splits>,
) -> io::Result<()> {
    match format {
        Format::Table => {
            for line in table::render_split(report, meta, table, rates, splits) {
                writeln!(out, "{line}")?;
            }
            Ok(())
        }
        Format::Json => json::write(out, report, meta, table.pretty, rates, splits),
        Format::Csv => csv_out::write(out, report, splits),
        Format::Prometheus => prometheus::write_split(out, report, meta, splits),
    }
}

/// The structured fields of a row's key, shared by all machine formats.
/// `module` is `None` for built-in code; `dir` is derived from the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fields<'a> {
    pub module: Option<&'a str>,
    pub dir: Option<&'a str>,
    pub file: Option<&'a str>,
    pub line: Option<u32>,
    pub function: Option<&'a str>,
}

impl<'a> Fields<'a> {
    pub fn of(key: &'a Key) -> Fields<'a> {
        let file = key.file();
        Fields {
            module: key.module(),
            dir: key.dir().or_else(|| file.map(dir_of)),
            file,
            line: key.line(),
            function: key.function(),
        }
    }
}

fn dir_of(file: &str) -> &str {
    match file.rfind('/') {
        Some(0) => "/",
        Some(i) => &file[..i],
        None => ".",
    }
}

/// `s` safe to print on a terminal: control characters (an escape
/// sequence in a function or module name) as `\xNN` (`\u{NNNN}` past
/// 0xff); the rest is as given. Tables and the kernel's lines print names
/// through it, as the SVG replaces them.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// Name of the source for people: `<stdin>` for `-`.
pub fn source_name(path: &str) -> &str {
    if path == "-" { "<stdin>" } else { path }
}

/// Human name of a grouping, singular.
pub fn group_noun(by: GroupBy) -> &'static str {
    match by {
        GroupBy::Site => "call site",
        GroupBy::Module => "module",
        GroupBy::Dir => "directory",
        GroupBy::File => "file",
        GroupBy::Function => "function",
        GroupBy::Tree => "path prefix",
    }
}

/// Human name of a grouping, plural.
pub fn group_plural(by: GroupBy) -> &'static str {
    match by {
        GroupBy::Site => "call sites",
        GroupBy::Module => "modules",
        GroupBy::Dir => "directories",
        GroupBy::File => "files",
        GroupBy::Function => "functions",
        GroupBy::Tree => "path prefixes",
    }
}

/// Share of the total bytes, rounded to six decimals.
fn share(row: &Row, total: &Totals) -> f64 {
    (row.share(total) * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("kmalloc"), "kmalloc");
        assert_eq!(printable("a\x1b[31mb\x07"), "a\\x1b[31mb\\x07");
        assert_eq!(printable("\u{85}é"), "\\x85é");
    }
}
