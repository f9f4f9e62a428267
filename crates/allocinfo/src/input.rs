//! Reading profiles from /proc/allocinfo, files and standard input.

use allocinfo_format::Profile;
use anyhow::{Context, Result, anyhow, bail};
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
    let mut raw = Vec::new();
    from.take(MAX_PROFILE + 1)
        .read_to_end(&mut raw)
        .with_context(|| format!("reading {name}"))?;
    if raw.len() as u64 > MAX_PROFILE {
        bail!(
            "reading {name}: larger than {} MiB, which no allocation profile is",
            MAX_PROFILE >> 20
        );
    }
    Ok(raw)
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
