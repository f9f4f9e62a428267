//! `allocinfo snapshot`: a verbatim, timestamped copy of the profile.

use crate::args::InputArgs;
use crate::time::Utc;
use crate::{input, outfile};
use allocinfo_format::Profile;
use allocinfo_format::waste::Waste;
use anyhow::{Context, Result, anyhow};
use clap::Args;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Directory for allocinfo-YYYYmmddTHHMMSSZ.txt (UTC), or a file name; `-` is standard output.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR|FILE",
        default_value = "."
    )]
    pub output: PathBuf,
}

pub fn run(a: SnapshotArgs) -> Result<()> {
    if let Some(path) = write(&a.input.path(), &a.output)? {
        writeln!(io::stdout().lock(), "{}", path.display()).context(crate::messages::STDOUT)?;
    }
    Ok(())
}

/// Copies the profile at `from` to `to`: into `to/allocinfo-<UTC time>.txt`
/// when `to` is a directory (adding `-1`, `-2`, ... if that name is taken),
/// else to the file `to` ([`outfile::write`]); `-` is standard output
/// (the profile alone), and `None` is returned. The copy is byte for byte, so it stays in the
/// kernel's format; it is parsed first so that only valid profiles are saved.
///
/// The waste figures next to `from` ([`input::waste_companion`]:
/// /proc/allocwaste for /proc/allocinfo), when that file exists, are copied
/// the same way next to the copy (`allocwaste-<UTC time>.txt`), where
/// `diff` finds them.
pub fn write(from: &Path, to: &Path) -> Result<Option<PathBuf>> {
    let raw = input::read(from)?;
    Profile::parse(&raw).map_err(|e| {
        anyhow!(
            "{}: {e}",
            allocinfo_output::source_name(&from.display().to_string())
        )
    })?;
    if outfile::is_stdout(to) {
        crate::messages::write_stdout(&raw)?;
        return Ok(None);
    }
    let waste = input::waste_companion(from)
        .filter(|path| path.exists())
        .and_then(|path| match read_waste(&path) {
            Ok(raw) => Some(raw),
            Err(e) => {
                eprintln!("allocinfo: warning: {e:#}; the profile is saved without them");
                None
            }
        });
    let path = write_profile(&raw, to, waste.is_some())?;
    if let Some(waste) = waste {
        let copy = input::waste_companion(&path).expect("a file name");
        if to.is_dir() {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&copy)
                .and_then(|mut f| f.write_all(&waste))
                .with_context(|| format!("writing {}", copy.display()))?;
        } else {
            outfile::write(&copy, &waste)?;
        }
    }
    Ok(Some(path))
}

/// The waste figures at `path`, checked: only valid figures are saved.
fn read_waste(path: &Path) -> Result<Vec<u8>> {
    let raw = input::read_waste(path)?;
    Waste::parse(&raw).map_err(|e| anyhow!("waste figures {}: {e}", path.display()))?;
    Ok(raw)
}

/// Writes the copy; in a directory, under a name whose waste companion is
/// free too when `with_waste`.
fn write_profile(raw: &[u8], to: &Path, with_waste: bool) -> Result<PathBuf> {
    if !to.is_dir() {
        outfile::write(to, raw)?;
        return Ok(to.to_owned());
    }
    let stamp = Utc::now().compact();
    for n in 0..1000 {
        let name = match n {
            0 => format!("allocinfo-{stamp}.txt"),
            n => format!("allocinfo-{stamp}-{n}.txt"),
        };
        let path = to.join(name);
        if with_waste && input::waste_companion(&path).is_some_and(|p| p.exists()) {
            continue;
        }
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                f.write_all(raw)
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
