//! Arguments shared by the commands that read a profile: the input, the
//! filters, the view (grouping, order, rows) and the output format.

use allocinfo_format::size::parse_size;
use allocinfo_output::Format;
use allocinfo_report::{Filter, GroupBy, NamePattern, Query, SortKey};
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

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

    /// Whether a profile was named (FILE or `-f FILE`).
    pub fn named(&self) -> bool {
        self.positional.is_some() || self.file.is_some()
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
    /// Only rows with at least this many bytes, e.g. 4096, 64K, 1.5MiB (K, KiB: 1024; kB, MB: powers of 1000).
    #[arg(long = "min-size", visible_alias = "min", value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub min_size: Option<i64>,
    /// Only tags of modules unloaded while their allocations were live (unloaded:yes, format 2.0).
    #[arg(long)]
    pub unloaded: bool,
}

pub fn size_arg(s: &str) -> Result<i64, String> {
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
            unloaded: self.unloaded,
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
    #[arg(short = 'n', long = "limit", visible_alias = "lines", value_name = "N", value_parser = limit_arg)]
    pub limit: Option<usize>,
    /// Print exact byte counts in the table instead of KiB/MiB/GiB.
    #[arg(long)]
    pub exact: bool,
    /// One row per call site: an unloaded module's instance and the reloaded module's summed (marked unloaded only if all parts were).
    #[arg(long)]
    pub fold: bool,
}

/// `-n` is the number of rows everywhere (head -n); procps watch's `-n`
/// (seconds) is `-i`/`-d` here, which a decimal `-n` is told.
pub fn limit_arg(s: &str) -> Result<usize, String> {
    s.parse::<usize>().map_err(|_| {
        let seconds = s.contains('.') && s.parse::<f64>().is_ok_and(|v| v > 0.0);
        let hint = if seconds {
            "; -n is the number of rows (as head -n) in every command: \
             watch's seconds between refreshes are -i/--interval or -d"
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
            fold: self.fold,
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
