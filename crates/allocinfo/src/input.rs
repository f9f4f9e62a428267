//! Reading profiles from /proc/allocinfo, files and standard input.

use allocinfo_format::Profile;
use anyhow::{Context, Result, anyhow};
use std::io::{self, Read};
use std::path::Path;

/// A parsed profile and where it came from.
pub struct Loaded {
    pub path: String,
    pub profile: Profile,
}

/// Reads a whole profile; `-` is standard input.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut raw = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut raw)
            .context("reading standard input")?;
        return Ok(raw);
    }
    std::fs::read(path).map_err(|e| {
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
    })
}

/// Reads and parses a profile. Errors name the source and the line.
pub fn load(path: &Path) -> Result<Loaded> {
    let raw = read(path)?;
    let name = allocinfo_output::source_name(path.to_str().unwrap_or("?")).to_owned();
    let profile = Profile::parse(&raw).map_err(|e| anyhow!("{name}: {e}"))?;
    Ok(Loaded {
        path: path.display().to_string(),
        profile,
    })
}
