//! `allocinfo top`: the largest call sites, or modules, directories, files,
//! functions or path prefixes.

use crate::args::{FilterArgs, InputArgs, OutputArgs, ViewArgs};
use crate::messages::{print_split, usage, warn_unmarked, warn_unmatched};
use crate::split::SplitArgs;
use crate::via::{self, ViaArgs};
use allocinfo_output::{Command, Meta};
use allocinfo_report::SortKey;
use anyhow::Result;
use clap::Args;

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
    pub split: SplitArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl TopArgs {
    /// The usage errors no reading can fix, found before anything is read.
    pub fn validate(&self) -> Result<()> {
        via::check(&self.via, &self.input.path())?;
        self.split
            .validate(&self.input.path(), self.via.via, true)?;
        if self.view.sort.is_some_and(|s| s.is_delta()) {
            return Err(usage(format!(
                "--sort {} needs two profiles: use it with diff or watch",
                self.view.sort_key(SortKey::Bytes)
            )));
        }
        Ok(())
    }
}

pub fn run(a: TopArgs) -> Result<()> {
    a.validate()?;
    let format = a.output.format();
    let file = a.input.path();
    let query = a.view.query(&a.filter, format, SortKey::Bytes, false)?;
    let (loaded, taken, tagged) = match a.split.spec() {
        Some(spec) => {
            let (loaded, tagged, taken) =
                crate::split::read_shares(&a.split, a.via.via, &file, &spec)?;
            (loaded, taken, Some(tagged))
        }
        None => {
            let (loaded, taken) = via::load_profile(&file, &a.via)?;
            (loaded, taken, None)
        }
    };
    if a.via.verbose {
        let n = loaded.profile.tags.len();
        eprintln!("{}", via::describe("top", &loaded.path, &taken, n, "tag"));
    }
    warn_unmatched(&query.filter, &loaded.profile.tags, &loaded.path);
    warn_unmarked(&query.filter, loaded.profile.version, &loaded.path);
    let report = query.top(&loaded.profile);
    let splits = a
        .split
        .split
        .zip(tagged.as_ref())
        .map(|(by, tagged)| crate::split::splits(by.by(), &query, tagged))
        .map(|s| match taken {
            // The text's node pairs have no calls.
            via::Taken::Text(_) => s.without_calls(),
            via::Taken::Ioctl { .. } => s,
        });
    let meta = Meta {
        command: Command::Top,
        source: loaded.source(),
        old_source: None,
    };
    let (exact, pretty) = (a.view.exact, a.output.pretty);
    print_split(format, &report, &meta, exact, pretty, None, splits.as_ref())
}
