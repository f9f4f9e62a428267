//! `allocinfo capture` and `allocinfo live`: commands to the capture control
//! file, and the live objects read from the `live` report.

use super::{Command, Object};
use crate::cli::{CaptureArgs, CaptureCmd, LiveArgs, LiveBy};
use anyhow::{Context, Result, anyhow, bail};
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

/// Where debugfs has the capture files.
pub const DEFAULT_DIR: &str = "/sys/kernel/debug/alloctag";

/// The longest command the kernel takes, newline included.
const MAX_COMMAND: usize = 1024;

pub fn run(args: CaptureArgs) -> Result<()> {
    let path = args.dir.join("capture");
    let mut out = io::stdout().lock();
    match args.command {
        CaptureCmd::Add(a) => {
            send(&path, &Command::Add(a.selectors)).context("capture add")?;
            writeln!(out, "capture on; see allocinfo capture list")?;
        }
        CaptureCmd::Remove(a) => {
            let command = a.id.map_or(Command::Clear, Command::Remove);
            send(&path, &command).context("capture remove")?;
        }
        CaptureCmd::Limit(a) => send(&path, &Command::Limit(a.records)).context("capture limit")?,
        CaptureCmd::List => out.write_all(read(&path).context("capture list")?.as_bytes())?,
    }
    out.flush()?;
    Ok(())
}

pub fn live(args: LiveArgs) -> Result<()> {
    let path = args.dir.join("live");
    let text = read(&path).context("live")?;
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

/// Writes one command, newline-terminated, in one write(2).
fn send(path: &Path, command: &Command) -> Result<()> {
    let line = format!("{command}\n");
    if line.len() > MAX_COMMAND {
        bail!("command longer than {MAX_COMMAND} bytes: '{command}'");
    }
    let mut file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| open_error(path, e))?;
    match file.write(line.as_bytes()) {
        Ok(n) if n == line.len() => Ok(()),
        Ok(n) => bail!(
            "{}: short write of '{command}' ({n} of {} bytes)",
            path.display(),
            line.len()
        ),
        Err(e) => Err(refused(command, &e)),
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| open_error(path, e))
}

fn open_error(path: &Path, e: io::Error) -> anyhow::Error {
    match e.kind() {
        io::ErrorKind::NotFound => anyhow!(
            "{}: {e}: the kernel lacks CONFIG_ALLOCTAG_CAPTURE or debugfs is not mounted \
             (mount -t debugfs none /sys/kernel/debug)",
            path.display()
        ),
        io::ErrorKind::PermissionDenied => {
            anyhow!("{}: {e} (the capture files are root's)", path.display())
        }
        _ => anyhow!("{}: {e}", path.display()),
    }
}

/// The kernel's reasons, by errno (Linux numbers).
fn refused(command: &Command, e: &io::Error) -> anyhow::Error {
    let why = match e.raw_os_error() {
        Some(1) => "Operation not permitted (needs CAP_SYS_ADMIN)",
        Some(2) => {
            "No such file or directory (no selection with that id; see allocinfo capture list)"
        }
        Some(16) => "Device or resource busy (the limit changes only while nothing is selected)",
        Some(17) => "File exists (the same selection is already in force)",
        Some(19) => "No such device (allocation profiling is not running)",
        Some(22) => "Invalid argument (see dmesg for why)",
        Some(28) => "No space left on device (all 32 selections are in use; remove one first)",
        _ => return anyhow!("the kernel refused '{command}': {e}"),
    };
    anyhow!("the kernel refused '{command}': {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_messages() {
        let limit = Command::Limit(8);
        let msg = |errno| refused(&limit, &io::Error::from_raw_os_error(errno)).to_string();
        assert!(msg(16).contains("only while nothing is selected"));
        assert!(msg(22).ends_with("Invalid argument (see dmesg for why)"));
        assert!(msg(1).contains("CAP_SYS_ADMIN"));
    }
}
