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
mod flame;
mod input;
mod man;
mod messages;
mod metrics;
mod outfile;
mod pprof;
mod query;
mod select;
mod snapshot;
mod split;
mod status;
mod time;
mod top;
mod treemap;
mod via;
mod waste;
mod watch;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, Cmd};
use messages::{Usage, write_stdout};
use std::io;
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

/// `allocinfo top | head` is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
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
        Cmd::Pprof(a) => pprof::run(a),
        Cmd::Flame(a) => flame::run(a),
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
