//! `allocinfo flame`: SVG flame graphs drawn by inferno (the Rust port of
//! Brendan Gregg's flamegraph.pl) from folded stacks: an icicle of the call
//! sites' tree (directory, file, function, line; widths the live bytes), or
//! with `--live` a flame graph of captured live objects' stacks (the
//! stack depot's frames down to the call site's line; widths their bytes).

use crate::args::{FilterArgs, InputArgs};
use crate::capture::control::CONTROL;
use crate::messages::{usage, warn_unmarked, warn_unmatched};
use crate::{input, outfile};
use allocinfo_format::Tag;
use allocinfo_format::capture::{self, Live};
use anyhow::{Context, Result, anyhow};
use clap::Args;
use inferno::flamegraph::{self, Direction, Options, Palette, color::BasicPalette};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FlameArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// SVG file to write; `-` writes standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE.svg")]
    pub output: PathBuf,
    /// Draw capture's live objects by stack instead: the kernel's report
    /// [default: /sys/kernel/debug/alloctag/live] or a saved one.
    #[arg(long, value_name = "REPORT", num_args = 0..=1, default_missing_value = crate::debugfs::LIVE)]
    pub live: Option<PathBuf>,
    /// Title line at the top of the picture.
    #[arg(long)]
    pub title: Option<String>,
    /// Width of the picture in pixels.
    #[arg(long, default_value = "1200", value_parser = clap::value_parser!(u32).range(100..=20000))]
    pub width: u32,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// A frame of folded stacks: inferno splits on `;` and reads the count after
/// the last space, so neither may be in a name.
fn frame(name: &str) -> String {
    name.replace(';', ",").replace(' ', "_")
}

/// The folded stacks of the call sites' tree: one line per call site
/// holding bytes, `dir;...;file;function;file:line BYTES`, sites with one
/// path summed.
pub fn sites_folded<'a>(tags: impl IntoIterator<Item = &'a Tag>) -> Vec<String> {
    let mut sums: BTreeMap<String, u64> = BTreeMap::new();
    for t in tags {
        let Ok(bytes) = u64::try_from(t.bytes) else {
            continue;
        };
        if bytes == 0 {
            continue;
        }
        let mut path: Vec<String> = t.file.split('/').map(frame).collect();
        path.push(frame(&t.function));
        path.push(frame(&format!("{}:{}", t.file, t.line)));
        let e = sums.entry(path.join(";")).or_default();
        *e = e.saturating_add(bytes);
    }
    sums.into_iter().map(|(k, v)| format!("{k} {v}")).collect()
}

/// The folded stacks of `live`'s objects: from the outermost frame in, each
/// frame its function (the offset dropped), and the call site's `file:line`
/// under the innermost frame of its function (the allocator's own frames,
/// from the capture hook, above it), one line per stack with its objects'
/// bytes.
pub fn live_folded(live: &Live) -> Vec<String> {
    let mut sums: BTreeMap<String, u64> = BTreeMap::new();
    for o in &live.objects {
        if o.bytes == 0 {
            continue;
        }
        // From the outermost frame in; the site's line above the innermost
        // frame of its function, as pprof places it; the leaf where none is.
        let mut path: Vec<String> = o
            .stack
            .iter()
            .rev()
            .map(|f| frame(capture::frame(f).function))
            .collect();
        let (line, at) = match o.site_tag() {
            Some(t) => (
                frame(&format!("{}:{}", t.file, t.line)),
                o.site_frame(&t.function).map(|i| o.stack.len() - i),
            ),
            None => (frame(&o.site), None),
        };
        path.insert(at.unwrap_or(path.len()), line);
        let e = sums.entry(path.join(";")).or_default();
        *e = e.saturating_add(o.bytes);
    }
    sums.into_iter().map(|(k, v)| format!("{k} {v}")).collect()
}

/// Draws `folded` with inferno: memory's palette, widths in bytes, an icicle
/// (root at the top) when `icicle`.
fn draw(folded: &[String], title: &str, width: u32, icicle: bool) -> Result<Vec<u8>> {
    let mut opts = Options::default();
    opts.title = title.to_owned();
    opts.count_name = "bytes".to_owned();
    opts.name_type = "Site:".to_owned();
    opts.colors = Palette::Basic(BasicPalette::Mem);
    opts.hash = true;
    opts.image_width = Some(width as usize);
    if icicle {
        opts.direction = Direction::Inverted;
    }
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, folded.iter().map(String::as_str), &mut svg)
        .map_err(|e| anyhow!("drawing the flame graph: {e}"))?;
    Ok(svg)
}

pub fn run(a: FlameArgs) -> Result<()> {
    if a.input.named() && a.live.is_some() {
        return Err(usage(
            "--live draws capture's report, not a profile: give the report as --live REPORT",
        ));
    }
    let (folded, title, icicle) = match &a.live {
        Some(path) => {
            let text = CONTROL.read(path).context("live")?;
            let live = allocinfo_format::capture::parse(&text)
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            let title = format!("allocinfo flame: live objects of {}", path.display());
            (live_folded(&live), title, false)
        }
        None => {
            let loaded = input::load(&a.input.path())?;
            let filter = a.filter.filter();
            warn_unmatched(&filter, &loaded.profile.tags, &loaded.path);
            warn_unmarked(&filter, loaded.profile.version, &loaded.path);
            let tags = loaded
                .profile
                .tags
                .iter()
                .filter(|t| filter.matches(t) && filter.min_bytes.is_none_or(|m| t.bytes >= m));
            let title = format!(
                "allocinfo flame: {}, live bytes by directory, file, function and line",
                allocinfo_output::source_name(&loaded.path)
            );
            (sites_folded(tags), title, true)
        }
    };
    if folded.is_empty() {
        return Err(anyhow!("nothing to draw: no call site holds bytes"));
    }
    let svg = draw(
        &folded,
        a.title.as_deref().unwrap_or(&title),
        a.width,
        icicle,
    )?;
    outfile::write(&a.output, &svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_fold_by_directory_file_function_and_line() {
        let tags: Vec<Tag> = [
            "4096 1 mm/slub.c:2478 func:alloc_slab_page",
            "8192 2 mm/slub.c:2478 func:alloc_slab_page",
            "0 0 mm/slub.c:10 func:nothing",
            "-64 1 mm/x.c:1 func:negative",
            "64 1 fs/xfs/xfs_buf.c:411 [xfs] func:f;g",
        ]
        .iter()
        .map(|l| l.parse().unwrap())
        .collect();
        assert_eq!(
            sites_folded(&tags),
            [
                "fs;xfs;xfs_buf.c;f,g;fs/xfs/xfs_buf.c:411 64",
                "mm;slub.c;alloc_slab_page;mm/slub.c:2478 12288",
            ]
        );
    }

    #[test]
    fn live_stacks_fold_from_the_outermost_frame_to_the_site() {
        let live = allocinfo_format::capture::parse(
            "object age_ns=1 bytes=256 pid=7 tgid=7 comm=cat cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x1 site=lib/m.c:42 [m] func:f\n  f+0x1a/0x40 [m]\n  do_one_initcall+0x5c/0x2f0\n\
             object age_ns=1 bytes=64 pid=7 tgid=7 comm=cat cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x2 site=lib/m.c:42 [m] func:f\n  f+0x1a/0x40 [m]\n  do_one_initcall+0x5c/0x2f0\n",
        )
        .unwrap();
        assert_eq!(live_folded(&live), ["do_one_initcall;f;lib/m.c:42 320"]);
        // As the kernel records them: the allocator's frames first.
        let live = allocinfo_format::capture::parse(
            "object age_ns=1 bytes=256 pid=7 tgid=7 comm=cat cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x1 site=lib/m.c:42 [m] func:f\n  slab_post_alloc_hook+0x2da/0x350\n  __kmalloc_cache_noprof+0x29/0xb0\n  f+0x30/0x60 [m]\n  g+0x20/0x60 [m]\n\
             object age_ns=1 bytes=64 pid=7 tgid=7 comm=cat cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x2 site=lib/m.c:9 [m] func:h\n  h+0x1/0x2 [m]\n",
        )
        .unwrap();
        assert_eq!(
            live_folded(&live),
            [
                "g;f;lib/m.c:42;__kmalloc_cache_noprof;slab_post_alloc_hook 256",
                "h;lib/m.c:9 64",
            ]
        );
    }
}
