//! The full-screen `watch`: the terminal in raw mode on the alternate
//! screen, restored on every way out (q, a signal, the terminal gone, an
//! error, a panic) and around Ctrl-Z; frames fitted to the terminal's size.

use super::keys::{self, Input, Key, TICK};
use super::{Watcher, stop_flag};
use allocinfo_output::TableOptions;
use allocinfo_report::rates::RateFigures;
use anyhow::{Context, Result};
use crossterm::style::{Attribute, Print, SetAttribute};
use crossterm::terminal::{self, ClearType};
use crossterm::{cursor, execute, queue};
use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The smallest terminal drawn in: the call-site column keeps at least
/// this many characters, and there are rows for the title, the source,
/// the change line, the column header, one row and the footer.
pub(super) const MIN_KEY: usize = 12;
pub(super) const MIN_ROWS: usize = 6;

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
pub(super) fn frame_lines(w: &Watcher, cols: usize, rows: usize) -> Result<Vec<String>> {
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
    let splits = w.splits()?;
    let splits = splits.as_ref();
    let wide = allocinfo_output::table::render_split(&report, &w.meta(), &opts, rates, splits);
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
    let mut lines = allocinfo_output::table::render_split(&report, &w.meta(), &opts, rates, splits);
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
pub(super) fn textwrap(text: &str, width: usize) -> Vec<String> {
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

/// The full screen, until a key, a signal or the terminal going away
/// ends it, or `-c N` frames were drawn.
pub(super) fn run(w: &mut Watcher) -> Result<()> {
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
                writeln!(out, "{line}").context(crate::messages::STDOUT)?;
            }
            out.flush().context(crate::messages::STDOUT)?;
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
