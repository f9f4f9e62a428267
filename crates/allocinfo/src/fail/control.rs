//! `allocinfo fail`: commands to the control file and its listing.

use super::{Command, OtherLines};
use crate::cli::{FailArgs, FailCmd, ListFormat};
use anyhow::{Context, Result, anyhow, bail};
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

/// Where debugfs has the control file.
pub const DEFAULT: &str = "/sys/kernel/debug/alloctag/fail";

/// The longest command the kernel takes, newline included.
const MAX_COMMAND: usize = 1024;

pub fn run(args: FailArgs) -> Result<()> {
    let path = args.control.as_path();
    let mut out = io::stdout().lock();
    match args.command {
        FailCmd::Add(a) => {
            let command = Command::Add(a.selectors.clone(), a.knobs());
            send(path, &command).context("fail add")?;
            // A plain file given as --control holds the command just written:
            // skip such lines, and a listing that cannot be read is no error.
            let rules = read(path)
                .and_then(|text| super::parse(&text, OtherLines::Skip))
                .unwrap_or_default();
            let rule = super::find(&rules, &a.selectors);
            writeln!(out, "{}", super::armed(rule, &a.selectors))?;
        }
        FailCmd::Remove(a) => {
            let (command, done) = match a.id {
                Some(id) => (Command::Remove(id), format!("removed rule {id}")),
                None => (Command::Clear, "removed all rules".to_owned()),
            };
            send(path, &command).context("fail remove")?;
            writeln!(out, "{done}")?;
        }
        FailCmd::List(a) => {
            let text = read(path).context("fail list")?;
            let rules = super::parse(&text, OtherLines::Refuse)
                .map_err(|e| anyhow!("fail list: {}: {e}", path.display()))?;
            match a.format {
                ListFormat::Table => write!(out, "{}", super::table(&rules))?,
                ListFormat::Json => writeln!(out, "{}", super::json(&rules))?,
            }
        }
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
        io::ErrorKind::NotFound if path == Path::new(DEFAULT) => anyhow!(
            "no {DEFAULT}: the kernel lacks CONFIG_ALLOCTAG_FAULT_INJECTION or debugfs is \
             not mounted (mount -t debugfs none /sys/kernel/debug)"
        ),
        io::ErrorKind::PermissionDenied => {
            anyhow!("{}: {e} (the control file is root's)", path.display())
        }
        _ => anyhow!("{}: {e}", path.display()),
    }
}

/// The kernel's reasons, by errno (Linux numbers).
fn refused(command: &Command, e: &io::Error) -> anyhow::Error {
    let why = match e.raw_os_error() {
        Some(1) => "Operation not permitted (needs CAP_SYS_ADMIN)",
        Some(2) => "No such file or directory (no rule with that id; see allocinfo fail list)",
        Some(17) => "File exists (a rule with the same selection is already armed)",
        Some(19) => "No such device (allocation profiling is not running)",
        Some(22) => "Invalid argument (see dmesg for why)",
        Some(28) => "No space left on device (all 32 rules are in use; remove one first)",
        _ => return anyhow!("the kernel refused '{command}': {e}"),
    };
    anyhow!("the kernel refused '{command}': {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_messages() {
        let add = Command::Add(vec!["module:m".into()], vec![]);
        let msg = |errno| refused(&add, &io::Error::from_raw_os_error(errno)).to_string();
        assert_eq!(
            msg(22),
            "the kernel refused 'add module:m': Invalid argument (see dmesg for why)"
        );
        assert!(msg(17).contains("already armed"));
        assert!(msg(28).contains("all 32 rules"));
        assert!(msg(1).contains("CAP_SYS_ADMIN"));
        assert!(msg(5).ends_with("Input/output error (os error 5)"));
        let missing = io::Error::from(io::ErrorKind::NotFound);
        assert!(
            open_error(Path::new(DEFAULT), missing)
                .to_string()
                .contains("CONFIG_ALLOCTAG_FAULT_INJECTION")
        );
    }
}
