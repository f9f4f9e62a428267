//! The stress boot's reads of `/proc/allocinfo`, each checked against
//! the table of tags it must list (`tests/guest/stress.sh`).

use crate::*;
use allocinfo_format::{Profile, Tag};
use std::collections::{BTreeMap, HashMap};

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
///
/// `kept` more lines of each churned tag are allowed, in the final read too:
/// the instances of a module unloaded with live allocations, whose call
/// sites stay listed until those are freed, and whose lines version 1.0
/// cannot tell from a loaded instance's (the stress test bounds how many
/// leaking loads it makes, and counts what is left through the ioctl).
pub fn check_read(read: &[u8], table: &str, final_read: bool, kept: usize) -> Outcome {
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
            Kind::Churned if g > if final_read { 0 } else { *w } + kept => {
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
