//! The arguments of `allocinfo fail`: rules armed, removed and listed, and
//! the ids or selectors `remove` takes ([`crate::select`]).

use crate::debugfs;
use crate::select::{IdOrSelector, SelectorArgs, Target, id_or_selector, target};
use allocinfo_format::fail::{MAX_RULES, MAX_SELECTORS};
use allocinfo_format::size::parse_size;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FailArgs {
    /// The kernel's fault-injection control file.
    #[arg(
        long,
        value_name = "PATH",
        default_value = debugfs::FAIL,
        global = true
    )]
    pub control: PathBuf,
    #[command(subcommand)]
    pub command: FailCmd,
}

#[derive(Subcommand, Debug)]
pub enum FailCmd {
    /// Arm a rule: allocations at the call sites matching every selector fail.
    Add(FailAddArgs),
    /// Remove a rule, or all of them.
    Remove(FailRemoveArgs),
    /// List the rules and their armed call sites.
    List(FailListArgs),
}

#[derive(Args, Debug)]
pub struct FailAddArgs {
    #[command(flatten)]
    pub select: SelectorArgs,
    /// Percent of the allocations to fail, 0 to 100 [kernel default: 100].
    #[arg(long, value_name = "PERCENT", allow_negative_numbers = true, value_parser = probability_knob)]
    pub probability: Option<i64>,
    /// Fail only every N-th allocation, N >= 1 [kernel default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = interval_knob)]
    pub interval: Option<i64>,
    /// Stop after N failures; -1: no limit [kernel default: -1].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = times_knob)]
    pub times: Option<i64>,
    /// Let this many bytes through before the first failure, e.g. 4096, 64K [kernel default: 0].
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true, value_parser = space_knob)]
    pub space: Option<i64>,
    /// What the kernel logs per injected failure (its fault-injection
    /// `verbose` knob): 0 nothing, 1 a line, 2 also a stack dump [kernel default: 1].
    #[arg(long = "fault-verbosity", value_name = "N", allow_negative_numbers = true, value_parser = verbose_knob)]
    pub fault_verbosity: Option<i64>,
    /// Fail only in this process (thread group); 0: any [kernel default: 0].
    #[arg(long, value_name = "PID", allow_negative_numbers = true, value_parser = pid_knob)]
    pub pid: Option<i64>,
}

impl FailAddArgs {
    /// The knobs given, as the kernel names them.
    pub fn knobs(&self) -> Vec<(&'static str, i64)> {
        [
            ("probability", self.probability),
            ("interval", self.interval),
            ("times", self.times),
            ("space", self.space),
            ("verbose", self.fault_verbosity),
            ("pid", self.pid),
        ]
        .into_iter()
        .filter_map(|(name, value)| Some((name, value?)))
        .collect()
    }
}

fn knob(
    s: &str,
    name: &str,
    range: std::ops::RangeInclusive<i64>,
    expected: &str,
) -> Result<i64, String> {
    match s.parse::<i64>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(format!("invalid {name} {s:?}: expected {expected}")),
    }
}

fn probability_knob(s: &str) -> Result<i64, String> {
    knob(s, "probability", 0..=100, "a percentage from 0 to 100")
}

fn interval_knob(s: &str) -> Result<i64, String> {
    knob(s, "interval", 1..=i64::MAX, "an integer of at least 1")
}

fn times_knob(s: &str) -> Result<i64, String> {
    knob(
        s,
        "times",
        -1..=i64::MAX,
        "-1 (no limit) or a number of failures from 0",
    )
}

fn space_knob(s: &str) -> Result<i64, String> {
    parse_size(s)
        .ok()
        .filter(|&v| v >= 0)
        .ok_or_else(|| format!("invalid space {s:?}: expected bytes from 0, e.g. 4096 or 64K"))
}

fn verbose_knob(s: &str) -> Result<i64, String> {
    knob(s, "fault verbosity", 0..=2, "0, 1 or 2")
}

fn pid_knob(s: &str) -> Result<i64, String> {
    knob(s, "pid", 0..=i32::MAX.into(), "a process id, or 0 for any")
}

fn rule_arg(s: &str) -> Result<IdOrSelector, String> {
    id_or_selector(s, "rule", MAX_RULES)
}

#[derive(Args, Debug)]
#[group(required = true, multiple = false)]
pub struct FailRemoveArgs {
    /// The rule's id, as `fail list` shows it, or the selectors it was armed
    /// with (the rule whose selection is exactly these).
    #[arg(value_name = "ID|SELECTOR", num_args = 1..=MAX_SELECTORS, value_parser = rule_arg)]
    pub target: Vec<IdOrSelector>,
    /// Remove every rule.
    #[arg(long)]
    pub all: bool,
}

impl FailRemoveArgs {
    pub fn target(&self) -> Result<Target, String> {
        target(&self.target, self.all)
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    Table,
    Json,
}

#[derive(Args, Debug)]
pub struct FailListArgs {
    /// JSON, one array per line (one object per rule).
    #[arg(long)]
    pub json: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json")]
    pub pretty: bool,
    /// The old spelling of --json (`--format json`); hidden.
    #[arg(long, value_enum, hide = true, conflicts_with = "json")]
    pub format: Option<ListFormat>,
}

impl FailListArgs {
    pub fn json(&self) -> bool {
        self.json || self.format == Some(ListFormat::Json)
    }
}
