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

use crate::cli::WatchArgs;
use crate::input::{self, Loaded};
use crate::time::Utc;
use crate::waste::RateFigures;
use allocinfo_output::{Command, Format, Meta, TableOptions};
use allocinfo_report::{Query, Report, SortKey};
use anyhow::{Context, Result};
use crossterm::style::{Attribute, Print, SetAttribute};
use crossterm::terminal::{self, ClearType};
use crossterm::{cursor, execute, queue};
use keys::{Input, Key, TICK};
use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
}

/// The smallest terminal drawn in: the call-site column keeps at least
/// this many characters, and there are rows for the title, the source,
/// the change line, the column header, one row and the footer.
const MIN_KEY: usize = 12;
const MIN_ROWS: usize = 6;

impl Watcher {
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
        Ok(Some(crate::waste::rates(old, new, &query)))
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
        match input::load_with_waste(&self.args.input.path(), self.waste_path().as_deref()) {
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
        self.args.count.is_some_and(|n| self.frame >= n)
    }
}

fn waste_path(args: &WatchArgs) -> Option<std::path::PathBuf> {
    args.waste
        .clone()
        .or_else(|| input::waste_companion(&args.input.path()))
}

pub fn run(args: WatchArgs) -> Result<()> {
    if args.input.path().as_os_str() == "-" {
        return Err(crate::usage(
            "watch re-reads its input every interval: give a file, not standard input",
        ));
    }
    if args.count == Some(0) {
        return Ok(());
    }
    let format = args.output.format();
    let plain = args.plain || !io::stdout().is_terminal();
    if !plain && format != Format::Table {
        return Err(crate::usage(
            "--json, --csv and --prometheus need --plain (or output that is not a terminal)",
        ));
    }
    let sort = args.view.sort_key(SortKey::Bytes);
    let args_reverse = args.view.reverse;
    let interval = Duration::from_secs_f64(args.interval);
    let cur = input::load_with_waste(&args.input.path(), waste_path(&args).as_deref())?;
    if plain {
        // Said once, before the frames (full screen would wipe it).
        crate::warn_unmatched(&args.filter.filter(), &cur.profile.tags, &cur.path);
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
    };
    if plain {
        run_plain(&mut w)
    } else {
        run_terminal(&mut w)
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
        allocinfo_output::write_with_rates(
            &mut out,
            w.format,
            &report,
            &w.meta(),
            &table,
            rates.as_ref().map(|r| &r.rates),
        )
        .context(crate::STDOUT)?;
        out.flush().context(crate::STDOUT)?;
        if w.done() {
            return Ok(());
        }
        if wait_plain(w.interval, &stop) {
            return Ok(());
        }
        w.advance();
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

/// Restores the terminal when dropped, also on errors and panics.
struct Screen;

impl Screen {
    fn enter() -> Result<Screen> {
        Screen::resume()?;
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            Screen::restore();
            default_hook(info);
        }));
        Ok(Screen)
    }

    /// Raw mode and the alternate screen, at start and after Ctrl-Z.
    fn resume() -> Result<()> {
        terminal::enable_raw_mode()?;
        execute!(io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)?;
        Ok(())
    }

    fn restore() {
        let _ = execute!(
            io::stdout(),
            SetAttribute(Attribute::Reset),
            cursor::Show,
            terminal::LeaveAlternateScreen
        );
        let _ = terminal::disable_raw_mode();
    }

    /// Ctrl-Z: the terminal restored, stopped as a shell's job (SIGTSTP);
    /// full screen again when continued (`fg`).
    fn suspend(&self) -> Result<()> {
        Screen::restore();
        // SAFETY: raise(3) has no memory effects; SIGTSTP's default action
        // stops this process until SIGCONT.
        unsafe { libc::raise(libc::SIGTSTP) };
        Screen::resume()
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        Screen::restore();
    }
}

/// The lines of a full-screen frame for a `cols` x `rows` terminal.
fn frame_lines(w: &Watcher, cols: usize, rows: usize) -> Result<Vec<String>> {
    // Title, source, change, column header, and a footer line.
    let limit = match w.args.view.limit {
        Some(0) | None => rows.saturating_sub(5),
        Some(n) => n.min(rows.saturating_sub(5)),
    };
    let report = w.report(Some(limit.max(1)))?;
    let mut opts = TableOptions {
        title: Some(w.title(true)),
        exact: w.args.view.exact,
        width: None,
        no_limit_hint: true,
        pretty: false,
    };
    let figures = w.rates()?;
    let rates = figures.as_ref().map(|f| &f.rates);
    let wide = allocinfo_output::table::render_with_rates(&report, &w.meta(), &opts, rates);
    // The last column (call site, module, ...) starts after the last
    // two-space gap of the column header (line 4).
    let key_at = wide
        .get(3)
        .and_then(|h| h.rfind("  ").map(|i| i + 2))
        .unwrap_or(0);
    let (need_cols, need_rows) = (key_at + MIN_KEY, MIN_ROWS + usize::from(w.error.is_some()));
    if cols < need_cols || rows < need_rows {
        let msg = format!(
            "allocinfo watch: the terminal is {cols}x{rows}; it needs at least \
             {need_cols}x{need_rows} (or use --plain). q quits."
        );
        return Ok(textwrap(&msg, cols.max(1)));
    }
    opts.width = Some(cols);
    let mut lines = allocinfo_output::table::render_with_rates(&report, &w.meta(), &opts, rates);
    let note = figures.as_ref().and_then(RateFigures::note);
    let last = match (&w.error, note) {
        (Some(error), _) => Some(format!("error: {error}")),
        (None, Some(note)) => Some(note.trim_start_matches("allocinfo: ").to_owned()),
        (None, None) => None,
    };
    if let Some(mut line) = last {
        // The last good frame stays; the error line (or the note) takes the last row.
        lines.truncate(rows - 1);
        if let Some((i, _)) = line.char_indices().nth(cols) {
            line.truncate(i);
        }
        lines.push(line);
    }
    lines.truncate(rows);
    Ok(lines)
}

/// `text` in lines of at most `width` characters, broken between words
/// (a word longer than a line is cut).
fn textwrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
        .into_iter()
        .map(|l| l.chars().take(width).collect())
        .collect()
}

fn draw(w: &Watcher) -> Result<Vec<String>> {
    // A terminal that does not know its size (0x0) gets 80x24.
    let (cols, rows) = match terminal::size()? {
        (0, _) | (_, 0) => (80, 24),
        (c, r) => (usize::from(c), usize::from(r)),
    };
    let lines = frame_lines(w, cols, rows)?;
    let error_row = w.error.is_some().then(|| lines.len().saturating_sub(1));
    let mut out = io::stdout().lock();
    queue!(out, cursor::MoveTo(0, 0), terminal::Clear(ClearType::All))?;
    for (i, line) in lines.iter().enumerate() {
        queue!(out, cursor::MoveTo(0, i as u16))?;
        // The title, the column header and an error line stand out.
        if i == 0 || i == 3 || Some(i) == error_row {
            queue!(
                out,
                SetAttribute(Attribute::Reverse),
                Print(line),
                SetAttribute(Attribute::Reset)
            )?;
        } else {
            queue!(out, Print(line))?;
        }
    }
    out.flush()?;
    Ok(lines)
}

fn run_terminal(w: &mut Watcher) -> Result<()> {
    let stop = stop_flag()?;
    let resized = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGWINCH, Arc::clone(&resized))?;
    let mut tty = keys::Terminal::open().context("opening the terminal for keys")?;
    let screen = Screen::enter()?;
    loop {
        let lines = draw(w)?;
        if w.done() {
            // As top -n: the last frame stays on the screen.
            drop(screen);
            let mut out = io::stdout().lock();
            for line in &lines {
                writeln!(out, "{line}").context(crate::STDOUT)?;
            }
            out.flush().context(crate::STDOUT)?;
            return Ok(());
        }
        let deadline = Instant::now() + w.interval;
        while let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
        {
            // A signal ends watch as q does (the Screen's drop restores
            // the terminal); waits are short to notice it.
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if resized.swap(false, Ordering::Relaxed) {
                draw(w)?;
            }
            let keys = match tty.wait(left.min(TICK)) {
                Input::Gone => return Ok(()),
                Input::Keys(keys) => keys,
            };
            for key in keys {
                match key {
                    Key::Quit => return Ok(()),
                    Key::Sort => w.sort = w.sort.next(),
                    Key::Reverse => w.reverse = !w.reverse,
                    Key::Suspend => screen.suspend()?,
                }
                draw(w)?;
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        w.advance();
    }
}

#[cfg(test)]
mod tests {
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
