//! The kernel's debugfs control files (`/sys/kernel/debug/alloctag/fail` and
//! `capture`): one command per write(2), refusals explained by errno.

use anyhow::{Result, anyhow, bail};
use std::fmt::Display;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

/// Where debugfs is mounted.
pub const DEBUGFS: &str = "/sys/kernel/debug";

/// alloctag's directory in debugfs: the capture files and the status.
pub const ALLOCTAG_DIR: &str = "/sys/kernel/debug/alloctag";
/// Capture's `live` report in it (a literal: clap's default values are).
pub const LIVE: &str = "/sys/kernel/debug/alloctag/live";

/// The fault-injection control file.
pub const FAIL: &str = "/sys/kernel/debug/alloctag/fail";

/// The longest command the kernel takes, newline included.
const MAX_COMMAND: usize = 1024;

/// `DEBUGFS_MAGIC` of include/uapi/linux/magic.h: the filesystem the
/// kernel's control files live on.
pub const DEBUGFS_MAGIC: i64 = 0x6462_6720;

/// The most read from a control or report file (a live report of 2^20
/// records with their stacks fits).
pub const MAX_READ: u64 = 2 << 30;

/// Which files commands may be written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Only the kernel's control file: a file of the expected name on
    /// debugfs, checked on the opened file before anything is written.
    Debugfs,
    /// Any file (unit tests, which stand plain files in for debugfs).
    #[cfg(test)]
    AnyFile,
}

/// A control file: what the user is told when it is missing or refuses a command.
pub struct Control {
    /// The file's name in the kernel's debugfs directory.
    pub name: &'static str,
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
    /// Writes `command`, newline-terminated, in one write(2), to the
    /// kernel's control file only (see [`Trust`]).
    pub fn send(&self, path: &Path, command: &dyn Display, trust: Trust) -> Result<()> {
        let line = format!("{command}\n");
        if line.len() > MAX_COMMAND {
            return Err(crate::messages::usage(format!(
                "command longer than {MAX_COMMAND} bytes: '{command}'"
            )));
        }
        // Checked before opening (opening a device or a FIFO for writing
        // can have effects of its own) and again on the opened file (the
        // path may have changed in between).
        if trust == Trust::Debugfs {
            match fs_magic(Magic::Path(path)) {
                Ok(magic) => self.check(path, magic)?,
                Err(e) => return Err(self.open_error(path, e)),
            }
        }
        let mut file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| self.open_error(path, e))?;
        if trust == Trust::Debugfs {
            let magic =
                fs_magic(Magic::File(&file)).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            self.check(path, magic)?;
        }
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

    /// Refuses a file that is not the kernel's control file: one named
    /// [`Control::name`] on debugfs (`magic` is its filesystem's; tracefs,
    /// which can host debugfs's mount point, is not enough).
    fn check(&self, path: &Path, magic: i64) -> Result<()> {
        let refuse = |why: String| {
            anyhow!(
                "{}: not alloctag's control file: {why}; refusing to write to it \
                 (the kernel's is {DEBUGFS}/alloctag/{})",
                path.display(),
                self.name
            )
        };
        if magic != DEBUGFS_MAGIC {
            return Err(refuse(format!(
                "it is not on debugfs but on {}",
                fs_name(magic)
            )));
        }
        if path.file_name().is_none_or(|n| n != self.name) {
            return Err(refuse(format!("its name is not {:?}", self.name)));
        }
        Ok(())
    }

    /// Reads the file whole, at most [`MAX_READ`] bytes.
    pub fn read(&self, path: &Path) -> Result<String> {
        let file = File::open(path).map_err(|e| self.open_error(path, e))?;
        let name = path.display().to_string();
        let raw = crate::input::read_text(file, &name, MAX_READ, "alloctag listing")?;
        String::from_utf8(raw).map_err(|e| anyhow!("{name}: not UTF-8 text: {e}"))
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

/// What [`fs_magic`] asks about.
enum Magic<'a> {
    Path(&'a Path),
    File(&'a File),
}

/// The magic number of the filesystem holding a path or an open file
/// (statfs(2), fstatfs(2)).
fn fs_magic(of: Magic) -> io::Result<i64> {
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    let rc = match of {
        Magic::Path(path) => {
            let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            // SAFETY: `c` is a NUL-terminated path that outlives the call;
            // statfs writes a `struct statfs` into `st`, which is large enough.
            unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) }
        }
        // SAFETY: as above, for a file descriptor that `file` keeps open.
        Magic::File(file) => unsafe { libc::fstatfs(file.as_raw_fd(), st.as_mut_ptr()) },
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the call succeeded, so it filled `st`.
    let st = unsafe { st.assume_init() };
    // f_type is i64 here, u32 or u64 on other architectures.
    #[allow(clippy::unnecessary_cast)]
    Ok(st.f_type as i64)
}

/// The name of the filesystem with this magic number, for messages.
fn fs_name(magic: i64) -> String {
    let name = match magic {
        0xEF53 => "ext2/3/4",
        0x0102_1994 => "tmpfs (or devtmpfs)",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x6265_6572 => "sysfs",
        0x9fa0 => "procfs",
        0x7472_6163 => "tracefs",
        0x794c_7630 => "overlayfs",
        0x6969 => "nfs",
        _ => return format!("a filesystem with magic {magic:#x}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_is_in_the_capture_directory() {
        assert_eq!(LIVE, format!("{ALLOCTAG_DIR}/live"));
    }

    const FILE: Control = Control {
        name: "x",
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
        let err = FILE
            .send(Path::new("/nonexistent/x"), &long, Trust::Debugfs)
            .unwrap_err();
        assert!(err.to_string().contains("longer than 1024 bytes"));
        assert!(
            err.downcast_ref::<crate::messages::Usage>().is_some(),
            "a usage error"
        );
    }

    /// A plain file is refused before anything is written; the same file,
    /// trusted, takes the command.
    #[test]
    fn only_debugfs_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, "precious\n").unwrap();
        let err = FILE.send(&path, &"clear", Trust::Debugfs).unwrap_err();
        assert!(err.to_string().contains("not on debugfs"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious\n");
        FILE.send(&path, &"clear", Trust::AnyFile).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "clear\nus\n");
        let err = FILE
            .send(Path::new("/dev/full"), &"clear", Trust::Debugfs)
            .unwrap_err();
        assert!(err.to_string().contains("not on debugfs"), "{err}");
    }

    #[test]
    fn filesystems_are_named() {
        assert_eq!(fs_name(0xEF53), "ext2/3/4");
        assert_eq!(fs_name(0x1234), "a filesystem with magic 0x1234");
    }
}
