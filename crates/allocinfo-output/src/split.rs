//! A row's figures split by CPU or by NUMA node (`--split`), beside the
//! report: the kernel gives them per call site (`ALLOCINFO_IOC_GET_SPLIT`);
//! the command sums them per row. Each format prints a row's shares that
//! are not all zero (a machine with hundreds of CPUs has most idle for
//! most call sites): the table as indented lines under the row, JSON as
//! an array in the row, CSV as one record per share, Prometheus as
//! samples labelled with the CPU or node.

use allocinfo_report::Key;
use std::collections::BTreeMap;

/// What the figures are split by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitBy {
    Cpu,
    Node,
}

impl SplitBy {
    /// The name of the index in every format: `cpu` or `node`.
    pub fn name(self) -> &'static str {
        match self {
            SplitBy::Cpu => "cpu",
            SplitBy::Node => "node",
        }
    }
}

/// Every share of each row, by CPU (or node) index: `[bytes, calls]`.
/// Shares are signed: memory freed on another CPU than the one that
/// allocated it leaves that one's share negative.
pub type Dense = BTreeMap<Key, Vec<[i64; 2]>>;

/// One CPU's (or node's) share of a row, and its change since the
/// previous profile in a comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Share {
    pub index: u32,
    pub bytes: i64,
    pub calls: i64,
    /// `[bytes, calls]` of the change (diff, watch).
    pub delta: Option<[i64; 2]>,
}

impl Share {
    fn is_zero(&self) -> bool {
        self.bytes == 0 && self.calls == 0 && self.delta.is_none_or(|d| d == [0, 0])
    }
}

/// The shares printed with a report: the ones not all zero, per row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Splits {
    pub by: SplitBy,
    rows: BTreeMap<Key, Vec<Share>>,
    /// Whether the shares have changes (a comparison).
    pub changes: bool,
    /// Whether the shares have calls: not when read from the text, whose
    /// `nidN:BYTES` pairs have only bytes (the outputs then leave calls out).
    pub calls: bool,
}

impl Splits {
    /// The shares of one profile.
    pub fn of(by: SplitBy, now: &Dense) -> Splits {
        let rows = now
            .iter()
            .map(|(key, v)| {
                let shares = v
                    .iter()
                    .enumerate()
                    .map(|(i, &[bytes, calls])| Share {
                        index: i as u32,
                        bytes,
                        calls,
                        delta: None,
                    })
                    .filter(|s| !s.is_zero())
                    .collect();
                (key.clone(), shares)
            })
            .collect();
        Splits {
            by,
            rows,
            changes: false,
            calls: true,
        }
    }

    /// The shares of `new` with their change from `old`, share by share;
    /// a row only in `old` has shares of zero that fell.
    pub fn change(by: SplitBy, old: &Dense, new: &Dense) -> Splits {
        let none = Vec::new();
        let mut rows = BTreeMap::new();
        for key in old.keys().chain(new.keys()) {
            if rows.contains_key(key) {
                continue;
            }
            let (o, n) = (old.get(key).unwrap_or(&none), new.get(key).unwrap_or(&none));
            let shares = (0..o.len().max(n.len()))
                .map(|i| {
                    let [ob, oc] = o.get(i).copied().unwrap_or_default();
                    let [bytes, calls] = n.get(i).copied().unwrap_or_default();
                    Share {
                        index: i as u32,
                        bytes,
                        calls,
                        delta: Some([bytes.wrapping_sub(ob), calls.wrapping_sub(oc)]),
                    }
                })
                .filter(|s| !s.is_zero())
                .collect();
            rows.insert(key.clone(), shares);
        }
        Splits {
            by,
            rows,
            changes: true,
            calls: true,
        }
    }

    /// The same shares, said to have no calls (read from the text).
    pub fn without_calls(self) -> Splits {
        Splits {
            calls: false,
            ..self
        }
    }

    /// The shares of the row `key` that are not all zero, by index.
    pub fn get(&self, key: &Key) -> &[Share] {
        self.rows.get(key).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_change_one_by_one_and_zeros_are_left_out() {
        let key = Key::Function("f".into());
        let gone = Key::Function("g".into());
        let old: Dense = [
            (key.clone(), vec![[4096, 1], [0, 0], [64, 1]]),
            (gone.clone(), vec![[0, 0], [128, 2]]),
        ]
        .into();
        let new: Dense = [(key.clone(), vec![[8192, 2], [0, 0], [-64, -1]])].into();
        let now = Splits::of(SplitBy::Cpu, &new);
        assert_eq!(now.get(&key).len(), 2, "CPU 1's zeros are left out");
        let s = Splits::change(SplitBy::Cpu, &old, &new);
        let d: Vec<_> = s.get(&key).iter().map(|s| (s.index, s.delta)).collect();
        assert_eq!(d, [(0, Some([4096, 1])), (2, Some([-128, -2]))]);
        let g = s.get(&gone);
        assert_eq!(g.len(), 1);
        assert_eq!(
            (g[0].index, g[0].bytes, g[0].delta),
            (1, 0, Some([-128, -2]))
        );
    }
}
