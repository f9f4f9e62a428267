//! `allocinfo metrics` and `--prometheus` checked against the rules of the
//! Prometheus text exposition format (0.0.4), on the host: metric and label
//! names, HELP and TYPE once per family before its samples, a family's
//! samples together, label values escaped, no series twice, counters
//! named `_total`, values that are numbers. Also the stable names that
//! Documentation/allocinfo-tool.rst documents, and the contrib/ units.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_allocinfo");

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../allocinfo-format/tests/data")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("metrics-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn is_name(s: &str, colon: bool) -> bool {
    let mut chars = s.chars();
    let first_ok = |c: char| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':');
    chars.next().is_some_and(first_ok)
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
}

/// Parses `{k="v",...}`: the label pairs with values unescaped, and the
/// rest of the line. Panics with the reason on a rule broken.
fn labels(s: &str, line: &str) -> (Vec<(String, String)>, String) {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    assert_eq!(chars.next(), Some('{'), "{line}");
    loop {
        if chars.peek() == Some(&'}') {
            chars.next();
            break;
        }
        let name: String = std::iter::from_fn(|| chars.next_if(|&c| c != '=')).collect();
        assert!(is_name(&name, false), "label name {name:?}: {line}");
        assert!(!name.starts_with("__"), "reserved label {name}: {line}");
        assert_eq!(chars.next(), Some('='), "{line}");
        assert_eq!(chars.next(), Some('"'), "{line}");
        let mut value = String::new();
        loop {
            match chars
                .next()
                .unwrap_or_else(|| panic!("unterminated value: {line}"))
            {
                '"' => break,
                '\\' => match chars.next() {
                    Some('\\') => value.push('\\'),
                    Some('"') => value.push('"'),
                    Some('n') => value.push('\n'),
                    other => panic!("bad escape \\{other:?}: {line}"),
                },
                '\n' => panic!("raw newline in a label value: {line}"),
                c => value.push(c),
            }
        }
        out.push((name, value));
        match chars.next() {
            Some(',') => {}
            Some('}') => break,
            other => panic!("expected , or }} after a label, found {other:?}: {line}"),
        }
    }
    let names: BTreeSet<&String> = out.iter().map(|(k, _)| k).collect();
    assert_eq!(names.len(), out.len(), "a label twice: {line}");
    (out, chars.collect())
}

/// Checks `text` against the format's rules; returns each family's type
/// and its series (labels, value).
#[allow(clippy::type_complexity)]
/// Prometheus' own checker, `promtool check metrics` (Debian's prometheus,
/// which scripts/install-deps.sh installs), accepts `text`, its lint
/// included: it exits 3 for a lint problem (no HELP, a counter without
/// `_total`), 1 for a parse error.
fn promtool(text: &str) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool: not installed (scripts/install-deps.sh installs prometheus)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {:?}\n{}{}\n{text}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A sample's labels and value.
type Series = (Vec<(String, String)>, f64);

/// Each family's type and samples, by name.
type Families = BTreeMap<String, (String, Vec<Series>)>;

/// Checks `text` against the exposition format, here and with promtool.
fn check_exposition(text: &str) -> Families {
    promtool(text);
    let mut families = Families::new();
    let mut help = BTreeSet::new();
    let mut finished = BTreeSet::new();
    let mut current: Option<String> = None;
    let mut series = BTreeSet::new();
    assert!(text.ends_with('\n'), "the last line ends with a newline");
    for line in text.lines() {
        assert!(!line.is_empty(), "no empty lines");
        if let Some(rest) = line.strip_prefix("# ") {
            let mut words = rest.splitn(3, ' ');
            let (kw, name) = (words.next().unwrap(), words.next().unwrap());
            let arg = words.next().unwrap_or("");
            assert!(is_name(name, true), "metric name {name:?}");
            assert!(
                !finished.contains(name),
                "{name}: its lines are not together"
            );
            if current.as_deref() != Some(name)
                && let Some(prev) = current.replace(name.to_owned())
            {
                finished.insert(prev);
            }
            match kw {
                "HELP" => {
                    assert!(help.insert(name.to_owned()), "HELP twice for {name}");
                    assert!(
                        !families.contains_key(name),
                        "HELP after TYPE or samples of {name}"
                    );
                    assert!(!arg.contains('\n'));
                }
                "TYPE" => {
                    assert!(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(&arg),
                        "type {arg}"
                    );
                    assert!(
                        !families.contains_key(name),
                        "TYPE twice, or after samples: {name}"
                    );
                    if arg == "counter" {
                        assert!(name.ends_with("_total"), "counter {name} without _total");
                    }
                    families.insert(name.to_owned(), (arg.to_owned(), Vec::new()));
                }
                _ => panic!("unknown comment {line:?}"),
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).unwrap_or(line.len());
        let name = &line[..name_end];
        assert!(is_name(name, true), "metric name {name:?}: {line}");
        assert_eq!(
            current.as_deref(),
            Some(name),
            "sample before its HELP/TYPE, or apart: {line}"
        );
        let (pairs, rest) = if line[name_end..].starts_with('{') {
            labels(&line[name_end..], line)
        } else {
            (Vec::new(), line[name_end..].to_owned())
        };
        let value = rest
            .strip_prefix(' ')
            .unwrap_or_else(|| panic!("no value: {line}"));
        assert!(!value.contains(' '), "timestamps are not written: {line}");
        let v: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("value {value:?}: {line}"));
        let mut key: Vec<_> = pairs.clone();
        key.sort();
        assert!(
            series.insert((name.to_owned(), key)),
            "series twice: {line}"
        );
        let family = families
            .get_mut(name)
            .unwrap_or_else(|| panic!("sample without TYPE: {line}"));
        if family.0 == "counter" {
            assert!(v >= 0.0, "negative counter: {line}");
        }
        family.1.push((pairs, v));
    }
    for name in families.keys() {
        assert!(help.contains(name), "{name} has no HELP");
    }
    families
}

const FAIL: &str = "\
rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=2 sites=2 unarmed=0 select=module:m func:f
site rule=1 injected=2 lib/m.c:42 [m] func:f
site rule=1 injected=0 lib/m.c:50 [m] func:f
rule 2 probability=25 interval=3 times=10 space=0 verbose=0 pid=0 injected=7 sites=1 unarmed=0 select=mm/slub.c
site rule=2 injected=7 mm/slub.c:2478 func:alloc_slab_page
";

const CAPTURE: &str = "\
capture limit=4096 size=4096 used=5 dropped=0 busy=0
selection 1 sites=1 unmarked=0 select=module:alloctag_test func:hold_object
site selection=1 live=5 live_bytes=2560 untracked=0 untracked_bytes=0 lib/alloctag/tests/modules/alloctag_test.c:172 [alloctag_test] func:hold_object
";

fn metrics(args: &[&str]) -> (String, String) {
    let out = Command::new(BIN)
        .arg("metrics")
        .args(args)
        .current_dir(data_dir())
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{args:?}: {err}");
    (String::from_utf8(out.stdout).unwrap(), err)
}

/// Every source: the profile, fault injection and capture, with plain
/// files standing in for the kernel's listings (reading them is harmless).
#[test]
fn metrics_follow_the_format_and_the_documented_names() {
    let dir = scratch("all");
    std::fs::write(dir.join("fail"), FAIL).unwrap();
    std::fs::write(dir.join("capture"), CAPTURE).unwrap();
    let control = dir.join("fail");
    let (text, err) = metrics(&[
        "linux-6.12.txt",
        "--control",
        control.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(err, "");
    let families = check_exposition(&text);
    let documented = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Documentation/allocinfo-tool.rst"),
    )
    .unwrap();
    let expected: &[(&str, &str, &[&str])] = &[
        (
            "allocinfo_bytes",
            "gauge",
            &["file", "line", "module", "function"],
        ),
        (
            "allocinfo_calls",
            "gauge",
            &["file", "line", "module", "function"],
        ),
        ("allocinfo_total_bytes", "gauge", &[]),
        ("allocinfo_total_calls", "gauge", &[]),
        ("allocinfo_sites", "gauge", &[]),
        ("allocinfo_fault_rules", "gauge", &[]),
        (
            "allocinfo_fault_injected_total",
            "counter",
            &["rule", "selection"],
        ),
        (
            "allocinfo_fault_site_injected_total",
            "counter",
            &["rule", "file", "line", "module", "function"],
        ),
        ("allocinfo_capture_pool_limit", "gauge", &[]),
        ("allocinfo_capture_pool_size", "gauge", &[]),
        ("allocinfo_capture_pool_used", "gauge", &[]),
        ("allocinfo_capture_dropped_total", "counter", &[]),
        ("allocinfo_capture_busy_total", "counter", &[]),
        ("allocinfo_capture_selections", "gauge", &[]),
        (
            "allocinfo_capture_live_objects",
            "gauge",
            &["selection", "file", "line", "module", "function"],
        ),
        (
            "allocinfo_capture_live_bytes",
            "gauge",
            &["selection", "file", "line", "module", "function"],
        ),
        (
            "allocinfo_capture_untracked_objects",
            "gauge",
            &["selection", "file", "line", "module", "function"],
        ),
        (
            "allocinfo_capture_untracked_bytes",
            "gauge",
            &["selection", "file", "line", "module", "function"],
        ),
        ("allocinfo_source_up", "gauge", &["source"]),
    ];
    assert_eq!(
        families.keys().collect::<BTreeSet<_>>(),
        expected
            .iter()
            .map(|(n, _, _)| n.to_string())
            .collect::<BTreeSet<_>>()
            .iter()
            .collect(),
        "the families are the documented ones"
    );
    for (name, kind, label_names) in expected {
        let (t, samples) = &families[*name];
        assert_eq!(t, kind, "{name}");
        assert!(!samples.is_empty(), "{name} has samples");
        for (pairs, _) in samples {
            let names: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(&names, label_names, "{name}");
        }
        assert!(
            documented.contains(&format!("``{name}``")),
            "{name} is documented"
        );
    }
    let value = |name: &str, labels: &[(&str, &str)]| {
        families[name]
            .1
            .iter()
            .find(|(p, _)| {
                labels
                    .iter()
                    .all(|(k, v)| p.iter().any(|(pk, pv)| pk == k && pv == v))
            })
            .unwrap_or_else(|| panic!("{name}{labels:?}"))
            .1
    };
    assert_eq!(value("allocinfo_fault_rules", &[]), 2.0);
    assert_eq!(
        value(
            "allocinfo_fault_injected_total",
            &[("rule", "2"), ("selection", "mm/slub.c")]
        ),
        7.0
    );
    assert_eq!(
        value(
            "allocinfo_fault_site_injected_total",
            &[("rule", "1"), ("line", "50")]
        ),
        0.0
    );
    assert_eq!(
        value("allocinfo_capture_live_bytes", &[("selection", "1")]),
        2560.0
    );
    assert_eq!(value("allocinfo_source_up", &[("source", "capture")]), 1.0);
    let per_site: f64 = families["allocinfo_bytes"].1.iter().map(|(_, v)| v).sum();
    assert_eq!(
        value("allocinfo_total_bytes", &[]),
        per_site,
        "every site, once"
    );
}

/// Without the kernel's control files (a kernel without the features),
/// only the profile's families and its source_up are written; a listing
/// that cannot be parsed says so and is 0 in source_up.
#[test]
fn metrics_without_the_features_and_with_a_bad_listing() {
    let dir = scratch("none");
    let (text, err) = metrics(&[
        "linux-6.12.txt",
        "--control",
        dir.join("absent").to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(err, "");
    let families = check_exposition(&text);
    assert!(
        families
            .keys()
            .all(|k| !k.contains("fault") && !k.contains("capture"))
    );
    assert_eq!(families["allocinfo_source_up"].1.len(), 1);
    std::fs::write(dir.join("bad"), "rule x\n").unwrap();
    let (text, err) = metrics(&[
        "linux-6.12.txt",
        "--control",
        dir.join("bad").to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(
        err.starts_with("allocinfo: warning: metrics: fault: "),
        "{err}"
    );
    let families = check_exposition(&text);
    assert!(
        text.contains("allocinfo_source_up{source=\"fault\"} 0\n"),
        "{text}"
    );
    assert!(families.contains_key("allocinfo_bytes"));
}

/// Label values with quotes, backslashes and odd bytes are escaped, for
/// every grouping of `--prometheus`.
#[test]
fn prometheus_escapes_and_every_grouping_validates() {
    let dir = scratch("escape");
    let file = dir.join("odd.txt");
    std::fs::write(
        &file,
        "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n\
         4096 1 dir\\\"x/a\"b.c:1 [m\\od] func:f\"\\n \n\
         8192 2 dir/z.c:2 func:g \n",
    )
    .unwrap();
    for by in ["site", "module", "dir", "file", "function", "tree"] {
        let out = Command::new(BIN)
            .args(["top", "-n", "0", "--prometheus", "-b", by])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{by}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let families = check_exposition(&text);
        if by == "site" {
            let (_, samples) = &families["allocinfo_bytes"];
            let odd = samples
                .iter()
                .find(|(p, _)| p.iter().any(|(k, v)| k == "function" && v == "f\"\\n"))
                .unwrap_or_else(|| panic!("{text}"));
            assert!(
                odd.0
                    .iter()
                    .any(|(k, v)| k == "file" && v == "dir\\\"x/a\"b.c"),
                "{text}"
            );
        }
    }
    let (text, _) = metrics(&[
        file.to_str().unwrap(),
        "--control",
        "/nonexistent/fail",
        "--dir",
        "/nonexistent",
    ]);
    check_exposition(&text);
}

/// `-o` writes the file atomically and leaves nothing else in its directory.
#[test]
fn metrics_output_file_is_written_atomically() {
    let dir = scratch("out");
    let path = dir.join("allocinfo.prom");
    let (stdout, _) = metrics(&[
        "linux-6.12.txt",
        "-o",
        path.to_str().unwrap(),
        "--control",
        "/nonexistent/fail",
        "--dir",
        "/nonexistent",
    ]);
    assert_eq!(stdout, "");
    check_exposition(&std::fs::read_to_string(&path).unwrap());
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["allocinfo.prom"]);
}

/// The contrib/ units run `allocinfo metrics -o` into the collector's
/// directory, on a timer; the service is a oneshot.
#[test]
fn contrib_units_run_the_documented_command() {
    let contrib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/node_exporter");
    let service = std::fs::read_to_string(contrib.join("allocinfo-metrics.service")).unwrap();
    let timer = std::fs::read_to_string(contrib.join("allocinfo-metrics.timer")).unwrap();
    assert!(service.contains("Type=oneshot"));
    let exec = service
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart");
    let words: Vec<&str> = exec.split_whitespace().collect();
    assert!(words[0].ends_with("/allocinfo") && words[1] == "metrics" && words[2] == "-o");
    assert!(words[3].ends_with(".prom"), "{exec}");
    assert!(timer.contains("OnUnitActiveSec=") && timer.contains("WantedBy=timers.target"));
    // The command as the unit gives it parses (a usage error would exit 2).
    let out = Command::new(BIN)
        .args(&words[1..])
        .args(["--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
}

/// Runs `allocinfo metrics -o OUT` on the test profile, in `dir`.
fn metrics_to(dir: &Path, out: &Path) -> std::process::Output {
    Command::new(BIN)
        .arg("metrics")
        .arg(data_dir().join("linux-2.0.txt"))
        .arg("-o")
        .arg(out)
        .args(["--control", "/nonexistent/fail", "--dir", "/nonexistent"])
        .current_dir(dir)
        .output()
        .unwrap()
}

/// `-o` renames over a regular file only: a symlink's target is what is
/// replaced (the link stays), a FIFO is written through (it stays a FIFO,
/// its reader gets the metrics), a device node is written through (it
/// stays a device; /dev/full's ENOSPC is exit status 1).
#[test]
fn metrics_output_never_renames_over_a_link_fifo_or_device() {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let dir = scratch("nodes");

    std::fs::write(dir.join("target.prom"), "old\n").unwrap();
    std::os::unix::fs::symlink("target.prom", dir.join("link.prom")).unwrap();
    let out = metrics_to(&dir, Path::new("link.prom"));
    assert!(out.status.success(), "{out:?}");
    let link = std::fs::symlink_metadata(dir.join("link.prom")).unwrap();
    assert!(link.file_type().is_symlink(), "the link stays a link");
    check_exposition(&std::fs::read_to_string(dir.join("target.prom")).unwrap());

    // A dangling link: its target is made.
    std::os::unix::fs::symlink("made.prom", dir.join("dangling.prom")).unwrap();
    assert!(
        metrics_to(&dir, Path::new("dangling.prom"))
            .status
            .success()
    );
    assert!(
        std::fs::symlink_metadata(dir.join("dangling.prom"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    check_exposition(&std::fs::read_to_string(dir.join("made.prom")).unwrap());

    let fifo = dir.join("fifo.prom");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // Opened for reading first, without blocking, so that the writer's open
    // does not wait; the metrics of linux-2.0.txt fit in a pipe's buffer.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let out = metrics_to(&dir, &fifo);
    assert!(out.status.success(), "{out:?}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let mut text = Vec::new();
    let _ = std::io::Read::read_to_end(&mut reader, &mut text);
    check_exposition(&String::from_utf8(text).unwrap());

    // A device node like /dev/full, made here (root only): never replaced.
    let full = dir.join("full");
    let made = Command::new("mknod")
        .arg(&full)
        .args(["c", "1", "7"])
        .output()
        .unwrap();
    if made.status.success() {
        let out = metrics_to(&dir, &full);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("No space left on device"), "{err}");
        let meta = std::fs::symlink_metadata(&full).unwrap();
        assert!(
            meta.file_type().is_char_device(),
            "the device stays a device"
        );
    } else {
        eprintln!("mknod not permitted here: the device case is not run");
    }
}

/// `-o -` is standard output, as in `treemap` and `snapshot`; no file `-`.
#[test]
fn metrics_output_dash_is_standard_output() {
    let dir = scratch("dash");
    let out = metrics_to(&dir, Path::new("-"));
    assert!(out.status.success(), "{out:?}");
    check_exposition(&String::from_utf8(out.stdout).unwrap());
    assert!(!dir.join("-").exists());
}

/// `metrics` exports the waste figures where they exist (`--waste FILE`,
/// by default /proc/allocwaste), with HELP and TYPE as the format wants.
#[test]
fn metrics_export_the_waste_figures() {
    let waste = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/waste/allocwaste.txt");
    let (text, _) = metrics(&[
        "linux-6.12.txt",
        "--control",
        "/nonexistent/fail",
        "--dir",
        "/nonexistent",
        "--waste",
        waste.to_str().unwrap(),
    ]);
    let families = check_exposition(&text);
    assert_eq!(families["allocinfo_waste_slack_bytes"].0, "gauge");
    assert_eq!(families["allocinfo_waste_allocs_total"].0, "counter");
    assert!(
        text.contains("allocinfo_source_up{source=\"waste\"} 1"),
        "{text}"
    );
}

/// Every `--prometheus` output besides `metrics`: `top` (split by node from
/// the text's node pairs too), `diff` (with its node changes), `watch`'s one
/// frame and `waste`; each passes the checks and promtool.
#[test]
fn every_prometheus_output_passes_promtool() {
    let crate_data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let runs: &[&[&str]] = &[
        &["top", "-n", "0", "--prometheus", "query.txt"],
        &["top", "--split", "node", "--prometheus", "nodes/new.txt"],
        &[
            "diff",
            "-a",
            "--prometheus",
            "nodes/old.txt",
            "nodes/new.txt",
        ],
        &[
            "diff",
            "--split",
            "node",
            "--prometheus",
            "nodes/old.txt",
            "nodes/new.txt",
        ],
        &["watch", "--plain", "-c", "1", "--prometheus", "query.txt"],
        &["waste", "--prometheus", "waste/allocwaste.txt"],
    ];
    for args in runs {
        let out = Command::new(BIN)
            .args(*args)
            .current_dir(&crate_data)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let families = check_exposition(&text);
        assert!(!families.is_empty(), "{args:?}: {text}");
        if args.contains(&"node") {
            assert!(text.contains("node=\"1\""), "{args:?}: {text}");
        }
    }
}
