//! `allocinfo capture` and `allocinfo live`: commands to the capture control
//! file, and the live objects read from the `live` report.

use super::args::{CaptureArgs, CaptureCmd, LiveArgs, LiveBy};
use crate::debugfs::{Control, Trust};
use crate::messages::{self, usage};
use crate::select::Target;
use allocinfo_format::capture::listing;
use allocinfo_format::capture::{Command, Object, by_process, by_stack, parse};
use allocinfo_output::{Document, capture};
use anyhow::{Context, Result, anyhow, bail};
use std::io::Write;

pub fn run(args: CaptureArgs) -> Result<()> {
    // Printed once the command succeeded; a write error names stdout.
    let mut out = Vec::new();
    run_in(args, Trust::Debugfs, &mut out)?;
    messages::write_stdout(&out)
}

fn run_in(args: CaptureArgs, trust: Trust, out: &mut dyn Write) -> Result<()> {
    let path = args.dir.join("capture");
    match args.command {
        CaptureCmd::Add(a) => {
            CONTROL
                .send(&path, &Command::Add(a.select.selectors), trust)
                .context("capture add")?;
            writeln!(out, "capture on; see allocinfo capture list")?;
        }
        CaptureCmd::Remove(a) => {
            let command = match a.target().map_err(usage)? {
                Target::Id(id) => Command::Remove(id),
                Target::All => Command::Clear,
                Target::Selection(selectors) => {
                    let text = CONTROL.read(&path).context("capture remove")?;
                    let selection = selectors.join(" ");
                    match selection_id(&text, &selection) {
                        Some(id) => Command::Remove(id),
                        None => bail!(
                            "capture remove: no selection is exactly '{selection}' \
                             (see allocinfo capture list)"
                        ),
                    }
                }
            };
            CONTROL
                .send(&path, &command, trust)
                .context("capture remove")?;
        }
        CaptureCmd::Limit(a) => CONTROL
            .send(&path, &Command::Limit(a.records), trust)
            .context("capture limit")?,
        CaptureCmd::List(a) => {
            let text = CONTROL.read(&path).context("capture list")?;
            // Checked in both modes: a file that is no listing is an error.
            let listing = listing::parse(&text)
                .map_err(|e| anyhow!("capture list: {}: {e}", path.display()))?;
            Document::either(
                a.json,
                a.pretty,
                || capture::listing_json(&listing),
                || text,
            )
            .write(out)?;
        }
    }
    out.flush()?;
    Ok(())
}

pub fn live(args: LiveArgs) -> Result<()> {
    let path = args.dir.join("live");
    let text = CONTROL.read(&path).context("live")?;
    let live = parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let objects: Vec<&Object> = live
        .objects
        .iter()
        .filter(|o| args.older_than.is_none_or(|min| o.age_ns >= min))
        .collect();
    let (view, groups) = match args.by {
        LiveBy::Object => ("objects", Ok(Vec::new())),
        LiveBy::Stack => ("stacks", by_stack(&objects)),
        LiveBy::Process => ("processes", by_process(&objects)),
    };
    let groups = groups.map_err(|e| anyhow!("{}: {e}", path.display()))?;
    messages::emit(&Document::either(
        args.json,
        args.pretty,
        || capture::json(view, &objects, &groups, &live.untracked),
        || match args.by {
            LiveBy::Object => capture::objects_table(&objects, &live.untracked),
            LiveBy::Stack => capture::stacks_table(&groups, &live.untracked),
            LiveBy::Process => capture::processes_table(&groups, &live.untracked),
        },
    ))
}

/// The id of the selection `selection` in the capture file's listing
/// (`selection ID sites=N unmarked=N select=SELECTORS`).
fn selection_id(listing: &str, selection: &str) -> Option<u32> {
    listing.lines().find_map(|line| {
        let rest = line.strip_prefix("selection ")?;
        let (id, rest) = rest.split_once(' ')?;
        let (_, select) = rest.split_once("select=")?;
        (select.trim_end() == selection).then(|| id.parse().ok())?
    })
}

/// The capture control file.
pub const CONTROL: Control = Control {
    name: "capture",
    config: "CONFIG_ALLOCTAG_CAPTURE",
    reasons: &[
        (
            2,
            "No such file or directory (no selection with that id; see allocinfo capture list)",
        ),
        (
            16,
            "Device or resource busy (the limit changes only while nothing is selected)",
        ),
        (17, "File exists (the same selection is already in force)"),
        (
            28,
            "No space left on device (all 32 selections are in use; remove one first)",
        ),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Cmd};
    use clap::Parser;
    use std::io;
    use std::path::Path;

    /// A directory standing in for debugfs's, with an empty `capture`;
    /// removed when the test drops it.
    fn dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("capture"), "").unwrap();
        d
    }

    /// Runs `allocinfo capture --dir DIR ARGS` with `dir` trusted, and
    /// returns what it wrote to the control file.
    fn capture(dir: &Path, args: &[&str]) -> String {
        std::fs::write(dir.join("capture"), "").unwrap();
        let mut argv = vec!["allocinfo", "capture", "--dir", dir.to_str().unwrap()];
        argv.extend_from_slice(args);
        let Cmd::Capture(a) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!()
        };
        run_in(a, Trust::AnyFile, &mut Vec::new()).unwrap();
        std::fs::read_to_string(dir.join("capture")).unwrap()
    }

    #[test]
    fn commands_write_one_line_each() {
        let d = dir();
        let d = d.path();
        assert_eq!(
            capture(d, &["add", "module:alloctag_test", "func:hold_object"]),
            "add module:alloctag_test func:hold_object\n"
        );
        assert_eq!(capture(d, &["limit", "64"]), "limit 64\n");
        assert_eq!(capture(d, &["remove", "--all"]), "clear\n");
        assert_eq!(capture(d, &["remove", "3"]), "remove 3\n");
    }

    #[test]
    fn remove_by_selection() {
        let d = dir();
        let d = d.path();
        let listing = "capture limit=4096 size=4096 used=5 dropped=0 busy=0\n\
            selection 1 sites=1 unmarked=0 select=module:a func:f\n\
            site selection=1 live=5 live_bytes=2560 untracked=0 untracked_bytes=0 a.c:1 [a] func:f\n\
            selection 3 sites=0 unmarked=0 select=mm/slub.c\n";
        assert_eq!(selection_id(listing, "mm/slub.c"), Some(3));
        assert_eq!(selection_id(listing, "module:a func:f"), Some(1));
        assert_eq!(selection_id(listing, "module:a"), None);
        // The command overwrites the start of the file: padding keeps the
        // listing after it.
        let path = d.join("capture");
        std::fs::write(&path, format!("{}\n{listing}", "#".repeat(20))).unwrap();
        let argv = [
            "allocinfo",
            "capture",
            "--dir",
            d.to_str().unwrap(),
            "remove",
            "mm/slub.c",
        ];
        let Cmd::Capture(a) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!()
        };
        run_in(a, Trust::AnyFile, &mut Vec::new()).unwrap();
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .starts_with("remove 3\n")
        );
        let argv = [
            "allocinfo",
            "capture",
            "--dir",
            d.to_str().unwrap(),
            "remove",
            "func:nope",
        ];
        let Cmd::Capture(a) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!()
        };
        let err = run_in(a, Trust::AnyFile, &mut Vec::new()).unwrap_err();
        assert!(
            err.to_string()
                .contains("no selection is exactly 'func:nope'"),
            "{err}"
        );
    }

    #[test]
    fn errno_messages() {
        let msg = |errno| {
            let e = io::Error::from_raw_os_error(errno);
            CONTROL.refused(&Command::Limit(8), &e).to_string()
        };
        assert!(msg(16).contains("only while nothing is selected"));
        assert!(msg(22).ends_with("Invalid argument (see dmesg for why)"));
        assert!(msg(1).contains("CAP_SYS_ADMIN"));
    }
}
