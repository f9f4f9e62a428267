//! The capture control file's listing (Documentation/capture.rst): the
//! pool, the selections and their sites' counts.
//!
//! ```text
//! capture limit=4096 size=4096 used=5 dropped=0 busy=0
//! selection 1 sites=1 unmarked=0 select=module:alloctag_test func:hold_object
//! site selection=1 live=5 live_bytes=2560 untracked=0 untracked_bytes=0 lib/t.c:172 [t] func:hold_object
//! ```

use crate::fail::parse_location;

/// The record pool (the `capture` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    pub limit: u64,
    pub size: u64,
    pub used: u64,
    pub dropped: u64,
    pub busy: u64,
}

/// A selection in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub id: u32,
    pub unmarked: u64,
    /// The selectors, separated by one space.
    pub select: String,
}

/// A captured site's counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub selection: u32,
    pub live: u64,
    pub live_bytes: u64,
    pub untracked: u64,
    pub untracked_bytes: u64,
    pub file: String,
    pub line: u32,
    pub module: Option<String>,
    pub function: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub pool: Option<Pool>,
    pub selections: Vec<Selection>,
    pub sites: Vec<Site>,
}

/// `key=value` words at the start of `rest` (up to `select=` or the first
/// word without `=`), and what follows them.
fn pairs(rest: &str) -> (Vec<(&str, &str)>, &str) {
    let mut out = Vec::new();
    let mut rest = rest.trim_start_matches(' ');
    loop {
        let (word, next) = rest.split_once(' ').unwrap_or((rest, ""));
        match word.split_once('=') {
            Some((k, v)) if k != "select" => {
                out.push((k, v));
                rest = next.trim_start_matches(' ');
            }
            _ => return (out, rest),
        }
    }
}

fn value<T: std::str::FromStr>(pairs: &[(&str, &str)], key: &str) -> Result<T, String> {
    let v = pairs
        .iter()
        .find(|(k, _)| *k == key)
        .ok_or_else(|| format!("no {key}="))?
        .1;
    v.parse().map_err(|_| format!("invalid {key}={v:?}"))
}

/// Parses the listing; errors name the line. Unknown keys are ignored.
pub fn parse(text: &str) -> Result<Listing, String> {
    let mut l = Listing::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        let done = (|| -> Result<(), String> {
            if let Some(rest) = line.strip_prefix("capture ") {
                let (p, _) = pairs(rest);
                l.pool = Some(Pool {
                    limit: value(&p, "limit")?,
                    size: value(&p, "size")?,
                    used: value(&p, "used")?,
                    dropped: value(&p, "dropped")?,
                    busy: value(&p, "busy")?,
                });
            } else if let Some(rest) = line.strip_prefix("selection ") {
                let (id, rest) = rest.split_once(' ').unwrap_or((rest, ""));
                let id = id
                    .parse()
                    .map_err(|_| format!("invalid selection id {id:?}"))?;
                let (p, rest) = pairs(rest);
                let select = rest
                    .strip_prefix("select=")
                    .ok_or_else(|| format!("selection {id} without select="))?;
                l.selections.push(Selection {
                    id,
                    unmarked: value(&p, "unmarked")?,
                    select: select.to_owned(),
                });
            } else if let Some(rest) = line.strip_prefix("site ") {
                let (p, location) = pairs(rest);
                let (file, line, module, function) = parse_location(location)?;
                l.sites.push(Site {
                    selection: value(&p, "selection")?,
                    live: value(&p, "live")?,
                    live_bytes: value(&p, "live_bytes")?,
                    untracked: value(&p, "untracked")?,
                    untracked_bytes: value(&p, "untracked_bytes")?,
                    file,
                    line,
                    module,
                    function,
                });
            } else if !line.is_empty() {
                return Err(format!(
                    "expected a capture, selection or site line, found {line:?}"
                ));
            }
            Ok(())
        })();
        done.map_err(|e| format!("line {}: {e}", i + 1))?;
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = include_str!("../../tests/data/debugfs/capture-listing.txt");

    #[test]
    fn parses_pool_selections_and_sites() {
        let l = parse(LISTING).unwrap();
        assert_eq!(l.pool.unwrap().used, 5);
        assert_eq!(l.selections.len(), 2);
        assert_eq!(l.selections[1].select, "mm/slub.c");
        assert_eq!(l.sites[0].untracked_bytes, 96);
        assert_eq!(l.sites[0].module.as_deref(), Some("t"));
        let err = parse("capture limit=1\n").unwrap_err();
        assert_eq!(err.to_string(), "line 1: no size=");
        assert!(parse("site selection=1 live=x lib/t.c:1 func:f\n").is_err());
        assert!(parse("bogus\n").is_err());
    }
}
