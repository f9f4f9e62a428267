//! Which way `/proc/allocinfo` is read: the kernel's ioctl (mainline's ABI,
//! `allocinfo-ioctl`) or its text, and the line `-v` prints about it.
//!
//! `--via auto` takes the ioctl for `/proc/allocinfo` and reads the text when
//! the kernel answers ENOTTY (no such ioctl, as in Linux 6.12) or the file
//! cannot be opened (the text read then says why); files are always read as
//! text. `--via ioctl` fails where `auto` would fall back.

use crate::input::{self, Loaded};
use crate::messages::usage;
use allocinfo_format::{Profile, Tag};
use allocinfo_ioctl::abi::AllocinfoFilter;
use allocinfo_ioctl::{DEFAULT_ATTEMPTS, Device, Error, ProcFile, TagFilter, Walk};
use anyhow::{Context, Result, anyhow};
use clap::{Args, ValueEnum};
use std::io::{BufRead, BufReader};
use std::path::Path;

/// How `/proc/allocinfo` is read.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// The ioctl where the kernel has it (not ENOTTY), otherwise the text.
    Auto,
    /// The kernel's ioctl only: fails where the kernel has none.
    Ioctl,
    /// The text only.
    Text,
}

#[derive(Args, Debug)]
pub struct ViaArgs {
    /// Read /proc/allocinfo through the kernel's ioctl, its text, or the ioctl where the kernel has one.
    #[arg(long, value_enum, default_value = "auto")]
    pub via: Via,
    /// Say on standard error which way the profile was read (ioctl or text) and why.
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

/// The kernel's file, the only one the ioctl is tried on.
pub const PROC: &str = "/proc/allocinfo";

/// Why the text is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextReason {
    /// `--via text`.
    Asked,
    /// A file other than /proc/allocinfo (or standard input).
    NotProc,
    /// The kernel answered ENOTTY.
    NoIoctl,
    /// /proc/allocinfo could not be opened for the ioctl.
    CannotOpen,
    /// `top`: the ioctl's answers may hold trimmed names, the text has them whole.
    Trimmed,
}

impl TextReason {
    fn text(self) -> &'static str {
        match self {
            TextReason::Asked => "--via text",
            TextReason::NotProc => "not /proc/allocinfo",
            TextReason::NoIoctl => "the kernel has no /proc/allocinfo ioctl (ENOTTY)",
            TextReason::CannotOpen => "cannot open it for the ioctl",
            TextReason::Trimmed => {
                "a name of 63 bytes or more may be trimmed in the ioctl's answers"
            }
        }
    }
}

/// The way chosen before anything is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    Ioctl,
    Text(TextReason),
}

/// What `--via` asks for `input`; an error for `--via ioctl` on a file.
pub fn plan(via: Via, input: &Path) -> Result<Plan, String> {
    plan_for(via, input, Path::new(PROC))
}

/// `--via ioctl` with a file is a usage error (exit status 2).
pub fn check(args: &ViaArgs, input: &Path) -> Result<()> {
    plan(args.via, input).map(drop).map_err(usage)
}

/// [`plan`], with `proc` as the kernel's file (unit tests give one that
/// is missing, to be the same on every host).
fn plan_for(via: Via, input: &Path, proc: &Path) -> Result<Plan, String> {
    let proc = input == proc;
    match (via, proc) {
        (Via::Text, _) => Ok(Plan::Text(TextReason::Asked)),
        (Via::Auto, false) => Ok(Plan::Text(TextReason::NotProc)),
        (Via::Ioctl, false) => Err(format!(
            "--via ioctl reads {PROC} only, not {}",
            input.to_string_lossy()
        )),
        (_, true) => Ok(Plan::Ioctl),
    }
}

/// After the ioctl failed: the reason to read the text instead, or `None`
/// when the failure is the answer (`--via ioctl`, or a real error).
pub fn fallback(via: Via, e: &Error) -> Option<TextReason> {
    match (via, e) {
        (Via::Auto, Error::Unsupported) => Some(TextReason::NoIoctl),
        (Via::Auto, Error::Open { .. }) => Some(TextReason::CannotOpen),
        _ => None,
    }
}

/// How the profile was read, for `-v`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Taken {
    Ioctl { attempts: u32 },
    Text(TextReason),
}

/// The `-v` line: `allocinfo: CMD: via ioctl on PATH: N WHAT[; why]`
/// (`WHAT` gets an `s` unless `N` is 1).
pub fn describe(command: &str, path: &str, taken: &Taken, count: usize, what: &str) -> String {
    let path = allocinfo_output::source_name(path);
    let s = if count == 1 { "" } else { "s" };
    let what = format!("{what}{s}");
    match taken {
        Taken::Ioctl { attempts: 1 } => {
            format!("allocinfo: {command}: via ioctl on {path}: {count} {what}")
        }
        Taken::Ioctl { attempts } => format!(
            "allocinfo: {command}: via ioctl on {path}: {count} {what}; {attempts} walks, \
             modules loaded or unloaded during the others"
        ),
        Taken::Text(reason) => format!(
            "allocinfo: {command}: via text of {path}: {count} {what}; {}",
            reason.text()
        ),
    }
}

/// Whether `e` is a failure of the ioctl after which `via` reads the text.
fn fallback_for(via: Via, e: anyhow::Error) -> Result<TextReason> {
    match e.downcast_ref::<Error>().and_then(|ie| fallback(via, ie)) {
        Some(reason) => Ok(reason),
        None => Err(e),
    }
}

fn decode(walk: &Walk) -> Result<Vec<Tag>> {
    walk.tags
        .iter()
        .map(|d| allocinfo_ioctl::decode(d).map_err(|e| anyhow!("{PROC}: {e}")))
        .collect()
}

/// The tags matching `filter`, by the ioctl, and the number of walks made.
pub fn query_by_ioctl(dev: &mut dyn Device, filter: &TagFilter) -> Result<(Vec<Tag>, u32)> {
    let w = allocinfo_ioctl::walk(dev, &filter.to_abi(), DEFAULT_ATTEMPTS)?;
    Ok((decode(&w)?, w.attempts))
}

/// The tags of a text profile matching `filter`, as the ioctl reports them.
pub fn query_text(profile: &Profile, filter: &TagFilter) -> Vec<Tag> {
    profile
        .tags
        .iter()
        .filter(|t| filter.matches(t))
        .map(allocinfo_ioctl::as_reported)
        .collect()
}

/// `allocinfo query`: the tags matching `filter`, as the ioctl reports them
/// (on the text path too: see [`allocinfo_ioctl::as_reported`]).
pub fn query(input: &Path, args: &ViaArgs, filter: &TagFilter) -> Result<(Vec<Tag>, Taken)> {
    query_for(input, args, filter, Path::new(PROC))
}

/// [`query`], with `proc` as the kernel's file.
fn query_for(
    input: &Path,
    args: &ViaArgs,
    filter: &TagFilter,
    proc: &Path,
) -> Result<(Vec<Tag>, Taken)> {
    let reason = match plan_for(args.via, input, proc).map_err(|e| anyhow!(e))? {
        Plan::Text(reason) => reason,
        Plan::Ioctl => {
            let r = ProcFile::open(input)
                .map_err(anyhow::Error::from)
                .and_then(|mut f| query_by_ioctl(&mut f, filter));
            match r {
                Ok((tags, attempts)) => return Ok((tags, Taken::Ioctl { attempts })),
                Err(e) => fallback_for(args.via, e)?,
            }
        }
    };
    let loaded = input::load(input)?;
    Ok((query_text(&loaded.profile, filter), Taken::Text(reason)))
}

fn has_long_name(t: &Tag) -> bool {
    use allocinfo_ioctl::may_be_trimmed;
    may_be_trimmed(&t.file)
        || may_be_trimmed(&t.function)
        || t.module.as_deref().is_some_and(may_be_trimmed)
}

/// `top`'s ioctl path: every tag, by the ioctl, and the format version from
/// the header of the text at `input`, as the text would give them: without
/// `accurate:no` and `unloaded:yes` for format 1.x, which prints neither.
/// `Ok(Err(..))` when `auto` should read the text instead, because a name
/// may be trimmed.
pub fn profile_by_ioctl(
    dev: &mut dyn Device,
    input: &Path,
    via: Via,
) -> Result<Result<(Profile, u32), TextReason>> {
    let w = allocinfo_ioctl::walk(dev, &AllocinfoFilter::NONE, DEFAULT_ATTEMPTS)?;
    let mut tags = decode(&w)?;
    if via == Via::Auto && tags.iter().any(has_long_name) {
        return Ok(Err(TextReason::Trimmed));
    }
    let version = read_version(input)?;
    if version.major < 2 {
        tags.iter_mut().for_each(|t| t.extra.clear());
    }
    Ok(Ok((Profile { version, tags }, w.attempts)))
}

/// `allocinfo top`: the whole profile, every tag (the header's totals and
/// the shares need them all), through the ioctl where that gives what the
/// text gives. `top`'s filters are globs and `--min-size` applies after
/// grouping, so they are applied here, not sent to the kernel.
pub fn load_profile(input: &Path, args: &ViaArgs) -> Result<(Loaded, Taken)> {
    let reason = match plan(args.via, input).map_err(|e| anyhow!(e))? {
        Plan::Text(reason) => reason,
        Plan::Ioctl => {
            let r = ProcFile::open(input)
                .map_err(anyhow::Error::from)
                .and_then(|mut f| profile_by_ioctl(&mut f, input, args.via));
            match r {
                Ok(Ok((profile, attempts))) => {
                    profile
                        .check_sums()
                        .map_err(|e| anyhow!("{}: {e}", input.display()))?;
                    let loaded = Loaded {
                        path: input.display().to_string(),
                        profile,
                        waste: None,
                    };
                    return Ok((loaded, Taken::Ioctl { attempts }));
                }
                Ok(Err(reason)) => reason,
                Err(e) => fallback_for(args.via, e)?,
            }
        }
    };
    Ok((input::load(input)?, Taken::Text(reason)))
}

/// The format version in the text's header (the ioctl does not say it).
pub(crate) fn read_version(path: &Path) -> Result<allocinfo_format::Version> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut head = Vec::new();
    let mut reader = BufReader::new(file);
    for _ in 0..2 {
        reader
            .read_until(b'\n', &mut head)
            .with_context(|| format!("reading {}", path.display()))?;
    }
    let profile = Profile::parse(&head).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    Ok(profile.version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// Without the kernel's file (a host without allocation profiling),
    /// `auto` cannot open it for the ioctl and reads the text, which says
    /// why it fails; `--via ioctl` says why the ioctl cannot be made. A
    /// path that exists nowhere stands in for /proc/allocinfo, so this is
    /// the same on every host, whether it has /proc/allocinfo or not.
    #[test]
    fn query_without_the_kernels_file() {
        let proc = Path::new("/nonexistent-alloctag-test/allocinfo");
        let args = |via| ViaArgs { via, verbose: true };
        let err = query_for(proc, &args(Via::Auto), &TagFilter::default(), proc).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "reading /nonexistent-alloctag-test/allocinfo: No such file or directory (os error 2)"
        );
        let err = query_for(proc, &args(Via::Ioctl), &TagFilter::default(), proc).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "opening /nonexistent-alloctag-test/allocinfo: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn the_ioctl_only_for_proc_allocinfo() {
        let proc = Path::new(PROC);
        let file = Path::new("snapshot.txt");
        assert_eq!(plan(Via::Auto, proc), Ok(Plan::Ioctl));
        assert_eq!(plan(Via::Ioctl, proc), Ok(Plan::Ioctl));
        assert_eq!(plan(Via::Text, proc), Ok(Plan::Text(TextReason::Asked)));
        assert_eq!(plan(Via::Auto, file), Ok(Plan::Text(TextReason::NotProc)));
        assert_eq!(
            plan(Via::Auto, Path::new("-")),
            Ok(Plan::Text(TextReason::NotProc))
        );
        assert_eq!(plan(Via::Text, file), Ok(Plan::Text(TextReason::Asked)));
        assert_eq!(
            plan(Via::Ioctl, file),
            Err("--via ioctl reads /proc/allocinfo only, not snapshot.txt".into())
        );
    }

    #[test]
    fn enotty_falls_back_to_the_text_in_auto_only() {
        let enotty = Error::Unsupported;
        assert_eq!(fallback(Via::Auto, &enotty), Some(TextReason::NoIoctl));
        assert_eq!(fallback(Via::Ioctl, &enotty), None);
        let open = Error::Open {
            path: PROC.into(),
            error: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert_eq!(fallback(Via::Auto, &open), Some(TextReason::CannotOpen));
        assert_eq!(fallback(Via::Ioctl, &open), None);
        // Other failures of a kernel that has the ioctl are errors.
        let einval = Error::Request {
            request: "ALLOCINFO_IOC_GET_AT",
            error: io::Error::from_raw_os_error(22),
        };
        assert_eq!(fallback(Via::Auto, &einval), None);
        assert_eq!(fallback(Via::Auto, &Error::Unstable(16)), None);
    }

    #[test]
    fn verbose_lines() {
        assert_eq!(
            describe(
                "query",
                PROC,
                &Taken::Ioctl { attempts: 1 },
                3,
                "matching tag"
            ),
            "allocinfo: query: via ioctl on /proc/allocinfo: 3 matching tags"
        );
        assert_eq!(
            describe("top", PROC, &Taken::Ioctl { attempts: 2 }, 1326, "tag"),
            "allocinfo: top: via ioctl on /proc/allocinfo: 1326 tags; 2 walks, modules loaded or unloaded during the others"
        );
        assert_eq!(
            describe(
                "query",
                PROC,
                &Taken::Text(TextReason::NoIoctl),
                0,
                "matching tag"
            ),
            "allocinfo: query: via text of /proc/allocinfo: 0 matching tags; the kernel has no /proc/allocinfo ioctl (ENOTTY)"
        );
        assert_eq!(
            describe(
                "query",
                "-",
                &Taken::Text(TextReason::NotProc),
                1,
                "matching tag"
            ),
            "allocinfo: query: via text of <stdin>: 1 matching tag; not /proc/allocinfo"
        );
    }

    fn data(name: &str) -> std::path::PathBuf {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        match name {
            "query.txt" | "unloaded.txt" => here.join("tests/data").join(name),
            _ => here.join("../allocinfo-format/tests/data").join(name),
        }
    }

    fn text(name: &str) -> Profile {
        input::load(&data(name)).unwrap().profile
    }

    /// `top` on the ioctl's answers and on the text: the same profile, so the
    /// same report in every format.
    #[test]
    fn top_by_ioctl_reads_what_the_text_reads() {
        use allocinfo_ioctl::fake::FakeKernel;
        // Format 1.0: even a tag whose counts were lost reads as in the text.
        let want = text("linux-6.12.txt");
        let mut kernel = FakeKernel::new(&want.tags);
        kernel.tags[3].counter.accurate = 0;
        let (got, walks) = profile_by_ioctl(&mut kernel, &data("linux-6.12.txt"), Via::Auto)
            .unwrap()
            .unwrap();
        assert_eq!((got, walks), (want, 1));

        // Format 2.0: accurate:no and unloaded:yes come through; other
        // pairs are the text's only.
        let want = text("unloaded.txt");
        let mut kernel = FakeKernel::new(&want.tags);
        let (got, _) = profile_by_ioctl(&mut kernel, &data("unloaded.txt"), Via::Auto)
            .unwrap()
            .unwrap();
        assert_eq!(got, want);
        assert_eq!(got.tags.iter().filter(|t| t.is_unloaded()).count(), 3);
        // Format 1.0 marks no unloaded module's tag: neither does the ioctl's
        // answer read as it.
        let dir = tempfile::tempdir().unwrap();
        let v1 = dir.path().join("allocinfo");
        let plain = want.to_string().replace("version: 2.0", "version: 1.0");
        let plain = plain
            .replace(" accurate:no ", " ")
            .replace(" unloaded:yes ", " ");
        std::fs::write(&v1, &plain).unwrap();
        let (got, _) = profile_by_ioctl(&mut kernel, &v1, Via::Auto)
            .unwrap()
            .unwrap();
        assert_eq!(got, input::load(&v1).unwrap().profile);
        assert!(!got.tags.iter().any(|t| t.is_unloaded()));

        let mut want = text("linux-2.0.txt");
        let mut kernel = FakeKernel::new(&want.tags);
        kernel.module_loads_at = vec![3];
        let (got, walks) = profile_by_ioctl(&mut kernel, &data("linux-2.0.txt"), Via::Auto)
            .unwrap()
            .unwrap();
        assert_eq!(walks, 2);
        for t in &mut want.tags {
            t.extra.retain(|(k, _)| k == "accurate" || k == "unloaded");
        }
        assert_eq!(got, want);

        // Names of 63 bytes or more: auto reads the text, --via ioctl the
        // kernel's trimmed names.
        let long = text("query.txt");
        let mut kernel = FakeKernel::new(&long.tags);
        let r = profile_by_ioctl(&mut kernel, &data("query.txt"), Via::Auto).unwrap();
        assert_eq!(r, Err(TextReason::Trimmed));
        let (got, _) = profile_by_ioctl(&mut kernel, &data("query.txt"), Via::Ioctl)
            .unwrap()
            .unwrap();
        assert_eq!(got.tags.len(), long.tags.len());
        assert!(
            got.tags
                .iter()
                .all(|t| t.function.len() <= 63 && t.file.len() <= 63)
        );

        kernel.enotty = true;
        let e = profile_by_ioctl(&mut kernel, &data("query.txt"), Via::Auto).unwrap_err();
        assert_eq!(fallback_for(Via::Auto, e).unwrap(), TextReason::NoIoctl);
        let e = profile_by_ioctl(&mut kernel, &data("query.txt"), Via::Ioctl).unwrap_err();
        assert!(fallback_for(Via::Ioctl, e).is_err());
    }

    #[test]
    fn query_by_ioctl_gives_what_the_text_gives() {
        use allocinfo_ioctl::fake::FakeKernel;
        let profile = text("query.txt");
        let mut kernel = FakeKernel::new(&profile.tags);
        let long_file = "drivers/net/ethernet/mellanox/mlx5/core/steering/hws/mlx5hws_action.c";
        let filters = [
            TagFilter::default(),
            TagFilter {
                module: Some(String::new()),
                min_size: Some(4096),
                ..Default::default()
            },
            TagFilter {
                file: Some(long_file.into()),
                ..Default::default()
            },
            TagFilter {
                accurate: Some(false),
                ..Default::default()
            },
        ];
        for f in filters {
            let (got, walks) = query_by_ioctl(&mut kernel, &f).unwrap();
            assert_eq!((&got, walks), (&query_text(&profile, &f), 1), "{f:?}");
            assert!(!got.is_empty());
        }

        // Unloaded modules' tags, by the kernel's filter bit and by the
        // pair; folded, the same lines either way.
        let profile = text("unloaded.txt");
        let mut kernel = FakeKernel::new(&profile.tags);
        let unloaded = |module: Option<&str>| TagFilter {
            module: module.map(Into::into),
            unloaded: true,
            ..Default::default()
        };
        for f in [TagFilter::default(), unloaded(None), unloaded(Some("foo"))] {
            let (got, _) = query_by_ioctl(&mut kernel, &f).unwrap();
            let want = query_text(&profile, &f);
            assert_eq!(got, want, "{f:?}");
            let folded = allocinfo_report::fold_tags(&got);
            assert_eq!(folded, allocinfo_report::fold_tags(&want));
            assert!(folded.len() < got.len(), "{f:?}: foo's call site is folded");
        }
        let (got, _) = query_by_ioctl(&mut kernel, &unloaded(None)).unwrap();
        assert!(got.iter().all(|t| t.is_unloaded()) && got.len() == 3);
        let folded: Vec<String> = allocinfo_report::fold_tags(&got)
            .iter()
            .map(|t| t.to_string())
            .collect();
        assert_eq!(
            folded,
            [
                "        6144        3 drivers/foo.c:12 [foo] func:foo_probe unloaded:yes ",
                "         512        1 drivers/bar.c:7 [bar] func:bar_init accurate:no unloaded:yes ",
            ]
        );
    }
}
