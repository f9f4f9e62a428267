//! The read checkers of the guest tests (`tests/guest/stress.sh`,
//! `tests/guest/ioctl.sh`): a read of `/proc/allocinfo` checked against the
//! tags it must list, and the allocinfo ioctl's output
//! (`tests/guest/tools/allocinfo_ioctl.c`) compared with the text.
//!
//! A Rust tool on `allocinfo-format` rather than a kselftest-style C
//! harness: the checks are text comparisons, and this way the text is read
//! by the workspace's one tested parser (round trip, fuzzing, golden
//! files) instead of by a seventh hand-written one; each check is a plain
//! function tested on the host by `cargo test` on fixture text, including
//! the bad inputs that must fail it; and the binary is built static like
//! `allocinfo` (scripts/build-tool.sh). The ioctl itself stays driven from
//! C, where the ABI's structs are declared.
//!
//! Every check returns `Ok(summary)` or `Err(complaints)`; the binary prints
//! either and exits 0 or 1.

use allocinfo_format::{COLUMN_HEADER, Profile, Tag, Version};
use std::fmt;

/// The first header line of 6.12's text, which the stress reads must show.
pub const HEADER_1_0: &str = "allocinfo - version: 1.0";

/// The ioctl returns a name of more than this many characters cut to its
/// last ones (mainline's `allocinfo_str()`, `ALLOCINFO_STR_SIZE - 1`).
pub const IOCTL_NAME_MAX: usize = 63;

/// At most this many complaints are printed per check.
const MAX_COMPLAINTS: usize = 5;

/// A check's result: a summary line, or the complaints.
pub type Outcome = Result<String, String>;

/// One tag line of a listing, as written and as parsed.
#[derive(Clone, Debug)]
pub struct Line {
    /// 1-based line number in its file.
    pub no: usize,
    pub raw: String,
    pub tag: Tag,
}

/// A listing of tags: `/proc/allocinfo`'s text, the text less its two
/// header lines (allocinfo_ioctl snapshot's copies) or allocinfo_ioctl's
/// dump, which prints each record as a line of the text.
#[derive(Clone, Debug)]
pub struct Listing {
    /// The header's version, when the listing has the header.
    pub version: Option<Version>,
    pub lines: Vec<Line>,
}

impl Listing {
    /// Reads a listing. Strict as the shell's normalizer was: every line
    /// but the header is a tag line, the only `key:value` pairs after the
    /// function are mainline's `accurate:no` and alloctag's `unloaded:yes`,
    /// in that order, no blank line, a final newline.
    pub fn parse(input: &[u8]) -> Result<Listing, String> {
        let text = std::str::from_utf8(input).map_err(|e| format!("not UTF-8: {e}"))?;
        if text.is_empty() {
            return Ok(Listing {
                version: None,
                lines: Vec::new(),
            });
        }
        let Some(body) = text.strip_suffix('\n') else {
            return Err(format!(
                "does not end with a newline: {:?}",
                text.lines().last().unwrap_or("")
            ));
        };
        let mut rows = body
            .split('\n')
            .enumerate()
            .map(|(i, l)| (i + 1, l))
            .peekable();
        let mut version = None;
        if rows
            .peek()
            .is_some_and(|(_, l)| l.starts_with("allocinfo - version:"))
        {
            let (_, first) = rows.next().unwrap_or_default();
            let (_, second) = rows.next().unwrap_or((2, ""));
            let head = Profile::parse(format!("{first}\n{second}\n").as_bytes())
                .map_err(|e| format!("header: {e}"))?;
            version = Some(head.version);
        }
        let mut lines = Vec::new();
        for (no, raw) in rows {
            let tag: Tag = raw
                .parse()
                .map_err(|e| format!("line {no}: {e}: {raw:?}"))?;
            let pairs: Vec<(&str, &str)> = tag
                .extra
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            if !matches!(
                pairs.as_slice(),
                [] | [("accurate", "no")]
                    | [("unloaded", "yes")]
                    | [("accurate", "no"), ("unloaded", "yes")]
            ) {
                return Err(format!("line {no}: not a tag line (after func:): {raw:?}"));
            }
            lines.push(Line {
                no,
                raw: raw.to_owned(),
                tag,
            });
        }
        Ok(Listing { version, lines })
    }

    pub fn tags(&self) -> impl Iterator<Item = &Tag> {
        self.lines.iter().map(|l| &l.tag)
    }
}

/// `s`, or its last [`IOCTL_NAME_MAX`] characters when longer.
pub fn cut(s: &str) -> &str {
    match s.char_indices().rev().nth(IOCTL_NAME_MAX - 1) {
        Some((i, _)) if i > 0 => &s[i..],
        _ => s,
    }
}

/// A tag as the ioctl reports it: each name cut (`cut`), and `""` for
/// built-in code's module. Compared with the ioctl's output, the text's tags
/// are taken this way.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site {
    pub file: String,
    pub line: u32,
    pub module: String,
    pub function: String,
}

impl Site {
    /// The site of a tag of the text, as the ioctl reports it.
    pub fn of(t: &Tag) -> Site {
        Site {
            file: cut(&t.file).to_owned(),
            line: t.line,
            module: cut(t.module.as_deref().unwrap_or("")).to_owned(),
            function: cut(&t.function).to_owned(),
        }
    }

    /// The site of a tag as written: the ioctl's output is compared with
    /// the text as it is, so a name it did not cut shows.
    pub fn written(t: &Tag) -> Site {
        Site {
            file: t.file.clone(),
            line: t.line,
            module: t.module.clone().unwrap_or_default(),
            function: t.function.clone(),
        }
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} [{}] func:{}",
            self.file, self.line, self.module, self.function
        )
    }
}

/// A tag as the ioctl reports it, counters included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub bytes: i64,
    pub calls: u64,
    pub site: Site,
}

impl Record {
    pub fn of(t: &Tag) -> Record {
        Record {
            bytes: t.bytes,
            calls: t.calls,
            site: Site::of(t),
        }
    }

    pub fn written(t: &Tag) -> Record {
        Record {
            bytes: t.bytes,
            calls: t.calls,
            site: Site::written(t),
        }
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.bytes, self.calls, self.site)
    }
}

/// Which tags a check looks at. The ioctl's filters (module, function,
/// file, line, inaccurate, min, max) mean what mainline's mean: names equal
/// as given (the module `""` is built-in code), the line compared in 64
/// bits, `inaccurate` nonzero selecting the tags marked inaccurate, bytes in
/// `[min, max]` as unsigned; and alloctag's `unloaded`, the tags marked
/// unloaded. The others select tags of a read.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub module: Option<String>,
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub inaccurate: Option<u64>,
    pub min: Option<u64>,
    pub max: Option<u64>,
    /// The tags of unloaded modules (`unloaded:yes`): the filter bit has
    /// no value, so there is no selector of the others.
    pub unloaded: bool,
    /// Any loadable module's tags (not built-in code's).
    pub any_module: bool,
    pub module_prefix: Option<String>,
    pub function_prefix: Option<String>,
    /// Tags with bytes or calls.
    pub nonzero: bool,
}

impl Filter {
    pub fn matches(&self, t: &Tag) -> bool {
        let module = t.module.as_deref().unwrap_or("");
        let bytes = t.bytes as u64; // the ioctl's counter is a u64
        self.module.as_ref().is_none_or(|m| m == module)
            && self.function.as_ref().is_none_or(|f| *f == t.function)
            && self.file.as_ref().is_none_or(|f| *f == t.file)
            && self.line.is_none_or(|l| l == u64::from(t.line))
            && self.inaccurate.is_none_or(|v| t.is_accurate() == (v == 0))
            && self.min.is_none_or(|m| bytes >= m)
            && self.max.is_none_or(|m| bytes <= m)
            && (!self.unloaded || t.is_unloaded())
            && (!self.any_module || t.module.is_some())
            && self
                .module_prefix
                .as_ref()
                .is_none_or(|p| t.module.as_ref().is_some_and(|m| m.starts_with(p.as_str())))
            && self
                .function_prefix
                .as_ref()
                .is_none_or(|p| t.function.starts_with(p.as_str()))
            && (!self.nonzero || t.bytes != 0 || t.calls != 0)
    }

    /// Whether the ioctl-cut form of `t` matches: names compared cut, as
    /// the ioctl compares a filter with its tags.
    pub fn matches_cut(&self, t: &Tag) -> bool {
        let mut c = t.clone();
        c.file = cut(&t.file).to_owned();
        c.function = cut(&t.function).to_owned();
        c.module = t.module.as_deref().map(|m| cut(m).to_owned());
        self.matches(&c)
    }
}

fn complaints(mut v: Vec<String>, head: &str) -> String {
    let n = v.len();
    v.truncate(MAX_COMPLAINTS);
    let mut s = head.to_owned();
    for c in v {
        s.push('\n');
        s.push_str(&c);
    }
    if n > MAX_COMPLAINTS {
        s.push_str(&format!("\n({} more)", n - MAX_COMPLAINTS));
    }
    s
}

mod ioctl;
mod single;
mod stress;

pub use ioctl::*;
pub use single::*;
pub use stress::*;

#[cfg(test)]
mod tests;
