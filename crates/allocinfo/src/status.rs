//! `allocinfo status`: where the kernel keeps page tags, read from
//! `/sys/kernel/debug/alloctag/status` (alloctag's Rust core, root only):
//! in spare bits of `page->flags` as an index (booted with
//! `sysctl.vm.mem_profiling=1,compressed`) or as a pointer per page in
//! page_ext; and, when vmlinux's tags do not fit in the free bits, which
//! Kconfig changes would free enough of them, from how `page->flags`' bits
//! are spent.
//!
//!
//! The file's model and parser, and the fit with the Kconfig changes, are
//! `allocinfo_format::status`; its text and JSON `allocinfo_output::status`.

use crate::args::InputArgs;
use crate::debugfs::{DEBUGFS, DEBUGFS_MAGIC};
use crate::input;
use crate::messages;
use allocinfo_format::status::Status;
use allocinfo_output::Document;
use allocinfo_output::status::{json, text};
use anyhow::{Result, anyhow};
use clap::{Arg, Args};
use std::io;
use std::path::Path;

/// The kernel's status file.
pub const STATUS: &str = "/sys/kernel/debug/alloctag/status";

/// The most read from a status file (the kernel's is a few hundred bytes).
const MAX_STATUS: u64 = 1 << 20;

#[derive(Args, Debug)]
#[command(mut_args(status_input_help))]
pub struct StatusArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// JSON, one document (schema allocinfo-status/1) on one line.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json", help_heading = "Output")]
    pub pretty: bool,
}

/// The help of [`InputArgs`] in `status` (every argument is passed, in place, as in `waste`).
fn status_input_help(arg: Arg) -> Arg {
    match arg.get_id().as_str() {
        "positional" => arg.help(
            "The status file to read [default: /sys/kernel/debug/alloctag/status]; \
             `-` reads standard input",
        ),
        "file" => arg.help("The status file to read, as an option (the same as FILE)"),
        _ => arg,
    }
}

/// Whether debugfs is mounted on [`DEBUGFS`]; `None` when that cannot be told.
fn debugfs_mounted() -> Option<bool> {
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: a NUL-terminated path; statfs writes a `struct statfs` into
    // `st`, which is large enough.
    let rc = unsafe { libc::statfs(c"/sys/kernel/debug".as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: the call succeeded, so it filled `st`.
    let st = unsafe { st.assume_init() };
    // f_type is i64 here, u32 or u64 on other architectures.
    #[allow(clippy::unnecessary_cast)]
    Some(st.f_type as i64 == DEBUGFS_MAGIC)
}

/// The value of the last `debugfs=` on the kernel's command line
/// (`on`, `no-mount`, `off`), if any; `None` when that cannot be told.
fn debugfs_param() -> Option<String> {
    let cmdline = std::fs::read_to_string("/proc/cmdline").ok()?;
    cmdline
        .split_ascii_whitespace()
        .filter_map(|w| w.strip_prefix("debugfs="))
        .next_back()
        .map(str::to_owned)
}

/// Why the status file could not be opened: for the kernel's path, the
/// likely reasons (`mounted`: whether debugfs is, if known; `param`: the
/// kernel's `debugfs=`, if any). A path elsewhere was given by hand, and its
/// own error says enough. Kernel lockdown is none of them: debugfs makes its
/// files under lockdown, and a read-only 0400 file without ioctl or mmap,
/// as this one, opens under it (fs/debugfs/file.c, `debugfs_locked_down`).
fn open_error(
    path: &Path,
    e: &io::Error,
    mounted: Option<bool>,
    param: Option<&str>,
) -> anyhow::Error {
    let name = path.display();
    if !path.starts_with(DEBUGFS) {
        return anyhow!("reading {name}: {e}");
    }
    const MOUNT: &str = "mount -t debugfs none /sys/kernel/debug";
    const RUST: &str = "alloctag's Rust core (CONFIG_MEM_ALLOC_PROFILING_RUST)";
    // debugfs=off and debugfs=no-mount leave no debugfs to mount.
    let unmountable = param.filter(|&p| p == "off" || p == "no-mount");
    let why = match (e.kind(), e.raw_os_error()) {
        (io::ErrorKind::NotFound, _) => match (mounted, unmountable) {
            (Some(true), _) => format!(
                "debugfs is mounted, but this kernel has no such file: it lacks {RUST}, \
                 or is older than the file"
            ),
            (_, Some(p)) => format!(
                "debugfs is not mounted, and cannot be: the kernel was booted with \
                 debugfs={p} (boot without it, or with debugfs=on)"
            ),
            (Some(false), None) => format!(
                "debugfs is not mounted ({MOUNT}; a kernel without CONFIG_DEBUG_FS, or booted \
                 with debugfs=off or debugfs=no-mount, has none to mount)"
            ),
            (None, None) => format!(
                "debugfs is not mounted ({MOUNT}), or the kernel was booted with debugfs=off \
                 or debugfs=no-mount, or lacks CONFIG_DEBUG_FS or {RUST}"
            ),
        },
        (io::ErrorKind::PermissionDenied, Some(libc::EACCES)) => {
            "the file is root's (debugfs is mode 0700, the file 0400): run as root".to_owned()
        }
        (io::ErrorKind::PermissionDenied, _) => {
            "not root (run as root), or a security module refused it".to_owned()
        }
        _ => return anyhow!("reading {name}: {e}"),
    };
    anyhow!("reading {name}: {e}: {why}")
}

/// Reads the status file at `path` (`-`: standard input) whole, bounded.
fn read(path: &Path) -> Result<String> {
    let (raw, name) = if path.as_os_str() == "-" {
        let name = "standard input";
        (
            input::read_text(io::stdin().lock(), name, MAX_STATUS, "alloctag status file")?,
            name.to_owned(),
        )
    } else {
        let name = path.display().to_string();
        let file = std::fs::File::open(path)
            .map_err(|e| open_error(path, &e, debugfs_mounted(), debugfs_param().as_deref()))?;
        (
            input::read_text(file, &name, MAX_STATUS, "alloctag status file")?,
            name,
        )
    };
    String::from_utf8(raw).map_err(|e| anyhow!("{name}: not UTF-8 text: {e}"))
}

pub fn run(args: StatusArgs) -> Result<()> {
    let path = args.input.path_or(STATUS);
    let raw = read(&path)?;
    let name = allocinfo_output::source_name(&path.to_string_lossy()).to_owned();
    let status = Status::parse(&raw).map_err(|e| anyhow!("{name}: {e}"))?;
    for warning in status.inconsistencies() {
        eprintln!("allocinfo: warning: {name}: {warning}");
    }
    messages::emit(&Document::either(
        args.json,
        args.pretty,
        || json(&status),
        || text(&status),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_reasons() {
        let missing = io::Error::from_raw_os_error(libc::ENOENT);
        let p = Path::new(STATUS);
        let unmounted = open_error(p, &missing, Some(false), None).to_string();
        assert!(
            unmounted.starts_with("reading /sys/kernel/debug/alloctag/status: No such file")
                && unmounted.contains("mount -t debugfs none /sys/kernel/debug")
                && unmounted.contains("CONFIG_DEBUG_FS")
                && unmounted.contains("debugfs=off or debugfs=no-mount"),
            "{unmounted}"
        );
        let mounted = open_error(p, &missing, Some(true), Some("on")).to_string();
        assert!(
            mounted.ends_with(
                "debugfs is mounted, but this kernel has no such file: it lacks alloctag's \
                 Rust core (CONFIG_MEM_ALLOC_PROFILING_RUST), or is older than the file"
            ),
            "{mounted}"
        );
        let unknown = open_error(p, &missing, None, None).to_string();
        for reason in [
            "mount -t debugfs",
            "debugfs=off",
            "debugfs=no-mount",
            "CONFIG_DEBUG_FS",
            "CONFIG_MEM_ALLOC_PROFILING_RUST",
        ] {
            assert!(unknown.contains(reason), "{reason}: {unknown}");
        }
        // debugfs=off or no-mount on the command line: nothing to mount.
        for param in ["off", "no-mount"] {
            for mounted in [Some(false), None] {
                let e = open_error(p, &missing, mounted, Some(param)).to_string();
                assert!(
                    e.ends_with(&format!(
                        "debugfs is not mounted, and cannot be: the kernel was booted with \
                         debugfs={param} (boot without it, or with debugfs=on)"
                    )),
                    "{e}"
                );
            }
        }
        let denied = open_error(p, &io::Error::from_raw_os_error(libc::EACCES), None, None);
        assert!(denied.to_string().ends_with("run as root"), "{denied}");
        let eperm = open_error(p, &io::Error::from_raw_os_error(libc::EPERM), None, None);
        assert!(eperm.to_string().contains("not root"), "{eperm}");
        // Lockdown neither keeps debugfs from making the file nor this
        // read-only 0400 file from opening.
        for e in [&unmounted, &mounted, &unknown, &eperm.to_string()] {
            assert!(!e.contains("lockdown"), "{e}");
        }
        // A file named by hand: its error alone.
        let other = open_error(Path::new("/tmp/status"), &missing, Some(false), None).to_string();
        assert_eq!(
            other,
            "reading /tmp/status: No such file or directory (os error 2)"
        );
    }
}
