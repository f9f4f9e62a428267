//! The protocol of the kernel's fault-injection control file,
//! `/sys/kernel/debug/alloctag/fail`: the commands written to it and the
//! listing read from it, and how `allocinfo fail` shows that listing. No I/O;
//! [`control`] talks to the file.
//!
//! One command per write: `add SELECTOR... [KNOB=N]...`, `remove ID` or
//! `clear`. Reading lists each rule, then its armed call sites:
//!
//! ```text
//! rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=2 sites=1 unarmed=0 select=module:m func:f
//! site rule=1 injected=2 lib/m.c:42 [m] func:f
//! ```

pub mod args;
pub mod control;

use anyhow::{Result, anyhow, bail};
use serde_json::{Value, json};
use std::fmt;
use std::str::FromStr;

/// The most selectors in one selection.
pub const MAX_SELECTORS: usize = 4;
/// The most rules armed at once; rule ids are 1 to this.
pub const MAX_RULES: u32 = 32;
/// The longest selector the kernel takes, in bytes.
const MAX_SELECTOR_LEN: usize = 256;

/// One command for the control file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Arms the selection (selectors, all of which a call site must match)
    /// with the knobs given (`name`, value); the kernel defaults the others.
    Add(Vec<String>, Vec<(&'static str, i64)>),
    Remove(u32),
    Clear,
}

/// The command as written, without the newline.
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Add(selectors, knobs) => {
                write!(f, "add {}", selectors.join(" "))?;
                knobs.iter().try_for_each(|(k, v)| write!(f, " {k}={v}"))
            }
            Command::Remove(id) => write!(f, "remove {id}"),
            Command::Clear => f.write_str("clear"),
        }
    }
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

/// One armed rule of the listing, with its armed call sites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub id: u32,
    pub probability: u32,
    pub interval: u64,
    pub times: i64,
    pub space: i64,
    pub verbose: u32,
    pub pid: i32,
    /// Failures injected by this rule so far.
    pub injected: u64,
    /// Call sites that match but could not be armed (no free site slot).
    pub unarmed: u64,
    /// The selectors, separated by one space.
    pub selection: String,
    pub sites: Vec<Site>,
}

/// An armed call site: the tag as /proc/allocinfo names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub injected: u64,
    pub file: String,
    pub line: u32,
    /// `None` for built-in code.
    pub module: Option<String>,
    pub function: String,
}

/// The tag as /proc/allocinfo prints it: `FILE:LINE [MODULE] func:NAME`.
impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ", self.file, self.line)?;
        if let Some(m) = &self.module {
            write!(f, "[{m}] ")?;
        }
        write!(f, "func:{}", self.function)
    }
}

/// What [`parse`] does with lines that are neither `rule` nor `site` lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtherLines {
    Refuse,
    /// Skip them: reading back a plain file that holds the command just written.
    Skip,
}

/// Parses the listing. Unknown `key=value` pairs are ignored; errors name
/// the line.
pub fn parse(text: &str, other: OtherLines) -> Result<Vec<Rule>> {
    let mut rules: Vec<Rule> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        let done = if let Some(rest) = line.strip_prefix("rule ") {
            parse_rule(rest).map(|r| rules.push(r))
        } else if let Some(rest) = line.strip_prefix("site ") {
            parse_site(rest).and_then(|(id, site)| {
                let rule = rules.iter_mut().rev().find(|r| r.id == id);
                let rule = rule.ok_or_else(|| anyhow!("site of rule {id}, not listed before"))?;
                rule.sites.push(site);
                Ok(())
            })
        } else if line.trim_start().is_empty() || other == OtherLines::Skip {
            Ok(())
        } else {
            Err(anyhow!("expected a rule or site line, found {line:?}"))
        };
        done.map_err(|e| anyhow!("line {}: {e}", i + 1))?;
    }
    Ok(rules)
}

fn number<T: FromStr>(key: &str, value: &str) -> Result<T> {
    value
        .parse()
        .map_err(|_| anyhow!("invalid {key}={value:?}"))
}

fn required<T>(value: Option<T>, key: &str) -> Result<T> {
    value.ok_or_else(|| anyhow!("rule without {key}="))
}

/// Parses what follows `rule `: the id, `key=value` pairs and, last,
/// `select=` whose value runs to the end of the line.
fn parse_rule(rest: &str) -> Result<Rule> {
    let (id, mut rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let id = number("rule id", id)?;
    let (mut probability, mut interval, mut times, mut space) = (None, None, None, None);
    let (mut verbose, mut pid, mut injected, mut unarmed) = (None, None, None, None);
    let selection = loop {
        rest = rest.trim_start_matches(' ');
        if let Some(selection) = rest.strip_prefix("select=") {
            break selection;
        }
        let (word, next) = rest.split_once(' ').unwrap_or((rest, ""));
        if word.is_empty() {
            bail!("rule {id} without select=");
        }
        let (key, value) = word
            .split_once('=')
            .ok_or_else(|| anyhow!("expected key=value, found {word:?}"))?;
        match key {
            "probability" => probability = Some(number(key, value)?),
            "interval" => interval = Some(number(key, value)?),
            "times" => times = Some(number(key, value)?),
            "space" => space = Some(number(key, value)?),
            "verbose" => verbose = Some(number(key, value)?),
            "pid" => pid = Some(number(key, value)?),
            "injected" => injected = Some(number(key, value)?),
            "unarmed" => unarmed = Some(number(key, value)?),
            _ => {} // `sites=` (counted from the site lines) and newer keys.
        }
        rest = next;
    };
    if selection.is_empty() {
        bail!("rule {id} with an empty selection");
    }
    Ok(Rule {
        id,
        probability: required(probability, "probability")?,
        interval: required(interval, "interval")?,
        times: required(times, "times")?,
        space: required(space, "space")?,
        verbose: required(verbose, "verbose")?,
        pid: required(pid, "pid")?,
        injected: required(injected, "injected")?,
        unarmed: unarmed.unwrap_or(0),
        selection: selection.to_owned(),
        sites: Vec::new(),
    })
}

/// Parses what follows `site `: `rule=ID injected=N` (and any newer
/// `key=value` pairs), then the tag. Returns the rule id and the site.
fn parse_site(mut rest: &str) -> Result<(u32, Site)> {
    let (mut rule, mut injected) = (None, None);
    loop {
        rest = rest.trim_start_matches(' ');
        let (word, next) = rest.split_once(' ').unwrap_or((rest, ""));
        let Some((key, value)) = word.split_once('=') else {
            break;
        };
        match key {
            "rule" => rule = Some(number(key, value)?),
            "injected" => injected = Some(number(key, value)?),
            _ => {}
        }
        rest = next;
    }
    let rule = rule.ok_or_else(|| anyhow!("site without rule="))?;
    let injected = injected.ok_or_else(|| anyhow!("site without injected="))?;
    let (file, line, module, function) = parse_location(rest)?;
    let site = Site {
        injected,
        file,
        line,
        module,
        function,
    };
    Ok((rule, site))
}

/// A call site as /proc/allocinfo names it: `FILE:LINE [MODULE] func:NAME`.
pub fn parse_location(rest: &str) -> Result<(String, u32, Option<String>, String)> {
    let tag_error = || anyhow!("expected FILE:LINE [MODULE] func:NAME, found {rest:?}");
    let (location, tail) = rest.split_once(' ').ok_or_else(tag_error)?;
    let (file, line) = location.rsplit_once(':').ok_or_else(tag_error)?;
    let line = line.parse().map_err(|_| tag_error())?;
    let tail = tail.trim_start_matches(' ');
    let (module, tail) = match tail.strip_prefix('[') {
        Some(m) => {
            let (module, tail) = m.split_once(']').ok_or_else(tag_error)?;
            (Some(module.to_owned()), tail.trim_start_matches(' '))
        }
        None => (None, tail),
    };
    let function = tail
        .trim_end()
        .strip_prefix("func:")
        .ok_or_else(tag_error)?;
    if file.is_empty() || function.is_empty() || module.as_deref() == Some("") {
        return Err(tag_error());
    }
    Ok((file.to_owned(), line, module, function.to_owned()))
}

/// The rule armed for exactly these selectors.
pub fn find<'a>(rules: &'a [Rule], selectors: &[String]) -> Option<&'a Rule> {
    let selection = selectors.join(" ");
    rules.iter().find(|r| r.selection == selection)
}

fn sites(n: usize) -> String {
    match n {
        0 => "no call site matches yet".to_owned(),
        1 => "1 site".to_owned(),
        n => format!("{n} sites"),
    }
}

/// What `fail add` prints: the rule the kernel listed for `selectors`.
pub fn armed(rule: Option<&Rule>, selectors: &[String]) -> String {
    let Some(rule) = rule else {
        return format!(
            "armed: {} (rule id not shown by the kernel)",
            selectors.join(" ")
        );
    };
    let mut text = format!(
        "armed rule {}: {} ({}",
        rule.id,
        rule.selection,
        sites(rule.sites.len())
    );
    if rule.unarmed > 0 {
        text += &format!(", {} more left unarmed: no free site slot", rule.unarmed);
    }
    text + ")"
}

/// The listing as a table: a row per rule, then a row per armed site.
pub fn table(rules: &[Rule]) -> String {
    const HEAD: [&str; 6] = ["ID", "PROB", "INTERVAL", "TIMES", "INJECTED", "SITES"];
    if rules.is_empty() {
        return "no rules armed\n".to_owned();
    }
    let rows: Vec<[String; 6]> = rules
        .iter()
        .map(|r| {
            [
                r.id.to_string(),
                format!("{}%", r.probability),
                r.interval.to_string(),
                r.times.to_string(),
                r.injected.to_string(),
                r.sites.len().to_string(),
            ]
        })
        .collect();
    let mut width = HEAD.map(str::len);
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    for site in rules.iter().flat_map(|r| &r.sites) {
        width[4] = width[4].max(site.injected.to_string().len());
    }
    let line = |cells: [&str; 6], last: &str| {
        let mut s = String::new();
        for (w, cell) in width.iter().zip(cells) {
            s += &format!("{cell:>w$}  ");
        }
        s + last + "\n"
    };
    let mut out = line(HEAD, "SELECTION");
    for (rule, row) in rules.iter().zip(&rows) {
        out += &line(row.each_ref().map(String::as_str), &rule.selection);
        for site in &rule.sites {
            let injected = site.injected.to_string();
            out += &line(["", "", "", "", &injected, ""], &format!("  {site}"));
        }
        if rule.unarmed > 0 {
            let note = format!(
                "  ({} more matching sites unarmed: no free site slot)",
                rule.unarmed
            );
            out += &line([""; 6], &note);
        }
    }
    out
}

/// The listing as JSON: an array of rules, each with its sites.
pub fn json(rules: &[Rule]) -> Value {
    rules
        .iter()
        .map(|r| {
            let sites: Vec<Value> = r
                .sites
                .iter()
                .map(|s| {
                    json!({
                        "injected": s.injected,
                        "file": s.file,
                        "line": s.line,
                        "module": s.module,
                        "function": s.function,
                    })
                })
                .collect();
            json!({
                "id": r.id,
                "selection": r.selection,
                "probability": r.probability,
                "interval": r.interval,
                "times": r.times,
                "space": r.space,
                "verbose": r.verbose,
                "pid": r.pid,
                "injected": r.injected,
                "unarmed": r.unarmed,
                "sites": sites,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "\
rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=2 sites=1 unarmed=0 select=module:m func:f
site rule=1 injected=2 lib/m.c:42 [m] func:f
rule 3 probability=50 interval=10 times=5 space=4096 verbose=0 pid=77 injected=0 sites=2 unarmed=1 future=yes select=rust/kernel/alloc.rs
site rule=3 injected=0 rust/kernel/alloc.rs:7 func:kernel::alloc::KVec::push
site rule=3 injected=12345 rust/kernel/alloc.rs:90 [rnull] func:<rnull::Dev as Drop>::drop
rule 32 probability=0 interval=1 times=0 space=0 verbose=2 pid=0 injected=0 sites=0 unarmed=0 select=func:nothing_yet
";

    #[test]
    fn parses_rules_and_sites() {
        let rules = parse(LISTING, OtherLines::Refuse).unwrap();
        assert_eq!(rules.len(), 3);
        let r = &rules[0];
        assert_eq!((r.id, r.probability, r.interval, r.times), (1, 100, 1, -1));
        assert_eq!((r.space, r.verbose, r.pid, r.injected), (0, 1, 0, 2));
        assert_eq!(r.selection, "module:m func:f");
        assert_eq!(r.sites[0].to_string(), "lib/m.c:42 [m] func:f");
        let r = &rules[1];
        assert_eq!((r.space, r.pid, r.unarmed), (4096, 77, 1));
        let vmlinux = &r.sites[0];
        assert_eq!(vmlinux.module, None);
        assert_eq!(vmlinux.function, "kernel::alloc::KVec::push");
        assert_eq!(vmlinux.line, 7);
        assert_eq!(r.sites[1].module.as_deref(), Some("rnull"));
        assert_eq!(r.sites[1].function, "<rnull::Dev as Drop>::drop");
        assert_eq!(rules[2].sites, []);
        assert_eq!(parse("", OtherLines::Refuse).unwrap(), []);
    }

    #[test]
    fn malformed_lines_are_named() {
        let bad = |text: &str| parse(text, OtherLines::Refuse).unwrap_err().to_string();
        let rule = "rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=0";
        assert_eq!(bad(rule), "line 1: rule 1 without select=");
        assert_eq!(
            bad(&format!("{rule} select=\nrubbish")),
            "line 1: rule 1 with an empty selection"
        );
        assert_eq!(
            bad(&format!("{rule} select=f\nrubbish")),
            "line 2: expected a rule or site line, found \"rubbish\""
        );
        assert_eq!(
            bad("rule 1 probability=x select=f"),
            "line 1: invalid probability=\"x\""
        );
        assert_eq!(bad("rule 1 select=f"), "line 1: rule without probability=");
        assert_eq!(
            bad("site rule=2 injected=0 a.c:1 func:f"),
            "line 1: site of rule 2, not listed before"
        );
        assert_eq!(
            bad(&format!(
                "{rule} select=f\nsite rule=1 injected=0 a.c func:f"
            )),
            "line 2: expected FILE:LINE [MODULE] func:NAME, found \"a.c func:f\""
        );
        let skipped = format!("add f\n{rule} select=f\n");
        assert_eq!(parse(&skipped, OtherLines::Skip).unwrap().len(), 1);
    }

    #[test]
    fn commands_and_selectors() {
        let add = Command::Add(
            vec!["module:m".into(), "lib/m.c:42".into()],
            vec![("probability", 5), ("times", -1)],
        );
        assert_eq!(
            add.to_string(),
            "add module:m lib/m.c:42 probability=5 times=-1"
        );
        assert_eq!(Command::Remove(3).to_string(), "remove 3");
        assert_eq!(Command::Clear.to_string(), "clear");
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

    #[test]
    fn table_and_json() {
        let rules = parse(LISTING, OtherLines::Refuse).unwrap();
        assert_eq!(
            table(&rules),
            "\
ID  PROB  INTERVAL  TIMES  INJECTED  SITES  SELECTION
 1  100%         1     -1         2      1  module:m func:f
                                  2           lib/m.c:42 [m] func:f
 3   50%        10      5         0      2  rust/kernel/alloc.rs
                                  0           rust/kernel/alloc.rs:7 func:kernel::alloc::KVec::push
                              12345           rust/kernel/alloc.rs:90 [rnull] func:<rnull::Dev as Drop>::drop
                                              (1 more matching sites unarmed: no free site slot)
32    0%         1      0         0      0  func:nothing_yet
"
        );
        assert_eq!(table(&[]), "no rules armed\n");
        let v = json(&rules);
        assert_eq!(v[0]["sites"][0]["module"], "m");
        assert_eq!(v[1]["sites"][0]["module"], Value::Null);
        assert_eq!(v[1]["sites"][1]["injected"], 12345);
        assert_eq!(v[2]["times"], 0);
        assert_eq!(v[2]["sites"], json!([]));
        let selectors = ["module:m".to_owned(), "func:f".to_owned()];
        assert_eq!(
            armed(find(&rules, &selectors), &selectors),
            "armed rule 1: module:m func:f (1 site)"
        );
        assert_eq!(
            armed(None, &selectors),
            "armed: module:m func:f (rule id not shown by the kernel)"
        );
    }
}
