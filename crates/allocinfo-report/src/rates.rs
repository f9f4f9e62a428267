//! Allocations per second from two reads of the waste figures: the
//! ALLOCS/S column of `diff` and `watch`.

use crate::{GroupBy, Key, Query};
use allocinfo_format::waste::Waste;
use std::collections::BTreeMap;

/// Allocations per second per row (diff and watch, from the kernel's waste
/// accounting, `/proc/allocwaste`): the allocations counted between the two
/// reads over the time between them. A row without a rate shows `-`.
pub type Rates = BTreeMap<Key, f64>;

/// Allocations per second per row, and how many call sites' counts fell.
#[derive(Debug, Default)]
pub struct RateFigures {
    pub rates: Rates,
    /// Call sites whose count fell within one accounting period: no rate.
    pub fell: usize,
}

impl RateFigures {
    /// The note said with a table that shows these rates, if one is due.
    pub fn note(&self) -> Option<String> {
        (self.fell > 0).then(|| {
            format!(
                "allocinfo: note: ALLOCS/S is - for {} call site{} whose allocation count fell \
                 between the two reads (counters that went back are not a rate)",
                self.fell,
                if self.fell == 1 { "" } else { "s" }
            )
        })
    }
}

/// Allocations per second per row of `query`'s grouping, from two reads
/// of the waste figures: the allocations counted between them over the
/// time between them (`now_ns`). A site missing from `old` (a module
/// loaded in between) counts from 0. When the accounting was turned off
/// and on again between the reads (`since_ns` moved: the counters start
/// from 0), the counts are over the new period alone. A count that fell
/// within one period has no rate. Empty when there is no `old`, or when
/// `new` is not later than `old` (another boot).
pub fn rates(old: Option<&Waste>, new: &Waste, query: &Query) -> RateFigures {
    let mut figures = RateFigures::default();
    let Some(old) = old else {
        return figures;
    };
    if new.now_ns <= old.now_ns {
        return figures;
    }
    let restarted = new.since_ns != old.since_ns;
    let from_ns = if restarted {
        new.since_ns.max(old.now_ns)
    } else {
        old.now_ns
    };
    if new.now_ns <= from_ns {
        return figures;
    }
    let seconds = (new.now_ns - from_ns) as f64 / 1e9;
    let mut before: BTreeMap<Key, u64> = BTreeMap::new();
    if !restarted {
        for s in &old.sites {
            let e = before.entry(Key::of(&s.tag, GroupBy::Site)).or_default();
            *e = e.saturating_add(s.counts.allocs);
        }
    }
    let mut now: BTreeMap<Key, u64> = BTreeMap::new();
    for s in &new.sites {
        let e = now.entry(Key::of(&s.tag, GroupBy::Site)).or_default();
        *e = e.saturating_add(s.counts.allocs);
    }
    let mut counted: BTreeMap<Key, Option<u64>> = BTreeMap::new();
    for s in new.sites.iter().filter(|s| query.filter.matches(&s.tag)) {
        let site = Key::of(&s.tag, GroupBy::Site);
        let Some(allocs) = now.remove(&site) else {
            continue; // Identical call sites were summed at their first.
        };
        let delta = allocs.checked_sub(before.get(&site).copied().unwrap_or(0));
        if delta.is_none() {
            figures.fell += 1;
        }
        let keys: Vec<Key> = if query.group_by == GroupBy::Tree {
            Key::tree(&s.tag).collect()
        } else {
            vec![query.key(&s.tag)]
        };
        for key in keys {
            let e = counted.entry(key).or_insert(Some(0));
            *e = e.zip(delta).map(|(a, b)| a.saturating_add(b));
        }
    }
    for (key, n) in counted {
        if let Some(n) = n {
            figures.rates.insert(key, n as f64 / seconds);
        }
    }
    figures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(now_ns: u64, lines: &str) -> Waste {
        Waste::parse(
            format!(
                "allocwaste - version: 1.0\n# state: on since_ns: 0 now_ns: {now_ns}\n#\n{lines}"
            )
            .as_bytes(),
        )
        .unwrap()
    }

    fn figures_since(since_ns: u64, now_ns: u64, lines: &str) -> Waste {
        let text = format!(
            "allocwaste - version: 1.0\n# state: on since_ns: {since_ns} now_ns: {now_ns}\n#\n{lines}"
        );
        Waste::parse(text.as_bytes()).unwrap()
    }

    /// Accounting turned off and on between two reads (`since_ns` moved,
    /// the counters zeroed): the rate is over the new period alone; a
    /// count that fell within one period has no rate ("-"), and is counted
    /// for a note.
    #[test]
    fn rates_honour_the_accounting_period() {
        let site = |s: &str| {
            let t: allocinfo_format::Tag = format!("0 0 {s}").parse().unwrap();
            Key::of(&t, GroupBy::Site)
        };
        let q = Query::default();
        let old = figures_since(0, 10_000_000_000, "0 0 0 1000 0 0 mm/a.c:1 func:f\n");
        // On again at 11 s; 40 allocations counted by 12 s: 40 per second.
        let new = figures_since(
            11_000_000_000,
            12_000_000_000,
            "0 0 0 40 0 0 mm/a.c:1 func:f\n",
        );
        let r = rates(Some(&old), &new, &q);
        assert_eq!(r.rates[&site("mm/a.c:1 func:f")], 40.0);
        assert_eq!(r.fell, 0);
        // The same period, a falling count: no rate, said.
        let fallen = figures_since(0, 12_000_000_000, "0 0 0 900 0 0 mm/a.c:1 func:f\n");
        let r = rates(Some(&old), &fallen, &q);
        assert!(!r.rates.contains_key(&site("mm/a.c:1 func:f")));
        assert_eq!(r.fell, 1);
    }

    #[test]
    fn rates_per_site_and_group() {
        let old = figures(
            10_000_000_000,
            "0 0 0 100 0 0 mm/a.c:1 func:f\n0 0 0 50 0 0 mm/b.c:2 [m] func:g\n",
        );
        let new = figures(
            12_000_000_000,
            "0 0 0 300 0 0 mm/a.c:1 func:f\n0 0 0 90 0 0 mm/b.c:2 [m] func:g\n\
             0 0 0 8 0 0 fs/c.c:3 [m] func:h\n",
        );
        let q = Query::default();
        let r = rates(Some(&old), &new, &q).rates;
        let site = |s: &str| {
            let t: allocinfo_format::Tag = format!("0 0 {s}").parse().unwrap();
            Key::of(&t, GroupBy::Site)
        };
        assert_eq!(r[&site("mm/a.c:1 func:f")], 100.0);
        assert_eq!(r[&site("mm/b.c:2 [m] func:g")], 20.0);
        assert_eq!(
            r[&site("fs/c.c:3 [m] func:h")],
            4.0,
            "new sites count from 0"
        );
        let by_module = Query {
            group_by: GroupBy::Module,
            ..Query::default()
        };
        let r = rates(Some(&old), &new, &by_module).rates;
        assert_eq!(r[&Key::Module(Some("m".into()))], 24.0);
        assert_eq!(r[&Key::Module(None)], 100.0);
        let tree = Query {
            group_by: GroupBy::Tree,
            ..Query::default()
        };
        assert_eq!(
            rates(Some(&old), &new, &tree).rates[&Key::Tree("mm/".into())],
            120.0
        );
        assert!(rates(None, &new, &q).rates.is_empty());
        assert!(
            rates(Some(&new), &old, &q).rates.is_empty(),
            "time went back"
        );
    }
}
