//! `allocinfo fail`: commands to the control file and its listing.

use super::{Command, OtherLines};
use crate::cli::{FailArgs, FailCmd, ListFormat};
use crate::debugfs::Control;
use anyhow::{Context, Result, anyhow};
use std::io::{self, Write};

/// Where debugfs has the control file.
pub const DEFAULT: &str = "/sys/kernel/debug/alloctag/fail";

pub fn run(args: FailArgs) -> Result<()> {
    let path = args.control.as_path();
    let mut out = io::stdout().lock();
    match args.command {
        FailCmd::Add(a) => {
            let command = Command::Add(a.selectors.clone(), a.knobs());
            CONTROL.send(path, &command).context("fail add")?;
            // A plain file given as --control holds the command just written:
            // skip such lines, and a listing that cannot be read is no error.
            let rules = CONTROL
                .read(path)
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
            CONTROL.send(path, &command).context("fail remove")?;
            writeln!(out, "{done}")?;
        }
        FailCmd::List(a) => {
            let text = CONTROL.read(path).context("fail list")?;
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

/// The fault-injection control file.
const CONTROL: Control = Control {
    config: "CONFIG_ALLOCTAG_FAULT_INJECTION",
    reasons: &[
        (
            2,
            "No such file or directory (no rule with that id; see allocinfo fail list)",
        ),
        (
            17,
            "File exists (a rule with the same selection is already armed)",
        ),
        (
            28,
            "No space left on device (all 32 rules are in use; remove one first)",
        ),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_messages() {
        let add = Command::Add(vec!["module:m".into()], vec![]);
        let msg = |errno| {
            let e = io::Error::from_raw_os_error(errno);
            CONTROL.refused(&add, &e).to_string()
        };
        assert_eq!(
            msg(22),
            "the kernel refused 'add module:m': Invalid argument (see dmesg for why)"
        );
        assert!(msg(17).contains("already armed"));
        assert!(msg(28).contains("all 32 rules"));
        assert!(msg(1).contains("CAP_SYS_ADMIN"));
        assert!(msg(5).ends_with("Input/output error (os error 5)"));
    }
}
