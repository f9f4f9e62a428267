//! `--json`: one JSON document per report, on one line.

use crate::split::{Share, SplitBy, Splits};
use crate::{Fields, Meta, Rates, Source, share};
use allocinfo_format::Totals;
use allocinfo_report::Report;
use serde::Serialize;
use serde::ser::SerializeMap;
use std::io::{self, Write};

/// Identifies the document layout; bumped on incompatible changes.
pub const SCHEMA: &str = "allocinfo-report/1";

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    command: &'static str,
    group_by: &'static str,
    sort: &'static str,
    source: JsonSource<'a>,
    old_source: Option<JsonSource<'a>>,
    matched_rows: usize,
    rows: Vec<JsonRow<'a>>,
}

#[derive(Serialize)]
struct JsonSource<'a> {
    path: &'a str,
    version: String,
    total: JsonTotals,
}

#[derive(Serialize)]
struct JsonTotals {
    bytes: i64,
    calls: u64,
    sites: usize,
}

impl From<&Totals> for JsonTotals {
    fn from(t: &Totals) -> Self {
        JsonTotals {
            bytes: t.bytes,
            calls: t.calls,
            sites: t.tags,
        }
    }
}

#[derive(Serialize)]
struct JsonRow<'a> {
    key: String,
    module: Option<&'a str>,
    dir: Option<&'a str>,
    file: Option<&'a str>,
    line: Option<u32>,
    function: Option<&'a str>,
    sites: usize,
    bytes: i64,
    calls: u64,
    share: f64,
    accurate: bool,
    unloaded: bool,
    extra: Pairs<'a>,
    #[serde(flatten)]
    change: Option<JsonChange>,
    /// Only with waste figures (diff, watch): null for a row without a rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    allocs_per_sec: Option<Option<f64>>,
    /// Only with `--split`: the shares not all zero,
    /// `{"cpu": N, "bytes": B, "calls": C}` (`"node"` by node).
    #[serde(skip_serializing_if = "Option::is_none")]
    split: Option<Vec<JsonShare>>,
}

/// One share of a row: its index named `cpu` or `node`, and its change
/// in a comparison.
/// Without calls (`Splits::calls`), the share has bytes only.
struct JsonShare(SplitBy, Share, bool);

impl Serialize for JsonShare {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let JsonShare(by, share, with_calls) = self;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(by.name(), &share.index)?;
        map.serialize_entry("bytes", &share.bytes)?;
        if *with_calls {
            map.serialize_entry("calls", &share.calls)?;
        }
        if let Some([bytes, calls]) = share.delta {
            map.serialize_entry("delta_bytes", &bytes)?;
            if *with_calls {
                map.serialize_entry("delta_calls", &calls)?;
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
struct JsonChange {
    status: &'static str,
    old_bytes: i64,
    old_calls: u64,
    delta_bytes: i64,
    delta_calls: i64,
}

/// Extra `key:value` pairs as a JSON object, in input order.
struct Pairs<'a>(&'a [(String, String)]);

impl Serialize for Pairs<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

fn source<'a>(s: &'a Source, total: &Totals) -> JsonSource<'a> {
    JsonSource {
        path: &s.path,
        version: s.version.to_string(),
        total: total.into(),
    }
}

/// One line, or indented with `pretty`.
pub fn write(
    out: &mut dyn Write,
    report: &Report,
    meta: &Meta,
    pretty: bool,
    rates: Option<&Rates>,
    splits: Option<&Splits>,
) -> io::Result<()> {
    let doc = Document {
        schema: SCHEMA,
        command: meta.command.name(),
        group_by: report.group_by.name(),
        sort: report.sort.name(),
        source: source(&meta.source, &report.total),
        old_source: meta
            .old_source
            .as_ref()
            .zip(report.old_total.as_ref())
            .map(|(s, t)| source(s, t)),
        matched_rows: report.matched_rows,
        rows: report
            .rows
            .iter()
            .map(|r| {
                let f = Fields::of(&r.key);
                JsonRow {
                    key: r.key.to_string(),
                    module: f.module,
                    dir: f.dir,
                    file: f.file,
                    line: f.line,
                    function: f.function,
                    sites: r.sums.tags,
                    bytes: r.sums.bytes,
                    calls: r.sums.calls,
                    share: share(r, &report.total),
                    accurate: r.sums.accurate,
                    unloaded: r.sums.unloaded,
                    extra: Pairs(&r.sums.extra),
                    change: r.change.as_ref().map(|c| JsonChange {
                        status: c.status.name(),
                        old_bytes: c.old_bytes,
                        old_calls: c.old_calls,
                        delta_bytes: c.delta_bytes,
                        delta_calls: c.delta_calls,
                    }),
                    allocs_per_sec: rates.map(|m| m.get(&r.key).map(|v| (v * 1e3).round() / 1e3)),
                    split: splits.map(|sp| {
                        sp.get(&r.key)
                            .iter()
                            .map(|s| JsonShare(sp.by, *s, sp.calls))
                            .collect()
                    }),
                }
            })
            .collect(),
    };
    crate::document::write_json(out, &doc, pretty)
}
