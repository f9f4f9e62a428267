//! The command line: the commands, each with the arguments its own module
//! defines (`top::TopArgs`, `fail::args::FailArgs`, ...), and the examples
//! of `allocinfo --help`. Arguments several commands share are in
//! [`crate::args`].

use crate::capture::args::{CaptureArgs, LiveArgs};
use crate::diff::DiffArgs;
use crate::fail::args::FailArgs;
use crate::flame::FlameArgs;
use crate::metrics::MetricsArgs;
use crate::pprof::PprofArgs;
use crate::query::QueryArgs;
use crate::snapshot::SnapshotArgs;
use crate::status::StatusArgs;
use crate::top::TopArgs;
use crate::treemap::TreemapArgs;
use crate::waste::args::WasteArgs;
use crate::watch::WatchArgs;
use clap::{Args, Parser, Subcommand};

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
  Where page tags live (page flags or page_ext), and what would free bits:
    allocinfo status
  Fleet metrics for node_exporter's textfile collector (contrib/):
    allocinfo top -n 0 --prometheus > /var/lib/node_exporter/allocinfo.prom.tmp
  Shell completions and the manual page:
    allocinfo completions bash > /etc/bash_completion.d/allocinfo
    allocinfo man --dir /usr/local/share/man/man1

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
    args_override_self = true,
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
  allocinfo top snapshot.txt             a saved profile, as diff OLD NEW takes them
  allocinfo top --split cpu -n 5         the 5 largest, each with its bytes per CPU
  allocinfo top --split cpu --at 3 --min-at 1M   call sites holding 1 MiB or more on CPU 3")]
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
        after_help = "Keys: s cycles the sort, r reverses it, q, Esc or Ctrl-C quit, Ctrl-Z stops (fg resumes).
Note: -n is the number of rows, as in every allocinfo command (head -n);
procps watch's -n SECONDS is -i or -d SECONDS here, and a decimal -n is refused.
Examples:
  allocinfo watch -d 2 -b module         every 2 seconds, by module
  allocinfo watch --plain -c 10 -i 0.5   ten frames as text, for a serial console
  allocinfo watch --split cpu            each row's bytes per CPU, and their changes"
    )]
    Watch(WatchArgs),
    /// Draw live bytes as an SVG treemap: directory, file, call site.
    Treemap(TreemapArgs),
    /// Write a pprof profile (gzipped profile.proto) for go tool pprof, Pyroscope or Parca.
    #[command(after_help = "Examples:
  allocinfo pprof -o kernel.pb.gz                      live bytes and allocations per call site
  allocinfo pprof --since before.txt -o growth.pb.gz   what each site holds more since a snapshot
  allocinfo pprof --live -o live.pb.gz                 captured live objects with their stacks (root)
  go tool pprof -top kernel.pb.gz                      read by pprof itself")]
    Pprof(PprofArgs),
    /// Draw an SVG flame graph: the call sites' tree, or captured live objects by stack.
    #[command(after_help = "Examples:
  allocinfo flame -o sites.svg                  live bytes as an icicle: directory, file, function, line
  allocinfo flame --live -o live.svg            captured live objects' stacks (root)
  allocinfo flame --path 'fs/*' -o fs.svg       only call sites under fs/")]
    Flame(FlameArgs),
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
    /// Show where page tags live (page flags or page_ext) and what would free page-flag bits (debugfs, root only).
    #[command(after_help = "Examples:
  allocinfo status                       where page tags live, and why (root)
  allocinfo status --json                the same, one JSON document
  allocinfo status -f status.txt         a copy of the file, from another machine")]
    Status(StatusArgs),
    /// Every figure for Prometheus: profile, fault injection, capture (node_exporter's textfile collector).
    #[command(
        after_help = "Example (contrib/node_exporter has a systemd service and timer for it):
  allocinfo metrics -o /var/lib/node_exporter/textfile_collector/allocinfo.prom"
    )]
    Metrics(MetricsArgs),
    /// Print a shell completion script, e.g. `allocinfo completions bash > /etc/bash_completion.d/allocinfo`.
    Completions(CompletionsArgs),
    /// Print a manual page (roff): allocinfo's, or a command's (`allocinfo man top`); --dir writes them all.
    Man(crate::man::ManArgs),
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
