//! `/proc/allocwaste`: the kernel's waste accounting per call site: the
//! slack of live objects (bytes allocated beyond the bytes requested) and
//! the churn (allocations and frees counted since boot). Version 1.0:
//!
//! ```text
//! allocwaste - version: 1.0
//! # state: on since_ns: 5000000000 now_ns: 65000000000
//! #      <bytes>  <requested>      <slack>     <allocs>      <frees>  <untracked> <tag info>
//!         1280         1000          280           10            0            0 lib/t.c:120 [t] func:hold_object
//!           64           48           16        90210        90209          128 mm/util.c:22 func:kstrdup
//! ```
//!
//! Each data line is six unsigned decimal integers, then the tag info as
//! `/proc/allocinfo` prints it (parsed by the same code, so modules and
//! `key:value` extras read the same). Lines starting with `#` after the
//! state line are comments. Every error names the 1-based line.
//!
//! ```
//! use allocinfo_format::waste::Waste;
//! let text = "allocwaste - version: 1.0\n\
//!             \x23 state: off since_ns: 0 now_ns: 9\n\
//!             \x23 <bytes> ...\n\
//!             64 48 16 3 2 0 mm/util.c:22 func:kstrdup\n";
//! let w = Waste::parse(text.as_bytes()).unwrap();
//! assert!(!w.on);
//! assert_eq!(w.sites[0].counts.slack, 16);
//! assert_eq!(w.sites[0].tag.function, "kstrdup");
//! ```

use crate::model::{Tag, Version};
use crate::parse::{
    ParseErrorKind, Snippet, header_version, numbered_lines, parse_tag_info, unsigned,
};

/// The header line of the version this tool writes in its messages.
pub const HEADER: &str = "allocwaste - version: 1.0";

/// The names of the six counters, in the order of a line.
pub const COLUMNS: [&str; 6] = [
    "bytes",
    "requested",
    "slack",
    "allocs",
    "frees",
    "untracked",
];

/// A parse failure: the 1-based input line and the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct WasteError {
    pub line: usize,
    pub kind: WasteErrorKind,
}

/// Why a line of `/proc/allocwaste` was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WasteErrorKind {
    #[error("empty input: expected the header line '{HEADER}'")]
    Empty,
    #[error("expected the header line 'allocwaste - version: X.Y', found {0}")]
    BadHeader(Snippet),
    #[error("unsupported allocwaste format version {0} (this tool reads versions 1.x)")]
    UnsupportedVersion(Version),
    #[error("missing the state line '# state: on|off since_ns: N now_ns: N'")]
    MissingState,
    #[error("expected the state line '# state: on|off since_ns: N now_ns: N', found {0}")]
    BadState(Snippet),
    #[error("line is not valid UTF-8")]
    InvalidUtf8,
    #[error("missing the {0} field")]
    Missing(&'static str),
    #[error("invalid {0} {1}: expected an unsigned 64-bit integer")]
    BadNumber(&'static str, Snippet),
    #[error("{0}")]
    Tag(ParseErrorKind),
}

/// The six counters of a line, in its order, or their sums ([`Totals`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Live bytes of the objects allocated while accounting was on.
    pub bytes: u64,
    /// Live bytes requested by those objects.
    pub requested: u64,
    /// `bytes - requested`, as the kernel printed it.
    pub slack: u64,
    /// Allocations counted since boot (only while on).
    pub allocs: u64,
    /// Frees counted since boot (only while on).
    pub frees: u64,
    /// Live bytes `/proc/allocinfo` counts for the site but this file does
    /// not (allocated while accounting was off).
    pub untracked: u64,
}

impl Counts {
    /// `slack / bytes`, 0 when `bytes` is 0.
    pub fn ratio(&self) -> f64 {
        share(self.slack, self.bytes)
    }
}

/// One call site's figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WasteSite {
    pub counts: Counts,
    /// The call site; its `bytes` and `calls` are zero.
    pub tag: Tag,
}

impl WasteSite {
    /// `slack / bytes`, 0 when `bytes` is 0.
    pub fn ratio(&self) -> f64 {
        self.counts.ratio()
    }
}

/// Sums over every site.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub sites: usize,
    /// Each counter summed over the sites.
    pub counts: Counts,
}

impl Totals {
    /// The sums; a sum past 64 bits is an error, as `top` refuses one.
    pub fn of(waste: &Waste) -> Result<Totals, SumOverflow> {
        let mut t = Totals::default();
        for s in &waste.sites {
            let add = |sum: u64, v: u64, what: &'static str| {
                sum.checked_add(v).ok_or_else(|| SumOverflow {
                    what,
                    file: s.tag.file.clone(),
                    line: s.tag.line,
                })
            };
            let (sum, c) = (&mut t.counts, &s.counts);
            t.sites += 1;
            sum.bytes = add(sum.bytes, c.bytes, "bytes")?;
            sum.requested = add(sum.requested, c.requested, "requested bytes")?;
            sum.slack = add(sum.slack, c.slack, "slack")?;
            sum.allocs = add(sum.allocs, c.allocs, "allocations")?;
            sum.frees = add(sum.frees, c.frees, "frees")?;
            sum.untracked = add(sum.untracked, c.untracked, "untracked bytes")?;
        }
        Ok(t)
    }
}

/// Sums past 64 bits: not figures a kernel reports.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the {what} of the call sites sum past 64 bits (at {file}:{line}): not figures a kernel reports"
)]
pub struct SumOverflow {
    /// The counter, as people say it (`requested bytes`).
    pub what: &'static str,
    /// The call site whose figure passed 64 bits.
    pub file: String,
    pub line: u32,
}

/// `part / whole`, 0 when `whole` is 0: the slack's share of the bytes, or of
/// meminfo's `Slab:`.
pub fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// A whole `/proc/allocwaste` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waste {
    pub version: Version,
    /// Whether accounting was on when the file was read.
    pub on: bool,
    /// CLOCK_BOOTTIME ns when accounting was last turned on, 0 if never.
    pub since_ns: u64,
    /// CLOCK_BOOTTIME ns when the read began.
    pub now_ns: u64,
    pub sites: Vec<WasteSite>,
}

impl Waste {
    /// Parses the text of `/proc/allocwaste`. See [`WasteError`].
    pub fn parse(input: &[u8]) -> Result<Waste, WasteError> {
        parse(input)
    }

    /// `on` or `off`.
    pub fn state(&self) -> &'static str {
        if self.on { "on" } else { "off" }
    }
}

fn err(line: usize, kind: WasteErrorKind) -> WasteError {
    WasteError { line, kind }
}

fn parse(input: &[u8]) -> Result<Waste, WasteError> {
    use WasteErrorKind as K;
    let mut lines = numbered_lines(input);

    let (n, header) = lines.next().ok_or(err(1, K::Empty))?;
    let header = header.map_err(|_| err(n, K::InvalidUtf8))?;
    let version = parse_header(header).map_err(|k| err(n, k))?;

    let (n, state) = lines.next().ok_or(err(n + 1, K::MissingState))?;
    let state = state.map_err(|_| err(n, K::InvalidUtf8))?;
    let (on, since_ns, now_ns) = parse_state(state).map_err(|k| err(n, k))?;

    let mut sites = Vec::new();
    for (n, line) in lines {
        let line = line.map_err(|_| err(n, K::InvalidUtf8))?;
        if line.trim_ascii_start().starts_with('#') {
            continue;
        }
        sites.push(parse_site(line).map_err(|k| err(n, k))?);
    }
    Ok(Waste {
        version,
        on,
        since_ns,
        now_ns,
        sites,
    })
}

fn parse_header(line: &str) -> Result<Version, WasteErrorKind> {
    let version = header_version("allocwaste", line)
        .ok_or_else(|| WasteErrorKind::BadHeader(Snippet::new(line)))?;
    if version.major != 1 {
        return Err(WasteErrorKind::UnsupportedVersion(version));
    }
    Ok(version)
}

fn parse_state(line: &str) -> Result<(bool, u64, u64), WasteErrorKind> {
    let bad = || WasteErrorKind::BadState(Snippet::new(line));
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    let ["#", "state:", state, "since_ns:", since, "now_ns:", now] = words[..] else {
        return Err(bad());
    };
    let on = match state {
        "on" => true,
        "off" => false,
        _ => return Err(bad()),
    };
    let since = unsigned(since).ok_or_else(bad)?;
    let now = unsigned(now).ok_or_else(bad)?;
    Ok((on, since, now))
}

fn parse_site(line: &str) -> Result<WasteSite, WasteErrorKind> {
    use WasteErrorKind as K;
    let mut words = line.split_ascii_whitespace();
    let mut v = [0u64; 6];
    for (slot, name) in v.iter_mut().zip(COLUMNS) {
        let word = words.next().ok_or(K::Missing(name))?;
        *slot = unsigned(word).ok_or_else(|| K::BadNumber(name, Snippet::new(word)))?;
    }
    let tag = parse_tag_info(words).map_err(K::Tag)?;
    let [bytes, requested, slack, allocs, frees, untracked] = v;
    Ok(WasteSite {
        counts: Counts {
            bytes,
            requested,
            slack,
            allocs,
            frees,
            untracked,
        },
        tag,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "allocwaste - version: 1.0\n\
        # state: on since_ns: 5000000000 now_ns: 65000000000\n\
        #      <bytes>  <requested>      <slack>     <allocs>      <frees>  <untracked> <tag info>\n";

    fn one(line: &str) -> Result<WasteSite, WasteError> {
        let mut w = Waste::parse(format!("{HEAD}{line}\n").as_bytes())?;
        assert_eq!(w.sites.len(), 1);
        Ok(w.sites.remove(0))
    }

    #[test]
    fn lines_with_and_without_modules_and_extras() {
        let s = one("        1280         1000          280           10            0            0 lib/t.c:120 [alloctag_test] func:hold_object").unwrap();
        assert_eq!(
            (
                s.counts.bytes,
                s.counts.requested,
                s.counts.slack,
                s.counts.allocs,
                s.counts.frees,
                s.counts.untracked
            ),
            (1280, 1000, 280, 10, 0, 0)
        );
        assert_eq!(s.tag.module.as_deref(), Some("alloctag_test"));
        assert_eq!((s.tag.file.as_str(), s.tag.line), ("lib/t.c", 120));
        let s = one("64 48 16 90210 90209 128 mm/util.c:22 func:kstrdup accurate:no ").unwrap();
        assert_eq!(s.tag.module, None);
        assert_eq!(s.tag.function, "kstrdup");
        assert!(!s.tag.is_accurate());
        assert_eq!((s.counts.untracked, s.ratio()), (128, 0.25));
        assert_eq!(one("0 0 0 0 0 0 a.c:1 func:f").unwrap().ratio(), 0.0);
    }

    #[test]
    fn header_and_state() {
        let w = Waste::parse(HEAD.as_bytes()).unwrap();
        assert_eq!(
            (w.on, w.since_ns, w.now_ns),
            (true, 5_000_000_000, 65_000_000_000)
        );
        assert_eq!(w.version, Version::V1_0);
        let w = Waste::parse(b"allocwaste - version: 1.3\n# state: off since_ns: 0 now_ns: 7\n")
            .unwrap();
        assert_eq!((w.state(), w.now_ns, w.sites.len()), ("off", 7, 0));
        let e = Waste::parse(b"allocwaste - version: 2.0\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert_eq!(
            e.to_string(),
            "line 1: unsupported allocwaste format version 2.0 (this tool reads versions 1.x)"
        );
        let e = Waste::parse(b"allocinfo - version: 1.0\n#\n").unwrap_err();
        assert!(matches!(e.kind, WasteErrorKind::BadHeader(_)), "{e}");
        assert_eq!(Waste::parse(b"").unwrap_err().kind, WasteErrorKind::Empty);
        let e = Waste::parse(b"allocwaste - version: 1.0\n").unwrap_err();
        assert_eq!((e.line, e.kind), (2, WasteErrorKind::MissingState));
        for state in [
            "# state: maybe since_ns: 0 now_ns: 0",
            "# state: on since_ns: -1 now_ns: 0",
            "# state: on now_ns: 0",
            "#      <bytes>  <requested>",
        ] {
            let e = Waste::parse(format!("allocwaste - version: 1.0\n{state}\n").as_bytes())
                .unwrap_err();
            assert!(
                matches!(e.kind, WasteErrorKind::BadState(_)),
                "{state}: {e}"
            );
            assert_eq!(e.line, 2);
        }
    }

    #[test]
    fn errors_name_the_line() {
        let e = one("1 1 0 x 0 0 a.c:1 func:f").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 4: invalid allocs \"x\": expected an unsigned 64-bit integer"
        );
        assert_eq!(
            one("1 1 0").unwrap_err().kind,
            WasteErrorKind::Missing("allocs")
        );
        assert!(matches!(
            one("-1 1 0 0 0 0 a.c:1 func:f").unwrap_err().kind,
            WasteErrorKind::BadNumber("bytes", _)
        ));
        let e = one("1 1 0 0 0 0 a.c:1 kstrdup").unwrap_err();
        assert!(
            matches!(e.kind, WasteErrorKind::Tag(ParseErrorKind::BadFunction(_))),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "line 4: expected func:NAME, found \"kstrdup\""
        );
        assert!(matches!(
            one("1 1 0 0 0 0 a.c:1 func:f junk").unwrap_err().kind,
            WasteErrorKind::Tag(ParseErrorKind::BadExtra(_))
        ));
        let e = Waste::parse(
            format!("{HEAD}1 1 0 0 0 0 a.c:1 func:f\n\n1 1 0 0 0 0 a.c:x func:f\n").as_bytes(),
        )
        .unwrap_err();
        assert_eq!(e.line, 6);
    }
}
