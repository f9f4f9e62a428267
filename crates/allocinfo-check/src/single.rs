//! Reads of single tags: one selected, zeroed, unchanged between reads.

use crate::*;
use allocinfo_format::Tag;
use std::collections::HashSet;

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
