//! `allocinfo`: read, compare and watch the kernel's allocation profile.
//!
//! A thin command line over the library crates: `allocinfo-format` parses,
//! `allocinfo-report` filters/groups/diffs, `allocinfo-output` prints and
//! `allocinfo-treemap` draws; `fail` drives the kernel's per-call-site
//! allocation fault injection; `capture` and `live` choose the call sites
//! whose live objects the kernel records and show them; `waste` shows the
//! kernel's slack and churn per call site (/proc/allocwaste) and turns that
//! accounting on and off; `status` says where the kernel keeps page tags
//! (page flags or page_ext) and what would free page-flag bits;
//! `allocinfo-ioctl` reads the profile through the kernel's ioctl
//! (`query`, `top`; see `via`).

mod args;
mod capture;
mod cli;
mod debugfs;
mod diff;
mod fail;
mod input;
mod man;
mod metrics;
mod outfile;
mod query;
mod snapshot;
mod status;
mod time;
mod top;
mod treemap;
mod via;
mod waste;
mod watch;

use allocinfo_format::Tag;
use allocinfo_output::{Format, Meta, Source};
use allocinfo_report::Filter;
use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, Cmd};
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use via::ViaArgs;

fn main() -> ExitCode {
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return clap_exit(e),
    };
    // The subcommands named, for the usage printed with a usage error.
    let mut path = Vec::new();
    let mut m = &matches;
    while let Some((name, sub)) = m.subcommand() {
        path.push(name.to_owned());
        m = sub;
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match run(cli) {
        Err(e) if e.downcast_ref::<Usage>().is_some() => usage_exit(&path, &e.to_string()),
        result => exit_code(result),
    }
}

/// The exit status of a run: 0, 0 for a reader that has gone (`allocinfo
/// top | head` is not an error), 1 for an error, said on standard error.
fn exit_code(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("allocinfo: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Exits as clap does, except that `--help` and `--version` are written
/// like every other output: a write error is exit status 1 (clap ignores
/// it), a closed pipe 0. On a terminal clap prints them, in colour.
fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
    use std::io::IsTerminal;
    if e.kind() == clap::error::ErrorKind::UnknownArgument
        && let Some(clap::error::ContextValue::String(arg)) =
            e.get(clap::error::ContextKind::InvalidArg)
        && arg == "--tree"
    {
        // clap would suggest --reverse: the tree is a grouping.
        let mut root = Cli::command();
        root.build();
        // The usage of the command it was given to.
        let mut cmd = std::env::args()
            .skip(1)
            .find_map(|a| root.find_subcommand(&a).cloned())
            .unwrap_or(root);
        cmd.error(
            clap::error::ErrorKind::UnknownArgument,
            "unexpected argument '--tree' found\n\n  tip: totals by path prefix are '-b tree' (--by tree)",
        )
        .exit()
    }
    if !matches!(e.kind(), DisplayHelp | DisplayVersion) || io::stdout().is_terminal() {
        e.exit()
    }
    exit_code(write_stdout(e.render().to_string().as_bytes()))
}

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

/// Prints `msg` with the usage of the subcommand at `path` and exits 2.
fn usage_exit(path: &[String], msg: &str) -> ! {
    let mut cmd = Cli::command();
    cmd.build();
    let mut sub = cmd;
    for name in path {
        match sub.find_subcommand(name) {
            Some(s) => sub = s.clone(),
            None => break,
        }
    }
    sub.error(clap::error::ErrorKind::ValueValidation, msg)
        .exit()
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

/// `allocinfo top | head` is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// `--via ioctl` with a file is a usage error (exit status 2).
pub fn check_via(args: &ViaArgs, input: &Path) -> Result<()> {
    via::plan(args.via, input).map(drop).map_err(usage)
}

/// One function per command; each starts from its arguments' checks.
fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Cmd::Top(a) => top::run(a),
        Cmd::Query(a) => query::run(a),
        Cmd::Diff(a) => diff::run(a),
        Cmd::Snapshot(a) => snapshot::run(a),
        Cmd::Watch(a) => watch::run(a),
        Cmd::Treemap(a) => treemap::run(a),
        Cmd::Fail(a) => fail::control::run(a),
        Cmd::Capture(a) => capture::control::run(a),
        Cmd::Live(a) => capture::control::live(a),
        Cmd::Waste(a) => waste::run(a),
        Cmd::Status(a) => status::run(a),
        Cmd::Metrics(a) => metrics::run(a),
        Cmd::Completions(a) => completions(a),
        Cmd::Man(a) => man::run(a, <cli::Cli as clap::CommandFactory>::command()),
    }
}

/// `allocinfo completions SHELL`. clap_complete panics on a write error:
/// the script is generated here and written as every output is.
fn completions(a: cli::CompletionsArgs) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "allocinfo", &mut script);
    write_stdout(&script)
}

/// What a write error on standard output is said with.
pub const STDOUT: &str = "writing standard output";

/// Writes `bytes` to standard output; an error names it.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes).context(STDOUT)?;
    out.flush().context(STDOUT)
}

pub fn print(
    format: Format,
    report: &allocinfo_report::Report,
    meta: &Meta,
    exact: bool,
    pretty: bool,
) -> Result<()> {
    print_with_rates(format, report, meta, exact, pretty, None)
}

pub fn print_with_rates(
    format: Format,
    report: &allocinfo_report::Report,
    meta: &Meta,
    exact: bool,
    pretty: bool,
    rates: Option<&allocinfo_output::Rates>,
) -> Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let table = allocinfo_output::TableOptions {
        exact,
        pretty,
        ..Default::default()
    };
    allocinfo_output::write_with_rates(&mut out, format, report, meta, &table, rates)
        .context(STDOUT)?;
    out.flush().context(STDOUT)?;
    Ok(())
}

impl input::Loaded {
    fn source(&self) -> Source {
        Source {
            path: self.path.clone(),
            version: self.profile.version,
        }
    }
}
