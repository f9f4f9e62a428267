//! The allocinfo ioctl's output (`tests/guest/tools/allocinfo_ioctl.c`)
//! compared with the text (`tests/guest/ioctl.sh`).

use crate::*;
use allocinfo_format::Tag;
use std::collections::{BTreeMap, HashSet};

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
///
/// `expected` must list a tag (with `both`, `got` too): a listing with no
/// record, or the header alone, is a read that failed, not a text to
/// compare with, and the comparison would pass whatever the filter does.
/// A filter that selects none of `expected`'s tags is a comparison all the
/// same, which an empty `got` passes.
pub fn tags(expected: &Listing, got: &Listing, f: &Filter, both: bool, n: Expect) -> Outcome {
    if expected.lines.is_empty() {
        return Err("EXPECTED lists no tag: nothing to compare GOT with".into());
    }
    if both && got.lines.is_empty() {
        return Err("GOT lists no tag: with --both it is a whole listing to compare".into());
    }
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
/// `f` selects, in order. A record of the dump whose site neither read of
/// the text lists (as the ioctl reports it: a name it did not cut is such a
/// site) fails the check: it is no tag that moved, but one that is not
/// there.
pub fn stable_tags(t1: &Listing, got: &Listing, t2: &Listing, f: &Filter) -> Outcome {
    let v = held_still(t1, t2)?;
    mostly_still(&v)?;
    // held_still made sure that both reads list the same sites.
    let known: HashSet<&Site> = v.iter().map(|r| &r.0.site).collect();
    let unknown: Vec<String> = got
        .lines
        .iter()
        .filter(|l| !known.contains(&Site::written(&l.tag)))
        .map(|l| format!("line {}: {}", l.no, Site::written(&l.tag)))
        .collect();
    if !unknown.is_empty() {
        let n = unknown.len();
        return Err(complaints(
            unknown,
            &format!("the dump lists {n} tags that neither read of the text lists:"),
        ));
    }
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
/// byte for byte where no name was cut (mainline's `accurate:no` and
/// alloctag's `unloaded:yes` aside). Where the text can mark a tag unloaded
/// (format 2.0; a text without the header, such as `allocinfo query`'s
/// lines, when it marks one) both mark the same tags: format 1.0 marks none
/// while the ioctl says which. The text must list a tag: an empty one (no
/// record, or the header alone) would make any empty dump pass, with
/// nothing compared.
pub fn frozen(text: &Listing, dump: &Listing) -> Outcome {
    if text.lines.is_empty() {
        return Err("the text lists no tag: nothing to compare the frozen dump with".into());
    }
    let marks = text
        .version
        .map_or_else(|| text.tags().any(Tag::is_unloaded), |v| v.major >= 2);
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
        if marks && lt.tag.is_unloaded() != ld.tag.is_unloaded() {
            bad.push(format!(
                "not marked unloaded in both:\ntext:  {:?}\nioctl: {:?}",
                lt.raw, ld.raw
            ));
            continue;
        }
        let long = [&lt.tag.file, &lt.tag.function]
            .iter()
            .chain(lt.tag.module.as_ref().iter())
            .any(|n| n.chars().count() > IOCTL_NAME_MAX);
        if !long {
            let plain = |s: &str| {
                s.replace(" accurate:no ", " ")
                    .replace(" unloaded:yes ", " ")
            };
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
