//! Reading profiles from /proc/allocinfo, files and standard input.

use allocinfo_format::Profile;
use anyhow::{Result, anyhow, bail};
use std::io::{self, Read};
use std::path::Path;

/// A parsed profile and where it came from.
pub struct Loaded {
    pub path: String,
    pub profile: Profile,
}

/// The most read from one profile: a kernel's is a few MiB (50,000 call
/// sites print as about 5 MiB).
pub const MAX_PROFILE: u64 = 256 << 20;

/// Reads at most [`MAX_PROFILE`] bytes of `from`, named `name` in errors.
fn read_bounded(from: impl Read, name: &str) -> Result<Vec<u8>> {
    read_text(from, name, MAX_PROFILE, "allocation profile")
}

/// Reads a text file whole, at most `max` bytes: more, or a NUL byte
/// (which no profile or listing holds: `/dev/zero`, a binary file), is an
/// error that says so as soon as it is seen, naming `name`.
pub fn read_text(mut from: impl Read, name: &str, max: u64, what: &str) -> Result<Vec<u8>> {
    let mut raw = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) => return Ok(raw),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(anyhow!("reading {name}: {e}")),
        };
        if let Some(i) = chunk[..n].iter().position(|&b| b == 0) {
            bail!(
                "reading {name}: not text (a NUL byte at offset {}), so not an {what}",
                raw.len() + i
            );
        }
        if (raw.len() + n) as u64 > max {
            bail!(
                "reading {name}: larger than {} MiB, which no {what} is",
                max >> 20
            );
        }
        raw.extend_from_slice(&chunk[..n]);
    }
}

/// Reads a whole profile, bounded by [`MAX_PROFILE`]; `-` is standard input.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        return read_bounded(io::stdin().lock(), "standard input");
    }
    let name = path.display().to_string();
    std::fs::File::open(path)
        .map_err(|e| open_error(path, e))
        .and_then(|f| read_bounded(f, &name))
}

fn open_error(path: &Path, e: io::Error) -> anyhow::Error {
    {
        let hint = match e.kind() {
            io::ErrorKind::NotFound if path == Path::new("/proc/allocinfo") => {
                " (is the kernel built with CONFIG_MEM_ALLOC_PROFILING?)"
            }
            io::ErrorKind::PermissionDenied if path == Path::new("/proc/allocinfo") => {
                " (/proc/allocinfo is readable by root only)"
            }
            _ => "",
        };
        anyhow!("reading {}: {e}{hint}", path.display())
    }
}

/// Reads and parses a profile. Errors name the source and the line.
pub fn load(path: &Path) -> Result<Loaded> {
    let raw = read(path)?;
    let name = allocinfo_output::source_name(&path.to_string_lossy()).to_owned();
    let profile = Profile::parse(&raw).map_err(|e| anyhow!("{name}: {e}"))?;
    profile.check_sums().map_err(|e| anyhow!("{name}: {e}"))?;
    Ok(Loaded {
        path: path.display().to_string(),
        profile,
    })
}
