//! The arguments of `allocinfo capture` and `allocinfo live`.

use crate::debugfs;
use crate::select::{IdOrSelector, SelectorArgs, Target, id_or_selector, target};
use allocinfo_format::duration::duration_ns;
use allocinfo_format::fail::MAX_SELECTORS;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// The kernel's capture directory in debugfs.
    #[arg(long, value_name = "DIR", default_value = debugfs::ALLOCTAG_DIR, global = true)]
    pub dir: PathBuf,
    #[command(subcommand)]
    pub command: CaptureCmd,
}

#[derive(Subcommand, Debug)]
pub enum CaptureCmd {
    /// Record the live objects of the call sites matching every selector.
    Add(CaptureAddArgs),
    /// End a selection (its records go), or all of them.
    Remove(CaptureRemoveArgs),
    /// Set the most records kept; only while nothing is selected.
    Limit(CaptureLimitArgs),
    /// List the pool, the selections and their call sites.
    List(CaptureListArgs),
}

#[derive(Args, Debug)]
pub struct CaptureListArgs {
    /// JSON, one object per line: the pool and the selections with their sites.
    #[arg(long)]
    pub json: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json")]
    pub pretty: bool,
}

#[derive(Args, Debug)]
pub struct CaptureAddArgs {
    #[command(flatten)]
    pub select: SelectorArgs,
}

#[derive(Args, Debug)]
#[group(required = true, multiple = false)]
pub struct CaptureRemoveArgs {
    /// The selection's id, as `capture list` shows it, or its selectors
    /// (the selection that is exactly these).
    #[arg(value_name = "ID|SELECTOR", num_args = 1..=MAX_SELECTORS, value_parser = selection_arg)]
    pub target: Vec<IdOrSelector>,
    /// End every selection.
    #[arg(long)]
    pub all: bool,
}

impl CaptureRemoveArgs {
    pub fn target(&self) -> Result<Target, String> {
        target(&self.target, self.all)
    }
}

#[derive(Args, Debug)]
pub struct CaptureLimitArgs {
    /// Records, 1 to 1048576.
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub records: u64,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveBy {
    Object,
    Stack,
    Process,
}

#[derive(Args, Debug)]
pub struct LiveArgs {
    /// The kernel's capture directory in debugfs.
    #[arg(long, value_name = "DIR", default_value = debugfs::ALLOCTAG_DIR)]
    pub dir: PathBuf,
    /// One row per object (oldest first), per allocation stack, or per process.
    #[arg(short = 'b', long, value_enum, default_value = "object")]
    pub by: LiveBy,
    /// Only objects at least this old, e.g. 30s, 5m, 2h.
    #[arg(long, value_name = "DURATION", value_parser = duration_ns)]
    pub older_than: Option<u64>,
    /// JSON, one document per line.
    #[arg(long)]
    pub json: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json")]
    pub pretty: bool,
}

fn selection_arg(s: &str) -> Result<IdOrSelector, String> {
    id_or_selector(s, "selection", 32)
}
