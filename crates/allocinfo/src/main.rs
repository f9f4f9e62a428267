//! `allocinfo`: read, compare and watch the kernel's allocation profile.
//!
//! A thin command line over the library crates: `allocinfo-format` parses,
//! `allocinfo-report` filters/groups/diffs, `allocinfo-output` prints and
//! `allocinfo-treemap` draws; `fail` drives the kernel's per-call-site
//! allocation fault injection; `capture` and `live` choose the call sites
//! whose live objects the kernel records and show them; `waste` shows the
//! kernel's slack and churn per call site (/proc/allocwaste) and turns that
//! accounting on and off; `allocinfo-ioctl` reads the profile through
//! the kernel's ioctl (`query`, `top`; see `via`).

mod capture;
mod cli;
mod debugfs;
mod fail;
mod input;
mod metrics;
mod outfile;
mod snapshot;
mod time;
mod via;
mod waste;
mod watch;

use allocinfo_format::Tag;
use allocinfo_output::{Command, Format, Meta, Source};
use allocinfo_report::{Filter, SortKey};
use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, Cmd, ViaArgs};
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

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

/// `allocinfo top | head` is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// `--via ioctl` with a file is a usage error (exit status 2).
fn check_via(args: &ViaArgs, input: &Path) -> Result<()> {
    via::plan(args.via, input).map(drop).map_err(usage)
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Cmd::Top(a) => {
            let format = a.output.format();
            let file = a.input.path();
            check_via(&a.via, &file)?;
            if a.view.sort.is_some_and(|s| s.is_delta()) {
                return Err(usage(format!(
                    "--sort {} needs two profiles: use it with diff or watch",
                    a.view.sort_key(SortKey::Bytes)
                )));
            }
            let query = a.view.query(&a.filter, format, SortKey::Bytes, false)?;
            let (loaded, taken) = via::load_profile(&file, &a.via)?;
            if a.via.verbose {
                let n = loaded.profile.tags.len();
                eprintln!("{}", via::describe("top", &loaded.path, &taken, n, "tag"));
            }
            warn_unmatched(&query.filter, &loaded.profile.tags, &loaded.path);
            let report = query.top(&loaded.profile);
            let meta = Meta {
                command: Command::Top,
                source: loaded.source(),
                old_source: None,
            };
            print(format, &report, &meta, a.view.exact, a.output.pretty)
        }
        Cmd::Query(a) => {
            let file = a.input.path();
            check_via(&a.via, &file)?;
            let filter = a.filter.filter();
            if !filter.is_valid() {
                return Err(usage(
                    "--min-size is above --max-size (the kernel refuses such a filter)",
                ));
            }
            let (tags, taken) = via::query(&file, &a.via, &filter)?;
            let tags: Vec<Tag> = tags
                .into_iter()
                .filter(|t| a.filter.names_match(t))
                .collect();
            let path = file.to_string_lossy().into_owned();
            if a.via.verbose {
                let line = via::describe("query", &path, &taken, tags.len(), "matching tag");
                eprintln!("{line}");
            }
            if tags.is_empty() && a.filter.has_names() {
                eprintln!(
                    "allocinfo: warning: the name patterns and filters match no tag in {}",
                    allocinfo_output::source_name(&path)
                );
            }
            let mut out = io::BufWriter::new(io::stdout().lock());
            if a.json {
                allocinfo_output::tags::write_json(&mut out, &path, &tags, a.pretty)
                    .context(STDOUT)?;
            } else {
                allocinfo_output::tags::write_lines(&mut out, &tags).context(STDOUT)?;
            }
            out.flush().context(STDOUT)?;
            Ok(())
        }
        Cmd::Diff(a) => {
            let format = a.output.format();
            if a.old.as_os_str() == "-" && a.new.as_os_str() == "-" {
                return Err(usage("only one of OLD and NEW can be standard input"));
            }
            let old = input::load_with_waste(&a.old, input::waste_companion(&a.old).as_deref())?;
            let new = input::load_with_waste(&a.new, input::waste_companion(&a.new).as_deref())?;
            let query = a
                .view
                .query(&a.filter, format, SortKey::DeltaBytes, !a.all)?;
            let rates = match (&old.waste, &new.waste) {
                (Some(o), Some(n)) => {
                    if n.now_ns <= o.now_ns {
                        eprintln!(
                            "allocinfo: note: no allocation rates: the new waste figures are not later than the old (now_ns {} then {}; another boot?)",
                            o.now_ns, n.now_ns
                        );
                    }
                    let figures = waste::rates(Some(o), n, &query);
                    if let Some(note) = figures.note() {
                        eprintln!("{note}");
                    }
                    Some(figures.rates)
                }
                (None, None) => None,
                (o, _) => {
                    let (with, without) = if o.is_some() {
                        (&a.old, &a.new)
                    } else {
                        (&a.new, &a.old)
                    };
                    eprintln!(
                        "allocinfo: note: no allocation rates: waste figures next to {} but none next to {}",
                        with.display(),
                        without.display()
                    );
                    None
                }
            };
            let both: Vec<Tag> = old
                .profile
                .tags
                .iter()
                .chain(&new.profile.tags)
                .cloned()
                .collect();
            warn_unmatched(&query.filter, &both, "either profile");
            let report = query.diff(&old.profile, &new.profile);
            let meta = Meta {
                command: Command::Diff,
                source: new.source(),
                old_source: Some(old.source()),
            };
            print_with_rates(
                format,
                &report,
                &meta,
                a.view.exact,
                a.output.pretty,
                rates.as_ref(),
            )
        }
        Cmd::Snapshot(a) => {
            if let Some(path) = snapshot::write(&a.input.path(), &a.output)? {
                writeln!(io::stdout().lock(), "{}", path.display()).context(STDOUT)?;
            }
            Ok(())
        }
        Cmd::Watch(a) => watch::run(a),
        Cmd::Fail(a) => fail::control::run(a),
        Cmd::Capture(a) => capture::control::run(a),
        Cmd::Live(a) => capture::control::live(a),
        Cmd::Waste(a) => waste::run(a),
        Cmd::Metrics(a) => metrics::run(a),
        Cmd::Completions(a) => {
            // clap_complete panics on a write error: generated here, written below.
            let mut script = Vec::new();
            clap_complete::generate(a.shell, &mut Cli::command(), "allocinfo", &mut script);
            write_stdout(&script)
        }
        Cmd::Man => {
            let mut out = io::stdout().lock();
            clap_mangen::Man::new(Cli::command())
                .render(&mut out)
                .context(STDOUT)?;
            out.flush().context(STDOUT)?;
            Ok(())
        }
        Cmd::Treemap(a) => {
            let loaded = input::load(&a.input.path())?;
            let filter = a.filter.filter();
            warn_unmatched(&filter, &loaded.profile.tags, &loaded.path);
            let tags: Vec<_> = loaded
                .profile
                .tags
                .iter()
                .filter(|t| filter.matches(t) && filter.min_bytes.is_none_or(|min| t.bytes >= min))
                .collect();
            let title = a.title.clone().unwrap_or_else(|| {
                format!(
                    "allocinfo treemap: {}",
                    allocinfo_output::source_name(&loaded.path)
                )
            });
            let opts = allocinfo_treemap::Options {
                width: a.width,
                height: a.height,
                title,
            };
            let slack = match a.color {
                cli::ColorBy::Dir => None,
                cli::ColorBy::Slack => {
                    let input = a.input.path();
                    let path = a
                        .waste
                        .clone()
                        .or_else(|| input::waste_companion(&input))
                        .ok_or_else(|| {
                            usage(
                                "--color slack with a profile on standard input needs --waste FILE",
                            )
                        })?;
                    let waste = input::load_waste(&path).context("--color slack")?;
                    // Identical call sites, merged in the picture, are merged here.
                    let mut sums = std::collections::BTreeMap::<String, (u64, u64)>::new();
                    for s in &waste.sites {
                        let e = sums.entry(s.tag.location().to_string()).or_default();
                        e.0 = e.0.saturating_add(s.slack);
                        e.1 = e.1.saturating_add(s.bytes);
                    }
                    let ratios: allocinfo_treemap::SlackRatios = sums
                        .into_iter()
                        .map(|(name, (slack, bytes))| {
                            let r = if bytes == 0 {
                                0.0
                            } else {
                                slack as f64 / bytes as f64
                            };
                            (name, r)
                        })
                        .collect();
                    Some(ratios)
                }
            };
            let svg = allocinfo_treemap::render_with_slack(&tags, &opts, slack.as_ref());
            outfile::write(&a.output, svg.as_bytes())
        }
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

fn print(
    format: Format,
    report: &allocinfo_report::Report,
    meta: &Meta,
    exact: bool,
    pretty: bool,
) -> Result<()> {
    print_with_rates(format, report, meta, exact, pretty, None)
}

fn print_with_rates(
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
