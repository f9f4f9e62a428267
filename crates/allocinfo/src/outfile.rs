//! Where a command's `-o` goes, one meaning in every command: `-` is
//! standard output; a regular file (or a new name) is replaced; a symlink's
//! target is what is replaced, the link stays; anything else (a device
//! node such as /dev/null or /dev/full, a FIFO, a socket) is written
//! through and never replaced.

use anyhow::{Context, Result, anyhow, bail};
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Whether `-o PATH` names standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Follows symlinks from `path` to what they end at, which need not exist
/// (a dangling link's target is made), as `install` and `sponge` do.
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_owned();
    // The kernel's own limit on links followed (MAXSYMLINKS).
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// Writes `bytes` to `path`: standard output for `-`; a regular file or a
/// new name atomically (`replace_atomically`); through a symlink to its
/// target; anything else written through.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    if is_stdout(path) {
        return crate::messages::write_stdout(bytes);
    }
    let target = resolve(path).with_context(|| format!("writing {}", path.display()))?;
    match std::fs::metadata(&target) {
        Ok(m) if !m.is_file() => write_through(&target, bytes),
        _ => replace_atomically(&target, bytes),
    }
}

/// Writes into what is at `path` (a device, a FIFO), never replacing it.
fn write_through(path: &Path, bytes: &[u8]) -> Result<()> {
    let result = OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush()));
    result.with_context(|| format!("writing {}", path.display()))
}

/// Replaces the regular file `path` atomically: a temporary file in the
/// same directory (a hidden name ending in .tmp, which node_exporter's
/// textfile collector skips), synced, readable by all, then renamed over
/// `path`.
pub fn replace_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("{}: not a file name", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        bail!("writing {}: {e}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_leave_no_temporary_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("allocinfo.prom");
        std::fs::write(&path, "old\n").unwrap();
        write(&path, b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        let names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["allocinfo.prom"]);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        let err = write(&dir.join("no/such/dir/x.prom"), b"x").unwrap_err();
        assert!(err.to_string().starts_with("writing "), "{err}");
    }

    #[test]
    fn symlink_loops_are_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", tmp.path().join("b")).unwrap();
        let err = write(&a, b"x").unwrap_err();
        assert!(format!("{err:#}").contains("symbolic links"), "{err:#}");
    }
}
