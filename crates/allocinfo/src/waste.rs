//! `allocinfo waste`: the kernel's waste accounting per call site, read from
//! `/proc/allocwaste` (slack: bytes allocated beyond those requested; churn:
//! allocations and frees counted), and `waste on|off`, written to its
//! debugfs control file. Also the allocations per second that `diff` and
//! `watch` show from two reads of the figures ([`rates`]).

pub mod args;

use crate::debugfs::{Control, Trust};
use crate::{input, messages};
use allocinfo_format::waste::{Totals, WasteSite};
use allocinfo_output::Document;
use allocinfo_output::waste::{csv, json, prometheus, table};
use anyhow::{Context, Result, anyhow};
use args::{WasteArgs, WasteCmd, WasteShowArgs, WasteSort};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The kernel's meminfo, for the slack's share of `Slab:`.
pub const MEMINFO: &str = "/proc/meminfo";

/// The kernel's command line, for whether waste accounting's slots were reserved at boot.
const CMDLINE: &str = "/proc/cmdline";

/// Whether the kernel command line `cmdline` reserved waste accounting's slots, as the kernel
/// reads it: `alloctag.waste_slots=on` or `alloctag.waste=on`, each parameter's last `on` or
/// `off` counting (the kernel keeps the value it had when it refuses another).
fn slots_reserved(cmdline: &str) -> bool {
    let last = |name: &str| {
        cmdline
            .split_ascii_whitespace()
            .filter_map(|w| w.strip_prefix(name))
            .rfind(|v| *v == "on" || *v == "off")
    };
    last("alloctag.waste_slots=") == Some("on") || last("alloctag.waste=") == Some("on")
}

/// What `waste on` adds on standard error when the slots were not reserved at boot: the
/// figures then cover only the slabs made from now on (Documentation/waste.rst).
const UNRESERVED_NOTE: &str = "allocinfo: note: booted without alloctag.waste_slots=on: \
     slab objects are tracked only in slabs made from now on, pages not at all";

/// The waste control file.
const CONTROL: Control = Control {
    name: "waste",
    config: "waste accounting",
    reasons: &[(
        22,
        "Invalid argument (the kernel refused the value: it takes on or off)",
    )],
};

pub fn run(args: WasteArgs) -> Result<()> {
    match args.command {
        Some(cmd) => {
            let mut out = Vec::new();
            control(cmd, Trust::Debugfs, &mut out)?;
            messages::write_stdout(&out)
        }
        None => show(&args.show),
    }
}

/// `waste on` and `waste off`.
fn control(cmd: WasteCmd, trust: Trust, out: &mut dyn Write) -> Result<()> {
    let (dir, value) = match &cmd {
        WasteCmd::On(a) => (&a.dir, "on"),
        WasteCmd::Off(a) => (&a.dir, "off"),
    };
    let path = dir.join(CONTROL.name);
    check_present(dir, &path)?;
    CONTROL
        .send(&path, &value, trust)
        .with_context(|| format!("waste {value}"))?;
    // The kernel's own command line, for its own control file only: a test's has none.
    if value == "on"
        && trust == Trust::Debugfs
        && let Ok(cmdline) = std::fs::read_to_string(CMDLINE)
        && !slots_reserved(&cmdline)
    {
        eprintln!("{UNRESERVED_NOTE}");
    }
    match value {
        "on" => writeln!(out, "waste accounting on; see allocinfo waste")?,
        _ => writeln!(
            out,
            "waste accounting off; the figures stay as they were (allocinfo waste)"
        )?,
    }
    Ok(())
}

/// A missing control file, or a missing directory, said before anything
/// else is tried. Other errors (a directory only root may enter) are left
/// to [`Control::send`], which explains them.
fn check_present(dir: &Path, path: &Path) -> Result<()> {
    let missing =
        |p: &Path| std::fs::metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    if !missing(path) {
        return Ok(());
    }
    if missing(dir) {
        return Err(anyhow!(
            "this kernel has no waste accounting ({} missing: is debugfs mounted? \
             mount -t debugfs none /sys/kernel/debug)",
            path.display()
        ));
    }
    Err(anyhow!(
        "this kernel has no waste accounting ({} missing)",
        path.display()
    ))
}

/// `sites` in the order of `sort`: numbers largest first, names A to Z;
/// ties by call site; `reverse` turns it round (as sort -r).
pub fn sorted(mut sites: Vec<&WasteSite>, sort: WasteSort, reverse: bool) -> Vec<&WasteSite> {
    let name = |s: &WasteSite| {
        let t = &s.tag;
        (t.file.clone(), t.line, t.module.clone(), t.function.clone())
    };
    sites.sort_by(|a, b| {
        let order = match sort {
            WasteSort::Slack => b.counts.slack.cmp(&a.counts.slack),
            WasteSort::Ratio => b.ratio().total_cmp(&a.ratio()),
            WasteSort::Allocs => b.counts.allocs.cmp(&a.counts.allocs),
            WasteSort::Frees => b.counts.frees.cmp(&a.counts.frees),
            WasteSort::Bytes => b.counts.bytes.cmp(&a.counts.bytes),
            WasteSort::Name => std::cmp::Ordering::Equal,
        };
        order.then_with(|| name(a).cmp(&name(b)))
    });
    if reverse {
        sites.reverse();
    }
    sites
}

/// `Slab:` of a meminfo text, in bytes.
pub fn slab_bytes(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let mut words = line.split_ascii_whitespace();
        if words.next()? != "Slab:" {
            return None;
        }
        let value: u64 = words.next()?.parse().ok()?;
        // The kernel always says kB; a bare number is no meminfo line.
        match words.next() {
            Some("kB") => value.checked_mul(1024),
            _ => None,
        }
    })
}

/// The meminfo file read: the one named, or /proc/meminfo for the kernel's
/// own figures; `None` for a file without one.
fn meminfo_path(args: &WasteShowArgs, input: &Path) -> Option<PathBuf> {
    args.meminfo
        .clone()
        .or_else(|| (input == Path::new(input::WASTE)).then(|| PathBuf::from(MEMINFO)))
}

/// `Slab:` in bytes: an error for a file named that cannot be read or has
/// none; nothing for /proc/meminfo that cannot be read.
fn slab(args: &WasteShowArgs, input: &Path) -> Result<Option<u64>> {
    let Some(path) = meminfo_path(args, input) else {
        return Ok(None);
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => match slab_bytes(&text) {
            Some(v) => Ok(Some(v)),
            None if args.meminfo.is_some() => {
                Err(anyhow!("{}: no valid 'Slab:' line", path.display()))
            }
            None => Ok(None),
        },
        Err(e) if args.meminfo.is_some() => Err(anyhow!("reading {}: {e}", path.display())),
        Err(_) => Ok(None),
    }
}

fn show(args: &WasteShowArgs) -> Result<()> {
    let path = args.path();
    let waste = input::load_waste(&path)?;
    let slab = slab(args, &path)?;
    let totals = Totals::of(&waste).with_context(|| path.display().to_string())?;
    if !waste.on {
        eprintln!(
            "allocinfo: note: waste accounting is off: the figures are frozen as they were \
             when it was turned off (allocinfo waste on resumes it)"
        );
    }
    let machine = args.json || args.csv || args.prometheus;
    let limit = match args.limit {
        Some(0) => None,
        Some(n) => Some(n),
        None if machine => None,
        None => Some(20),
    };
    // The filters as in top (--min-size on the site's bytes); the totals
    // cover every site, as top's cover the whole profile.
    let filter = args.filter.filter();
    messages::warn_unmatched(
        &filter,
        &waste
            .sites
            .iter()
            .map(|s| s.tag.clone())
            .collect::<Vec<_>>(),
        &path.to_string_lossy(),
    );
    let matched: Vec<&WasteSite> = waste
        .sites
        .iter()
        .filter(|s| filter.matches(&s.tag))
        .filter(|s| {
            filter
                .min_bytes
                .is_none_or(|min| i128::from(s.counts.bytes) >= i128::from(min))
        })
        .collect();
    let n = matched.len();
    let mut rows = sorted(matched, args.sort, args.reverse);
    rows.truncate(limit.unwrap_or(usize::MAX));
    messages::emit(&Document::either(
        args.json,
        args.pretty,
        || json(&waste, &totals, &rows, slab),
        || {
            if args.csv {
                csv(&rows)
            } else if args.prometheus {
                prometheus(&waste, &rows)
            } else {
                let name = allocinfo_output::source_name(&path.to_string_lossy()).to_owned();
                table(&waste, &totals, &name, &rows, n, slab, args.exact)
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Cmd};
    use clap::Parser;
    use std::io;

    fn cmd(args: &[&str]) -> WasteCmd {
        let mut argv = vec!["allocinfo", "waste"];
        argv.extend_from_slice(args);
        let Cmd::Waste(a) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!()
        };
        a.command.unwrap()
    }

    #[test]
    fn on_and_off_write_the_control_file() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_str().unwrap();
        let file = d.path().join("waste");
        std::fs::write(&file, "").unwrap();
        let mut out = Vec::new();
        control(cmd(&["on", "--dir", dir]), Trust::AnyFile, &mut out).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "on\n");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "waste accounting on; see allocinfo waste\n"
        );
        std::fs::write(&file, "").unwrap();
        control(cmd(&["off", "--dir", dir]), Trust::AnyFile, &mut Vec::new()).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "off\n");
    }

    #[test]
    fn slots_reserved_as_the_kernel_reads_its_command_line() {
        for (cmdline, reserved) in [
            ("console=ttyS0 alloctag.waste_slots=on\n", true),
            ("alloctag.waste=on quiet", true),
            ("alloctag.waste_slots=on alloctag.waste_slots=off", false),
            ("alloctag.waste_slots=off alloctag.waste_slots=on", true),
            // A refused value changes nothing.
            ("alloctag.waste_slots=on alloctag.waste_slots=junk", true),
            ("alloctag.waste_slots=yes", false),
            ("xalloctag.waste_slots=on", false),
            ("alloctag.waste_pages=on", false),
            ("", false),
        ] {
            assert_eq!(slots_reserved(cmdline), reserved, "{cmdline:?}");
        }
    }

    #[test]
    fn missing_control_file_and_directory_are_explained() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_str().unwrap();
        let err = control(cmd(&["on", "--dir", dir]), Trust::AnyFile, &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!("this kernel has no waste accounting ({dir}/waste missing)")
        );
        let gone = format!("{dir}/nope");
        let err = control(
            cmd(&["off", "--dir", &gone]),
            Trust::AnyFile,
            &mut Vec::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("nope/waste missing") && err.contains("mount -t debugfs"),
            "{err}"
        );
    }

    #[test]
    fn refusals_by_errno() {
        let msg = |errno| {
            let e = io::Error::from_raw_os_error(errno);
            format!("{:#}", CONTROL.refused(&"on", &e))
        };
        assert_eq!(
            msg(22),
            "the kernel refused 'on': Invalid argument (the kernel refused the value: it takes on or off)"
        );
        assert!(msg(1).contains("needs CAP_SYS_ADMIN"), "{}", msg(1));
    }

    #[test]
    fn meminfo_slab() {
        let text =
            "MemTotal:       16318712 kB\nSlab:             524288 kB\nSReclaimable:     1 kB\n";
        assert_eq!(slab_bytes(text), Some(512 << 20));
        assert_eq!(slab_bytes("MemTotal: 1 kB\n"), None);
        assert_eq!(slab_bytes("Slab: x kB\n"), None);
        assert_eq!(slab_bytes("Slab: 5\n"), None);
    }
}
