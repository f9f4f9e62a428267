//! How `allocinfo fail list` and `fail add` show the kernel's
//! fault-injection listing (`allocinfo_format::fail`): a table, JSON, and
//! the line that says which rule was armed.

use allocinfo_format::fail::Rule;
use serde_json::{Value, json};

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
    use allocinfo_format::fail::{OtherLines, find, parse};

    const LISTING: &str =
        include_str!("../../allocinfo-format/tests/data/debugfs/fail-listing.txt");

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
