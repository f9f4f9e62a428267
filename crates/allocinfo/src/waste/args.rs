//! The arguments of `allocinfo waste`: showing the figures, and `on`/`off`.

use crate::args::{FilterArgs, InputArgs, limit_arg};
use crate::debugfs;
use clap::{Arg, Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct WasteArgs {
    #[command(subcommand)]
    pub command: Option<WasteCmd>,
    #[command(flatten)]
    pub show: WasteShowArgs,
}

#[derive(Subcommand, Debug)]
pub enum WasteCmd {
    /// Turn the kernel's waste accounting on (debugfs, root only).
    On(WasteControlArgs),
    /// Turn it off: the figures stay as they were (debugfs, root only).
    Off(WasteControlArgs),
}

#[derive(Args, Debug)]
pub struct WasteControlArgs {
    /// The kernel's alloctag directory in debugfs, holding the `waste` control file.
    #[arg(long, value_name = "DIR", default_value = debugfs::ALLOCTAG_DIR)]
    pub dir: PathBuf,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum WasteSort {
    /// Bytes allocated beyond those requested.
    Slack,
    /// Slack as a share of the bytes.
    Ratio,
    /// Allocations counted.
    Allocs,
    /// Frees counted.
    Frees,
    /// Bytes allocated.
    Bytes,
    /// The call site's name, A to Z.
    Name,
}

/// FILE and `-f FILE` are those of the other commands ([`InputArgs`]),
/// their help said of the waste figures ([`waste_input_help`]).
#[derive(Args, Debug)]
#[command(mut_args(waste_input_help))]
pub struct WasteShowArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Sort by: numbers largest first, name A to Z; ties by call site.
    #[arg(short = 's', long = "sort", value_enum, default_value = "slack")]
    pub sort: WasteSort,
    /// Show at most N call sites, as head -n; 0 shows all [default: 20 for the table, all for JSON].
    #[arg(short = 'n', long = "limit", value_name = "N", value_parser = limit_arg)]
    pub limit: Option<usize>,
    /// Print exact byte counts in the table instead of KiB/MiB/GiB.
    #[arg(long)]
    pub exact: bool,
    /// The meminfo file whose `Slab:` the slack is compared with
    /// [default: /proc/meminfo when reading /proc/allocwaste, none otherwise].
    #[arg(long, value_name = "FILE")]
    pub meminfo: Option<PathBuf>,
    /// Reverse the order: smallest first, or Z to A (as sort -r).
    #[arg(short = 'r', long)]
    pub reverse: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// JSON, one document (schema allocinfo-waste/1) on one line.
    #[arg(long, conflicts_with_all = ["csv", "prometheus"], help_heading = "Output")]
    pub json: bool,
    /// CSV with a header row.
    #[arg(long, conflicts_with = "prometheus", help_heading = "Output")]
    pub csv: bool,
    /// Prometheus text format, for node_exporter's textfile collector.
    #[arg(long, help_heading = "Output")]
    pub prometheus: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json", help_heading = "Output")]
    pub pretty: bool,
}

/// The help of [`InputArgs`] in `waste`. Every argument is passed, in
/// place (`mut_arg` would move the two last, and the completions with them).
fn waste_input_help(arg: Arg) -> Arg {
    match arg.get_id().as_str() {
        "positional" => {
            arg.help("Waste figures to read [default: /proc/allocwaste]; `-` reads standard input")
        }
        "file" => arg.help("The figures to read, as an option (the same as FILE)"),
        _ => arg,
    }
}

impl WasteShowArgs {
    /// The file named, or /proc/allocwaste.
    pub fn path(&self) -> PathBuf {
        self.input.path_or(crate::input::WASTE)
    }
}
