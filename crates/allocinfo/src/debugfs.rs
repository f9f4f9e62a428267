//! The kernel's debugfs control files (`/sys/kernel/debug/alloctag/fail` and
//! `capture`): one command per write(2), refusals explained by errno.

use anyhow::{Result, anyhow, bail};
use std::fmt::Display;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

/// Where debugfs is mounted.
const DEBUGFS: &str = "/sys/kernel/debug";

/// The longest command the kernel takes, newline included.
const MAX_COMMAND: usize = 1024;

/// A control file: what the user is told when it is missing or refuses a command.
pub struct Control {
    /// The Kconfig option that provides the file.
    pub config: &'static str,
    /// What this file's refusals mean, by errno (Linux numbers), beyond [`COMMON`].
    pub reasons: &'static [(i32, &'static str)],
}

/// What every control file's refusals mean.
const COMMON: &[(i32, &str)] = &[
    (1, "Operation not permitted (needs CAP_SYS_ADMIN)"),
    (19, "No such device (allocation profiling is not running)"),
    (22, "Invalid argument (see dmesg for why)"),
];

impl Control {
    /// Writes `command`, newline-terminated, in one write(2).
    pub fn send(&self, path: &Path, command: &dyn Display) -> Result<()> {
        let line = format!("{command}\n");
        if line.len() > MAX_COMMAND {
            bail!("command longer than {MAX_COMMAND} bytes: '{command}'");
        }
        let mut file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| self.open_error(path, e))?;
        match file.write(line.as_bytes()) {
            Ok(n) if n == line.len() => Ok(()),
            Ok(n) => bail!(
                "{}: short write of '{command}' ({n} of {} bytes)",
                path.display(),
                line.len()
            ),
            Err(e) => Err(self.refused(command, &e)),
        }
    }

    /// Reads the file whole.
    pub fn read(&self, path: &Path) -> Result<String> {
        std::fs::read_to_string(path).map_err(|e| self.open_error(path, e))
    }

    fn open_error(&self, path: &Path, e: io::Error) -> anyhow::Error {
        match e.kind() {
            // A path elsewhere was given by hand: its own error says enough.
            io::ErrorKind::NotFound if path.starts_with(DEBUGFS) => anyhow!(
                "{}: {e}: the kernel lacks {} or debugfs is not mounted \
                 (mount -t debugfs none {DEBUGFS})",
                path.display(),
                self.config
            ),
            io::ErrorKind::PermissionDenied => {
                anyhow!("{}: {e} (the control files are root's)", path.display())
            }
            _ => anyhow!("{}: {e}", path.display()),
        }
    }

    /// Explains the kernel's refusal of `command`.
    pub fn refused(&self, command: &dyn Display, e: &io::Error) -> anyhow::Error {
        let errno = e.raw_os_error();
        match self
            .reasons
            .iter()
            .chain(COMMON)
            .find(|(n, _)| Some(*n) == errno)
        {
            Some((_, why)) => anyhow!("the kernel refused '{command}': {why}"),
            None => anyhow!("the kernel refused '{command}': {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: Control = Control {
        config: "CONFIG_X",
        reasons: &[(17, "File exists (already there)")],
    };

    #[test]
    fn refusals_by_errno() {
        let msg = |errno| {
            FILE.refused(&"add m", &io::Error::from_raw_os_error(errno))
                .to_string()
        };
        assert_eq!(
            msg(22),
            "the kernel refused 'add m': Invalid argument (see dmesg for why)"
        );
        assert!(msg(17).ends_with("File exists (already there)"));
        assert!(msg(1).contains("CAP_SYS_ADMIN"));
        assert!(msg(5).ends_with("Input/output error (os error 5)"));
    }

    #[test]
    fn missing_file_names_the_option_under_debugfs_only() {
        let missing = || io::Error::from(io::ErrorKind::NotFound);
        let under = FILE.open_error(Path::new("/sys/kernel/debug/alloctag/x"), missing());
        assert!(under.to_string().contains("lacks CONFIG_X"));
        let elsewhere = FILE.open_error(Path::new("/tmp/x"), missing());
        assert!(!elsewhere.to_string().contains("CONFIG_X"));
    }

    #[test]
    fn long_commands_are_refused_before_writing() {
        let long = "x".repeat(MAX_COMMAND);
        let err = FILE.send(Path::new("/nonexistent/x"), &long).unwrap_err();
        assert!(err.to_string().contains("longer than 1024 bytes"));
    }
}
