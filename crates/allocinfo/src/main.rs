//! `allocinfo`: read, compare and watch the kernel's allocation profile.
//!
//! A thin command line over the library crates: `allocinfo-format` parses,
//! `allocinfo-report` filters/groups/diffs, `allocinfo-output` prints and
//! `allocinfo-treemap` draws; `fail` drives the kernel's per-call-site
//! allocation fault injection; `capture` and `live` choose the call sites
//! whose live objects the kernel records and show them; `allocinfo-ioctl` reads the profile through
//! the kernel's ioctl (`query`, `top`; see `via`).

mod capture;
mod cli;
mod debugfs;
mod fail;
mod input;
mod snapshot;
mod time;
mod via;
mod watch;

use allocinfo_output::{Command, Format, Meta, Source};
use allocinfo_report::SortKey;
use anyhow::{Context, Result, bail};
use clap::{CommandFactory, Parser};
use cli::{Cli, Cmd, ViaArgs};
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("allocinfo: error: {e:#}");
            ExitCode::FAILURE
        }
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
fn check_via(args: &ViaArgs, input: &Path) {
    if let Err(msg) = via::plan(args.via, input) {
        Cli::command()
            .error(clap::error::ErrorKind::ArgumentConflict, msg)
            .exit();
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Cmd::Top(a) => {
            let format = a.output.format();
            check_via(&a.via, &a.input.file);
            if a.view.sort.is_some_and(|s| s.is_delta()) {
                bail!(
                    "--sort {} needs two profiles: use it with diff or watch",
                    a.view.sort_key(SortKey::Bytes)
                );
            }
            let query = a.view.query(&a.filter, format, SortKey::Bytes, false)?;
            let (loaded, taken) = via::load_profile(&a.input.file, &a.via)?;
            if a.via.verbose {
                let n = loaded.profile.tags.len();
                eprintln!("{}", via::describe("top", &loaded.path, &taken, n, "tag"));
            }
            let report = query.top(&loaded.profile);
            let meta = Meta {
                command: Command::Top,
                source: loaded.source(),
                old_source: None,
            };
            print(format, &report, &meta, a.view.exact)
        }
        Cmd::Query(a) => {
            check_via(&a.via, &a.input.file);
            let filter = a.filter.filter();
            if !filter.is_valid() {
                Cli::command()
                    .error(
                        clap::error::ErrorKind::ValueValidation,
                        "--min-size is above --max-size (the kernel refuses such a filter)",
                    )
                    .exit();
            }
            let (tags, taken) = via::query(&a.input.file, &a.via, &filter)?;
            let path = a.input.file.display().to_string();
            if a.via.verbose {
                let line = via::describe("query", &path, &taken, tags.len(), "matching tag");
                eprintln!("{line}");
            }
            let mut out = io::BufWriter::new(io::stdout().lock());
            if a.json {
                allocinfo_output::tags::write_json(&mut out, &path, &tags)?;
            } else {
                allocinfo_output::tags::write_lines(&mut out, &tags)?;
            }
            out.flush()?;
            Ok(())
        }
        Cmd::Diff(a) => {
            let format = a.output.format();
            if a.old.as_os_str() == "-" && a.new.as_os_str() == "-" {
                bail!("only one of OLD and NEW can be standard input");
            }
            let old = input::load(&a.old)?;
            let new = input::load(&a.new)?;
            let query = a
                .view
                .query(&a.filter, format, SortKey::DeltaBytes, !a.all)?;
            let report = query.diff(&old.profile, &new.profile);
            let meta = Meta {
                command: Command::Diff,
                source: new.source(),
                old_source: Some(old.source()),
            };
            print(format, &report, &meta, a.view.exact)
        }
        Cmd::Snapshot(a) => {
            let path = snapshot::write(&a.input.file, &a.output)?;
            writeln!(io::stdout().lock(), "{}", path.display())?;
            Ok(())
        }
        Cmd::Watch(a) => watch::run(a),
        Cmd::Fail(a) => fail::control::run(a),
        Cmd::Capture(a) => capture::control::run(a),
        Cmd::Live(a) => capture::control::live(a),
        Cmd::Treemap(a) => {
            let loaded = input::load(&a.input.file)?;
            let filter = a.filter.filter()?;
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
            let svg = allocinfo_treemap::render(&tags, &opts);
            if a.output.as_os_str() == "-" {
                io::stdout().lock().write_all(svg.as_bytes())?;
            } else {
                std::fs::write(&a.output, svg)
                    .with_context(|| format!("writing {}", a.output.display()))?;
            }
            Ok(())
        }
    }
}

fn print(
    format: Format,
    report: &allocinfo_report::Report,
    meta: &Meta,
    exact: bool,
) -> Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let table = allocinfo_output::TableOptions {
        exact,
        ..Default::default()
    };
    allocinfo_output::write(&mut out, format, report, meta, &table)?;
    out.flush()?;
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
