//! The `allocinfo` binary end to end: golden outputs, errors and exit codes,
//! stdin, snapshot, watch (plain, signals and the full-screen mode) and treemap.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::BIN;

fn data_dir() -> PathBuf {
    common::format_data()
}

fn expected_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/expected")
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs allocinfo in the golden data directory.
fn run(args: &[&str]) -> Output {
    common::run_in(&data_dir(), args)
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(args: &[&str], code: i32) -> String {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty());
    String::from_utf8(out.stderr).unwrap()
}

/// Compares with tests/data/expected/NAME; UPDATE_GOLDEN=1 rewrites it.
fn golden(name: &str, actual: &str) {
    let path = expected_dir().join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(actual, expected, "output differs from {}", path.display());
}

#[test]
fn golden_outputs() {
    let top = ["top", "-f", "linux-6.12.txt"];
    let diff = ["diff", "linux-6.12.txt", "linux-6.12-later.txt"];
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("top.txt", &top, &[]),
        ("top-by-dir.txt", &top, &["--by", "dir", "-n", "0"]),
        (
            "top-by-module-calls.txt",
            &top,
            &["--by", "module", "--sort", "calls"],
        ),
        (
            "top-filtered.txt",
            &top,
            &["--path", "fs/*", "--min-size", "64K", "--exact"],
        ),
        ("top-2.0.txt", &["top", "-f", "linux-2.0.txt"], &["-n", "6"]),
        ("top.json", &top, &["--json", "-n", "3"]),
        (
            "top-2.0.json",
            &["top", "-f", "linux-2.0.txt"],
            &["--json", "--function", "alloc_slab*"],
        ),
        ("top.csv", &top, &["--csv", "-n", "5"]),
        (
            "top-by-file.prom",
            &top,
            &["--prometheus", "--by", "file", "-n", "4"],
        ),
        (
            "top.prom",
            &top,
            &["--prometheus", "--module", "virtio_net"],
        ),
        ("diff.txt", &diff, &[]),
        (
            "diff-all-by-module.txt",
            &diff,
            &["--all", "--by", "module"],
        ),
        ("diff.json", &diff, &["--json"]),
        ("diff.csv", &diff, &["--csv"]),
        ("diff.prom", &diff, &["--prometheus", "-n", "2"]),
    ];
    for (name, base, extra) in cases {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        golden(name, &ok(&args));
    }
}

#[test]
fn csv_has_one_line_per_call_site_plus_header() {
    let csv = ok(&["top", "-f", "linux-6.12.txt", "--csv"]);
    assert_eq!(csv.lines().count(), 57 + 1, "58 tags, one call site twice");
    assert!(csv.starts_with(
        "group,key,module,dir,file,line,function,sites,bytes,calls,share,accurate,unloaded\n"
    ));
}

#[test]
fn reads_standard_input() {
    let mut child = Command::new(BIN)
        .args(["top", "-f", "-", "-n", "1", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = std::fs::read(data_dir().join("linux-2.0.txt")).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["source"]["path"], "-");
    assert_eq!(v["source"]["version"], "2.0");
    assert_eq!(v["rows"][0]["function"], "alloc_page_ext");
}

#[test]
fn malformed_input_names_file_and_line() {
    let err = fails(&["top", "-f", "bad/bad-size.txt"], 1);
    assert_eq!(
        err,
        "allocinfo: error: bad/bad-size.txt: line 5: invalid size \"4O96\": expected a signed 64-bit integer\n"
    );
    let err = fails(&["diff", "linux-6.12.txt", "bad/truncated.txt"], 1);
    assert_eq!(
        err,
        "allocinfo: error: bad/truncated.txt: line 6: expected FILE:LINE, found \"mm/perc\"\n"
    );
    let err = fails(
        &[
            "watch",
            "--plain",
            "--count",
            "1",
            "-f",
            "bad/invalid-utf8.txt",
        ],
        1,
    );
    assert!(
        err.contains("bad/invalid-utf8.txt: line 4: line is not valid UTF-8"),
        "{err}"
    );
    let err = fails(
        &["treemap", "-f", "bad/version-3.txt", "-o", "/dev/null"],
        1,
    );
    assert!(
        err.contains("line 1: unsupported format version 3.0"),
        "{err}"
    );
}

#[test]
fn errors_and_usage() {
    let err = fails(&["top", "-f", "no-such-file"], 1);
    assert!(
        err.starts_with("allocinfo: error: reading no-such-file: No such file or directory"),
        "{err}"
    );
    let err = fails(&["top", "-f", "linux-6.12.txt", "--json", "--csv"], 2);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = fails(
        &["top", "-f", "linux-6.12.txt", "--min-size", "12 parsecs"],
        2,
    );
    assert!(err.contains("invalid size \"12 parsecs\""), "{err}");
    let err = fails(&["top", "-f", "linux-6.12.txt", "--by", "directory"], 2);
    assert!(
        err.contains("possible values: site, module, dir, file, function"),
        "{err}"
    );
    // Usage errors found after parsing are usage errors too: status 2 and
    // the subcommand's usage.
    let err = fails(&["top", "-f", "linux-6.12.txt", "--sort", "delta-bytes"], 2);
    assert!(err.contains("needs two profiles"), "{err}");
    assert!(
        err.contains("Usage: allocinfo top [OPTIONS] [FILE]"),
        "{err}"
    );
    let err = fails(&["top", "-f", "linux-6.12.txt", "--path", "[x"], 2);
    assert_eq!(err.matches("invalid pattern \"[x\"").count(), 1, "{err}");
    assert_eq!(
        err.matches("invalid range pattern").count(),
        1,
        "said once: {err}"
    );
    let err = fails(&["diff", "-", "-"], 2);
    assert!(err.contains("only one of OLD and NEW"), "{err}");
    assert!(err.contains("Usage: allocinfo diff"), "{err}");
    let err = fails(&["watch", "-f", "-", "--plain"], 2);
    assert!(err.contains("not standard input"), "{err}");
    assert!(err.contains("Usage: allocinfo watch"), "{err}");
    let err = fails(&["watch", "-f", "linux-6.12.txt", "--interval", "0"], 2);
    assert!(err.contains("invalid interval"), "{err}");
    assert!(ok(&["--help"]).contains("treemap"));
    assert!(ok(&["--version"]).starts_with("allocinfo "));
}

#[test]
fn broken_pipe_is_not_an_error() {
    // Far more output than a pipe holds, to a reader that is gone.
    let dir = scratch("pipe");
    let mut text = String::from("allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n");
    for i in 0..20000 {
        text += &format!("{:12} {:8} mm/f{}.c:{} func:f{} \n", i * 8, i, i % 50, i, i);
    }
    std::fs::write(dir.join("big.txt"), text).unwrap();
    let mut child = Command::new(BIN)
        .args(["top", "-n", "0", "-f"])
        .arg(dir.join("big.txt"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Output that cannot be written is exit status 1 with a message, for
/// completions, --help and --version as for every command; a reader that
/// has gone (a closed pipe) is exit status 0, quietly.
#[test]
fn completions_help_and_version_say_write_errors() {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        &["completions", "bash"][..],
        &["--help"],
        &["--version"],
        &["top", "--help"],
        &["man"],
    ] {
        let out = Command::new(BIN)
            .args(args)
            .stdout(full())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?} into /dev/full: {err}");
        assert!(err.contains("No space left on device"), "{args:?}: {err}");
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(BIN)
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?} into a closed pipe: {err}"
        );
        assert_eq!(err, "", "{args:?}");
    }
}

/// Control characters in names (an escape sequence in a function or
/// module name) never reach the terminal raw from top or query: they are
/// escaped as \xNN, as the SVG replaces them.
#[test]
fn control_characters_in_names_are_escaped() {
    let dir = scratch("control-chars");
    let file = dir.join("p.txt");
    std::fs::write(
        &file,
        "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n\
         4096 1 mm/a.c:1 [m\x1b[31m] func:evil\x1b[2J\x07 \n",
    )
    .unwrap();
    for args in [
        &["top"][..],
        &["top", "-b", "module"],
        &["query", "--via", "text"],
    ] {
        let out = Command::new(BIN).args(args).arg(&file).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.contains('\x1b') && !text.contains('\x07'),
            "{args:?}: {text:?}"
        );
        assert!(text.contains("\\x1b[31m"), "{args:?}: {text}");
    }
}

#[test]
fn snapshot_copies_verbatim_with_timestamped_names() {
    let dir = scratch("snapshot");
    let src = data_dir().join("linux-6.12.txt");
    let mut paths = Vec::new();
    for _ in 0..2 {
        let out = Command::new(BIN)
            .args(["snapshot", "-f"])
            .arg(&src)
            .arg("-o")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success());
        paths.push(PathBuf::from(
            String::from_utf8(out.stdout).unwrap().trim_end(),
        ));
    }
    for p in &paths {
        assert_eq!(std::fs::read(p).unwrap(), std::fs::read(&src).unwrap());
        let name = p.file_name().unwrap().to_str().unwrap();
        let stamp = name
            .strip_prefix("allocinfo-")
            .unwrap()
            .strip_suffix(".txt")
            .unwrap();
        let (date, rest) = stamp.split_at(8);
        assert!(date.bytes().all(|b| b.is_ascii_digit()), "{name}");
        assert!(
            rest.starts_with('T')
                && rest[1..7].bytes().all(|b| b.is_ascii_digit())
                && rest[7..].starts_with('Z'),
            "{name}"
        );
    }
    assert_ne!(paths[0], paths[1]);
    // Snapshots are profiles: diff reads them.
    let out = Command::new(BIN).arg("diff").args(&paths).output().unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("call sites: 0 new, 0 gone, 0 changed")
    );
    // To a file name; invalid input is not saved.
    let file = dir.join("named.txt");
    let out = Command::new(BIN)
        .args(["snapshot", "-f"])
        .arg(&src)
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success() && file.exists());
    let bad = dir.join("bad.txt");
    let out = Command::new(BIN)
        .args(["snapshot", "-f"])
        .arg(data_dir().join("bad/bad-size.txt"))
        .arg("-o")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!bad.exists());
}

/// `snapshot -o -` writes the profile to standard output, as `treemap -o -`
/// and `metrics -o -` do: no file named `-`.
#[test]
fn snapshot_output_dash_is_standard_output() {
    let dir = scratch("snapshot-dash");
    let src = data_dir().join("linux-6.12.txt");
    let out = Command::new(BIN)
        .args(["snapshot", "-o", "-"])
        .arg(&src)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stdout == std::fs::read(&src).unwrap(),
        "stdout is not the profile"
    );
    assert!(!dir.join("-").exists());
}

/// Malformed waste figures beside the profile do not cost the profile: it
/// is saved, and the figures are warned about and left out.
#[test]
fn snapshot_saves_the_profile_beside_malformed_waste_figures() {
    let dir = scratch("snapshot-bad-waste");
    let src = dir.join("allocinfo");
    std::fs::copy(data_dir().join("linux-6.12.txt"), &src).unwrap();
    std::fs::write(dir.join("allocwaste"), "not waste figures\n").unwrap();
    let to = dir.join("out");
    std::fs::create_dir(&to).unwrap();
    let out = Command::new(BIN)
        .args(["snapshot", "-o"])
        .arg(&to)
        .arg(&src)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning") && err.contains("allocwaste"),
        "{err}"
    );
    let saved = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end());
    assert_eq!(std::fs::read(&saved).unwrap(), std::fs::read(&src).unwrap());
    let names: Vec<_> = std::fs::read_dir(&to).unwrap().collect();
    assert_eq!(names.len(), 1, "no waste copy");
}

#[test]
fn watch_plain_prints_count_frames() {
    let start = Instant::now();
    let out = ok(&[
        "watch",
        "--plain",
        "--count",
        "2",
        "--interval",
        "0.1",
        "--file",
        "linux-6.12.txt",
        "-n",
        "4",
    ]);
    assert!(start.elapsed() < Duration::from_secs(10));
    let frames: Vec<&str> = out.split("\n\n").collect();
    assert_eq!(frames.len(), 2, "{out}");
    for (i, frame) in frames.iter().enumerate() {
        let lines: Vec<&str> = frame.lines().collect();
        assert!(
            lines[0].starts_with(&format!("allocinfo watch: frame {} at ", i + 1)),
            "{frame}"
        );
        assert_eq!(
            lines[3].split_whitespace().collect::<Vec<_>>(),
            [
                "+BYTES", "+CALLS", "BYTES", "CALLS", "STATUS", "CALL", "SITE"
            ]
        );
        assert_eq!(lines.len(), 4 + 4 + 1);
    }
    assert!(!out.contains('\x1b'), "no escape codes");
}

/// Starts `watch --json` on a file, waits for frame 1, changes the file and
/// checks that frame 2 shows the growth.
#[test]
fn watch_shows_deltas_per_interval() {
    let dir = scratch("watch");
    let file = dir.join("allocinfo");
    std::fs::copy(data_dir().join("linux-6.12.txt"), &file).unwrap();
    let mut child = Command::new(BIN)
        .args([
            "watch",
            "--plain",
            "--json",
            "--count",
            "2",
            "--interval",
            "1",
            "-f",
        ])
        .arg(&file)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["command"], "watch");
    assert!(
        first["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["delta_bytes"] == 0)
    );
    let tmp = dir.join("next");
    std::fs::copy(data_dir().join("linux-6.12-later.txt"), &tmp).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let second: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(lines.next().is_none());
    assert!(child.wait().unwrap().success());
    let slab = second["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["function"] == "alloc_slab_page")
        .unwrap();
    assert_eq!(slab["delta_bytes"], 2097152);
    assert_eq!(slab["status"], "changed");
    let gone = second["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["status"] == "gone")
        .unwrap();
    assert_eq!(gone["function"], "ttm_pool_alloc_page");
}

#[test]
fn watch_plain_exits_cleanly_on_sigint() {
    let mut child = Command::new(BIN)
        .args(["watch", "--plain", "--interval", "0.2", "-n", "1", "-f"])
        .arg(data_dir().join("linux-6.12.txt"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("allocinfo watch: frame 1"));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// The full-screen mode in a pseudo-terminal (util-linux `script`): `s`
/// changes the sort, `q` quits, and the terminal is restored.
#[test]
fn watch_full_screen_keys_and_terminal_restore() {
    let file = data_dir().join("linux-6.12.txt");
    let command = format!(
        "stty cols 120 rows 30; exec '{BIN}' watch --interval 0.2 -f '{}'",
        file.display()
    );
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux");
    let mut stdin = child.stdin.take().unwrap();
    let screen = Screen::read(child.stdout.take().unwrap());
    // Each key is sent once the frame it acts on is on the screen: events,
    // not sleeps, order the exchange; the deadline only catches a hang.
    screen.wait_for("sorted by bytes");
    stdin.write_all(b"s").unwrap();
    stdin.flush().unwrap();
    screen.wait_for("sorted by calls");
    stdin.write_all(b"q").unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "watch did not quit on q");
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    let screen = screen.finish();
    assert!(status.success(), "{status:?}\n{screen}");
    assert!(
        screen.contains("\x1b[?1049h"),
        "entered the alternate screen"
    );
    assert!(
        screen.contains("sorted by bytes") && screen.contains("sorted by calls"),
        "{screen}"
    );
    let tail = &screen[screen.rfind("sorted by calls").unwrap()..];
    assert!(
        tail.contains("\x1b[?25h") && tail.contains("\x1b[?1049l"),
        "cursor shown and screen left at exit"
    );
}

#[test]
fn treemap_writes_svg() {
    let dir = scratch("treemap");
    let svg = dir.join("x.svg");
    let out = Command::new(BIN)
        .args(["treemap", "-f"])
        .arg(data_dir().join("linux-6.12-later.txt"))
        .arg("-o")
        .arg(&svg)
        .args(["--width", "800", "--height", "600", "--module", "vmlinux"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"600\"")
    );
    assert!(text.trim_end().ends_with("</svg>"));
    assert!(text.contains("mm/slub.c:2478 func:alloc_slab_page"));
    assert!(
        !text.contains("[sunrpc]"),
        "filtered out by --module vmlinux"
    );
    let to_stdout = ok(&[
        "treemap",
        "-f",
        "linux-6.12-later.txt",
        "-o",
        "-",
        "--width",
        "800",
        "--height",
        "600",
        "--module",
        "vmlinux",
        "--title",
        "allocinfo treemap: linux-6.12-later.txt",
    ]);
    assert_eq!(
        to_stdout.matches("<rect").count(),
        text.matches("<rect").count()
    );
}

/// What a child wrote to its terminal so far, read on a thread.
struct Screen {
    text: std::sync::Arc<(std::sync::Mutex<(String, bool)>, std::sync::Condvar)>,
    reader: std::thread::JoinHandle<()>,
}

impl Screen {
    fn read(mut from: impl Read + Send + 'static) -> Screen {
        let text = std::sync::Arc::new((
            std::sync::Mutex::new((String::new(), false)),
            std::sync::Condvar::new(),
        ));
        let shared = text.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                let n = from.read(&mut buf).unwrap_or(0);
                let (lock, cond) = &*shared;
                let mut t = lock.lock().unwrap();
                if n == 0 {
                    t.1 = true;
                    cond.notify_all();
                    return;
                }
                t.0.push_str(&String::from_utf8_lossy(&buf[..n]));
                cond.notify_all();
            }
        });
        Screen { text, reader }
    }

    /// Waits until `needle` has been written; fails after a generous
    /// deadline or when the output ends without it.
    fn wait_for(&self, needle: &str) {
        self.wait_for_times(needle, 1)
    }

    /// Waits until `needle` has been written `times` times.
    fn wait_for_times(&self, needle: &str, times: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let (lock, cond) = &*self.text;
        let mut t = lock.lock().unwrap();
        while t.0.matches(needle).count() < times {
            let now = Instant::now();
            assert!(
                now < deadline && !t.1,
                "{needle:?} never appeared on the screen:\n{}",
                t.0
            );
            t = cond.wait_timeout(t, deadline - now).unwrap().0;
        }
    }

    /// Everything written, once the writer closed the terminal.
    fn finish(self) -> String {
        self.reader.join().unwrap();
        let (lock, _) = &*self.text;
        std::mem::take(&mut lock.lock().unwrap().0)
    }
}

/// Item 5: a read that fails (a file rewritten badly) keeps watch going:
/// an error line on stderr, and the next good read is the next frame.
#[test]
fn watch_plain_survives_a_bad_read() {
    let dir = scratch("watch-bad-read");
    let file = dir.join("p.txt");
    std::fs::copy(data_dir().join("linux-6.12.txt"), &file).unwrap();
    let mut child = Command::new(BIN)
        .args(["watch", "--plain", "-i", "0.1"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("allocinfo watch: frame 1 "), "{line}");
    // A partial rewrite: the next read fails, whenever it comes.
    let tmp = dir.join("next");
    std::fs::write(
        &tmp,
        "allocinfo - version: 1.0\n#\n  4096 1 mm/a.c:1 func:f\n  12",
    )
    .unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let mut err = String::new();
    stderr.read_line(&mut err).unwrap();
    assert!(
        err.starts_with("allocinfo: watch: frame ") && err.contains("p.txt: line 4"),
        "{err}"
    );
    let bad_frame: u64 = err["allocinfo: watch: frame ".len()..]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    std::fs::copy(data_dir().join("linux-6.12-later.txt"), &tmp).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    // Frames after the bad one come again (stdout is read until one does).
    let later = loop {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "watch ended");
        if let Some(rest) = line.strip_prefix("allocinfo watch: frame ") {
            let n: u64 = rest.split(' ').next().unwrap().parse().unwrap();
            if n > bad_frame {
                break n;
            }
        }
    };
    assert!(later > bad_frame);
    assert!(
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
}

/// Runs `watch ARGS` full-screen in a pseudo-terminal of `cols` x `rows`.
fn watch_in_pty(cols: u16, rows: u16, args: &str) -> (std::process::Child, Screen) {
    let file = data_dir().join("linux-6.12.txt");
    let command = format!(
        "stty cols {cols} rows {rows}; exec '{BIN}' watch {args} '{}'",
        file.display()
    );
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux");
    let screen = Screen::read(child.stdout.take().unwrap());
    (child, screen)
}

/// The process script(1) runs (the shell that exec'd allocinfo).
fn pty_child(script: &std::process::Child) -> String {
    let children =
        std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", script.id())).unwrap();
    children.split_whitespace().next().unwrap().to_owned()
}

/// Item 6: SIGTERM, SIGHUP and SIGINT restore the terminal as q does.
#[test]
fn watch_full_screen_restores_the_terminal_on_sigterm_and_sighup() {
    for signal in ["-TERM", "-HUP", "-INT"] {
        let (mut child, screen) = watch_in_pty(120, 30, "-i 0.2");
        screen.wait_for("sorted by bytes");
        let pid = pty_child(&child);
        assert!(
            Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        let status = child.wait().unwrap();
        let text = screen.finish();
        assert!(status.success(), "{signal}: {status:?}");
        let tail = &text[text.rfind("sorted by bytes").unwrap()..];
        assert!(
            tail.contains("\x1b[?25h") && tail.contains("\x1b[?1049l"),
            "{signal}: cursor shown and screen left"
        );
    }
}

/// Whether process `pid` has ended (gone, or a zombie not yet reaped).
fn ended(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// The terminal going away (tmux's session killed, an ssh connection
/// dropped: here the pseudo-terminal's master closed with script(1)
/// killed) ends the full-screen watch, within a few intervals.
#[test]
fn watch_full_screen_exits_when_its_terminal_goes_away() {
    let (mut child, screen) = watch_in_pty(120, 30, "-i 0.2");
    screen.wait_for("sorted by bytes");
    let pid = pty_child(&child);
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ended(&pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let still = !ended(&pid);
    if still {
        let _ = Command::new("kill").args(["-KILL", &pid]).status();
    }
    assert!(!still, "watch runs on without its terminal");
}

/// Ctrl-Z stops watch as a shell's job, the terminal restored first; `fg`
/// brings the full screen back. Run under a shell with job control (in an
/// orphaned process group the kernel discards SIGTSTP, as for any program).
#[test]
fn watch_full_screen_ctrl_z_stops_as_a_job() {
    let file = data_dir().join("linux-6.12.txt");
    let job = format!(
        "set -m; '{BIN}' watch -i 0.2 '{}'; echo stopped:\\$?; fg; echo ended:\\$?",
        file.display()
    );
    let command = format!("stty cols 120 rows 30; exec bash -c \"{job}\"");
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux");
    let mut stdin = child.stdin.take().unwrap();
    let screen = Screen::read(child.stdout.take().unwrap());
    screen.wait_for("sorted by bytes");
    stdin.write_all(b"\x1a").unwrap();
    stdin.flush().unwrap();
    screen.wait_for("stopped:148");
    // Continued: the full screen again, and q quits it.
    screen.wait_for_times("\x1b[?1049h", 2);
    stdin.write_all(b"q").unwrap();
    stdin.flush().unwrap();
    screen.wait_for("ended:0");
    drop(stdin);
    child.wait().unwrap();
    let text = screen.finish();
    let stopped = text.find("stopped:148").unwrap();
    assert!(
        text[..stopped].contains("\x1b[?1049l"),
        "the screen is left before the job stops"
    );
    let ended = text.find("ended:0").unwrap();
    assert!(
        text[stopped..ended].contains("\x1b[?1049l"),
        "and left again at the end: {:?}",
        &text[stopped..]
    );
}

/// Item 7: `-c N` leaves its last frame on the screen; a narrow terminal
/// cuts the call site (…); one too small says so.
#[test]
fn watch_full_screen_count_narrow_and_tiny() {
    let (mut child, screen) = watch_in_pty(120, 30, "-c 2 -i 0.1");
    assert!(child.wait().unwrap().success());
    let text = screen.finish();
    let after = &text[text.rfind("\x1b[?1049l").expect("left the screen")..];
    assert!(
        after.contains("allocinfo watch: frame 2") && after.contains("CALL SITE"),
        "the last frame stays: {after:?}"
    );
    let (mut child, screen) = watch_in_pty(60, 30, "-c 1");
    assert!(child.wait().unwrap().success());
    let text = screen.finish();
    let after = &text[text.rfind("\x1b[?1049l").unwrap()..];
    assert!(after.contains("CALL SITE"), "{after:?}");
    assert!(
        after.contains('…'),
        "call sites cut, not dropped: {after:?}"
    );
    // Machine formats need --plain on a terminal: a usage error.
    let (mut child, screen) = watch_in_pty(120, 30, "--json");
    assert_eq!(child.wait().unwrap().code(), Some(2));
    let text = screen.finish();
    // clap colours its usage on a terminal.
    assert!(
        text.contains("need --plain") && text.contains("allocinfo watch\x1b[0m [OPTIONS] [FILE]"),
        "{text:?}"
    );
    let (mut child, screen) = watch_in_pty(30, 4, "-c 1");
    assert!(child.wait().unwrap().success());
    let text = screen.finish();
    assert!(
        text.contains("is 30x4;") && text.contains("needs at least"),
        "{text:?}"
    );
}

/// The small surprises of issue 47 item 14, each as a user meets it.
#[test]
fn small_surprises() {
    let rows = |text: &str| text.lines().skip(2).filter(|l| l.contains(':')).count();
    // The last -n wins, as in head and most tools.
    assert_eq!(
        rows(&ok(&["top", "linux-6.12.txt", "-n", "3", "-n", "4"])),
        4
    );
    // alloctop's spellings.
    assert_eq!(rows(&ok(&["top", "linux-6.12.txt", "--lines", "2"])), 2);
    assert_eq!(
        ok(&["top", "linux-6.12.txt", "--min", "4K", "-n", "0"]),
        ok(&["top", "linux-6.12.txt", "--min-size", "4K", "-n", "0"])
    );
    let once = ok(&["watch", "--plain", "--once", "linux-6.12.txt"]);
    assert_eq!(once.matches("allocinfo watch: frame").count(), 1);
    // Errors suggest what the command has.
    let err = fails(&["top", "-n", "99999999999999999999999"], 2);
    assert!(!err.contains("-i/--interval"), "{err}");
    let err = fails(&["top", "--tree"], 2);
    assert!(
        err.contains("-b tree") && !err.contains("--reverse"),
        "{err}"
    );
    // Identical files are said to be identical.
    let same = ok(&["diff", "linux-6.12.txt", "linux-6.12.txt"]);
    assert!(!same.contains("(nothing matched)"), "{same}");
    assert!(same.contains("(no changes)"), "{same}");
    // One call, not "1 calls"; a share that rounds to zero has no sign.
    let dir = scratch("small");
    std::fs::write(
        dir.join("p.txt"),
        "allocinfo - version: 1.0\n#\n 4096000000 1 mm/a.c:1 func:f \n -4096 0 mm/b.c:2 func:g \n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .arg("top")
        .arg(dir.join("p.txt"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(" in 1 call at "), "{text}");
    assert!(!text.contains("-0.0%"), "{text}");
}

/// `watch -c 0` is a usage error (zero frames is no watch), and a
/// `--waste` file that does not exist is refused, as treemap's.
#[test]
fn watch_count_zero_and_a_missing_waste_file_are_refused() {
    let err = fails(&["watch", "--plain", "-c", "0", "linux-6.12.txt"], 2);
    assert!(err.contains("-c"), "{err}");
    let err = fails(
        &[
            "watch",
            "--plain",
            "-c",
            "1",
            "--waste",
            "/nonexistent",
            "linux-6.12.txt",
        ],
        1,
    );
    assert!(err.contains("/nonexistent"), "{err}");
}

/// One corrupt tag (bytes of -2^63) does not make the profile unreadable:
/// it is reported on standard error and left out, in top, diff and watch.
/// query's size filters read a negative tag as top does (below any
/// --min-size), and input that is no profile is refused at its first line.
#[test]
fn corrupt_and_negative_tags_and_no_profile_at_all() {
    let dir = scratch("corrupt");
    let file = dir.join("p.txt");
    std::fs::write(
        &file,
        "allocinfo - version: 1.0\n#\n 4096 1 mm/a.c:1 func:f \n -9223372036854775808 1 mm/b.c:2 func:g \n -1 0 mm/c.c:3 func:h \n",
    )
    .unwrap();
    for args in [
        &["top"][..],
        &["diff", "-a"],
        &["watch", "--plain", "-c", "1"],
    ] {
        let mut cmd = Command::new(BIN);
        cmd.args(args);
        if args[0] == "diff" {
            cmd.arg(&file);
        }
        let out = cmd.arg(&file).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(
            err.contains("mm/b.c:2") && err.contains("left out"),
            "{args:?}: {err}"
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("mm/a.c:1") && !text.contains("mm/b.c:2"),
            "{text}"
        );
    }
    let out = Command::new(BIN)
        .args(["query", "--via", "text", "--min-size", "1E"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // `yes | allocinfo top -`: refused at line 1, not after 256 MiB.
    let mut child = Command::new(BIN)
        .args(["top", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = b"y\n".repeat(4096);
        let mut written = 0usize;
        while stdin.write_all(&chunk).is_ok() {
            written += chunk.len();
        }
        written
    });
    let out = child.wait_with_output().unwrap();
    let written = writer.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("line 1"), "{err}");
    assert!(
        written < 16 << 20,
        "{written} bytes read before the refusal"
    );
}

/// `allocinfo man COMMAND` prints a real page per subcommand, with every
/// option and the examples under EXAMPLES; `--dir DIR` writes them all.
#[test]
fn man_pages_per_subcommand() {
    let main = ok(&["man"]);
    assert!(main.contains(".TH allocinfo 1"), "{main}");
    assert!(
        !main.contains("EXTRA") && main.contains(".SH EXAMPLES"),
        "{main}"
    );
    let top = ok(&["man", "top"]);
    assert!(top.contains(".TH allocinfo-top 1"), "{top}");
    assert!(
        top.contains("min\\-size") && top.contains(".SH EXAMPLES"),
        "{top}"
    );
    assert!(top.contains("allocinfo top \\-b module \\-n 10"), "{top}");
    assert!(!top.contains("EXTRA"));
    let add = ok(&["man", "fail", "add"]);
    assert!(
        add.contains(".TH allocinfo-fail-add 1") && add.contains("probability"),
        "{add}"
    );
    let err = fails(&["man", "bogus"], 2);
    assert!(err.contains("bogus"), "{err}");
    let dir = scratch("man");
    let out = Command::new(BIN)
        .args(["man", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    for page in [
        "allocinfo.1",
        "allocinfo-top.1",
        "allocinfo-waste.1",
        "allocinfo-waste-on.1",
        "allocinfo-fail-add.1",
        "allocinfo-man.1",
    ] {
        let text =
            std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(
            text.starts_with(".ie \\n(.g") || text.contains(".TH "),
            "{page}"
        );
    }
}

/// `watch --plain` in a machine format is a stream a logger can keep: CSV
/// with one header and a time and frame column, JSON Lines with the time
/// and the frame; the Prometheus format is one exposition, so only one
/// frame of it (-c 1) is allowed.
#[test]
fn watch_plain_machine_formats_are_valid_streams() {
    let csv = ok(&[
        "watch",
        "--plain",
        "--csv",
        "-c",
        "3",
        "-i",
        "0.05",
        "-n",
        "2",
        "linux-6.12.txt",
    ]);
    let header = csv.lines().next().unwrap();
    assert!(header.starts_with("time,frame,"), "{header}");
    assert_eq!(csv.lines().filter(|l| *l == header).count(), 1, "{csv}");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 6, "{csv}");
    assert_eq!(&rows[5][1], "3");
    assert!(
        rows[0][0].ends_with('Z') && rows[0][0].contains('T'),
        "{:?}",
        rows[0]
    );
    let json = ok(&[
        "watch",
        "--plain",
        "--json",
        "-c",
        "2",
        "-i",
        "0.05",
        "linux-6.12.txt",
    ]);
    for (i, line) in json.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["frame"], i as u64 + 1, "{line}");
        assert!(v["time"].as_str().unwrap().ends_with('Z'), "{line}");
    }
    assert_eq!(json.lines().count(), 2);
    let one = ok(&[
        "watch",
        "--plain",
        "--prometheus",
        "-c",
        "1",
        "linux-6.12.txt",
    ]);
    assert!(one.contains("# TYPE"));
    let err = fails(
        &[
            "watch",
            "--plain",
            "--prometheus",
            "-c",
            "2",
            "linux-6.12.txt",
        ],
        2,
    );
    assert!(err.contains("--prometheus"), "{err}");
}
