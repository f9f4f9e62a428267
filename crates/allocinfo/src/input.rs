//! Reading profiles from /proc/allocinfo, files and standard input.

use allocinfo_format::Profile;
use allocinfo_format::waste::Waste;
use allocinfo_output::Source;
use anyhow::{Result, anyhow, bail};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// A parsed profile and where it came from.
#[derive(Debug)]
pub struct Loaded {
    pub path: String,
    pub profile: Profile,
    /// The waste figures read with it (`diff`, `watch`), if any.
    pub waste: Option<Waste>,
}

impl Loaded {
    /// Where the profile came from, for the report's header.
    pub fn source(&self) -> Source {
        Source {
            path: self.path.clone(),
            version: self.profile.version,
        }
    }
}

/// The most read from one profile: a kernel's is a few MiB (50,000 call
/// sites print as about 5 MiB).
pub const MAX_PROFILE: u64 = 256 << 20;

/// Reads waste figures, bounded as a profile is.
fn read_figures(from: impl Read, name: &str) -> Result<Vec<u8>> {
    read_text(from, name, MAX_PROFILE, "waste figures file")
}

/// Reads at most [`MAX_PROFILE`] bytes of `from`, named `name` in errors;
/// input whose first line is no profile's header is refused as soon as
/// that line is in (`yes | allocinfo top -` is not read for 256 MiB).
fn read_bounded(from: impl Read, name: &str) -> Result<Vec<u8>> {
    let mut checked = false;
    read_text_checked(from, name, MAX_PROFILE, "allocation profile", &mut |raw| {
        if checked {
            return Ok(());
        }
        let line = match raw.iter().position(|&b| b == b'\n') {
            Some(i) => &raw[..=i],
            // A header is a few dozen bytes.
            None if raw.len() >= 4096 => raw,
            None => return Ok(()),
        };
        checked = true;
        Profile::check_header(line).map_err(|e| anyhow!("{name}: {e}"))
    })
}

/// Reads a text file whole, at most `max` bytes: more, or a NUL byte
/// (which no profile or listing holds: `/dev/zero`, a binary file), is an
/// error that says so as soon as it is seen, naming `name`.
pub fn read_text(from: impl Read, name: &str, max: u64, what: &str) -> Result<Vec<u8>> {
    read_text_checked(from, name, max, what, &mut |_| Ok(()))
}

/// [`read_text`], calling `check` with what was read so far after each read.
fn read_text_checked(
    mut from: impl Read,
    name: &str,
    max: u64,
    what: &str,
    check: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<Vec<u8>> {
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
        check(&raw)?;
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
    let mut profile = Profile::parse(&raw).map_err(|e| anyhow!("{name}: {e}"))?;
    for tag in profile.drop_corrupt() {
        eprintln!(
            "allocinfo: warning: {name}: {}:{} func:{} has {} bytes, which no size or change is: a corrupt tag, left out",
            tag.file, tag.line, tag.function, tag.bytes
        );
    }
    profile.check_sums().map_err(|e| anyhow!("{name}: {e}"))?;
    Ok(Loaded {
        path: path.display().to_string(),
        profile,
        waste: None,
    })
}

/// The kernel's waste figures.
pub const WASTE: &str = "/proc/allocwaste";

/// Where the waste figures that go with the profile `path` are: the same
/// directory, the file name with its leading `allocinfo` replaced by
/// `allocwaste` (`/proc/allocinfo` and `/proc/allocwaste`; a snapshot's
/// `allocinfo-<UTC time>.txt` and `allocwaste-<UTC time>.txt`), or else
/// with `.allocwaste` appended (`before.txt`, `before.txt.allocwaste`).
/// Standard input has none.
pub fn waste_companion(path: &Path) -> Option<PathBuf> {
    if path.as_os_str() == "-" {
        return None;
    }
    let name = path.file_name()?.to_str()?;
    let name = match name.strip_prefix("allocinfo") {
        Some(rest) => format!("allocwaste{rest}"),
        None => format!("{name}.allocwaste"),
    };
    Some(path.with_file_name(name))
}

/// Reads the waste figures at `path` whole, unparsed.
pub fn read_waste(path: &Path) -> Result<Vec<u8>> {
    let name = path.display().to_string();
    std::fs::File::open(path)
        .map_err(|e| anyhow!("reading {name}: {e}"))
        .and_then(|f| read_figures(f, &name))
}

/// Reads and parses waste figures; `-` is standard input. Errors name the
/// source and the line.
pub fn load_waste(path: &Path) -> Result<Waste> {
    let raw = if path.as_os_str() == "-" {
        read_figures(io::stdin().lock(), "standard input")?
    } else {
        let name = path.display().to_string();
        std::fs::File::open(path)
            .map_err(|e| {
                let hint = match e.kind() {
                    io::ErrorKind::NotFound if path == Path::new(WASTE) => {
                        " (this kernel has no waste accounting)"
                    }
                    io::ErrorKind::PermissionDenied if path == Path::new(WASTE) => {
                        " (/proc/allocwaste is readable by root only)"
                    }
                    _ => "",
                };
                anyhow!("reading {}: {e}{hint}", path.display())
            })
            .and_then(|f| read_figures(f, &name))?
    };
    let name = allocinfo_output::source_name(&path.to_string_lossy()).to_owned();
    Waste::parse(&raw).map_err(|e| anyhow!("{name}: {e}"))
}

/// The waste figures at `path` if the file exists: `None` when it does not
/// (a kernel without waste accounting, a profile saved without them).
pub fn load_waste_if_present(path: &Path) -> Result<Option<Waste>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        _ => load_waste(path).map(Some),
    }
}

/// [`load`], with the waste figures at `waste` when that file exists.
pub fn load_with_waste(path: &Path, waste: Option<&Path>) -> Result<Loaded> {
    let mut loaded = load(path)?;
    if let Some(waste) = waste {
        loaded.waste = load_waste_if_present(waste)?;
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waste_companions() {
        let c = |p: &str| waste_companion(Path::new(p)).map(|p| p.display().to_string());
        assert_eq!(c("/proc/allocinfo").as_deref(), Some("/proc/allocwaste"));
        assert_eq!(
            c("/var/tmp/allocinfo-20261121T105000Z-1.txt").as_deref(),
            Some("/var/tmp/allocwaste-20261121T105000Z-1.txt")
        );
        assert_eq!(c("before.txt").as_deref(), Some("before.txt.allocwaste"));
        assert_eq!(c("-"), None);
    }
}
