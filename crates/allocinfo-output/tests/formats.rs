//! Each format on the same reports: machine formats read back to the same
//! numbers, the Prometheus text is well-formed, the table is aligned.

use allocinfo_format::{Profile, Tag, Version};
use allocinfo_output::{Command, Format, Meta, Source, TableOptions, write};
use allocinfo_report::{GroupBy, Query, Report, SortKey};
use proptest::prelude::*;
use std::collections::HashSet;

fn golden(name: &str) -> Profile {
    let path = format!(
        "{}/../allocinfo-format/tests/data/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    Profile::parse(&std::fs::read(path).unwrap()).unwrap()
}

fn meta(command: Command, old: bool) -> Meta {
    let source = Source {
        path: "new.txt".into(),
        version: Version::V1_0,
    };
    let old_source = old.then(|| Source {
        path: "old.txt".into(),
        version: Version::V1_0,
    });
    Meta {
        command,
        source,
        old_source,
    }
}

fn render(format: Format, report: &Report, meta: &Meta) -> String {
    let mut out = Vec::new();
    write(&mut out, format, report, meta, &TableOptions::default()).unwrap();
    String::from_utf8(out).unwrap()
}

fn reports() -> Vec<(Report, Meta)> {
    let old = golden("linux-6.12.txt");
    let new = golden("linux-6.12-later.txt");
    let mut out = Vec::new();
    for group_by in GroupBy::ALL {
        let q = Query {
            group_by,
            ..Query::default()
        };
        out.push((q.top(&new), meta(Command::Top, false)));
        let q = Query {
            group_by,
            sort: SortKey::DeltaBytes,
            ..Query::default()
        };
        out.push((q.diff(&old, &new), meta(Command::Diff, true)));
    }
    out
}

#[test]
fn csv_reads_back_to_the_report() {
    for (report, meta) in reports() {
        let text = render(Format::Csv, &report, &meta);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().unwrap().clone();
        assert_eq!(header.len(), if report.has_changes() { 18 } else { 13 });
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), report.rows.len());
        for (rec, row) in records.iter().zip(&report.rows) {
            let field = |name: &str| &rec[header.iter().position(|h| h == name).unwrap()];
            assert_eq!(field("group"), report.group_by.name());
            assert_eq!(field("key"), row.key.to_string());
            assert_eq!(field("bytes").parse::<i64>().unwrap(), row.sums.bytes);
            assert_eq!(field("calls").parse::<u64>().unwrap(), row.sums.calls);
            assert_eq!(field("sites").parse::<usize>().unwrap(), row.sums.tags);
            if let Some(c) = &row.change {
                assert_eq!(field("delta_bytes").parse::<i64>().unwrap(), c.delta_bytes);
                assert_eq!(field("status"), c.status.name());
            }
        }
    }
}

#[test]
fn json_reads_back_to_the_report() {
    for (report, meta) in reports() {
        let text = render(Format::Json, &report, &meta);
        assert_eq!(text.lines().count(), 1, "one document per line");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema"], "allocinfo-report/1");
        assert_eq!(v["command"], meta.command.name());
        assert_eq!(v["group_by"], report.group_by.name());
        assert_eq!(v["source"]["total"]["bytes"], report.total.bytes);
        assert_eq!(v["source"]["total"]["sites"], report.total.tags);
        assert_eq!(v["old_source"].is_null(), !report.has_changes());
        assert_eq!(v["matched_rows"], report.matched_rows);
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(rows.len(), report.rows.len());
        for (j, row) in rows.iter().zip(&report.rows) {
            assert_eq!(j["key"], row.key.to_string());
            assert_eq!(j["bytes"], row.sums.bytes);
            assert_eq!(j["module"].as_str(), row.key.module());
            assert_eq!(j["line"].as_u64(), row.key.line().map(u64::from));
            assert_eq!(
                j.get("delta_bytes").and_then(|d| d.as_i64()),
                row.change.as_ref().map(|c| c.delta_bytes)
            );
        }
    }
}

/// Checks the exposition format: families with HELP then TYPE, each family
/// once, samples `name{labels} value`, no duplicate series.
fn check_prometheus(text: &str) -> Vec<(String, String, i128)> {
    let mut families = Vec::new();
    let mut series = HashSet::new();
    let mut samples = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap().to_owned();
            assert!(!families.contains(&name), "family {name} twice");
            assert_eq!(lines.next().unwrap(), format!("# TYPE {name} gauge"));
            families.push(name);
            continue;
        }
        assert!(!line.starts_with('#'), "{line}");
        let family = families.last().expect("sample before HELP");
        let (series_id, value) = line.rsplit_once(' ').unwrap();
        let (name, labels) = series_id
            .split_once('{')
            .map_or((series_id, ""), |(n, l)| (n, l));
        assert_eq!(name, family, "{line}");
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        assert!(labels.is_empty() || labels.ends_with('}'), "{line}");
        assert!(
            series.insert(series_id.to_owned()),
            "duplicate series {series_id}"
        );
        samples.push((
            name.to_owned(),
            labels.trim_end_matches('}').to_owned(),
            value.parse().unwrap(),
        ));
    }
    samples
}

#[test]
fn prometheus_is_well_formed_and_complete() {
    for (report, meta) in reports() {
        let text = render(Format::Prometheus, &report, &meta);
        let samples = check_prometheus(&text);
        let count = |name: &str| samples.iter().filter(|s| s.0 == name).count();
        assert_eq!(count("allocinfo_bytes"), report.rows.len());
        assert_eq!(count("allocinfo_calls"), report.rows.len());
        let deltas = if report.has_changes() {
            report.rows.len()
        } else {
            0
        };
        assert_eq!(count("allocinfo_bytes_delta"), deltas);
        let total = samples
            .iter()
            .find(|s| s.0 == "allocinfo_total_bytes")
            .unwrap();
        assert_eq!(total.2, i128::from(report.total.bytes));
        let bytes: i128 = samples
            .iter()
            .filter(|s| s.0 == "allocinfo_bytes")
            .map(|s| s.2)
            .sum();
        assert_eq!(
            bytes,
            report
                .rows
                .iter()
                .map(|r| i128::from(r.sums.bytes))
                .sum::<i128>()
        );
    }
}

#[test]
fn prometheus_site_labels() {
    let p = golden("linux-6.12.txt");
    let report = Query {
        limit: Some(1),
        ..Query::default()
    }
    .top(&p);
    let text = render(Format::Prometheus, &report, &meta(Command::Top, false));
    assert!(text.contains(
        "allocinfo_bytes{file=\"drivers/gpu/drm/ttm/ttm_pool.c\",line=\"99\",module=\"ttm\",function=\"ttm_pool_alloc_page\"} 4294967296\n"
    ), "{text}");
    let report = Query {
        group_by: GroupBy::Dir,
        limit: Some(2),
        ..Query::default()
    }
    .top(&p);
    let text = render(Format::Prometheus, &report, &meta(Command::Top, false));
    assert!(
        text.contains("allocinfo_calls{dir=\"mm\"} 45066\n"),
        "{text}"
    );
}

fn unescape(v: &str) -> String {
    let mut out = String::new();
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(c) => out.push(c),
                None => panic!("dangling backslash"),
            }
        } else {
            out.push(c);
        }
    }
    out
}

proptest! {
    /// Whatever the file and function names, label values are escaped per
    /// the text format and unescape back to the names.
    #[test]
    fn prometheus_labels_escape_and_round_trip(file in "[a-z\"\\\\/{},= é]{1,12}", function in "[a-z\"\\\\{},=]{1,12}") {
        let tag = Tag { bytes: 7, calls: 1, file: file.clone(), line: 3, module: None, function: function.clone(), extra: vec![] };
        let p = Profile { version: Version::V1_0, tags: vec![tag] };
        let report = Query::default().top(&p);
        let text = render(Format::Prometheus, &report, &meta(Command::Top, false));
        let samples = check_prometheus(&text);
        let labels = &samples[0].1;
        // Split the label list at unescaped `",`.
        let mut values = Vec::new();
        let mut rest = labels.as_str();
        while !rest.is_empty() {
            let (name, after) = rest.split_once("=\"").unwrap();
            let mut end = 0;
            let bytes = after.as_bytes();
            while bytes[end] != b'"' { end += if bytes[end] == b'\\' { 2 } else { 1 }; }
            values.push((name.to_owned(), unescape(&after[..end])));
            rest = after[end + 1..].trim_start_matches(',');
        }
        prop_assert_eq!(values, vec![
            ("file".to_owned(), file), ("line".to_owned(), "3".to_owned()),
            ("module".to_owned(), String::new()), ("function".to_owned(), function),
        ]);
    }
}

/// Module foo unloaded with a live allocation and loaded again, bar
/// unloaded for good.
fn unloaded() -> Profile {
    let text = "allocinfo - version: 2.0\n#\n\
        4096 1 drivers/foo.c:12 [foo] func:foo_probe unloaded:yes \n\
        8192 2 drivers/foo.c:12 [foo] func:foo_probe \n\
        512 1 drivers/bar.c:7 [bar] func:bar_init accurate:no unloaded:yes \n";
    Profile::parse(text.as_bytes()).unwrap()
}

#[test]
fn unloaded_rows_are_marked_in_every_format() {
    let p = unloaded();
    let m = meta(Command::Top, false);
    let report = Query::default().top(&p);
    let table = render(Format::Table, &report, &m);
    let keys: Vec<&str> = table
        .lines()
        .skip(2)
        .map(|l| l.split("%  ").nth(1).unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "drivers/foo.c:12 [foo] func:foo_probe",
            "drivers/foo.c:12 [foo] func:foo_probe unloaded:yes",
            "drivers/bar.c:7 [bar] func:bar_init accurate:no unloaded:yes",
        ],
        "{table}"
    );
    let csv = render(Format::Csv, &report, &m);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let at = header.iter().position(|h| h == "unloaded").unwrap();
    let flags: Vec<String> = reader
        .records()
        .map(|r| r.unwrap()[at].to_owned())
        .collect();
    assert_eq!(flags, ["false", "true", "true"]);
    let json: serde_json::Value = serde_json::from_str(&render(Format::Json, &report, &m)).unwrap();
    let flags: Vec<_> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["unloaded"].as_bool(), r["extra"]["unloaded"].as_str()))
        .collect();
    assert_eq!(
        flags,
        [
            (Some(false), None),
            (Some(true), Some("yes")),
            (Some(true), Some("yes"))
        ]
    );
    // The two instances of foo's call site are two series: no series twice.
    let prom = render(Format::Prometheus, &report, &m);
    let samples = check_prometheus(&prom);
    assert!(prom.contains(
        "allocinfo_bytes{file=\"drivers/foo.c\",line=\"12\",module=\"foo\",function=\"foo_probe\",unloaded=\"yes\"} 4096\n"
    ), "{prom}");
    assert!(prom.contains(
        "allocinfo_bytes{file=\"drivers/foo.c\",line=\"12\",module=\"foo\",function=\"foo_probe\"} 8192\n"
    ), "{prom}");
    assert_eq!(
        samples.iter().filter(|s| s.0 == "allocinfo_bytes").count(),
        3
    );
    // By module: a module marked when all its tags are an unloaded one's.
    let by_module = Query {
        group_by: GroupBy::Module,
        ..Query::default()
    }
    .top(&p);
    let table = render(Format::Table, &by_module, &m);
    assert!(table.contains("  foo\n"), "{table}");
    assert!(table.contains("  bar unloaded:yes\n"), "{table}");
    let prom = render(Format::Prometheus, &by_module, &m);
    check_prometheus(&prom);
    assert!(
        prom.contains("allocinfo_calls{module=\"bar\",unloaded=\"yes\"} 1\n"),
        "{prom}"
    );
    assert!(
        prom.contains("allocinfo_calls{module=\"foo\"} 3\n"),
        "{prom}"
    );
}

#[test]
fn table_columns_line_up() {
    for (report, meta) in reports() {
        let text = render(Format::Table, &report, &meta);
        let lines: Vec<&str> = text.lines().collect();
        let header = lines
            .iter()
            .position(|l| {
                l.starts_with(if report.has_changes() {
                    "  +BYTES"
                } else {
                    "  BYTES"
                }) || l.trim_start().starts_with("+BYTES")
                    || l.trim_start().starts_with("BYTES")
            })
            .unwrap();
        let key_col = lines[header].rfind("  ").unwrap() + 2;
        for (line, row) in lines[header + 1..].iter().zip(&report.rows) {
            assert_eq!(
                &line[key_col..].split(" accurate:").next().unwrap(),
                &row.key.to_string(),
                "{text}"
            );
        }
    }
}

#[test]
fn table_exact_sizes_and_width() {
    let p = golden("linux-6.12.txt");
    let report = Query {
        limit: Some(2),
        ..Query::default()
    }
    .top(&p);
    let m = meta(Command::Top, false);
    let lines = allocinfo_output::table::render(
        &report,
        &m,
        &TableOptions {
            exact: true,
            width: Some(30),
            title: Some("T".into()),
            no_limit_hint: true,
            pretty: false,
        },
    );
    assert_eq!(lines[0], "T");
    assert!(lines.iter().all(|l| l.chars().count() <= 30));
    assert!(
        lines[3].starts_with("4294967296      1  94.7%  "),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), "(2 of 57 rows)");
    let lines = allocinfo_output::table::render(&report, &m, &TableOptions::default());
    assert_eq!(
        lines[0],
        "new.txt (format 1.0): 4.3 GiB in 90931 calls at 58 call sites"
    );
    assert_eq!(lines.last().unwrap(), "(2 of 57 rows; -n 0 shows all)");
}
