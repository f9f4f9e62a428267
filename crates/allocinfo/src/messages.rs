//! What every command says, and how: usage errors (exit status 2), the
//! warnings of filters that match nothing, and the writing of standard
//! output, where a write error names it. The commands share these and
//! nothing else of one another (ripgrep's crates/core/messages.rs).

use allocinfo_format::Tag;
use allocinfo_output::{Document, Format, Meta};
use allocinfo_report::Filter;
use anyhow::{Context, Result};
use std::io::{self, Write};

/// A usage error found after parsing: exit status 2, with the usage of
/// the subcommand, as clap's own.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A usage error, for `?`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    Usage(msg.into()).into()
}

/// A listing command's filter patterns that match nothing are said on
/// standard error (the output, empty or not, is still the answer).
pub fn warn_unmatched(filter: &Filter, tags: &[Tag], source: &str) {
    let source = allocinfo_output::source_name(source);
    for (what, pattern) in filter.unmatched(tags) {
        eprintln!("allocinfo: warning: {what} pattern '{pattern}' matches nothing in {source}");
    }
}

/// `--unloaded` on a profile of format 1.x, which marks no tag, is said on
/// standard error, as a pattern that matches nothing is.
pub fn warn_unmarked(filter: &Filter, version: allocinfo_format::Version, source: &str) {
    if filter.unloaded && version.major < 2 {
        eprintln!(
            "allocinfo: warning: --unloaded matches nothing in {}: format {version} does not mark the tags of unloaded modules (2.0 does)",
            allocinfo_output::source_name(source)
        );
    }
}

/// What a write error on standard output is said with.
pub const STDOUT: &str = "writing standard output";

/// Writes `bytes` to standard output; an error names it.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes).context(STDOUT)?;
    out.flush().context(STDOUT)
}

/// Prints a report in `format`, with the rows' allocation rates when given,
/// and each row's shares by CPU or node (`--split`) when given.
pub fn print_split(
    format: Format,
    report: &allocinfo_report::Report,
    meta: &Meta,
    exact: bool,
    pretty: bool,
    rates: Option<&allocinfo_output::Rates>,
    splits: Option<&allocinfo_output::Splits>,
) -> Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let table = allocinfo_output::TableOptions {
        exact,
        pretty,
        ..Default::default()
    };
    allocinfo_output::write_split(&mut out, format, report, meta, &table, rates, splits)
        .context(STDOUT)?;
    out.flush().context(STDOUT)?;
    Ok(())
}

/// Writes `doc` to standard output, whole; an error names it.
pub fn emit(doc: &Document) -> Result<()> {
    let mut out = Vec::new();
    doc.write(&mut out)?;
    write_stdout(&out)
}
