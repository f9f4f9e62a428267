//! `allocinfo diff OLD NEW`: growth per call site between two profiles,
//! with allocations per second when both have waste figures beside them.

use crate::args::{FilterArgs, OutputArgs, ViewArgs};
use crate::input;
use crate::messages::{print_split, usage, warn_unmarked, warn_unmatched};
use crate::split::SplitArgs;
use allocinfo_format::Tag;
use allocinfo_output::{Command, Meta, Splits};
use allocinfo_report::SortKey;
use allocinfo_report::rates::rates;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

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
    pub split: SplitArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl DiffArgs {
    /// The usage errors no reading can fix, found before anything is read.
    pub fn validate(&self) -> Result<()> {
        if self.old.as_os_str() == "-" && self.new.as_os_str() == "-" {
            return Err(usage("only one of OLD and NEW can be standard input"));
        }
        self.split.refuse_in_diff()?;
        self.split
            .validate(&self.new, crate::via::Via::Text, true)?;
        Ok(())
    }
}

pub fn run(a: DiffArgs) -> Result<()> {
    a.validate()?;
    let format = a.output.format();
    let old = input::load_with_waste(&a.old, input::waste_companion(&a.old).as_deref())?;
    let new = input::load_with_waste(&a.new, input::waste_companion(&a.new).as_deref())?;
    let query = a
        .view
        .query(&a.filter, format, SortKey::DeltaBytes, !a.all)?;
    let rates = match (&old.waste, &new.waste) {
        (Some(o), Some(n)) => {
            if n.now_ns <= o.now_ns {
                eprintln!(
                    "allocinfo: note: no allocation rates: the new waste figures are not later than the old (now_ns {} then {}; another boot?)",
                    o.now_ns, n.now_ns
                );
            }
            let figures = rates(Some(o), n, &query);
            if let Some(note) = figures.note() {
                eprintln!("{note}");
            }
            Some(figures.rates)
        }
        (None, None) => None,
        (o, _) => {
            let (with, without) = if o.is_some() {
                (&a.old, &a.new)
            } else {
                (&a.new, &a.old)
            };
            eprintln!(
                "allocinfo: note: no allocation rates: waste figures next to {} but none next to {}",
                with.display(),
                without.display()
            );
            None
        }
    };
    let both: Vec<Tag> = old
        .profile
        .tags
        .iter()
        .chain(&new.profile.tags)
        .cloned()
        .collect();
    warn_unmatched(&query.filter, &both, "either profile");
    let version = old.profile.version.max(new.profile.version);
    warn_unmarked(&query.filter, version, "either profile");
    let report = query.diff(&old.profile, &new.profile);
    // Each node's change, from the two profiles' node pairs (bytes only).
    let splits = match a.split.split {
        Some(by) => {
            let (o, _) = crate::split::text_shares(&old.path, &old.profile.tags)?;
            let (n, _) = crate::split::text_shares(&new.path, &new.profile.tags)?;
            let (o, n) = (
                crate::split::dense(&query, &o),
                crate::split::dense(&query, &n),
            );
            Some(Splits::change(by.by(), &o, &n).without_calls())
        }
        _ => None,
    };
    let meta = Meta {
        command: Command::Diff,
        source: new.source(),
        old_source: Some(old.source()),
    };
    print_split(
        format,
        &report,
        &meta,
        a.view.exact,
        a.output.pretty,
        rates.as_ref(),
        splits.as_ref(),
    )
}
