//! The selections `fail` and `capture` share: the selectors of `add`,
//! checked as the kernel reads them, and the ids or selectors `remove`
//! takes.

use allocinfo_format::fail::{MAX_SELECTOR_LEN, MAX_SELECTORS};
use clap::Args;

/// The selectors of `fail add` and `capture add`.
#[derive(Args, Debug)]
pub struct SelectorArgs {
    /// Up to 4 selectors in /proc/allocinfo's words, all of which a call site
    /// must match: FILE:LINE, FILE (a path suffix), func:NAME, module:NAME.
    #[arg(
        value_name = "SELECTOR",
        required = true,
        num_args = 1..=MAX_SELECTORS,
        value_parser = selector
    )]
    pub selectors: Vec<String>,
}

/// Checks a selector as the kernel reads it (`FILE:LINE`, `FILE`,
/// `func:NAME`, `module:NAME`) and returns it as the kernel will show it
/// (`lib/m.c:042` is `lib/m.c:42`).
pub fn selector(word: &str) -> Result<String, String> {
    let bad = |why: &str| Err(format!("invalid selector {word:?}: {why}"));
    if word.is_empty() || word.len() > MAX_SELECTOR_LEN {
        return bad("expected 1 to 256 characters");
    }
    if word.contains(|c: char| c.is_whitespace() || c == '=') {
        return bad("selectors have no blanks and no '='");
    }
    if !word.bytes().all(|c| c.is_ascii_graphic()) {
        return bad("expected ASCII");
    }
    // The kernel matches globs as allocinfo does (a `*`, `?` or `[` makes a glob over the
    // whole name); it refuses one whose `[` has no `]`, and so does this, before writing.
    if allocinfo_report::NamePattern::is_glob(word)
        && allocinfo_report::NamePattern::new(word).is_err()
    {
        return bad("a '[' without its ']'");
    }
    if let Some(name) = word.strip_prefix("func:") {
        return match name {
            "" => bad("expected func:NAME"),
            _ => Ok(word.to_owned()),
        };
    }
    if let Some(name) = word.strip_prefix("module:") {
        return match name {
            "" => bad("expected module:NAME"),
            _ if name.contains(':') => bad("module names have no ':'"),
            _ => Ok(word.to_owned()),
        };
    }
    let (file, line) = match word.rsplit_once(':') {
        Some((file, line)) => match line.parse::<u32>() {
            Ok(n) if n > 0 => (file, Some(n)),
            _ => return bad("expected FILE:LINE with a line number from 1"),
        },
        None => (word, None),
    };
    if file.is_empty() || file.contains(':') {
        return bad("expected FILE:LINE, FILE, func:NAME or module:NAME");
    }
    Ok(match line {
        Some(n) => format!("{file}:{n}"),
        None => file.to_owned(),
    })
}

/// What `remove` ends: one by its id, one by its selectors (the one whose
/// selection is exactly these), or all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Id(u32),
    Selection(Vec<String>),
    All,
}

/// An id (digits, 1 to `max`) or a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdOrSelector {
    Id(u32),
    Selector(String),
}

pub fn id_or_selector(s: &str, what: &str, max: u32) -> Result<IdOrSelector, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return match s.parse::<u32>() {
            Ok(id) if (1..=max).contains(&id) => Ok(IdOrSelector::Id(id)),
            _ => Err(format!("invalid {what} id {s:?}: expected 1 to {max}")),
        };
    }
    selector(s).map(IdOrSelector::Selector)
}

/// The target of `remove`: one id alone, or selectors, or `--all`.
pub fn target(items: &[IdOrSelector], all: bool) -> Result<Target, String> {
    match items {
        [] if all => Ok(Target::All),
        [IdOrSelector::Id(id)] => Ok(Target::Id(*id)),
        _ if items.iter().all(|i| matches!(i, IdOrSelector::Selector(_))) => Ok(Target::Selection(
            items
                .iter()
                .map(|i| match i {
                    IdOrSelector::Selector(s) => s.clone(),
                    IdOrSelector::Id(_) => unreachable!(),
                })
                .collect(),
        )),
        _ => Err("give one id, or selectors, not both".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors() {
        assert_eq!(selector("lib/m.c:042").unwrap(), "lib/m.c:42");
        assert_eq!(selector("func:a::b").unwrap(), "func:a::b");
        assert_eq!(selector("mm").unwrap(), "mm");
        assert_eq!(selector("func:kmalloc*").unwrap(), "func:kmalloc*");
        assert_eq!(selector("fs/*/super.c:12").unwrap(), "fs/*/super.c:12");
        assert_eq!(selector("module:xfs_[a-z]*").unwrap(), "module:xfs_[a-z]*");
        for bad in [
            "a b", "x=1", "", "a.c:0", "a.c:x", "module:", "func:", "é", "func:a[b",
        ] {
            assert!(selector(bad).is_err(), "{bad:?}");
        }
    }
}
