//! `allocinfo top`: the largest call sites, or modules, directories, files,
//! functions or path prefixes.

use crate::args::{FilterArgs, InputArgs, OutputArgs, ViewArgs};
use crate::via::{self, ViaArgs};
use crate::{check_via, print, usage, warn_unmatched};
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
    pub output: OutputArgs,
}

pub fn run(a: TopArgs) -> Result<()> {
    let format = a.output.format();
    let file = a.input.path();
    check_via(&a.via, &file)?;
    if a.view.sort.is_some_and(|s| s.is_delta()) {
        return Err(usage(format!(
            "--sort {} needs two profiles: use it with diff or watch",
            a.view.sort_key(SortKey::Bytes)
        )));
    }
    let query = a.view.query(&a.filter, format, SortKey::Bytes, false)?;
    let (loaded, taken) = via::load_profile(&file, &a.via)?;
    if a.via.verbose {
        let n = loaded.profile.tags.len();
        eprintln!("{}", via::describe("top", &loaded.path, &taken, n, "tag"));
    }
    warn_unmatched(&query.filter, &loaded.profile.tags, &loaded.path);
    let report = query.top(&loaded.profile);
    let meta = Meta {
        command: Command::Top,
        source: loaded.source(),
        old_source: None,
    };
    print(format, &report, &meta, a.view.exact, a.output.pretty)
}
