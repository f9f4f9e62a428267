//! `allocinfo status`: where the kernel keeps page tags, read from
//! `/sys/kernel/debug/alloctag/status` (alloctag's Rust core, root only):
//! in spare bits of `page->flags` as an index (booted with
//! `sysctl.vm.mem_profiling=1,compressed`) or as a pointer per page in
//! page_ext; and, when vmlinux's tags do not fit in the free bits, which
//! Kconfig changes would free enough of them, from how `page->flags`' bits
//! are spent.
//!
//! `page_flags`' `unused` is 6.12's `NR_UNUSED_PAGEFLAG_BITS`, which counts
//! last_cpupid by its shift even where it does not fit in page flags (and
//! lives in `struct page` instead): it is then negative, and `free_bits`
//! is 0. The fields, `unused` included, add up to `long` all the same, and
//! vmlinux's tags are short by `needed_bits - unused`.
//!
//! The file is one `key: value` a line; keys this tool does not know are
//! skipped (later kernels may add lines), a key it needs that is missing is
//! an error naming it. The last two, `module_tags` (the module data memory
//! that holds loaded and unloaded modules' tags) and `unloaded_modules` (the
//! modules unloaded with live allocations, whose tags are kept), came later:
//! an older kernel's file has neither, and they are then not reported.

mod fit;
mod parse;
mod render;
#[cfg(test)]
mod tests;

use parse::Status;
use render::{json, text};

use crate::args::InputArgs;
use crate::debugfs::{DEBUGFS, DEBUGFS_MAGIC};
use crate::input;
use crate::messages;
use allocinfo_output::Document;
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
