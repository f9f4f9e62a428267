//! `allocinfo treemap`: live bytes as an SVG treemap, coloured by
//! directory or by slack ratio.

use crate::args::{FilterArgs, InputArgs};
use crate::messages::{usage, warn_unmarked, warn_unmatched};
use crate::{input, outfile};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

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

pub fn run(a: TreemapArgs) -> Result<()> {
    let loaded = input::load(&a.input.path())?;
    let filter = a.filter.filter();
    warn_unmatched(&filter, &loaded.profile.tags, &loaded.path);
    warn_unmarked(&filter, loaded.profile.version, &loaded.path);
    let tags: Vec<_> = loaded
        .profile
        .tags
        .iter()
        .filter(|t| filter.matches(t) && filter.min_bytes.is_none_or(|min| t.bytes >= min))
        .collect();
    let title = a.title.clone().unwrap_or_else(|| {
        format!(
            "allocinfo treemap: {}",
            allocinfo_output::source_name(&loaded.path)
        )
    });
    let opts = allocinfo_treemap::Options {
        width: a.width,
        height: a.height,
        title,
    };
    let slack = match a.color {
        ColorBy::Dir => None,
        ColorBy::Slack => {
            let input = a.input.path();
            let path = a
                .waste
                .clone()
                .or_else(|| input::waste_companion(&input))
                .ok_or_else(|| {
                    usage("--color slack with a profile on standard input needs --waste FILE")
                })?;
            let waste = input::load_waste(&path).context("--color slack")?;
            // Identical call sites, merged in the picture, are merged here.
            let mut sums = std::collections::BTreeMap::<String, (u64, u64)>::new();
            for s in &waste.sites {
                let e = sums.entry(s.tag.location().to_string()).or_default();
                e.0 = e.0.saturating_add(s.counts.slack);
                e.1 = e.1.saturating_add(s.counts.bytes);
            }
            let ratios: allocinfo_treemap::SlackRatios = sums
                .into_iter()
                .map(|(name, (slack, bytes))| {
                    let r = if bytes == 0 {
                        0.0
                    } else {
                        slack as f64 / bytes as f64
                    };
                    (name, r)
                })
                .collect();
            Some(ratios)
        }
    };
    let svg = allocinfo_treemap::render_with_slack(&tags, &opts, slack.as_ref());
    outfile::write(&a.output, svg.as_bytes())
}
