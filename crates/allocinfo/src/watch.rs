//! `allocinfo watch`: re-read the profile every interval and show the table
//! with deltas since the previous frame. Full-screen in a terminal (q, Esc or
//! Ctrl-C quits, s cycles the sort key), plain frames with `--plain`.
//!
//! As slabtop and top: a read that fails (a file rewritten while read)
//! keeps the last good frame, says why on an error line and retries next
//! interval; SIGTERM, SIGHUP and SIGINT restore the terminal as q does, and
//! so does the terminal going away ([`keys`]); Ctrl-Z stops watch as a
//! shell's job; a terminal too small to draw in says so; `-c N` leaves its
//! last frame on screen.

mod keys;
mod screen;

use crate::args::{FilterArgs, InputArgs, OutputArgs, ViewArgs};
use crate::input::{self, Loaded};
use crate::split::{SplitArgs, SplitReader};
use crate::time::Utc;
use allocinfo_output::{Command, Format, Meta, TableOptions};
use allocinfo_report::rates::RateFigures;
use allocinfo_report::{Query, Report, SortKey};
use anyhow::{Context, Result};
use clap::Args;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Seconds between refreshes, decimals allowed (-d as in top and slabtop).
    #[arg(short = 'i', long, visible_short_alias = 'd', visible_alias = "delay", value_name = "SECONDS", default_value = "1", value_parser = interval_arg)]
    pub interval: f64,
    /// Print each frame as plain text, no escape codes (serial consoles, logs).
    /// Implied when standard output is not a terminal.
    #[arg(long)]
    pub plain: bool,
    /// Stop after N frames, N >= 1 (--once: one frame).
    #[arg(short = 'c', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// One frame, then exit: the same as -c 1 (alloctop's spelling).
    #[arg(long, conflicts_with = "count")]
    pub once: bool,
    /// Waste figures read with each frame for an ALLOCS/S column [default:
    /// next to the profile: /proc/allocwaste for /proc/allocinfo, no column
    /// when that does not exist]; a FILE named must exist.
    #[arg(long, value_name = "FILE")]
    pub waste: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub split: SplitArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn interval_arg(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.01..=86400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "invalid interval {s:?}: expected seconds between 0.01 and 86400"
        )),
    }
}

struct Watcher {
    args: WatchArgs,
    format: Format,
    interval: Duration,
    sort: SortKey,
    /// Reversed order (-r, or the r key).
    reverse: bool,
    frame: u64,
    prev: Option<Loaded>,
    cur: Loaded,
    /// Why the last refresh failed; the frame shows the last good data.
    error: Option<String>,
    /// With `--split`: the kernel's file, read by the ioctl each frame,
    /// and the shares of the previous and the current read.
    split: Option<SplitReader>,
}

impl Watcher {
    /// The shares of each row with their changes since the previous frame
    /// (`--split`).
    fn splits(&self) -> Result<Option<allocinfo_output::Splits>> {
        let Some(split) = &self.split else {
            return Ok(None);
        };
        let query = self
            .args
            .view
            .query(&self.args.filter, self.format, self.sort, false)?;
        Ok(Some(split.changes(&query)))
    }

    fn report(&self, limit: Option<usize>) -> Result<Report> {
        let mut query: Query =
            self.args
                .view
                .query(&self.args.filter, self.format, self.sort, false)?;
        query.limit = limit;
        query.reverse = self.reverse;
        let prev = self.prev.as_ref().unwrap_or(&self.cur);
        Ok(query.diff(&prev.profile, &self.cur.profile))
    }

    /// Allocations per second since the previous frame, when the kernel's
    /// waste figures are read with the profile (`None`: no ALLOCS/S column).
    fn rates(&self) -> Result<Option<RateFigures>> {
        let Some(new) = &self.cur.waste else {
            return Ok(None);
        };
        let query = self
            .args
            .view
            .query(&self.args.filter, self.format, self.sort, false)?;
        let old = self.prev.as_ref().and_then(|p| p.waste.as_ref());
        Ok(Some(allocinfo_report::rates::rates(old, new, &query)))
    }

    /// The waste figures read with each frame: `--waste`, or those next to
    /// the profile.
    fn waste_path(&self) -> Option<std::path::PathBuf> {
        waste_path(&self.args)
    }

    fn meta(&self) -> Meta {
        let source = allocinfo_output::Source {
            path: self.cur.path.clone(),
            version: self.cur.profile.version,
        };
        Meta {
            command: Command::Watch,
            source: source.clone(),
            old_source: Some(source),
        }
    }

    fn title(&self, keys: bool) -> String {
        let keys = if keys {
            "  (s: sort, r: reverse, q: quit)"
        } else {
            ""
        };
        format!(
            "allocinfo watch: frame {} at {} UTC, every {}s, by {}, sorted by {}{}{keys}",
            self.frame,
            Utc::now().clock(),
            self.args.interval,
            self.args.view.group_by(),
            self.sort,
            if self.reverse { ", reversed" } else { "" },
        )
    }

    /// Re-reads the input. On failure the last good profile stays and
    /// [`Watcher::error`] says why; the next refresh tries again.
    fn advance(&mut self) {
        self.frame += 1;
        let path = self.args.input.path();
        let waste = self.waste_path();
        let next = match &mut self.split {
            Some(split) => split.advance(&path, waste.as_deref()),
            None => input::load_with_waste(&path, waste.as_deref()),
        };
        match next {
            Ok(next) => {
                self.prev = Some(std::mem::replace(&mut self.cur, next));
                self.error = None;
            }
            Err(e) => {
                self.error = Some(format!(
                    "frame {}: {e:#}; showing the last good read, retrying every {}s",
                    self.frame, self.args.interval
                ))
            }
        }
    }

    fn done(&self) -> bool {
        let count = if self.args.once {
            Some(1)
        } else {
            self.args.count
        };
        count.is_some_and(|n| self.frame >= n)
    }
}

fn waste_path(args: &WatchArgs) -> Option<std::path::PathBuf> {
    args.waste
        .clone()
        .or_else(|| input::waste_companion(&args.input.path()))
}

impl WatchArgs {
    /// Whether frames are printed as text (--plain, or output that is not
    /// a terminal) rather than drawn full-screen.
    fn plain(&self) -> bool {
        self.plain || !io::stdout().is_terminal()
    }

    /// The usage errors no reading can fix, found before anything is read.
    pub fn validate(&self) -> Result<()> {
        if self.input.path().as_os_str() == "-" {
            return Err(crate::messages::usage(
                "watch re-reads its input every interval: give a file, not standard input",
            ));
        }
        let format = self.output.format();
        let frames = if self.once { Some(1) } else { self.count };
        if format == Format::Prometheus && frames != Some(1) {
            return Err(crate::messages::usage(
                "--prometheus is one exposition, so one frame: use -c 1 (or allocinfo metrics on a timer)",
            ));
        }
        if !self.plain() && format != Format::Table {
            return Err(crate::messages::usage(
                "--json, --csv and --prometheus need --plain (or output that is not a terminal)",
            ));
        }
        self.split
            .validate(&self.input.path(), crate::via::Via::Auto, false)?;
        if let Some(path) = &self.waste
            && !path.exists()
        {
            anyhow::bail!("--waste {}: no such file", path.display());
        }
        Ok(())
    }
}

pub fn run(args: WatchArgs) -> Result<()> {
    args.validate()?;
    let format = args.output.format();
    let plain = args.plain();
    let sort = args.view.sort_key(SortKey::Bytes);
    let args_reverse = args.view.reverse;
    let interval = Duration::from_secs_f64(args.interval);
    let (cur, split) = match args.split.spec() {
        Some(spec) => {
            let by = args
                .split
                .split
                .map_or(allocinfo_output::SplitBy::Cpu, |s| s.by());
            let dev = allocinfo_ioctl::ProcFile::open(&args.input.path())?;
            let mut reader = SplitReader::new(Box::new(dev), by, spec);
            let cur = reader.advance(&args.input.path(), waste_path(&args).as_deref())?;
            (cur, Some(reader))
        }
        None => {
            let path = args.input.path();
            (
                input::load_with_waste(&path, waste_path(&args).as_deref())?,
                None,
            )
        }
    };
    if plain {
        // Said once, before the frames (full screen would wipe it).
        crate::messages::warn_unmatched(&args.filter.filter(), &cur.profile.tags, &cur.path);
        crate::messages::warn_unmarked(&args.filter.filter(), cur.profile.version, &cur.path);
    }
    let mut w = Watcher {
        args,
        format,
        interval,
        sort,
        reverse: args_reverse,
        frame: 1,
        prev: None,
        cur,
        error: None,
        split,
    };
    if plain {
        run_plain(&mut w)
    } else {
        screen::run(&mut w)
    }
}

/// Frames as text (or one JSON/CSV/Prometheus report per frame), until
/// `--count` frames were printed or SIGINT/SIGTERM arrives.
fn run_plain(w: &mut Watcher) -> Result<()> {
    let stop = stop_flag()?;
    let mut out = io::stdout().lock();
    loop {
        if let Some(error) = &w.error {
            // The last good frame was printed already: the error line only.
            eprintln!("allocinfo: watch: {error}");
            if w.done() {
                return Ok(());
            }
            if wait_plain(w.interval, &stop) {
                return Ok(());
            }
            w.advance();
            continue;
        }
        let report = w.report(w.args.view.limit(w.format))?;
        let table = TableOptions {
            title: Some(w.title(false)),
            exact: w.args.view.exact,
            pretty: w.args.output.pretty,
            ..TableOptions::default()
        };
        if w.frame > 1 && w.format == Format::Table {
            writeln!(out)?;
        }
        let rates = w.rates()?;
        if let Some(note) = rates.as_ref().and_then(RateFigures::note) {
            eprintln!("{note}");
        }
        let mut frame = Vec::new();
        allocinfo_output::write_split(
            &mut frame,
            w.format,
            &report,
            &w.meta(),
            &table,
            rates.as_ref().map(|r| &r.rates),
            w.splits()?.as_ref(),
        )?;
        let frame = stream_frame(w.format, frame, w.frame, &Utc::now().rfc3339())?;
        out.write_all(&frame).context(crate::messages::STDOUT)?;
        out.flush().context(crate::messages::STDOUT)?;
        if w.done() {
            return Ok(());
        }
        if wait_plain(w.interval, &stop) {
            return Ok(());
        }
        w.advance();
    }
}

/// One frame of a machine format as part of a stream a logger can keep:
/// CSV rows with the time and the frame number first, and the header
/// only in frame 1; a JSON document with `time` and `frame` (one line
/// each, JSON Lines, unless --pretty). Tables and the Prometheus format
/// (one frame only) are as printed.
fn stream_frame(format: Format, frame: Vec<u8>, n: u64, time: &str) -> Result<Vec<u8>> {
    match format {
        Format::Csv => {
            let text = String::from_utf8(frame).expect("CSV is text");
            let mut out = String::new();
            for (i, line) in text.lines().enumerate() {
                match i {
                    0 if n == 1 => out.push_str(&format!("time,frame,{line}\n")),
                    0 => {}
                    _ => out.push_str(&format!("{time},{n},{line}\n")),
                }
            }
            Ok(out.into_bytes())
        }
        Format::Json => {
            let pretty = frame.iter().filter(|&&b| b == b'\n').count() > 1;
            let mut v: serde_json::Value = serde_json::from_slice(&frame)?;
            if let Some(doc) = v.as_object_mut() {
                doc.insert("time".into(), time.into());
                doc.insert("frame".into(), n.into());
            }
            let mut out = if pretty {
                serde_json::to_vec_pretty(&v)?
            } else {
                serde_json::to_vec(&v)?
            };
            out.push(b'\n');
            Ok(out)
        }
        Format::Table | Format::Prometheus => Ok(frame),
    }
}

/// A flag raised by SIGINT, SIGTERM or SIGHUP.
fn stop_flag() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    Ok(stop)
}

/// Sleeps `interval`; true when a signal asked to stop.
fn wait_plain(interval: Duration, stop: &AtomicBool) -> bool {
    let deadline = Instant::now() + interval;
    while let Some(left) = deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
    {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
    stop.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::screen::{MIN_KEY, MIN_ROWS, frame_lines, textwrap};
    use super::*;
    use crate::cli::{Cli, Cmd};
    use clap::Parser;

    const DATA: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../allocinfo-format/tests/data/"
    );

    /// The arguments of `allocinfo watch PATH`.
    fn watch_args(path: &str) -> WatchArgs {
        let Cmd::Watch(args) = Cli::try_parse_from(["allocinfo", "watch", path])
            .unwrap()
            .command
        else {
            unreachable!()
        };
        args
    }

    /// A watcher at its first frame, by bytes, as a table every second.
    fn watcher_of(args: WatchArgs, cur: Loaded) -> Watcher {
        Watcher {
            sort: SortKey::Bytes,
            reverse: false,
            format: Format::Table,
            interval: Duration::from_secs(1),
            args,
            frame: 1,
            prev: None,
            cur,
            error: None,
            split: None,
        }
    }

    /// A watcher of a profile of the test data, read without waste figures.
    fn watcher(file: &str) -> Watcher {
        let args = watch_args(&format!("{DATA}{file}"));
        let cur = input::load(&args.input.path()).unwrap();
        watcher_of(args, cur)
    }

    #[test]
    fn narrow_terminals_truncate_the_call_site_and_tiny_ones_say_so() {
        let w = watcher("linux-6.12.txt");
        let wide = frame_lines(&w, 200, 30).unwrap();
        let header = &wide[3];
        let key_at = header.find("CALL SITE").unwrap();
        let narrow = frame_lines(&w, key_at + MIN_KEY, 30).unwrap();
        assert_eq!(&narrow[3], header, "the header fits");
        for (n, w) in narrow.iter().zip(&wide).skip(4).take(5) {
            assert!(n.chars().count() <= key_at + MIN_KEY, "{n}");
            // The call site is cut, not dropped.
            assert!(
                n.len() > key_at && w.starts_with(n.trim_end_matches('…')),
                "{n}"
            );
        }
        assert!(narrow[4].ends_with('…'), "{}", narrow[4]);
        let tiny = frame_lines(&w, key_at + MIN_KEY - 1, 30).unwrap();
        assert!(tiny.join(" ").contains("needs at least"), "{tiny:?}");
        let short = frame_lines(&w, 200, MIN_ROWS - 1).unwrap();
        assert!(short[0].contains("the terminal is 200x5"), "{short:?}");
        assert_eq!(
            textwrap("the terminal is 30x4; it needs", 12),
            ["the terminal", "is 30x4; it", "needs"]
        );
        assert!(frame_lines(&w, 200, MIN_ROWS).unwrap().len() <= MIN_ROWS);
    }

    #[test]
    fn a_bad_read_keeps_the_last_good_frame() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.txt");
        std::fs::copy(format!("{DATA}linux-6.12.txt"), &file).unwrap();
        let args = watch_args(file.to_str().unwrap());
        let mut w = watcher("linux-6.12.txt");
        w.cur = input::load(&args.input.path()).unwrap();
        w.args = args;
        let good = frame_lines(&w, 200, 30).unwrap();
        // Rewritten while read: a partial last line.
        std::fs::write(
            &file,
            "allocinfo - version: 1.0\n#\n  4096 1 mm/a.c:1 func:f\n  12",
        )
        .unwrap();
        w.advance();
        let bad = frame_lines(&w, 200, 30).unwrap();
        let error = bad.last().unwrap();
        assert!(
            error.starts_with("error: frame 2: ") && error.contains("p.txt"),
            "{error}"
        );
        assert_eq!(
            bad[4..bad.len() - 1],
            good[4..bad.len() - 1],
            "the last good rows stay"
        );
        std::fs::copy(format!("{DATA}linux-6.12-later.txt"), &file).unwrap();
        w.advance();
        assert!(w.error.is_none());
        let next = frame_lines(&w, 200, 30).unwrap();
        assert!(next[0].contains("frame 3"), "{}", next[0]);
        assert!(!next.last().unwrap().starts_with("error:"));
    }

    /// Two reads of the waste figures 2 seconds apart (now_ns): the
    /// ALLOCS/S column shows the allocations counted between them.
    #[test]
    fn frames_show_allocations_per_second_between_reads() {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("allocinfo-x.txt");
        let figures = dir.path().join("allocwaste-x.txt");
        let waste = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/waste/");
        std::fs::copy(format!("{DATA}linux-6.12.txt"), &profile).unwrap();
        std::fs::copy(format!("{waste}allocwaste.txt"), &figures).unwrap();
        let args = watch_args(profile.to_str().unwrap());
        let cur = input::load_with_waste(&args.input.path(), waste_path(&args).as_deref()).unwrap();
        let mut w = watcher_of(args, cur);
        let first = frame_lines(&w, 200, 30).unwrap();
        assert!(
            first[3].starts_with("+BYTES  +CALLS  ALLOCS/S"),
            "{}",
            first[3]
        );
        let slub = first
            .iter()
            .find(|l| l.contains("alloc_slab_page"))
            .unwrap();
        assert!(slub.contains(" -  "), "no rate from one read: {slub}");
        std::fs::copy(format!("{DATA}linux-6.12-later.txt"), &profile).unwrap();
        std::fs::copy(format!("{waste}allocwaste-later.txt"), &figures).unwrap();
        w.advance();
        let next = frame_lines(&w, 200, 30).unwrap();
        let slub = next.iter().find(|l| l.contains("alloc_slab_page")).unwrap();
        assert!(slub.contains("  256.0  "), "{slub}");
        let kernfs = next
            .iter()
            .find(|l| l.contains("__kernfs_new_node"))
            .unwrap();
        assert!(kernfs.contains("  50.0  "), "{kernfs}");
        // The figures gone: the column goes, watch goes on.
        std::fs::remove_file(&figures).unwrap();
        w.advance();
        assert!(w.error.is_none());
        let last = frame_lines(&w, 200, 30).unwrap();
        assert!(
            last[3].starts_with("+BYTES  +CALLS    BYTES"),
            "{}",
            last[3]
        );
    }
}
