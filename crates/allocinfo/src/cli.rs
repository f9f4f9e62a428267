//! Command-line arguments.

use crate::{capture, fail};
use allocinfo_format::size::parse_size;
use allocinfo_output::Format;
use allocinfo_report::{Filter, GroupBy, NamePattern, Query, SortKey};
use anyhow::Result;
use clap::{Arg, Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Examples for the common tasks, at the end of `allocinfo --help`.
const EXAMPLES: &str = "\
Examples:
  Largest call sites, and by module or directory:
    allocinfo top
    allocinfo top -b module -n 10
    allocinfo top -b tree -s name -n 0
  Leak hunt: a snapshot, the workload, then the growth:
    allocinfo snapshot -o /var/tmp
    <workload>
    allocinfo diff /var/tmp/allocinfo-*.txt /proc/allocinfo
  Watch one subsystem, like top:
    allocinfo watch --path 'fs/xfs/*' -i 2
  Slack (bytes allocated beyond those requested) per call site:
    allocinfo waste on; <workload>; allocinfo waste
  Fleet metrics for node_exporter's textfile collector (contrib/):
    allocinfo top -n 0 --prometheus > /var/lib/node_exporter/allocinfo.prom.tmp
  Shell completions and the manual page:
    allocinfo completions bash > /etc/bash_completion.d/allocinfo
    allocinfo man > /usr/local/share/man/man1/allocinfo.1

Names match by one rule everywhere: a pattern with * ? or [ is a glob over
the whole name (* also matches /); otherwise the name exactly, and for source
files also a path suffix after a / (slub.c matches mm/slub.c).
Exit status: 0 success, 1 error, 2 usage error.";

/// Read, compare and watch the kernel's memory allocation profile.
///
/// Reads /proc/allocinfo (Linux 6.12 format 1.0, and format 2.0) by default,
/// or the file given (`-` for standard input).
#[derive(Parser, Debug)]
#[command(
    name = "allocinfo",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Show the largest call sites (or modules, directories, files, functions).
    #[command(after_help = "Examples:
  allocinfo top                          the 20 largest call sites
  allocinfo top -b module -n 10          the 10 largest modules
  allocinfo top -b tree -s name -n 0     totals by path prefix, A to Z
  allocinfo top --path 'fs/xfs/*' --min-size 64K --csv
  allocinfo top snapshot.txt             a saved profile, as diff OLD NEW takes them")]
    Top(TopArgs),
    /// Print the tags matching filters, through the kernel's ioctl where it has one.
    Query(QueryArgs),
    /// Show growth per call site between two profiles (leak hunting).
    #[command(after_help = "Example, a leak hunt:
  allocinfo snapshot -o /var/tmp         prints /var/tmp/allocinfo-<UTC time>.txt
  <run the workload>
  allocinfo diff /var/tmp/allocinfo-*.txt /proc/allocinfo")]
    Diff(DiffArgs),
    /// Save a timestamped copy of the profile, in the kernel's format.
    Snapshot(SnapshotArgs),
    /// Refresh a table with deltas every interval, like top (q or Ctrl-C quits).
    #[command(
        after_help = "Keys: s cycles the sort, r reverses it, q, Esc or Ctrl-C quit.
Note: -n is the number of rows, as in every allocinfo command (head -n);
procps watch's -n SECONDS is -i or -d SECONDS here, and a decimal -n is refused.
Examples:
  allocinfo watch -d 2 -b module         every 2 seconds, by module
  allocinfo watch --plain -c 10 -i 0.5   ten frames as text, for a serial console"
    )]
    Watch(WatchArgs),
    /// Draw live bytes as an SVG treemap: directory, file, call site.
    Treemap(TreemapArgs),
    /// Make allocations at chosen call sites fail (debugfs, root only).
    Fail(FailArgs),
    /// Choose the call sites whose live objects the kernel records (debugfs, root only).
    Capture(CaptureArgs),
    /// Show the live objects of the captured call sites: age, bytes, process, stack.
    Live(LiveArgs),
    /// Show slack (bytes allocated beyond those requested) and churn per call site; turn the kernel's waste accounting on or off.
    #[command(after_help = "Examples:
  allocinfo waste on                     start the kernel's waste accounting (root)
  allocinfo waste                        the 20 call sites with the most slack
  allocinfo waste -s ratio -n 10         the 10 with the largest share of slack
  allocinfo waste --json                 every call site, one JSON document
  allocinfo waste off                    stop it; the figures stay as they are")]
    Waste(WasteArgs),
    /// Every figure for Prometheus: profile, fault injection, capture (node_exporter's textfile collector).
    #[command(
        after_help = "Example (contrib/node_exporter has a systemd service and timer for it):
  allocinfo metrics -o /var/lib/node_exporter/textfile_collector/allocinfo.prom"
    )]
    Metrics(MetricsArgs),
    /// Print a shell completion script, e.g. `allocinfo completions bash > /etc/bash_completion.d/allocinfo`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff), e.g. `allocinfo man > /usr/local/share/man/man1/allocinfo.1`.
    Man,
}

#[derive(Args, Debug)]
pub struct MetricsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the metrics to FILE atomically (a temporary file in its
    /// directory, then a rename), e.g. /var/lib/node_exporter/textfile_collector/allocinfo.prom;
    /// a symlink's target is replaced, a device or FIFO written through; `-` is standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The fault-injection control file, read if it exists.
    #[arg(long, value_name = "PATH", default_value = fail::control::DEFAULT)]
    pub control: PathBuf,
    /// The capture directory, whose `capture` file is read if it exists.
    #[arg(long, value_name = "DIR", default_value = capture::control::DEFAULT_DIR)]
    pub dir: PathBuf,
}

impl MetricsArgs {
    pub fn capture_file(&self) -> PathBuf {
        self.dir.join("capture")
    }
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The kernel's profile, read when no file is given.
pub const PROC: &str = "/proc/allocinfo";

#[derive(Args, Debug)]
pub struct InputArgs {
    /// Profile to read [default: /proc/allocinfo]; `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub positional: Option<PathBuf>,
    /// The profile to read, as an option (the same as FILE).
    #[arg(
        short = 'f',
        long = "file",
        value_name = "FILE",
        conflicts_with = "positional"
    )]
    pub file: Option<PathBuf>,
}

impl InputArgs {
    /// The profile named, or /proc/allocinfo.
    pub fn path(&self) -> PathBuf {
        self.path_or(PROC)
    }

    /// The file named, as FILE or `-f FILE`, or `default`.
    pub fn path_or(&self, default: &str) -> PathBuf {
        self.positional
            .clone()
            .or_else(|| self.file.clone())
            .unwrap_or_else(|| PathBuf::from(default))
    }
}

/// Names match by one rule, in every command: a pattern with `*`, `?` or
/// `[` is a glob over the whole name (`*` also matches `/`); otherwise the
/// name exactly, and for source files also a path suffix after a `/`.
#[derive(Args, Debug)]
#[command(next_help_heading = "Filters")]
pub struct FilterArgs {
    /// Only this module, exactly or by glob (repeatable); `vmlinux` is built-in code.
    #[arg(short = 'm', long = "module", value_name = "NAME", value_parser = pattern_arg)]
    pub modules: Vec<NamePattern>,
    /// Only this source file: its path, a path suffix (slub.c) or a glob ('fs/xfs/*') (repeatable).
    #[arg(short = 'p', long = "path", value_name = "PATH", value_parser = pattern_arg)]
    pub paths: Vec<NamePattern>,
    /// Only this function, exactly or by glob, e.g. 'kmalloc*' (repeatable).
    #[arg(long = "function", value_name = "NAME", value_parser = pattern_arg)]
    pub functions: Vec<NamePattern>,
    /// Only rows with at least this many bytes, e.g. 4096, 64K, 1.5MiB (units are powers of 1024).
    #[arg(long = "min-size", value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub min_size: Option<i64>,
}

fn size_arg(s: &str) -> Result<i64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// A name pattern; an invalid glob is a usage error, said once.
pub fn pattern_arg(s: &str) -> Result<NamePattern, String> {
    NamePattern::new(s).map_err(|e| e.to_string())
}

impl FilterArgs {
    pub fn filter(&self) -> Filter {
        Filter {
            modules: self.modules.clone(),
            files: self.paths.clone(),
            functions: self.functions.clone(),
            min_bytes: self.min_size,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupArg {
    Site,
    Module,
    Dir,
    File,
    Function,
    /// Totals by path prefix: fs/ holds fs/xfs/ and all below (alloctop's tree view).
    Tree,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortArg {
    Bytes,
    Calls,
    DeltaBytes,
    DeltaCalls,
    /// The row's name, A to Z.
    Name,
}

impl SortArg {
    pub fn is_delta(self) -> bool {
        matches!(self, SortArg::DeltaBytes | SortArg::DeltaCalls)
    }
}

#[derive(Args, Debug)]
#[command(next_help_heading = "View")]
pub struct ViewArgs {
    /// Group rows by call site, module, directory, source file, function or path prefix.
    #[arg(short = 'b', long = "by", value_enum, default_value = "site")]
    pub by: GroupArg,
    /// Sort by: numbers largest first, name A to Z; delta-* need two profiles [default: bytes; diff: delta-bytes].
    #[arg(short = 's', long = "sort", value_enum)]
    pub sort: Option<SortArg>,
    /// Reverse the order: smallest first, or Z to A (as sort -r).
    #[arg(short = 'r', long)]
    pub reverse: bool,
    /// Show at most N rows, as head -n; 0 shows all [default: 20 for the table, all otherwise].
    #[arg(short = 'n', long = "limit", value_name = "N", value_parser = limit_arg)]
    pub limit: Option<usize>,
    /// Print exact byte counts in the table instead of KiB/MiB/GiB.
    #[arg(long)]
    pub exact: bool,
}

/// `-n` is the number of rows everywhere (head -n); procps watch's `-n`
/// (seconds) is `-i`/`-d` here, which a decimal `-n` is told.
fn limit_arg(s: &str) -> Result<usize, String> {
    s.parse::<usize>().map_err(|_| {
        let seconds = s.parse::<f64>().is_ok_and(|v| v > 0.0);
        let hint = if seconds {
            "; -n is the number of rows (as head -n) in every command: \
             for seconds between refreshes use -i/--interval or -d"
        } else {
            ""
        };
        format!("invalid row limit {s:?}: expected a number of rows, 0 for all{hint}")
    })
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
            Some(SortArg::Name) => SortKey::Name,
        }
    }

    pub fn group_by(&self) -> GroupBy {
        match self.by {
            GroupArg::Site => GroupBy::Site,
            GroupArg::Module => GroupBy::Module,
            GroupArg::Dir => GroupBy::Dir,
            GroupArg::File => GroupBy::File,
            GroupArg::Function => GroupBy::Function,
            GroupArg::Tree => GroupBy::Tree,
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
            filter: filter.filter(),
            group_by: self.group_by(),
            sort: self.sort_key(default_sort),
            limit: self.limit(format),
            changed_only,
            reverse: self.reverse,
        })
    }
}

#[derive(Args, Debug)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// JSON, one document per report (schema allocinfo-report/1), one per line.
    #[arg(long, conflicts_with_all = ["csv", "prometheus"])]
    pub json: bool,
    /// CSV with a header row.
    #[arg(long, conflicts_with = "prometheus")]
    pub csv: bool,
    /// Prometheus text format, for node_exporter's textfile collector.
    #[arg(long)]
    pub prometheus: bool,
    /// Indent the JSON (otherwise one document per line).
    #[arg(long, requires = "json")]
    pub pretty: bool,
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
    /// JSON, one document (schema allocinfo-query/1) on one line, instead of the kernel's lines.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json", help_heading = "Output")]
    pub pretty: bool,
}

/// Every filter given must match. Names match by the one rule (see
/// [`FilterArgs`]); exact module and function names and the numbers go to
/// the kernel, which filters before anything is formatted. Names of 63
/// bytes or more compare by their last 63 bytes, as the kernel's do.
#[derive(Args, Debug)]
#[command(next_help_heading = "Filters")]
pub struct QueryFilterArgs {
    /// Only this module, exactly or by glob; `vmlinux` is built-in code.
    #[arg(short = 'm', long = "module", value_name = "NAME", value_parser = pattern_arg)]
    pub module: Option<NamePattern>,
    /// Only this function, exactly or by glob, e.g. alloc_slab_page.
    #[arg(long = "function", value_name = "NAME", value_parser = pattern_arg)]
    pub function: Option<NamePattern>,
    /// Only this source file: its path, a path suffix (slub.c) or a glob.
    #[arg(short = 'p', long = "path", alias = "filename", value_name = "PATH", value_parser = pattern_arg)]
    pub path: Option<NamePattern>,
    /// Only this source line.
    #[arg(short = 'l', long = "line", value_name = "N")]
    pub line: Option<u32>,
    /// Only tags with at least this many bytes, e.g. 4096, 64K (units are powers of 1024).
    #[arg(long = "min-size", value_name = "SIZE", allow_hyphen_values = true, value_parser = unsigned_size_arg)]
    pub min_size: Option<u64>,
    /// Only tags with at most this many bytes.
    #[arg(long = "max-size", value_name = "SIZE", allow_hyphen_values = true, value_parser = unsigned_size_arg)]
    pub max_size: Option<u64>,
    /// Only tags whose counts the kernel lost (accurate:no).
    #[arg(long)]
    pub inaccurate: bool,
}

fn unsigned_size_arg(s: &str) -> Result<u64, String> {
    let v = size_arg(s)?;
    u64::try_from(v).map_err(|_| format!("invalid size {s:?}: sizes are not negative"))
}

impl QueryFilterArgs {
    /// The filter the kernel applies: exact names (not globs, not path
    /// suffixes) and the numbers. [`QueryFilterArgs::names`] does the rest.
    pub fn filter(&self) -> allocinfo_ioctl::TagFilter {
        let exact = |p: &Option<NamePattern>| match p {
            Some(NamePattern::Exact(s)) => Some(s.clone()),
            _ => None,
        };
        let builtin = |m: String| {
            if m == allocinfo_report::BUILTIN_MODULE {
                String::new()
            } else {
                m
            }
        };
        allocinfo_ioctl::TagFilter {
            module: exact(&self.module).map(builtin),
            function: exact(&self.function),
            file: None,
            line: self.line.map(u64::from),
            accurate: self.inaccurate.then_some(false),
            min_size: self.min_size,
            max_size: self.max_size,
        }
    }

    /// Whether any name pattern is given.
    pub fn has_names(&self) -> bool {
        self.module.is_some() || self.function.is_some() || self.path.is_some()
    }

    /// Whether a tag, as the kernel reports it (names of 63 bytes or more
    /// by their last 63), passes the name patterns: exact names compare
    /// as the kernel's do, by their last 63 bytes.
    pub fn names_match(&self, tag: &allocinfo_format::Tag) -> bool {
        use allocinfo_ioctl::trimmed_bytes;
        let name = |p: &Option<NamePattern>, have: &str, path: bool| match p {
            None => true,
            Some(NamePattern::Exact(want)) => {
                trimmed_bytes(want) == trimmed_bytes(have)
                    || path && allocinfo_report::is_path_suffix(want, have)
            }
            Some(NamePattern::Glob(g)) => g.matches(have),
        };
        let module = tag
            .module
            .as_deref()
            .unwrap_or(allocinfo_report::BUILTIN_MODULE);
        name(&self.module, module, false)
            && name(&self.function, &tag.function, false)
            && name(&self.path, &tag.file, true)
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
    /// Directory for allocinfo-YYYYmmddTHHMMSSZ.txt (UTC), or a file name; `-` is standard output.
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
    /// Seconds between refreshes, decimals allowed (-d as in top and slabtop).
    #[arg(short = 'i', long, visible_short_alias = 'd', visible_alias = "delay", value_name = "SECONDS", default_value = "1", value_parser = interval_arg)]
    pub interval: f64,
    /// Print each frame as plain text, no escape codes (serial consoles, logs).
    /// Implied when standard output is not a terminal.
    #[arg(long)]
    pub plain: bool,
    /// Stop after N frames.
    #[arg(short = 'c', long, value_name = "N")]
    pub count: Option<u64>,
    /// Waste figures read with each frame for an ALLOCS/S column [default:
    /// next to the profile: /proc/allocwaste for /proc/allocinfo]; no
    /// column when the file does not exist.
    #[arg(long, value_name = "FILE")]
    pub waste: Option<PathBuf>,
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
    #[arg(long, value_name = "DIR", default_value = capture::control::DEFAULT_DIR)]
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
}

/// FILE and `-f FILE` are those of the other commands ([`InputArgs`]),
/// their help said of the waste figures ([`waste_input_help`]).
#[derive(Args, Debug)]
#[command(mut_args(waste_input_help))]
pub struct WasteShowArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Sort by, largest first; ties by call site.
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
    /// JSON, one document on one line.
    #[arg(long)]
    pub json: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json")]
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

/// What `treemap` colours rectangles by.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ColorBy {
    /// One hue per directory.
    #[default]
    Dir,
    /// Call sites by their slack ratio, from the waste figures (--waste):
    /// green none, red all; grey without figures.
    Slack,
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
    /// Colour rectangles by directory, or call sites by their slack ratio.
    #[arg(long, value_enum, default_value = "dir")]
    pub color: ColorBy,
    /// Waste figures for --color slack [default: next to the profile:
    /// /proc/allocwaste for /proc/allocinfo].
    #[arg(long, value_name = "FILE")]
    pub waste: Option<PathBuf>,
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

/// What `remove` ends: one by its id, one by its selectors (the one whose
/// selection is exactly these), or all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Id(u32),
    Selection(Vec<String>),
    All,
}

/// An id (digits, 1 to `max`) or a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdOrSelector {
    Id(u32),
    Selector(String),
}

fn id_or_selector(s: &str, what: &str, max: u32) -> Result<IdOrSelector, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return match s.parse::<u32>() {
            Ok(id) if (1..=max).contains(&id) => Ok(IdOrSelector::Id(id)),
            _ => Err(format!("invalid {what} id {s:?}: expected 1 to {max}")),
        };
    }
    fail::selector(s).map(IdOrSelector::Selector)
}

fn rule_arg(s: &str) -> Result<IdOrSelector, String> {
    id_or_selector(s, "rule", fail::MAX_RULES)
}

fn selection_arg(s: &str) -> Result<IdOrSelector, String> {
    id_or_selector(s, "selection", 32)
}

/// The target of `remove`: one id alone, or selectors, or `--all`.
fn target(items: &[IdOrSelector], all: bool) -> Result<Target, String> {
    match items {
        [] if all => Ok(Target::All),
        [IdOrSelector::Id(id)] => Ok(Target::Id(*id)),
        _ if items.iter().all(|i| matches!(i, IdOrSelector::Selector(_))) => Ok(Target::Selection(
            items
                .iter()
                .map(|i| match i {
                    IdOrSelector::Selector(s) => s.clone(),
                    IdOrSelector::Id(_) => unreachable!(),
                })
                .collect(),
        )),
        _ => Err("give one id, or selectors, not both".to_owned()),
    }
}

#[derive(Args, Debug)]
#[group(required = true, multiple = false)]
pub struct FailRemoveArgs {
    /// The rule's id, as `fail list` shows it, or the selectors it was armed
    /// with (the rule whose selection is exactly these).
    #[arg(value_name = "ID|SELECTOR", num_args = 1..=fail::MAX_SELECTORS, value_parser = rule_arg)]
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
    /// The selection's id, as `capture list` shows it, or its selectors
    /// (the selection that is exactly these).
    #[arg(value_name = "ID|SELECTOR", num_args = 1..=fail::MAX_SELECTORS, value_parser = selection_arg)]
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
    #[arg(long, value_name = "DIR", default_value = capture::control::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// One row per object (oldest first), per allocation stack, or per process.
    #[arg(short = 'b', long, value_enum, default_value = "object")]
    pub by: LiveBy,
    /// Only objects at least this old, e.g. 30s, 5m, 2h.
    #[arg(long, value_name = "DURATION", value_parser = capture::duration_ns)]
    pub older_than: Option<u64>,
    /// JSON, one document per line.
    #[arg(long)]
    pub json: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json")]
    pub pretty: bool,
}
