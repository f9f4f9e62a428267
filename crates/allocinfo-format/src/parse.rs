use crate::model::{Profile, Tag, Version};
use std::fmt;

/// A parse failure: the 1-based input line and the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct ParseError {
    /// 1-based line number in the input.
    pub line: usize,
    pub kind: ParseErrorKind,
}

/// Why a line was rejected. Quoted input is shortened to a readable snippet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    #[error("empty input: expected the header line 'allocinfo - version: 1.0'")]
    Empty,
    #[error("expected the header line 'allocinfo - version: X.Y', found {0}")]
    BadHeader(Snippet),
    #[error("unsupported format version {0} (this tool reads versions 1.x and 2.x)")]
    UnsupportedVersion(Version),
    #[error("expected the column header line starting with '#', found {0}")]
    BadColumnHeader(Snippet),
    #[error("missing the column header line starting with '#'")]
    MissingColumnHeader,
    #[error("line is not valid UTF-8")]
    InvalidUtf8,
    #[error("invalid size {0}: expected a signed 64-bit integer")]
    BadBytes(Snippet),
    #[error("missing the {0} field")]
    Missing(&'static str),
    #[error("invalid call count {0}: expected an unsigned 64-bit integer")]
    BadCalls(Snippet),
    #[error("expected FILE:LINE, found {0}")]
    BadLocation(Snippet),
    #[error("invalid line number in {0}: expected an unsigned 32-bit integer")]
    BadLineNumber(Snippet),
    #[error("invalid module {0}: expected [NAME]")]
    BadModule(Snippet),
    #[error("expected func:NAME, found {0}")]
    BadFunction(Snippet),
    #[error("unexpected {0} after the function name: expected KEY:VALUE")]
    BadExtra(Snippet),
}

/// A piece of input quoted in an error message, cut to at most 60 characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet(String);

impl Snippet {
    const MAX: usize = 60;

    pub(crate) fn new(s: &str) -> Snippet {
        match s.char_indices().nth(Self::MAX) {
            Some((i, _)) => Snippet(format!("{}...", &s[..i])),
            None => Snippet(s.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

fn err(line: usize, kind: ParseErrorKind) -> ParseError {
    ParseError { line, kind }
}

impl Profile {
    /// Parses the text of `/proc/allocinfo`. See [`crate::ParseError`].
    pub fn parse(input: &[u8]) -> Result<Profile, ParseError> {
        parse(input)
    }

    /// Checks the first line of a profile, so that a reader can refuse
    /// input that is no profile (`yes | allocinfo top -`) before reading
    /// the rest of it.
    pub fn check_header(line: &[u8]) -> Result<(), ParseError> {
        let line = std::str::from_utf8(line).map_err(|_| err(1, ParseErrorKind::InvalidUtf8))?;
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        parse_header(line).map(drop).map_err(|k| err(1, k))
    }
}

fn parse(input: &[u8]) -> Result<Profile, ParseError> {
    use ParseErrorKind as K;

    let mut lines = numbered_lines(input);

    let (n, header) = lines.next().ok_or(err(1, K::Empty))?;
    let header = header.map_err(|_| err(n, K::InvalidUtf8))?;
    let version = parse_header(header).map_err(|k| err(n, k))?;

    let (n, columns) = lines.next().ok_or(err(n + 1, K::MissingColumnHeader))?;
    let columns = columns.map_err(|_| err(n, K::InvalidUtf8))?;
    if !columns.trim_ascii_start().starts_with('#') {
        return Err(err(n, K::BadColumnHeader(Snippet::new(columns))));
    }

    let mut tags = Vec::new();
    for (n, line) in lines {
        let line = line.map_err(|_| err(n, K::InvalidUtf8))?;
        tags.push(parse_tag(line).map_err(|k| err(n, k))?);
    }
    Ok(Profile { version, tags })
}

fn parse_header(line: &str) -> Result<Version, ParseErrorKind> {
    let version = header_version("allocinfo", line)
        .ok_or_else(|| ParseErrorKind::BadHeader(Snippet::new(line)))?;
    if !version.is_supported() {
        return Err(ParseErrorKind::UnsupportedVersion(version));
    }
    Ok(version)
}

/// The lines of a text file, numbered from 1, each as UTF-8 if it is;
/// blank lines (and the empty piece after the final newline) are skipped.
/// Shared by the parsers of `/proc/allocinfo` and `/proc/allocwaste`.
pub(crate) fn numbered_lines(
    input: &[u8],
) -> impl Iterator<Item = (usize, Result<&str, std::str::Utf8Error>)> {
    input
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, raw)| (i + 1, std::str::from_utf8(raw)))
        .filter(|(_, l)| !matches!(l, Ok(s) if s.trim_ascii().is_empty()))
}

/// The version of a header line `NAME - version: X.Y` (`X` and `Y`
/// decimal digits only), whether or not this tool reads it; `None` for
/// any other line. Shared by `/proc/allocinfo` and `/proc/allocwaste`.
pub(crate) fn header_version(name: &str, line: &str) -> Option<Version> {
    let mut words = line.split_ascii_whitespace();
    let (Some(n), Some("-"), Some("version:"), Some(v), None) = (
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) else {
        return None;
    };
    if n != name {
        return None;
    }
    let (major, minor) = v.split_once('.')?;
    Some(Version {
        major: unsigned(major)?,
        minor: unsigned(minor)?,
    })
}

/// Parses a decimal integer with an optional sign, digits only (no `_`).
pub(crate) fn integer<T: std::str::FromStr>(s: &str) -> Option<T> {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses an unsigned decimal integer: digits only, no sign, no `_`.
pub(crate) fn unsigned<T: std::str::FromStr>(s: &str) -> Option<T> {
    integer(s).filter(|_| s.bytes().all(|b| b.is_ascii_digit()))
}

/// One tag line on its own, as [`Profile::parse`] reads each line after the
/// two header lines: for listings without the header (a line of the text,
/// or a tool printing tags in its format).
impl std::str::FromStr for Tag {
    type Err = ParseErrorKind;

    fn from_str(line: &str) -> Result<Tag, ParseErrorKind> {
        parse_tag(line)
    }
}

fn parse_tag(line: &str) -> Result<Tag, ParseErrorKind> {
    use ParseErrorKind as K;
    let mut words = line.split_ascii_whitespace();

    let bytes = words.next().ok_or(K::Missing("size"))?;
    let bytes = integer::<i64>(bytes).ok_or_else(|| K::BadBytes(Snippet::new(bytes)))?;

    let calls = words.next().ok_or(K::Missing("call count"))?;
    let calls = integer::<u64>(calls)
        .filter(|_| !calls.starts_with('-'))
        .ok_or_else(|| K::BadCalls(Snippet::new(calls)))?;

    let mut tag = parse_tag_info(words)?;
    tag.bytes = bytes;
    tag.calls = calls;
    Ok(tag)
}

/// The tag info of a line, as `/proc/allocinfo` prints it after the
/// counters: `FILE:LINE [MODULE] func:FUNCTION [KEY:VALUE...]`, the
/// module only for loadable modules. The tag's counters are zero.
/// Shared by every file that names call sites this way (`/proc/allocwaste`).
pub(crate) fn parse_tag_info<'a>(
    mut words: impl Iterator<Item = &'a str>,
) -> Result<Tag, ParseErrorKind> {
    use ParseErrorKind as K;
    let location = words.next().ok_or(K::Missing("FILE:LINE"))?;
    let (file, lineno) = location
        .rsplit_once(':')
        .filter(|(f, _)| !f.is_empty())
        .ok_or_else(|| K::BadLocation(Snippet::new(location)))?;
    let lineno = unsigned::<u32>(lineno).ok_or_else(|| K::BadLineNumber(Snippet::new(location)))?;

    let mut word = words.next().ok_or(K::Missing("func:NAME"))?;
    let module = if word.starts_with('[') {
        let name = word
            .strip_prefix('[')
            .and_then(|w| w.strip_suffix(']'))
            .filter(|m| !m.is_empty())
            .ok_or_else(|| K::BadModule(Snippet::new(word)))?;
        word = words.next().ok_or(K::Missing("func:NAME"))?;
        Some(name.to_owned())
    } else {
        None
    };

    let function = word
        .strip_prefix("func:")
        .filter(|f| !f.is_empty())
        .ok_or_else(|| K::BadFunction(Snippet::new(word)))?;

    let extra = words
        .map(|w| match w.split_once(':') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
            _ => Err(K::BadExtra(Snippet::new(w))),
        })
        .collect::<Result<Vec<_>, _>>()?;

    Ok(Tag {
        bytes: 0,
        calls: 0,
        file: file.to_owned(),
        line: lineno,
        module,
        function: function.to_owned(),
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n";

    fn one(line: &str) -> Result<Tag, ParseError> {
        let mut p = Profile::parse(format!("{HEAD}{line}\n").as_bytes())?;
        assert_eq!(p.tags.len(), 1);
        Ok(p.tags.remove(0))
    }

    #[test]
    fn builtin_and_module_lines() {
        let t = one("        4096        1 mm/percpu.c:3191 func:pcpu_embed_first_chunk ").unwrap();
        assert_eq!((t.bytes, t.calls, t.line), (4096, 1, 3191));
        assert_eq!(
            (t.file.as_str(), t.module.as_deref()),
            ("mm/percpu.c", None)
        );
        let t = one("      143360       35 fs/xfs/xfs_buf.c:411 [xfs] func:xfs_buf_alloc_pages ")
            .unwrap();
        assert_eq!(t.module.as_deref(), Some("xfs"));
        assert_eq!(t.function, "xfs_buf_alloc_pages");
        assert!(t.extra.is_empty() && t.is_accurate());
    }

    /// alloctag's 2.0 column line ends with since when the counters count
    /// (src/allocinfo/text.rs): still the column line, read as before.
    #[test]
    fn column_line_with_counters_since() {
        for since in ["12.345678", "none"] {
            let text = format!(
                "allocinfo - version: 2.0\n#     <size>  <calls> <tag info> counters_since:{since}\n\
                 \x20       4096        1 mm/percpu.c:3191 func:pcpu_embed_first_chunk \n"
            );
            let p = Profile::parse(text.as_bytes()).unwrap();
            assert_eq!((p.version.major, p.version.minor), (2, 0));
            assert_eq!(p.tags.len(), 1);
            assert_eq!(p.tags[0].bytes, 4096);
        }
    }

    #[test]
    fn negative_bytes_extra_whitespace_and_extras() {
        let t = one("\t -8192   3   a/b.c:7   func:f   accurate:no  x:y:z  ").unwrap();
        assert_eq!(t.bytes, -8192);
        assert!(!t.is_accurate());
        assert_eq!(t.extra("x"), Some("y:z"));
        assert_eq!(t.extra.len(), 2);
    }

    #[test]
    fn node_pairs_read_in_order_with_percpu_last() {
        let line = "        4224        3 mm/a.c:7 [m] func:f accurate:no nid0:0 nid1:4096 nid2:-8 percpu:136 ";
        let t = one(line).unwrap();
        assert_eq!(t.node_bytes(), Some(vec![0, 4096, -8, 136]));
        assert!(!t.is_accurate());
        assert_eq!(t.to_string(), line, "printed back as read");
        for bad in [
            "nid0:1 nid1:2",            // no percpu:
            "nid1:2 percpu:0",          // not from node 0
            "nid0:1 nid0:2 percpu:0",   // node 0 twice
            "nid0:x percpu:0",          // not a number
            "nid+0:1 percpu:0",         // not a node id
            "nid0:1 percpu:",           // no value
            "percpu:0 nid0:1",          // percpu: not last
            "nid0:1 percpu:0 percpu:2", // percpu: twice
        ] {
            let t = one(&format!("8 1 a/b.c:7 func:f {bad}")).unwrap();
            assert_eq!(t.node_bytes(), None, "{bad}");
        }
        assert_eq!(
            one("8 1 a/b.c:7 func:f percpu:8").unwrap().node_bytes(),
            Some(vec![8])
        );
        assert_eq!(one("8 1 a/b.c:7 func:f").unwrap().node_bytes(), None);
    }

    #[test]
    fn unloaded_modules_tags() {
        let line = "        4096        1 drivers/foo.c:12 [foo] func:foo_probe unloaded:yes ";
        let t: Tag = line.parse().unwrap();
        assert!(t.is_unloaded() && t.is_accurate());
        assert_eq!(t.module.as_deref(), Some("foo"));
        assert_eq!(t.to_string(), line, "printed back as the kernel prints it");
        // After accurate:no when both are there, and printed in that order.
        let both =
            "        4096        1 drivers/foo.c:12 [foo] func:foo_probe accurate:no unloaded:yes ";
        let t: Tag = both.parse().unwrap();
        assert!(t.is_unloaded() && !t.is_accurate());
        assert_eq!(t.to_string(), both);
        // Only "yes" marks it; format 1.0's line does not.
        for other in ["unloaded:no", "unloaded:", "x:yes", ""] {
            let t: Tag = format!("1 1 drivers/foo.c:12 [foo] func:foo_probe {other}")
                .parse()
                .unwrap();
            assert!(!t.is_unloaded(), "{other}");
        }
        let p = Profile::parse(
            format!("allocinfo - version: 2.0\n#\n{line}\n4096 1 drivers/foo.c:12 [foo] func:foo_probe\n")
                .as_bytes(),
        )
        .unwrap();
        let marked: Vec<bool> = p.tags.iter().map(Tag::is_unloaded).collect();
        assert_eq!(marked, [true, false]);
        assert!(p.to_string().contains("func:foo_probe unloaded:yes \n"));
    }

    #[test]
    fn errors_name_line_and_reason() {
        let e = one("abc 1 a.c:1 func:f").unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(
            e.to_string(),
            "line 3: invalid size \"abc\": expected a signed 64-bit integer"
        );
        assert!(matches!(
            one("1 -1 a.c:1 func:f").unwrap_err().kind,
            ParseErrorKind::BadCalls(_)
        ));
        assert!(matches!(
            one("1 1 a.c func:f").unwrap_err().kind,
            ParseErrorKind::BadLocation(_)
        ));
        assert!(matches!(
            one("1 1 a.c:x func:f").unwrap_err().kind,
            ParseErrorKind::BadLineNumber(_)
        ));
        assert!(matches!(
            one("1 1 a.c:+1 func:f").unwrap_err().kind,
            ParseErrorKind::BadLineNumber(_)
        ));
        assert!(matches!(
            one("1 1 a.c:1 [xfs func:f").unwrap_err().kind,
            ParseErrorKind::BadModule(_)
        ));
        assert!(matches!(
            one("1 1 a.c:1 f").unwrap_err().kind,
            ParseErrorKind::BadFunction(_)
        ));
        assert!(matches!(
            one("1 1 a.c:1 func:").unwrap_err().kind,
            ParseErrorKind::BadFunction(_)
        ));
        assert_eq!(
            one("1 1 a.c:1 [m]").unwrap_err().kind,
            ParseErrorKind::Missing("func:NAME")
        );
        assert_eq!(
            one("1").unwrap_err().kind,
            ParseErrorKind::Missing("call count")
        );
        assert!(matches!(
            one("1 1 a.c:1 func:f junk").unwrap_err().kind,
            ParseErrorKind::BadExtra(_)
        ));
        assert!(matches!(
            one("1 1 a.c:1 func:f :v").unwrap_err().kind,
            ParseErrorKind::BadExtra(_)
        ));
        assert!(matches!(
            one("99999999999999999999 1 a.c:1 func:f").unwrap_err().kind,
            ParseErrorKind::BadBytes(_)
        ));
    }

    #[test]
    fn one_line_without_the_header() {
        let t: Tag = "        4096        1 a/b.c:7 [m] func:f accurate:no "
            .parse()
            .unwrap();
        assert_eq!(t, one("4096 1 a/b.c:7 [m] func:f accurate:no").unwrap());
        assert!(matches!(
            "1 1 a.c:1 f".parse::<Tag>().unwrap_err(),
            ParseErrorKind::BadFunction(_)
        ));
        assert_eq!(
            "".parse::<Tag>().unwrap_err(),
            ParseErrorKind::Missing("size")
        );
    }

    #[test]
    fn headers() {
        let e = Profile::parse(b"").unwrap_err();
        assert_eq!((e.line, e.kind), (1, ParseErrorKind::Empty));
        let e = Profile::parse(b"allocinfo - version: 3.0\n#\n").unwrap_err();
        assert_eq!(
            e.kind,
            ParseErrorKind::UnsupportedVersion(Version { major: 3, minor: 0 })
        );
        let e = Profile::parse(b"allocinfo - version: 1.0\n").unwrap_err();
        assert_eq!((e.line, e.kind), (2, ParseErrorKind::MissingColumnHeader));
        let e = Profile::parse(b"allocinfo - version: 1.0\n 1 1 a.c:1 func:f\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::BadColumnHeader(_)));
        let e = Profile::parse(b"allocinfo version 1.0\n#\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::BadHeader(_)));
        let p = Profile::parse(b"allocinfo - version: 2.1\r\n#\r\n").unwrap();
        assert_eq!(
            (p.version, p.tags.len()),
            (Version { major: 2, minor: 1 }, 0)
        );
    }

    #[test]
    fn invalid_utf8_names_its_line() {
        let e =
            Profile::parse(b"allocinfo - version: 1.0\n#\n1 1 a.c:1 func:f\n1 1 \xff.c:1 func:f\n")
                .unwrap_err();
        assert_eq!((e.line, e.kind), (4, ParseErrorKind::InvalidUtf8));
    }

    #[test]
    fn long_snippets_are_cut() {
        let long = "x".repeat(500);
        let e = one(&format!("{long} 1 a.c:1 func:f")).unwrap_err();
        assert!(e.to_string().len() < 140, "{e}");
        assert!(e.to_string().contains("...\""));
    }
}
