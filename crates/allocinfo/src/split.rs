//! `--split cpu|node` of `top`, `watch` and `diff`: each row's figures as
//! each CPU (or NUMA node) counted them, read with the kernel's
//! `ALLOCINFO_IOC_GET_SPLIT`. The text has no figures per CPU; it has each
//! node's bytes in alloctag's format 2.0 with per-node counting on
//! (`nidN:BYTES … percpu:BYTES`), so `--split node` also reads saved
//! profiles (bytes only: the pairs have no calls). `--at K --min-at SIZE`
//! keeps the call sites holding at least SIZE bytes on CPU (or node) K, a
//! condition the kernel applies while walking (and the command, on text).

use crate::args::size_arg;
use crate::input::Loaded;
use crate::messages::usage;
use crate::via::TextReason;
use crate::via::{self, Plan, Via};
use allocinfo_format::{Profile, Tag};
use allocinfo_ioctl::abi::{ALLOCINFO_SPLIT_CPU, ALLOCINFO_SPLIT_NODE, AllocinfoFilter};
use allocinfo_ioctl::{DEFAULT_ATTEMPTS, Device, SplitSpec};
use allocinfo_output::split::Dense;
use allocinfo_output::{SplitBy, Splits};
use allocinfo_report::{GroupBy, Key, Query};
use anyhow::{Result, anyhow};
use clap::{Args, ValueEnum};
use std::path::Path;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitArg {
    /// Per CPU, as each CPU counted (a share may be negative: memory freed on another CPU).
    Cpu,
    /// Per NUMA node of the memory (kernels that count per node).
    Node,
}

impl SplitArg {
    pub fn by(self) -> SplitBy {
        match self {
            SplitArg::Cpu => SplitBy::Cpu,
            SplitArg::Node => SplitBy::Node,
        }
    }

    /// The option's value and the noun of messages.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            SplitArg::Cpu => ("cpu", "CPU"),
            SplitArg::Node => ("node", "node"),
        }
    }
}

#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Split")]
pub struct SplitArgs {
    /// Also show each row's figures per CPU or NUMA node (the kernel's ioctl on /proc/allocinfo only).
    #[arg(long, value_enum, value_name = "BY")]
    pub split: Option<SplitArg>,
    /// Only call sites holding at least --min-at bytes on this CPU (or node), from 0; needs --split.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = at_arg)]
    pub at: Option<u32>,
    /// With --at: the bytes a call site holds there at least, e.g. 64K [default: 1].
    #[arg(long = "min-at", value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub min_at: Option<i64>,
}

/// A CPU or node number: 0 or more.
fn at_arg(s: &str) -> Result<u32, String> {
    match s.parse::<i64>() {
        Ok(n) if n < 0 => Err(format!(
            "invalid CPU or node {n}: CPUs and nodes are numbered from 0"
        )),
        Ok(n) if n <= i32::MAX as i64 => Ok(n as u32),
        _ => Err(format!(
            "invalid CPU or node {s:?}: expected a number from 0"
        )),
    }
}

impl SplitArgs {
    /// The usage errors no reading can fix: `--at` or `--min-at` without
    /// `--split`, `--min-at` without `--at`, `--split` on a file or the
    /// text but by node where the command reads the text's node pairs
    /// (`pairs`: top, diff).
    pub fn validate(&self, input: &Path, via: Via, pairs: bool) -> Result<()> {
        let Some(by) = self.split else {
            if self.at.is_some() || self.min_at.is_some() {
                let opt = if self.at.is_some() {
                    "--at"
                } else {
                    "--min-at"
                };
                return Err(usage(format!(
                    "{opt} selects by the figures of one CPU or node: use it with --split cpu or --split node"
                )));
            }
            return Ok(());
        };
        if self.min_at.is_some() && self.at.is_none() {
            return Err(usage(
                "--min-at needs --at: the CPU or node to hold the bytes",
            ));
        }
        let (value, noun) = by.names();
        match via::plan(via, input) {
            Ok(Plan::Ioctl) => Ok(()),
            // The text's node pairs, checked once read.
            Ok(Plan::Text(_)) if pairs && by == SplitArg::Node => Ok(()),
            Ok(Plan::Text(_)) if via == Via::Text => Err(usage(format!(
                "--split {value} reads the kernel's figures per {noun} through the ioctl: not with --via text"
            ))),
            _ => Err(usage(format!(
                "--split {value} reads the kernel's figures per {noun} through the ioctl of {}: \
                 profiles saved as text have none (not {})",
                via::PROC,
                input.to_string_lossy()
            ))),
        }
    }

    /// The diff's refusals: profiles saved as text have no figures per
    /// CPU (and OLD and NEW both being /proc/allocinfo would be one
    /// moment), and `--at` selects by one read.
    pub fn refuse_in_diff(&self) -> Result<()> {
        match self.split {
            None => Ok(()),
            Some(SplitArg::Cpu) => Err(usage(
                "--split cpu: profiles saved as text have no figures per CPU to compare: \
                 use watch --split cpu, which compares the kernel's reads share by share",
            )),
            Some(SplitArg::Node) if self.at.is_some() => Err(usage(
                "--at selects call sites by one read's figures: not with diff",
            )),
            Some(SplitArg::Node) => Ok(()),
        }
    }

    /// The request for the kernel; `None` without `--split`.
    pub fn spec(&self) -> Option<SplitSpec> {
        let by = match self.split? {
            SplitArg::Cpu => ALLOCINFO_SPLIT_CPU,
            SplitArg::Node => ALLOCINFO_SPLIT_NODE,
        };
        let at = self.at.map(|at| (at, self.min_at.unwrap_or(1)));
        Some(SplitSpec { by, at })
    }
}

/// The tags read with their shares, `[bytes, calls]` by CPU (or node).
pub type Tagged = Vec<(Tag, Vec<[i64; 2]>)>;

/// The node shares of the tags of a profile read as text from `path`, from
/// their lines' node pairs (calls 0: the pairs have none), and their
/// width; an error when no line has the pairs.
pub fn text_shares(path: &str, tags: &[Tag]) -> Result<(Tagged, usize)> {
    let mut tagged: Tagged = Vec::with_capacity(tags.len());
    let mut width = 0;
    for tag in tags {
        let shares: Vec<[i64; 2]> = tag
            .node_bytes()
            .unwrap_or_default()
            .into_iter()
            .map(|b| [b, 0])
            .collect();
        width = width.max(shares.len());
        tagged.push((tag.clone(), shares));
    }
    if width == 0 && !tags.is_empty() {
        return Err(anyhow!(
            "{path}: no figures per node: its lines have no nidN:BYTES pairs, which the kernel \
             prints in format 2.0 with per-node counting on (allocinfo.version=2.0, \
             alloctag.per_node=on or vm.mem_profiling_per_node)"
        ));
    }
    Ok((tagged, width))
}

/// [`text_shares`] of a loaded profile, keeping only the call sites with at
/// least `spec.at`'s bytes on its node, as the kernel would; an error too
/// when `--at` names a node beyond the pairs.
pub fn from_text(mut loaded: Loaded, spec: &SplitSpec) -> Result<(Loaded, Tagged)> {
    let (mut tagged, width) = text_shares(&loaded.path, &loaded.profile.tags)?;
    if let Some((at, min)) = spec.at {
        // The last share is per-CPU memory's, as in the kernel's split.
        if at as usize >= width {
            return Err(anyhow!(
                "{}: --at {at}: no such node (its lines have nodes 0 to {} and per-CPU memory as {})",
                loaded.path,
                width.saturating_sub(2),
                width.saturating_sub(1)
            ));
        }
        tagged.retain(|(_, s)| s.get(at as usize).is_some_and(|s| s[0] >= min));
        loaded.profile.tags = tagged.iter().map(|(t, _)| t.clone()).collect();
    }
    Ok((loaded, tagged))
}

/// One read of the kernel's tags with their shares: the profile as `top`
/// reads it by the ioctl (format version from the text's header at
/// `input`; the ioctl's names, trimmed past 63 bytes), and the shares.
pub fn read(dev: &mut dyn Device, input: &Path, spec: &SplitSpec) -> Result<(Loaded, Tagged, u32)> {
    let w = allocinfo_ioctl::walk_split(dev, &AllocinfoFilter::NONE, spec, DEFAULT_ATTEMPTS)
        .map_err(|e| match (&e, spec.at) {
            // The only argument the kernel can refuse that a user gave.
            (allocinfo_ioctl::Error::Request { error, .. }, Some((at, _)))
                if error.raw_os_error() == Some(libc::EINVAL) =>
            {
                anyhow!(
                    "{}: --at {at}: no such {} (EINVAL)",
                    input.display(),
                    spec.noun()
                )
            }
            _ => anyhow!("{}: {e}", input.display()),
        })?;
    let version = via::read_version(input)?;
    let mut tagged = Vec::with_capacity(w.tags.len());
    for t in &w.tags {
        let mut tag =
            allocinfo_ioctl::decode(&t.data).map_err(|e| anyhow!("{}: {e}", input.display()))?;
        if version.major < 2 {
            tag.extra.clear();
        }
        tagged.push((tag, t.shares.iter().map(|s| [s.bytes, s.calls]).collect()));
    }
    let profile = Profile {
        version,
        tags: tagged.iter().map(|(t, _)| t.clone()).collect(),
    };
    let loaded = Loaded {
        path: input.display().to_string(),
        profile,
        waste: None,
    };
    Ok((loaded, tagged, w.attempts))
}

/// The shares summed per row of `query` (a path prefix holds all below
/// it), for the tags its filter keeps.
pub fn dense(query: &Query, tagged: &Tagged) -> Dense {
    let mut rows = Dense::new();
    for (tag, shares) in tagged.iter().filter(|(t, _)| query.filter.matches(t)) {
        let keys: Vec<Key> = if query.group_by == GroupBy::Tree {
            Key::tree(tag).collect()
        } else {
            vec![query.key(tag)]
        };
        for key in keys {
            let row = rows.entry(key).or_default();
            if row.len() < shares.len() {
                row.resize(shares.len(), [0, 0]);
            }
            for (sum, s) in row.iter_mut().zip(shares) {
                sum[0] = sum[0].wrapping_add(s[0]);
                sum[1] = sum[1].wrapping_add(s[1]);
            }
        }
    }
    rows
}

/// The shares printed with `query`'s report of one read.
pub fn splits(by: SplitBy, query: &Query, tagged: &Tagged) -> Splits {
    Splits::of(by, &dense(query, tagged))
}

/// How a command reads the shares: through the kernel's ioctl, or from the
/// text's node pairs (`None` without `--split node` on the text).
fn reads_text(args: &SplitArgs, via: Via, input: &Path) -> Option<TextReason> {
    match via::plan(via, input) {
        Ok(Plan::Text(reason)) if args.split == Some(SplitArg::Node) => Some(reason),
        _ => None,
    }
}

/// One read of `input`'s tags with their shares as `spec` asks: from the
/// text's node pairs where `args` reads the text (bytes only), else
/// through the kernel's ioctl; and how it was read.
pub fn read_shares(
    args: &SplitArgs,
    via: Via,
    input: &Path,
    spec: &SplitSpec,
) -> Result<(Loaded, Tagged, via::Taken)> {
    if let Some(reason) = reads_text(args, via, input) {
        let (loaded, tagged) = from_text(crate::input::load(input)?, spec)?;
        return Ok((loaded, tagged, via::Taken::Text(reason)));
    }
    let mut dev = allocinfo_ioctl::ProcFile::open(input)?;
    let (loaded, tagged, attempts) = read(&mut dev, input, spec)?;
    Ok((loaded, tagged, via::Taken::Ioctl { attempts }))
}

/// The shares with their changes from `old` to `new` (`watch`).
pub fn changes(by: SplitBy, query: &Query, old: &Tagged, new: &Tagged) -> Splits {
    Splits::change(by, &dense(query, old), &dense(query, new))
}

/// `watch --split`'s reads: the kernel's file (a fake in tests), and the
/// shares of the previous and the current read.
pub struct SplitReader {
    dev: Box<dyn Device>,
    by: SplitBy,
    spec: SplitSpec,
    prev: Option<Tagged>,
    /// `None` before the first read.
    cur: Option<Tagged>,
}

impl SplitReader {
    pub fn new(dev: Box<dyn Device>, by: SplitBy, spec: SplitSpec) -> SplitReader {
        SplitReader {
            dev,
            by,
            spec,
            prev: None,
            cur: None,
        }
    }

    /// Reads the profile and its shares again, with the waste figures at
    /// `waste` when that file exists. On failure the last good read stays.
    pub fn advance(&mut self, input: &Path, waste: Option<&Path>) -> Result<Loaded> {
        let (mut loaded, tagged, _) = read(self.dev.as_mut(), input, &self.spec)?;
        if let Some(waste) = waste {
            loaded.waste = crate::input::load_waste_if_present(waste)?;
        }
        self.prev = self.cur.replace(tagged);
        Ok(loaded)
    }

    /// The shares of the current read and their changes since the
    /// previous (none at the first frame, as the rows' own).
    pub fn changes(&self, query: &Query) -> Splits {
        let empty = Vec::new();
        let cur = self.cur.as_ref().unwrap_or(&empty);
        changes(self.by, query, self.prev.as_ref().unwrap_or(cur), cur)
    }
}

#[cfg(test)]
mod tests;
