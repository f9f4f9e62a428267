//! Command-line arguments.

use crate::{capture, fail};
use allocinfo_format::size::parse_size;
use allocinfo_output::Format;
use allocinfo_report::{Filter, GroupBy, Query, SortKey};
use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Read, compare and watch the kernel's memory allocation profile.
///
/// Reads /proc/allocinfo (Linux 6.12 format 1.0, and format 2.0) by default,
/// or a file given with --file (`-` for standard input).
#[derive(Parser, Debug)]
#[command(
    name = "allocinfo",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Show the largest call sites (or modules, directories, files, functions).
    Top(TopArgs),
    /// Print the tags matching exact filters, through the kernel's ioctl where it has one.
    Query(QueryArgs),
    /// Show growth per call site between two profiles (leak hunting).
    Diff(DiffArgs),
    /// Save a timestamped copy of the profile, in the kernel's format.
    Snapshot(SnapshotArgs),
    /// Refresh a table with deltas every interval, like top (q or Ctrl-C quits).
    Watch(WatchArgs),
    /// Draw live bytes as an SVG treemap: directory, file, call site.
    Treemap(TreemapArgs),
    /// Make allocations at chosen call sites fail (debugfs, root only).
    Fail(FailArgs),
    /// Choose the call sites whose live objects the kernel records (debugfs, root only).
    Capture(CaptureArgs),
    /// Show the live objects of the captured call sites: age, bytes, process, stack.
    Live(LiveArgs),
}

#[derive(Args, Debug)]
pub struct InputArgs {
    /// Profile to read; `-` reads standard input.
    #[arg(
        short = 'f',
        long = "file",
        value_name = "PATH",
        default_value = "/proc/allocinfo"
    )]
    pub file: PathBuf,
}

#[derive(Args, Debug)]
#[command(next_help_heading = "Filters")]
pub struct FilterArgs {
    /// Only this module (repeatable); `vmlinux` selects built-in code.
    #[arg(short = 'm', long = "module", value_name = "NAME")]
    pub modules: Vec<String>,
    /// Only source files matching this glob (repeatable), e.g. 'fs/xfs/*'; `*` also matches `/`.
    #[arg(short = 'p', long = "path", value_name = "GLOB")]
    pub paths: Vec<String>,
    /// Only functions matching this glob (repeatable), e.g. 'kmalloc*'.
    #[arg(short = 'F', long = "function", value_name = "GLOB")]
    pub functions: Vec<String>,
    /// Only rows with at least this many bytes, e.g. 4096, 64K, 1.5MiB (units are powers of 1024).
    #[arg(long = "min-size", value_name = "SIZE", value_parser = size_arg)]
    pub min_size: Option<i64>,
}

fn size_arg(s: &str) -> Result<i64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

impl FilterArgs {
    pub fn filter(&self) -> Result<Filter> {
        let globs = |v: &[String]| {
            v.iter()
                .map(|p| Filter::pattern(p))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Filter {
            modules: self.modules.clone(),
            files: globs(&self.paths)?,
            functions: globs(&self.functions)?,
            min_bytes: self.min_size,
        })
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupArg {
    Site,
    Module,
    Dir,
    File,
    Function,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortArg {
    Bytes,
    Calls,
    DeltaBytes,
    DeltaCalls,
}

impl SortArg {
    pub fn is_delta(self) -> bool {
        matches!(self, SortArg::DeltaBytes | SortArg::DeltaCalls)
    }
}

#[derive(Args, Debug)]
#[command(next_help_heading = "View")]
pub struct ViewArgs {
    /// Group rows by call site, module, directory, source file or function.
    #[arg(short = 'b', long = "by", value_enum, default_value = "site")]
    pub by: GroupArg,
    /// Sort by (descending); delta-* need two profiles [default: bytes; diff: delta-bytes].
    #[arg(short = 's', long = "sort", value_enum)]
    pub sort: Option<SortArg>,
    /// Show at most N rows; 0 shows all [default: 20 for the table, all otherwise].
    #[arg(short = 'n', long = "limit", value_name = "N")]
    pub limit: Option<usize>,
    /// Print exact byte counts in the table instead of KiB/MiB/GiB.
    #[arg(long)]
    pub exact: bool,
}

impl ViewArgs {
    /// The sort key given, or `default`.
    pub fn sort_key(&self, default: SortKey) -> SortKey {
        match self.sort {
            None => default,
            Some(SortArg::Bytes) => SortKey::Bytes,
            Some(SortArg::Calls) => SortKey::Calls,
            Some(SortArg::DeltaBytes) => SortKey::DeltaBytes,
            Some(SortArg::DeltaCalls) => SortKey::DeltaCalls,
        }
    }

    pub fn group_by(&self) -> GroupBy {
        match self.by {
            GroupArg::Site => GroupBy::Site,
            GroupArg::Module => GroupBy::Module,
            GroupArg::Dir => GroupBy::Dir,
            GroupArg::File => GroupBy::File,
            GroupArg::Function => GroupBy::Function,
        }
    }

    pub fn limit(&self, format: Format) -> Option<usize> {
        match self.limit {
            Some(0) => None,
            Some(n) => Some(n),
            None => format.default_limit(),
        }
    }

    /// The query these arguments describe; comparisons drop unchanged rows
    /// when `changed_only`.
    pub fn query(
        &self,
        filter: &FilterArgs,
        format: Format,
        default_sort: SortKey,
        changed_only: bool,
    ) -> Result<Query> {
        Ok(Query {
            filter: filter.filter()?,
            group_by: self.group_by(),
            sort: self.sort_key(default_sort),
            limit: self.limit(format),
            changed_only,
        })
    }
}

#[derive(Args, Debug)]
#[command(next_help_heading = "Output")]
#[group(multiple = false)]
pub struct OutputArgs {
    /// JSON, one document per report (schema allocinfo-report/1).
    #[arg(long)]
    pub json: bool,
    /// CSV with a header row.
    #[arg(long)]
    pub csv: bool,
    /// Prometheus text format, for node_exporter's textfile collector.
    #[arg(long)]
    pub prometheus: bool,
}

impl OutputArgs {
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else if self.csv {
            Format::Csv
        } else if self.prometheus {
            Format::Prometheus
        } else {
            Format::Table
        }
    }
}

#[derive(Args, Debug)]
pub struct TopArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub via: ViaArgs,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// How `/proc/allocinfo` is read.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// The ioctl where the kernel has it (not ENOTTY), otherwise the text.
    Auto,
    /// The kernel's ioctl only: fails where the kernel has none.
    Ioctl,
    /// The text only.
    Text,
}

#[derive(Args, Debug)]
pub struct ViaArgs {
    /// Read /proc/allocinfo through the kernel's ioctl, its text, or the ioctl where the kernel has one.
    #[arg(long, value_enum, default_value = "auto")]
    pub via: Via,
    /// Say on standard error which way the profile was read (ioctl or text) and why.
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

#[derive(Args, Debug)]
pub struct QueryArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub via: ViaArgs,
    #[command(flatten)]
    pub filter: QueryFilterArgs,
    /// JSON, one document (schema allocinfo-query/1), instead of the kernel's lines.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
}

/// The kernel's filter: exact values, every one given must match. Names
/// longer than 63 bytes compare by their last 63 bytes, as the kernel's do.
#[derive(Args, Debug)]
#[command(next_help_heading = "Filters (exact)")]
pub struct QueryFilterArgs {
    /// Only this module; `vmlinux` selects built-in code.
    #[arg(short = 'm', long = "module", value_name = "NAME")]
    pub module: Option<String>,
    /// Only this function, e.g. alloc_slab_page.
    #[arg(short = 'F', long = "function", value_name = "NAME")]
    pub function: Option<String>,
    /// Only this source file, as the tag names it, e.g. mm/slub.c.
    #[arg(long = "filename", value_name = "NAME")]
    pub filename: Option<String>,
    /// Only this source line.
    #[arg(short = 'l', long = "line", value_name = "N")]
    pub line: Option<u32>,
    /// Only tags with at least this many bytes, e.g. 4096, 64K (units are powers of 1024).
    #[arg(long = "min-size", value_name = "SIZE", value_parser = unsigned_size_arg)]
    pub min_size: Option<u64>,
    /// Only tags with at most this many bytes.
    #[arg(long = "max-size", value_name = "SIZE", value_parser = unsigned_size_arg)]
    pub max_size: Option<u64>,
    /// Only tags whose counts the kernel lost (accurate:no).
    #[arg(long)]
    pub inaccurate: bool,
}

fn unsigned_size_arg(s: &str) -> Result<u64, String> {
    let v = size_arg(s)?;
    u64::try_from(v).map_err(|_| format!("invalid size {s:?}: expected bytes from 0"))
}

impl QueryFilterArgs {
    pub fn filter(&self) -> allocinfo_ioctl::TagFilter {
        let builtin = |m: &String| {
            if m == allocinfo_report::BUILTIN_MODULE {
                String::new()
            } else {
                m.clone()
            }
        };
        allocinfo_ioctl::TagFilter {
            module: self.module.as_ref().map(builtin),
            function: self.function.clone(),
            file: self.filename.clone(),
            line: self.line.map(u64::from),
            accurate: self.inaccurate.then_some(false),
            min_size: self.min_size,
            max_size: self.max_size,
        }
    }
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The earlier profile (a snapshot); `-` reads standard input.
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The later profile, e.g. /proc/allocinfo; `-` reads standard input.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Also show rows that did not change.
    #[arg(short = 'a', long)]
    pub all: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Directory for allocinfo-YYYYmmddTHHMMSSZ.txt (UTC), or a file name.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR|FILE",
        default_value = "."
    )]
    pub output: PathBuf,
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Seconds between refreshes (decimals allowed).
    #[arg(short = 'i', long, value_name = "SECONDS", default_value = "1", value_parser = interval_arg)]
    pub interval: f64,
    /// Print each frame as plain text, no escape codes (serial consoles, logs).
    /// Implied when standard output is not a terminal.
    #[arg(long)]
    pub plain: bool,
    /// Stop after N frames.
    #[arg(short = 'c', long, value_name = "N")]
    pub count: Option<u64>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn interval_arg(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.01..=86400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "invalid interval {s:?}: expected seconds between 0.01 and 86400"
        )),
    }
}

#[derive(Args, Debug)]
pub struct TreemapArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// SVG file to write; `-` writes standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE.svg")]
    pub output: PathBuf,
    /// Width of the picture in pixels.
    #[arg(long, default_value = "1600", value_parser = clap::value_parser!(u32).range(100..=20000))]
    pub width: u32,
    /// Height of the picture in pixels.
    #[arg(long, default_value = "1000", value_parser = clap::value_parser!(u32).range(100..=20000))]
    pub height: u32,
    /// Title line at the top of the picture.
    #[arg(long)]
    pub title: Option<String>,
    #[command(flatten)]
    pub filter: FilterArgs,
}

#[derive(Args, Debug)]
pub struct FailArgs {
    /// The kernel's fault-injection control file.
    #[arg(
        long,
        value_name = "PATH",
        default_value = fail::control::DEFAULT,
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
    /// Up to 4 selectors in /proc/allocinfo's words, all of which a call site
    /// must match: FILE:LINE, FILE (a path suffix), func:NAME, module:NAME.
    #[arg(
        value_name = "SELECTOR",
        required = true,
        num_args = 1..=fail::MAX_SELECTORS,
        value_parser = fail::selector
    )]
    pub selectors: Vec<String>,
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

#[derive(Args, Debug)]
#[group(required = true, multiple = false)]
pub struct FailRemoveArgs {
    /// The rule's id, as `fail list` shows it.
    #[arg(value_name = "ID", value_parser = rule_id_arg)]
    pub id: Option<u32>,
    /// Remove every rule.
    #[arg(long)]
    pub all: bool,
}

fn rule_id_arg(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(id) if (1..=fail::MAX_RULES).contains(&id) => Ok(id),
        _ => Err(format!(
            "invalid rule id {s:?}: expected 1 to {}",
            fail::MAX_RULES
        )),
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    Table,
    Json,
}

#[derive(Args, Debug)]
pub struct FailListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
}

#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// The kernel's capture directory in debugfs.
    #[arg(long, value_name = "DIR", default_value = capture::control::DEFAULT_DIR, global = true)]
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
    List,
}

#[derive(Args, Debug)]
pub struct CaptureAddArgs {
    /// Up to 4 selectors in /proc/allocinfo's words, all of which a call site
    /// must match: FILE:LINE, FILE (a path suffix), func:NAME, module:NAME.
    #[arg(
        value_name = "SELECTOR",
        required = true,
        num_args = 1..=fail::MAX_SELECTORS,
        value_parser = fail::selector
    )]
    pub selectors: Vec<String>,
}

#[derive(Args, Debug)]
#[group(required = true, multiple = false)]
pub struct CaptureRemoveArgs {
    /// The selection's id, as `capture list` shows it.
    #[arg(value_name = "ID", value_parser = clap::value_parser!(u32).range(1..=32))]
    pub id: Option<u32>,
    /// End every selection.
    #[arg(long)]
    pub all: bool,
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
    #[arg(long, value_name = "DIR", default_value = capture::control::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// One row per object (oldest first), per allocation stack, or per process.
    #[arg(long, value_enum, default_value = "object")]
    pub by: LiveBy,
    /// Only objects at least this old, e.g. 30s, 5m, 2h.
    #[arg(long, value_name = "DURATION", value_parser = capture::duration_ns)]
    pub older_than: Option<u64>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
