//! `allocinfo pprof`: a profile in pprof's format (gzipped `profile.proto`)
//! for `go tool pprof`, Grafana Pyroscope, Parca or Cloud Profiler: the
//! call sites of `/proc/allocinfo` (or a saved profile), their difference
//! from a snapshot (`--since`), or capture's live objects with their whole
//! stacks (`--live`). The encoding is `allocinfo-pprof`'s.

use crate::args::InputArgs;
use crate::capture::control::CONTROL;
use crate::split::{SplitArg, SplitArgs};
use crate::via::{self, ViaArgs};
use crate::{input, outfile};
use allocinfo_output::SplitBy;
use allocinfo_pprof::SiteOptions;
use anyhow::{Context, Result, anyhow};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Args, Debug)]
pub struct PprofArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub via: ViaArgs,
    /// The profile to write (gzipped profile.proto); `-` writes standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE.pb.gz")]
    pub output: PathBuf,
    /// Write the difference from this earlier profile (a snapshot): what
    /// each call site holds more (or less) since.
    #[arg(long, value_name = "SNAPSHOT", conflicts_with = "live")]
    pub since: Option<PathBuf>,
    /// Profile capture's live objects instead, with their stacks: the
    /// kernel's report [default: /sys/kernel/debug/alloctag/live] or a saved one.
    #[arg(long, value_name = "REPORT", num_args = 0..=1, default_missing_value = crate::debugfs::LIVE)]
    pub live: Option<PathBuf>,
    #[command(flatten)]
    pub split: SplitArgs,
}

/// Now, in nanoseconds since the epoch (0 before it).
fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

pub fn run(a: PprofArgs) -> Result<()> {
    if a.input.named() && a.live.is_some() {
        return Err(crate::messages::usage(
            "--live reads capture's report, not a profile: give the report as --live REPORT",
        ));
    }
    if a.split.split.is_some() && (a.live.is_some() || a.since.is_some()) {
        return Err(crate::messages::usage(
            "--split labels each call site's shares of one read: not with --live or --since",
        ));
    }
    a.split.validate(&a.input.path(), a.via.via, true)?;
    let profile = match (&a.live, a.split.spec()) {
        (Some(report), _) => live_profile(report)?,
        (None, Some(spec)) => split_profile(&a, &spec)?,
        (None, None) => sites_profile(&a)?,
    };
    outfile::write(&a.output, &allocinfo_pprof::encode(&profile))
}

/// The call sites' profile, or their delta since `--since`.
fn sites_profile(a: &PprofArgs) -> Result<allocinfo_pprof::proto::Profile> {
    let file = a.input.path();
    via::check(&a.via, &file)?;
    let (loaded, taken) = via::load_profile(&file, &a.via)?;
    if a.via.verbose {
        let n = loaded.profile.tags.len();
        eprintln!("{}", via::describe("pprof", &loaded.path, &taken, n, "tag"));
    }
    let source = allocinfo_output::source_name(&loaded.path);
    let mut opts = SiteOptions {
        comments: vec![format!(
            "allocinfo pprof: {source} (format {}): live allocations per call site",
            loaded.profile.version
        )],
        time_nanos: now_ns(),
    };
    let Some(since) = &a.since else {
        return Ok(allocinfo_pprof::from_profile(&loaded.profile, &opts));
    };
    let old = input::load(since)?;
    opts.comments.push(format!(
        "delta: what each call site holds more since {}",
        allocinfo_output::source_name(&old.path)
    ));
    Ok(allocinfo_pprof::delta(&old.profile, &loaded.profile, &opts))
}

/// The call sites' profile split by CPU or node: the kernel's shares through
/// its ioctl, or a saved profile's node pairs (bytes only).
fn split_profile(
    a: &PprofArgs,
    spec: &allocinfo_ioctl::SplitSpec,
) -> Result<allocinfo_pprof::proto::Profile> {
    let by = a.split.split.map_or(SplitBy::Node, SplitArg::by).name();
    let (loaded, tagged, taken) =
        crate::split::read_shares(&a.split, a.via.via, &a.input.path(), spec)?;
    let calls = matches!(taken, via::Taken::Ioctl { .. });
    Ok(shares_profile(&loaded, &tagged, by, calls))
}

/// The profile of `loaded`'s sites split `by` CPU or node into `tagged`'s
/// shares, which have calls (the ioctl's) or not (the text's).
fn shares_profile(
    loaded: &input::Loaded,
    tagged: &crate::split::Tagged,
    by: &'static str,
    calls: bool,
) -> allocinfo_pprof::proto::Profile {
    let opts = SiteOptions {
        comments: vec![format!(
            "allocinfo pprof --split {by}: {} (format {}): live allocations per call site and {by}{}",
            allocinfo_output::source_name(&loaded.path),
            loaded.profile.version,
            if calls {
                ""
            } else {
                " (bytes by node; the calls in one sample per site without a node)"
            }
        )],
        time_nanos: now_ns(),
    };
    let kind = allocinfo_pprof::SplitKind { by, calls };
    allocinfo_pprof::from_shares(tagged, kind, &opts)
}

/// The live objects' profile, from the kernel's report or a saved one.
fn live_profile(path: &Path) -> Result<allocinfo_pprof::proto::Profile> {
    let text = CONTROL.read(path).context("live")?;
    let live =
        allocinfo_format::capture::parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let opts = SiteOptions {
        comments: vec![format!(
            "allocinfo pprof --live: {}: live objects of the captured call sites, by stack, process and kind",
            path.display()
        )],
        time_nanos: now_ns(),
    };
    allocinfo_pprof::from_capture(&live, &opts).map_err(|e| anyhow!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocinfo_ioctl::abi::ALLOCINFO_SPLIT_CPU;
    use allocinfo_ioctl::fake::FakeKernel;
    use std::process::Command;

    /// The kernel's shares by CPU (the fake kernel's, through the same walk
    /// as /proc/allocinfo's ioctl) as go tool pprof reads them: a sample
    /// per share with its CPU, adding up to the profile's totals.
    #[test]
    fn go_pprof_reads_the_kernels_cpu_shares() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../allocinfo-format/tests/data/linux-6.12.txt");
        let tags = input::load(&data).unwrap().profile.tags;
        let mut kernel = FakeKernel::new(&tags);
        let spec = allocinfo_ioctl::SplitSpec {
            by: ALLOCINFO_SPLIT_CPU,
            at: None,
        };
        let (loaded, tagged, _) = crate::split::read(&mut kernel, &data, &spec).unwrap();
        let profile = shares_profile(&loaded, &tagged, "cpu", true);
        let path = std::env::temp_dir().join(format!("allocinfo-cpu-{}.pb.gz", std::process::id()));
        std::fs::write(&path, allocinfo_pprof::encode(&profile)).unwrap();
        let out = Command::new("go")
            .args(["tool", "pprof", "-raw"])
            .arg(&path)
            .output()
            .expect("go tool pprof (scripts/install-deps.sh installs golang-go)");
        std::fs::remove_file(&path).unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let raw = String::from_utf8(out.stdout).unwrap();
        let (mut objects, mut bytes, mut labelled) = (0i64, 0i64, 0);
        for line in raw
            .lines()
            .skip_while(|l| !l.starts_with("Samples:"))
            .skip(2)
        {
            if line.starts_with("Locations") {
                break;
            }
            if line.contains("cpu:[") {
                labelled += 1;
            }
            if let Some((v, _)) = line.split_once(": ") {
                let v: Vec<i64> = v
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect();
                if v.len() == 2 {
                    objects += v[0];
                    bytes += v[1];
                }
            }
        }
        let total = loaded.profile.totals();
        assert_eq!((objects, bytes), (total.calls as i64, total.bytes));
        assert!(labelled > 0 && raw.contains("cpu:[1 cpu]"), "{raw}");
    }
}
