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
use std::collections::{BTreeMap, HashMap, HashSet};
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
    /// but the header is a tag line, the only `key:value` after the function
    /// is mainline's `accurate:no`, no blank line, a final newline.
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
            if tag
                .extra
                .iter()
                .any(|(k, v)| (k.as_str(), v.as_str()) != ("accurate", "no"))
            {
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
/// `[min, max]` as unsigned. The others select tags of a read.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub module: Option<String>,
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub inaccurate: Option<u64>,
    pub min: Option<u64>,
    pub max: Option<u64>,
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

// --- the stress boot's reads -------------------------------------------

/// The kinds of a table's tags (tests/guest/stress.sh).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// vmlinux: in every read, exactly as often as in the table.
    Vmlinux,
    /// The pinned module (loaded throughout): the same.
    Pinned,
    /// A module loaded and unloaded during the reads: at most as often,
    /// and never in the final read.
    Churned,
}

impl Kind {
    pub fn letter(self) -> char {
        match self {
            Kind::Vmlinux => 'V',
            Kind::Pinned => 'P',
            Kind::Churned => 'C',
        }
    }

    pub fn from_letter(s: &str) -> Option<Kind> {
        match s {
            "V" => Some(Kind::Vmlinux),
            "P" => Some(Kind::Pinned),
            "C" => Some(Kind::Churned),
            _ => None,
        }
    }
}

/// The table lines ("KIND<TAB>COUNT<TAB>FILE:LINE [MODULE] func:NAME") of
/// the tags of read `text` that `kind` takes: with `module` None the
/// vmlinux tags, else that module's. Fails when there is none: a table that
/// expects nothing checks nothing.
pub fn table(kind: Kind, text: &[u8], module: Option<&str>) -> Outcome {
    let read = Profile::parse(text).map_err(|e| format!("the read: {e}"))?;
    let mut n: BTreeMap<String, usize> = BTreeMap::new();
    for t in &read.tags {
        if t.module.as_deref() == module {
            *n.entry(t.location().to_string()).or_default() += 1;
        }
    }
    if n.is_empty() {
        return Err(format!(
            "no tag of {} in the read",
            module.map_or("vmlinux".to_owned(), |m| format!("[{m}]"))
        ));
    }
    Ok(n.iter()
        .map(|(info, c)| format!("{}\t{c}\t{info}\n", kind.letter()))
        .collect())
}

/// Checks a read of `/proc/allocinfo` (`read`, as read) against `table`
/// (the lines of [`table`]): 6.12's two header lines; every line exactly
/// as the kernel prints it (`%12lli %8llu file:line [module] func:name `,
/// module names of `[A-Za-z0-9_]`, a final newline); every tag of kind V
/// and P as many times as the table says, tags of kind C at most that many
/// times, or never when `final_read`; no tag that the table does not list,
/// but for Rust lines of vmlinux (a `.rs` file, no module), whose dynamic
/// tags are made when the line first allocates: each at most once.
pub fn check_read(read: &[u8], table: &str, final_read: bool) -> Outcome {
    let mut want: HashMap<&str, (Kind, usize)> = HashMap::new();
    for (i, l) in table.lines().enumerate() {
        let mut f = l.splitn(3, '\t');
        let (Some(k), Some(c), Some(info)) = (f.next(), f.next(), f.next()) else {
            return Err(format!("table line {}: {l:?}", i + 1));
        };
        let kind = Kind::from_letter(k).ok_or(format!("table line {}: kind {k:?}", i + 1))?;
        let c = c
            .parse()
            .map_err(|_| format!("table line {}: count {c:?}", i + 1))?;
        if want.insert(info, (kind, c)).is_some() {
            return Err(format!("table line {}: {info} listed twice", i + 1));
        }
    }
    if want.is_empty() {
        return Err("the table is empty".into());
    }
    let mut bad = Vec::new();
    let text = match std::str::from_utf8(read) {
        Ok(t) => t,
        Err(e) => return Err(format!("the read is not UTF-8: {e}")),
    };
    let Some(body) = text.strip_suffix('\n') else {
        return Err(format!(
            "the read does not end with a newline: {:?}",
            text.lines().last().unwrap_or("")
        ));
    };
    let mut lines = body.split('\n');
    for (no, want_line) in [(1, HEADER_1_0), (2, COLUMN_HEADER)] {
        match lines.next() {
            Some(l) if l == want_line => {}
            Some(l) => bad.push(format!("header line {no}: {l:?}")),
            None => bad.push("no header".into()),
        }
    }
    let mut got: HashMap<String, usize> = HashMap::new();
    let mut made: HashMap<String, usize> = HashMap::new();
    for (i, l) in lines.enumerate() {
        let no = i + 3;
        match exact_line(l) {
            Ok(t) => {
                let info = t.location().to_string();
                if want.contains_key(info.as_str()) {
                    *got.entry(info).or_default() += 1;
                } else if t.module.is_none() && t.file.ends_with(".rs") {
                    // A Rust line of vmlinux gets its (dynamic) tag when it
                    // first allocates, which may be during the reads.
                    *made.entry(info).or_default() += 1;
                } else {
                    bad.push(format!("line {no} unknown tag: {info}"));
                }
            }
            Err(why) => bad.push(format!("line {no} malformed ({why}): {l:?}")),
        }
    }
    let mut made: Vec<_> = made.into_iter().filter(|(_, n)| *n > 1).collect();
    made.sort();
    for (info, n) in made {
        bad.push(format!("dynamic tag {n} times: {info}"));
    }
    let mut infos: Vec<_> = want.iter().collect();
    infos.sort();
    for (info, (kind, w)) in infos {
        let g = got.get(*info).copied().unwrap_or(0);
        match kind {
            Kind::Vmlinux | Kind::Pinned if g != *w => {
                bad.push(format!("{} tag {g} times, not {w}: {info}", kind.letter()))
            }
            Kind::Churned if g > if final_read { 0 } else { *w } => {
                bad.push(format!("module tag {g} times: {info}"))
            }
            _ => {}
        }
    }
    if bad.is_empty() {
        Ok(format!(
            "read of {} tags as the table says",
            got.values().sum::<usize>()
        ))
    } else {
        Err(complaints(bad, "the read fails the check:"))
    }
}

/// A tag line exactly as the kernel prints it in version 1.0.
fn exact_line(l: &str) -> Result<Tag, String> {
    let t: Tag = l.parse().map_err(|e| format!("{e}"))?;
    if !t.extra.is_empty() {
        return Err("key:value after the function".into());
    }
    if let Some(m) = &t.module
        && !m.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Err("module name".into());
    }
    if t.to_string() != l {
        return Err("not the kernel's spacing".into());
    }
    Ok(t)
}

// --- reads of single tags ------------------------------------------------

/// The tags of `l` that `f` selects, names as written.
pub fn select<'a>(l: &'a Listing, f: &'a Filter) -> impl Iterator<Item = &'a Tag> {
    l.tags().filter(|t| f.matches(t))
}

/// "BYTES CALLS" of the one tag that `f` selects; fails unless exactly one.
pub fn get(l: &Listing, f: &Filter) -> Outcome {
    let s: Vec<_> = select(l, f).collect();
    match s.as_slice() {
        [t] => Ok(format!("{} {}", t.bytes, t.calls)),
        _ => Err(format!("{} tags selected, not 1: {}", s.len(), list(&s))),
    }
}

/// Every tag that `f` selects has 0 bytes in 0 calls, and there is one.
pub fn zero(l: &Listing, f: &Filter) -> Outcome {
    let s: Vec<_> = select(l, f).collect();
    if s.is_empty() {
        return Err("no tag selected".into());
    }
    let moved: Vec<String> = s
        .iter()
        .filter(|t| t.bytes != 0 || t.calls != 0)
        .map(|t| t.to_string())
        .collect();
    if moved.is_empty() {
        Ok(format!("{} tags, all at 0", s.len()))
    } else {
        Err(complaints(moved, "tags not at 0:"))
    }
}

/// The tags that `f` selects, with their counters, are the same in both
/// reads (in any order), and there is one.
pub fn unchanged(before: &Listing, after: &Listing, f: &Filter) -> Outcome {
    let lines = |l: &Listing| {
        let mut v: Vec<String> = select(l, f).map(|t| t.to_string()).collect();
        v.sort();
        v
    };
    let (a, b) = (lines(before), lines(after));
    if a.is_empty() {
        return Err("no tag selected in the first read".into());
    }
    if a == b {
        return Ok(format!("{} tags unchanged", a.len()));
    }
    let (sa, sb): (HashSet<_>, HashSet<_>) = (a.iter().collect(), b.iter().collect());
    let mut d: Vec<String> = a
        .iter()
        .filter(|x| !sb.contains(x))
        .map(|x| format!("before: {x}"))
        .collect();
    d.extend(
        b.iter()
            .filter(|x| !sa.contains(x))
            .map(|x| format!("after:  {x}")),
    );
    Err(complaints(d, "the tags changed:"))
}

fn list(tags: &[&Tag]) -> String {
    tags.iter()
        .take(MAX_COMPLAINTS)
        .map(|t| t.location().to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

// --- the ioctl's output against the text ---------------------------------

/// Compares two lists of sites, in order; says how they differ.
fn same_sites(expected: &[Site], got: &[Site], what: &str) -> Result<(), String> {
    if expected == got {
        return Ok(());
    }
    let (se, sg): (HashSet<_>, HashSet<_>) = (expected.iter().collect(), got.iter().collect());
    let mut d: Vec<String> = expected
        .iter()
        .filter(|s| !sg.contains(s))
        .map(|s| format!("missing: {s}"))
        .collect();
    d.extend(
        got.iter()
            .filter(|s| !se.contains(s))
            .map(|s| format!("extra:   {s}")),
    );
    if d.is_empty() {
        let i = expected.iter().zip(got).position(|(a, b)| a != b);
        d.push(match i {
            Some(i) => format!(
                "other order or count, first at {}: expected {}, got {}",
                i + 1,
                expected[i],
                got[i]
            ),
            None => "a tag listed another number of times".into(),
        });
    }
    Err(complaints(
        d,
        &format!(
            "{what}: expected {} tags, got {}:",
            expected.len(),
            got.len()
        ),
    ))
}

/// How many tags a check expects at least or exactly.
#[derive(Clone, Copy, Debug, Default)]
pub struct Expect {
    pub at_least: Option<usize>,
    pub exactly: Option<usize>,
}

impl Expect {
    pub fn check(self, n: usize, what: &str) -> Result<(), String> {
        if let Some(m) = self.at_least
            && n < m
        {
            return Err(format!("{n} {what}, expected at least {m}"));
        }
        if let Some(m) = self.exactly
            && n != m
        {
            return Err(format!("{n} {what}, expected {m}"));
        }
        Ok(())
    }
}

/// The tags of `got` (the ioctl's dump with filter `f`) are exactly those
/// of `expected` (the text, or an unfiltered dump) that `f` selects, in
/// order: `expected`'s names cut as the ioctl cuts them, `got`'s as
/// written. With `both`, `f` filters `got` too (two listings that must mark
/// the same tags).
pub fn tags(expected: &Listing, got: &Listing, f: &Filter, both: bool, n: Expect) -> Outcome {
    let e: Vec<Site> = expected
        .tags()
        .filter(|t| f.matches_cut(t))
        .map(Site::of)
        .collect();
    let g: Vec<Site> = got
        .tags()
        .filter(|t| !both || f.matches_cut(t))
        .map(Site::written)
        .collect();
    same_sites(&e, &g, "the listings differ")?;
    n.check(e.len(), "tags")?;
    Ok(format!("{} tags", e.len()))
}

/// The records of `t1` and `t2` (two reads of the text around the dump) by
/// position, and whether each held still: the same numbers in both.
fn held_still<'a>(
    t1: &'a Listing,
    t2: &'a Listing,
) -> Result<Vec<(Record, bool, &'a Tag)>, String> {
    let a: Vec<_> = t1.tags().collect();
    let b: Vec<_> = t2.tags().collect();
    if a.len() != b.len() {
        return Err(format!(
            "the two reads of the text list {} and {} tags",
            a.len(),
            b.len()
        ));
    }
    let mut v = Vec::new();
    for (x, y) in a.iter().zip(&b) {
        let (rx, ry) = (Record::of(x), Record::of(y));
        if rx.site != ry.site {
            return Err(format!(
                "the two reads of the text list other tags: {} and {}",
                rx.site, ry.site
            ));
        }
        let still = rx == ry;
        v.push((rx, still, *x));
    }
    Ok(v)
}

/// Fails unless more than half the tags held still: on a moment that busy,
/// a comparison of the still ones says little (the caller reads again).
fn mostly_still(v: &[(Record, bool, &Tag)]) -> Result<(), String> {
    let still = v.iter().filter(|(_, s, _)| *s).count();
    if still * 2 <= v.len() {
        return Err(format!(
            "fewer than half the tags held still ({still} of {})",
            v.len()
        ));
    }
    Ok(())
}

/// For filters on bytes, where a tag whose counters moved between the reads
/// may rightly be in or out: among the tags that held still across `t1`
/// and `t2` (more than half must), the dump `got` lists exactly those that
/// `f` selects, in order.
pub fn stable_tags(t1: &Listing, got: &Listing, t2: &Listing, f: &Filter) -> Outcome {
    let v = held_still(t1, t2)?;
    mostly_still(&v)?;
    // A site listed twice (the same line in two places of vmlinux) is
    // still only when both held still: the dump's lines name no place.
    let moved: HashSet<&Site> = v.iter().filter(|r| !r.1).map(|r| &r.0.site).collect();
    let stable: HashSet<&Site> = v
        .iter()
        .map(|r| &r.0.site)
        .filter(|s| !moved.contains(s))
        .collect();
    let e: Vec<Site> = v
        .iter()
        .filter(|(r, _, t)| stable.contains(&r.site) && f.matches_cut(t))
        .map(|r| r.0.site.clone())
        .collect();
    let all = got.lines.len();
    let g: Vec<Site> = got
        .tags()
        .map(Site::written)
        .filter(|s| stable.contains(s))
        .collect();
    same_sites(&e, &g, "the dump lists other tags than the text")?;
    Ok(format!("{all} tags, {} of them still", g.len()))
}

/// The tags whose numbers held still across `t1` and `t2` (more than half
/// must) have those numbers in the dump `d`, which lists the same tags.
pub fn counters(t1: &Listing, d: &Listing, t2: &Listing) -> Outcome {
    let v = held_still(t1, t2)?;
    mostly_still(&v)?;
    let dump: Vec<Record> = d.tags().map(Record::written).collect();
    same_sites(
        &v.iter().map(|r| r.0.site.clone()).collect::<Vec<_>>(),
        &dump.iter().map(|r| r.site.clone()).collect::<Vec<_>>(),
        "the dump lists other tags than the text",
    )?;
    let mut still = 0;
    let mut bad = Vec::new();
    for ((r, s, _), dr) in v.iter().zip(&dump) {
        if *s {
            still += 1;
            if r != dr {
                bad.push(format!("text:  {r}\nioctl: {dr}"));
            }
        }
    }
    if bad.is_empty() {
        Ok(format!("{still} of {} tags held still, 0 differ", v.len()))
    } else {
        let n = bad.len();
        Err(complaints(
            bad,
            &format!(
                "the ioctl's counters differ from the text's: {n} of {still} tags that held still"
            ),
        ))
    }
}

/// With the counters frozen: the dump is the text record for record, and
/// byte for byte where no name was cut (mainline's `accurate:no` aside).
pub fn frozen(text: &Listing, dump: &Listing) -> Outcome {
    let t: Vec<Record> = text.tags().map(Record::of).collect();
    let d: Vec<Record> = dump.tags().map(Record::written).collect();
    same_sites(
        &t.iter().map(|r| r.site.clone()).collect::<Vec<_>>(),
        &d.iter().map(|r| r.site.clone()).collect::<Vec<_>>(),
        "the frozen dump lists other tags than the text",
    )?;
    let mut bad = Vec::new();
    let mut exact = 0;
    for (((rt, rd), lt), ld) in t.iter().zip(&d).zip(&text.lines).zip(&dump.lines) {
        if rt != rd {
            bad.push(format!("text:  {rt}\nioctl: {rd}"));
            continue;
        }
        let long = [&lt.tag.file, &lt.tag.function]
            .iter()
            .chain(lt.tag.module.as_ref().iter())
            .any(|n| n.chars().count() > IOCTL_NAME_MAX);
        if !long {
            let plain = |s: &str| s.replace(" accurate:no ", " ");
            if plain(&lt.raw) != plain(&ld.raw) {
                bad.push(format!("text:  {:?}\nioctl: {:?}", lt.raw, ld.raw));
            } else {
                exact += 1;
            }
        }
    }
    if bad.is_empty() {
        Ok(format!(
            "{} records equal, {exact} lines equal to the byte",
            t.len()
        ))
    } else {
        Err(complaints(bad, "the frozen dump differs from the text:"))
    }
}

/// The tags with a file or function name over [`IOCTL_NAME_MAX`]
/// characters, one line each: "CUT_FILE LINE CUT_FUNCTION FILE FUNCTION".
pub fn long_names(l: &Listing) -> String {
    l.tags()
        .filter(|t| {
            t.file.chars().count() > IOCTL_NAME_MAX || t.function.chars().count() > IOCTL_NAME_MAX
        })
        .map(|t| {
            format!(
                "{} {} {} {} {}\n",
                cut(&t.file),
                t.line,
                cut(&t.function),
                t.file,
                t.function
            )
        })
        .collect()
}

/// What `pick` chooses among the text's tags (names cut).
#[derive(Clone, Copy, Debug)]
pub enum Pick {
    /// The function with the most tags.
    CommonestFunction,
    /// A function with exactly one tag (the first by name).
    LoneFunction,
    /// The file with the most tags.
    CommonestFile,
}

/// A name to filter by, chosen among the tags of `l`.
pub fn pick(l: &Listing, what: Pick) -> Outcome {
    let mut n: BTreeMap<String, usize> = BTreeMap::new();
    for t in l.tags() {
        let s = Site::of(t);
        let key = match what {
            Pick::CommonestFile => s.file,
            _ => s.function,
        };
        *n.entry(key).or_default() += 1;
    }
    let found = match what {
        Pick::LoneFunction => n.iter().find(|(_, c)| **c == 1),
        _ => n.iter().max_by_key(|(_, c)| **c),
    };
    found
        .map(|(k, _)| k.clone())
        .ok_or_else(|| format!("no such name among {} tags", l.lines.len()))
}

/// "FILE:LINE" (cut) of the first tag of function `function`.
pub fn site(l: &Listing, function: &str) -> Outcome {
    l.tags()
        .map(Site::of)
        .find(|s| s.function == function)
        .map(|s| format!("{}:{}", s.file, s.line))
        .ok_or_else(|| format!("no tag of function {function}"))
}

/// "BYTES FILE:LINE" of the last tag with bytes whose numbers held still
/// across `t1` and `t2` (to find it by its size).
pub fn held_size(t1: &Listing, t2: &Listing) -> Outcome {
    held_still(t1, t2)?
        .iter()
        .rev()
        .find(|(r, still, _)| *still && r.bytes > 0)
        .map(|(r, _, _)| format!("{} {}:{}", r.bytes, r.site.file, r.site.line))
        .ok_or_else(|| "no tag with bytes held still".into())
}

#[cfg(test)]
mod tests;
