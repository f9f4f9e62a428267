//! `allocinfo snapshot`: a verbatim, timestamped copy of the profile.

use crate::input;
use crate::time::Utc;
use allocinfo_format::Profile;
use anyhow::{Context, Result, anyhow};
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Copies the profile at `from` to `to`: into `to/allocinfo-<UTC time>.txt`
/// when `to` is a directory (adding `-1`, `-2`, ... if that name is taken),
/// else to the file `to`. The copy is byte for byte, so it stays in the
/// kernel's format; it is parsed first so that only valid profiles are saved.
pub fn write(from: &Path, to: &Path) -> Result<PathBuf> {
    let raw = input::read(from)?;
    Profile::parse(&raw).map_err(|e| {
        anyhow!(
            "{}: {e}",
            allocinfo_output::source_name(&from.display().to_string())
        )
    })?;
    if !to.is_dir() {
        std::fs::write(to, &raw).with_context(|| format!("writing {}", to.display()))?;
        return Ok(to.to_owned());
    }
    let stamp = Utc::now().compact();
    for n in 0..1000 {
        let name = match n {
            0 => format!("allocinfo-{stamp}.txt"),
            n => format!("allocinfo-{stamp}-{n}.txt"),
        };
        let path = to.join(name);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                f.write_all(&raw)
                    .with_context(|| format!("writing {}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
    }
    Err(anyhow!(
        "{}: no free name for allocinfo-{stamp}.txt",
        to.display()
    ))
}
