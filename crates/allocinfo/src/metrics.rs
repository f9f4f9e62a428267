//! `allocinfo metrics`: every figure for Prometheus in one exposition, for
//! node_exporter's textfile collector, written atomically with `-o`.
//!
//! The families, their labels and their types are a stable interface,
//! documented in Documentation/allocinfo-tool.rst ("Metrics"):
//!
//! - the profile, per call site (`allocinfo_bytes`, `allocinfo_calls`) and
//!   in total (`allocinfo_total_bytes`, `allocinfo_total_calls`,
//!   `allocinfo_sites`), as `top -n 0 --prometheus` prints them;
//! - fault injection, where its control file exists
//!   (`allocinfo_fault_rules`, `allocinfo_fault_injected_total`,
//!   `allocinfo_fault_site_injected_total`);
//! - capture, where its control file exists (`allocinfo_capture_*`);
//! - waste accounting, where /proc/allocwaste (`--waste`) exists
//!   (`allocinfo_waste_*`, as `waste --prometheus` prints them);
//! - `allocinfo_source_up{source}`: 1 for each source read, 0 for one
//!   that exists but could not be read (the others are still written).

use crate::args::InputArgs;
use crate::debugfs::{self, MAX_READ};
use crate::input;
use allocinfo_format::capture::listing;
use allocinfo_format::fail::{self, OtherLines};
use allocinfo_output::prometheus::Family;
use allocinfo_output::{Command, Format, Meta, Source, TableOptions};
use allocinfo_report::Query;
use anyhow::{Result, anyhow, bail};
use clap::Args;
use std::io;
use std::path::Path;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct MetricsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the metrics to FILE atomically (a temporary file in its
    /// directory, then a rename), e.g. /var/lib/node_exporter/textfile_collector/allocinfo.prom;
    /// a symlink's target is replaced, a device or FIFO written through; `-` is standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The fault-injection control file, read if it exists.
    #[arg(long, value_name = "PATH", default_value = debugfs::FAIL)]
    pub control: PathBuf,
    /// The capture directory, whose `capture` file is read if it exists.
    #[arg(long, value_name = "DIR", default_value = debugfs::ALLOCTAG_DIR)]
    pub dir: PathBuf,
    /// The waste figures, read if they exist.
    #[arg(long, value_name = "FILE", default_value = input::WASTE)]
    pub waste: PathBuf,
}

impl MetricsArgs {
    pub fn capture_file(&self) -> PathBuf {
        self.dir.join("capture")
    }
}

/// Turns a control file's listing into families.
type Families = fn(&str) -> Result<Vec<Family>>;

/// Reads a control file for its listing: `None` when it does not exist
/// (the kernel lacks the feature), an error when it cannot be read.
fn listing(path: &Path) -> Result<Option<String>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => bail!("{}: {e}", path.display()),
    };
    let name = path.display().to_string();
    let raw = input::read_text(file, &name, MAX_READ, "alloctag listing")?;
    String::from_utf8(raw)
        .map(Some)
        .map_err(|_| anyhow!("{}: not UTF-8 text", path.display()))
}

/// The waste families, from /proc/allocwaste's figures (every site).
fn waste(text: &str) -> Result<Vec<Family>> {
    let waste = allocinfo_format::waste::Waste::parse(text.as_bytes())?;
    let sites: Vec<_> = waste.sites.iter().collect();
    Ok(allocinfo_output::waste::families(&waste, &sites))
}

/// The fault-injection families, from the control file's listing.
fn fault(text: &str) -> Result<Vec<Family>> {
    let rules = fail::parse(text, OtherLines::Refuse).map_err(anyhow::Error::msg)?;
    let mut count = Family::new(
        "allocinfo_fault_rules",
        "gauge",
        "Fault-injection rules armed.",
    );
    count.add(&[], rules.len() as u64);
    let mut injected = Family::new(
        "allocinfo_fault_injected_total",
        "counter",
        "Allocation failures injected by each fault-injection rule since it was armed.",
    );
    let mut sites = Family::new(
        "allocinfo_fault_site_injected_total",
        "counter",
        "Allocation failures injected at each armed call site, per rule.",
    );
    for r in &rules {
        let id = r.id.to_string();
        injected.add(&[("rule", &id), ("selection", &r.selection)], r.injected);
        for s in &r.sites {
            let at = (
                s.file.as_str(),
                s.line,
                s.module.as_deref(),
                s.function.as_str(),
            );
            add_site(&mut sites, ("rule", &id), at, s.injected);
        }
    }
    Ok(vec![count, injected, sites])
}

/// Adds a call site's sample to `family`, labelled `first` (its rule or
/// selection), then as `/proc/allocinfo` names it (`at`: file, line,
/// module, function; the module empty for built-in code).
fn add_site(
    family: &mut Family,
    first: (&str, &str),
    (file, line, module, function): (&str, u32, Option<&str>, &str),
    value: u64,
) {
    let line = line.to_string();
    let labels = [
        first,
        ("file", file),
        ("line", &line),
        ("module", module.unwrap_or_default()),
        ("function", function),
    ];
    family.add(&labels, value);
}

/// The capture families, from the control file's listing (see
/// Documentation/capture.rst): the pool line, `selection` and `site` lines.
fn capture(text: &str) -> Result<Vec<Family>> {
    let l = listing::parse(text).map_err(anyhow::Error::msg)?;
    let mut out = Vec::new();
    if let Some(p) = l.pool {
        let pool: [(&'static str, &'static str, &'static str, u64); 5] = [
            (
                "allocinfo_capture_pool_limit",
                "gauge",
                "The most capture records kept.",
                p.limit,
            ),
            (
                "allocinfo_capture_pool_size",
                "gauge",
                "Capture records in the pool.",
                p.size,
            ),
            (
                "allocinfo_capture_pool_used",
                "gauge",
                "Capture records in use.",
                p.used,
            ),
            (
                "allocinfo_capture_dropped_total",
                "counter",
                "Objects not recorded because the pool was full, since capture turned on.",
                p.dropped,
            ),
            (
                "allocinfo_capture_busy_total",
                "counter",
                "Allocations made by capture itself and not recorded, since capture turned on.",
                p.busy,
            ),
        ];
        for (name, kind, help, v) in pool {
            let mut f = Family::new(name, kind, help);
            f.add(&[], v);
            out.push(f);
        }
    }
    let mut count = Family::new(
        "allocinfo_capture_selections",
        "gauge",
        "Capture selections in force.",
    );
    count.add(&[], l.selections.len() as u64);
    out.push(count);
    type Get = fn(&listing::Site) -> u64;
    let per_site: [(&'static str, &'static str, Get); 4] = [
        (
            "allocinfo_capture_live_objects",
            "Recorded live objects of each captured call site.",
            |s| s.live,
        ),
        (
            "allocinfo_capture_live_bytes",
            "Bytes of the recorded live objects of each captured call site.",
            |s| s.live_bytes,
        ),
        (
            "allocinfo_capture_untracked_objects",
            "What a captured call site's counters hold beyond its records, in objects.",
            |s| s.untracked,
        ),
        (
            "allocinfo_capture_untracked_bytes",
            "What a captured call site's counters hold beyond its records, in bytes.",
            |s| s.untracked_bytes,
        ),
    ];
    for (name, help, get) in per_site {
        let mut f = Family::new(name, "gauge", help);
        for s in &l.sites {
            let at = (
                s.file.as_str(),
                s.line,
                s.module.as_deref(),
                s.function.as_str(),
            );
            add_site(&mut f, ("selection", &s.selection.to_string()), at, get(s));
        }
        out.push(f);
    }
    Ok(out)
}

/// The whole exposition.
pub fn render(args: &MetricsArgs) -> Result<String> {
    let loaded = input::load(&args.input.path())?;
    let report = Query::default().top(&loaded.profile);
    let meta = Meta {
        command: Command::Top,
        source: Source {
            path: loaded.path.clone(),
            version: loaded.profile.version,
        },
        old_source: None,
    };
    let mut profile = Vec::new();
    allocinfo_output::write(
        &mut profile,
        Format::Prometheus,
        &report,
        &meta,
        &TableOptions::default(),
    )?;
    let mut out = String::from_utf8(profile).expect("the profile's metrics are text");
    let mut up = Family::new(
        "allocinfo_source_up",
        "gauge",
        "1 if the source was read for these metrics, 0 if it exists but could not be read.",
    );
    up.add(&[("source", "profile")], 1);
    let sources: [(&str, &Path, Families); 3] = [
        ("fault", &args.control, fault),
        ("capture", &args.capture_file(), capture),
        ("waste", &args.waste, waste),
    ];
    for (name, path, families) in sources {
        let read = listing(path).and_then(|text| text.map(|t| families(&t)).transpose());
        match read {
            Ok(None) => {}
            Ok(Some(families)) => {
                up.add(&[("source", name)], 1);
                families.iter().for_each(|f| f.write(&mut out));
            }
            Err(e) => {
                eprintln!(
                    "allocinfo: warning: metrics: {name}: {}: {e:#}",
                    path.display()
                );
                up.add(&[("source", name)], 0);
            }
        }
    }
    up.write(&mut out);
    Ok(out)
}

pub fn run(args: MetricsArgs) -> Result<()> {
    let text = render(&args)?;
    match &args.output {
        Some(path) => crate::outfile::write(path, text.as_bytes()),
        None => crate::messages::write_stdout(text.as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_listing_to_families() {
        let text = "capture limit=4096 size=4096 used=5 dropped=1 busy=2\n\
            selection 1 sites=1 unmarked=0 select=module:t func:hold\n\
            site selection=1 live=5 live_bytes=2560 untracked=3 untracked_bytes=96 lib/t.c:172 [t] func:hold\n";
        let mut out = String::new();
        capture(text)
            .unwrap()
            .iter()
            .for_each(|f| f.write(&mut out));
        assert!(out.contains("allocinfo_capture_pool_used 5\n"), "{out}");
        assert!(out.contains("allocinfo_capture_dropped_total 1\n"));
        assert!(out.contains("allocinfo_capture_selections 1\n"));
        assert!(out.contains(
            "allocinfo_capture_live_bytes{selection=\"1\",file=\"lib/t.c\",line=\"172\",module=\"t\",function=\"hold\"} 2560\n"
        ));
        assert!(out.contains("allocinfo_capture_untracked_objects{selection=\"1\",file=\"lib/t.c\",line=\"172\",module=\"t\",function=\"hold\"} 3\n"));
        assert!(capture("bogus line\n").is_err());
        assert!(capture("site selection=1 live=x lib/t.c:1 func:f\n").is_err());
    }
}
