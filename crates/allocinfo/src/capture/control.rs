//! `allocinfo capture` and `allocinfo live`: commands to the capture control
//! file, and the live objects read from the `live` report.

use super::{Command, Object};
use crate::cli::{CaptureArgs, CaptureCmd, LiveArgs, LiveBy};
use crate::debugfs::Control;
use anyhow::{Context, Result, anyhow};
use std::io::{self, Write};

/// Where debugfs has the capture files.
pub const DEFAULT_DIR: &str = "/sys/kernel/debug/alloctag";

pub fn run(args: CaptureArgs) -> Result<()> {
    let path = args.dir.join("capture");
    let mut out = io::stdout().lock();
    match args.command {
        CaptureCmd::Add(a) => {
            CONTROL
                .send(&path, &Command::Add(a.selectors))
                .context("capture add")?;
            writeln!(out, "capture on; see allocinfo capture list")?;
        }
        CaptureCmd::Remove(a) => {
            let command = a.id.map_or(Command::Clear, Command::Remove);
            CONTROL.send(&path, &command).context("capture remove")?;
        }
        CaptureCmd::Limit(a) => CONTROL
            .send(&path, &Command::Limit(a.records))
            .context("capture limit")?,
        CaptureCmd::List => {
            out.write_all(CONTROL.read(&path).context("capture list")?.as_bytes())?
        }
    }
    out.flush()?;
    Ok(())
}

pub fn live(args: LiveArgs) -> Result<()> {
    let path = args.dir.join("live");
    let text = CONTROL.read(&path).context("live")?;
    let live = super::parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let objects: Vec<&Object> = live
        .objects
        .iter()
        .filter(|o| args.older_than.is_none_or(|min| o.age_ns >= min))
        .collect();
    let (view, groups) = match args.by {
        LiveBy::Object => ("objects", Vec::new()),
        LiveBy::Stack => ("stacks", super::by_stack(&objects)),
        LiveBy::Process => ("processes", super::by_process(&objects)),
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    if args.json {
        let value = super::json(view, &objects, &groups, &live.untracked);
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        let text = match args.by {
            LiveBy::Object => super::objects_table(&objects, &live.untracked),
            LiveBy::Stack => super::stacks_table(&groups, &live.untracked),
            LiveBy::Process => super::processes_table(&groups, &live.untracked),
        };
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// The capture control file.
const CONTROL: Control = Control {
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
