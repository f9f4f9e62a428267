//! The protocol of the kernel's fault-injection control file,
//! `/sys/kernel/debug/alloctag/fail`: the commands written to it and the
//! listing read from it. No I/O: `allocinfo fail` talks to the file and
//! shows the listing.
//!
//! One command per write: `add SELECTOR... [KNOB=N]...`, `remove ID` or
//! `clear`. Reading lists each rule, then its armed call sites:
//!
//! ```text
//! rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=2 sites=1 unarmed=0 select=module:m func:f
//! site rule=1 injected=2 lib/m.c:42 [m] func:f
//! ```

use std::fmt;
use std::str::FromStr;

/// The most selectors in one selection.
pub const MAX_SELECTORS: usize = 4;
/// The most rules armed at once; rule ids are 1 to this.
pub const MAX_RULES: u32 = 32;
/// The longest selector the kernel takes, in bytes.
pub const MAX_SELECTOR_LEN: usize = 256;

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
pub fn parse(text: &str, other: OtherLines) -> Result<Vec<Rule>, String> {
    let mut rules: Vec<Rule> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        let done = if let Some(rest) = line.strip_prefix("rule ") {
            parse_rule(rest).map(|r| rules.push(r))
        } else if let Some(rest) = line.strip_prefix("site ") {
            parse_site(rest).and_then(|(id, site)| {
                let rule = rules.iter_mut().rev().find(|r| r.id == id);
                let rule = rule.ok_or_else(|| format!("site of rule {id}, not listed before"))?;
                rule.sites.push(site);
                Ok(())
            })
        } else if line.trim_start().is_empty() || other == OtherLines::Skip {
            Ok(())
        } else {
            Err(format!("expected a rule or site line, found {line:?}"))
        };
        done.map_err(|e| format!("line {}: {e}", i + 1))?;
    }
    Ok(rules)
}

fn number<T: FromStr>(key: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("invalid {key}={value:?}"))
}

fn required<T>(value: Option<T>, key: &str) -> Result<T, String> {
    value.ok_or_else(|| format!("rule without {key}="))
}

/// Parses what follows `rule `: the id, `key=value` pairs and, last,
/// `select=` whose value runs to the end of the line.
fn parse_rule(rest: &str) -> Result<Rule, String> {
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
            return Err(format!("rule {id} without select="));
        }
        let (key, value) = word
            .split_once('=')
            .ok_or_else(|| format!("expected key=value, found {word:?}"))?;
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
        return Err(format!("rule {id} with an empty selection"));
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
fn parse_site(mut rest: &str) -> Result<(u32, Site), String> {
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
    let rule = rule.ok_or_else(|| "site without rule=".to_owned())?;
    let injected = injected.ok_or_else(|| "site without injected=".to_owned())?;
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
pub fn parse_location(rest: &str) -> Result<(String, u32, Option<String>, String), String> {
    let tag_error = || format!("expected FILE:LINE [MODULE] func:NAME, found {rest:?}");
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

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = include_str!("../tests/data/debugfs/fail-listing.txt");

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
    fn commands_as_written() {
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
    }
}
