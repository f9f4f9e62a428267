//! `allocinfo watch`: re-read the profile every interval and show the table
//! with deltas since the previous frame. Full-screen in a terminal (q, Esc or
//! Ctrl-C quits, s cycles the sort key), plain frames with `--plain`.

use crate::cli::WatchArgs;
use crate::input::{self, Loaded};
use crate::time::Utc;
use allocinfo_output::{Command, Format, Meta, TableOptions};
use allocinfo_report::{Query, Report, SortKey};
use anyhow::{Result, bail};
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::style::{Attribute, Print, SetAttribute};
use crossterm::terminal::{self, ClearType};
use crossterm::{cursor, execute, queue};
use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

struct Watcher {
    args: WatchArgs,
    format: Format,
    interval: Duration,
    sort: SortKey,
    frame: u64,
    prev: Option<Loaded>,
    cur: Loaded,
}

impl Watcher {
    fn report(&self, limit: Option<usize>) -> Result<Report> {
        let mut query: Query =
            self.args
                .view
                .query(&self.args.filter, self.format, self.sort, false)?;
        query.limit = limit;
        let prev = self.prev.as_ref().unwrap_or(&self.cur);
        Ok(query.diff(&prev.profile, &self.cur.profile))
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
        let keys = if keys { "  (s: sort, q: quit)" } else { "" };
        format!(
            "allocinfo watch: frame {} at {} UTC, every {}s, by {}, sorted by {}{keys}",
            self.frame,
            Utc::now().clock(),
            self.args.interval,
            self.args.view.group_by(),
            self.sort,
        )
    }

    fn advance(&mut self) -> Result<()> {
        let next = input::load(&self.args.input.path())?;
        self.prev = Some(std::mem::replace(&mut self.cur, next));
        self.frame += 1;
        Ok(())
    }

    fn done(&self) -> bool {
        self.args.count.is_some_and(|n| self.frame >= n)
    }
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
        bail!("--json, --csv and --prometheus need --plain (or output that is not a terminal)");
    }
    let sort = args.view.sort_key(SortKey::Bytes);
    let interval = Duration::from_secs_f64(args.interval);
    let cur = input::load(&args.input.path())?;
    let mut w = Watcher {
        args,
        format,
        interval,
        sort,
        frame: 1,
        prev: None,
        cur,
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
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    let mut out = io::stdout().lock();
    loop {
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
        allocinfo_output::write(&mut out, w.format, &report, &w.meta(), &table)?;
        out.flush()?;
        if w.done() {
            return Ok(());
        }
        let deadline = Instant::now() + w.interval;
        while let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
        {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        w.advance()?;
    }
}

/// Restores the terminal when dropped, also on errors and panics.
struct Screen;

impl Screen {
    fn enter() -> Result<Screen> {
        terminal::enable_raw_mode()?;
        let screen = Screen;
        execute!(io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)?;
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            Screen::restore();
            default_hook(info);
        }));
        Ok(screen)
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
}

impl Drop for Screen {
    fn drop(&mut self) {
        Screen::restore();
    }
}

fn draw(w: &Watcher) -> Result<()> {
    // A terminal that does not know its size (0x0) gets 80x24.
    let (cols, rows) = match terminal::size()? {
        (0, _) | (_, 0) => (80, 24),
        (c, r) => (usize::from(c.max(20)), usize::from(r.max(8))),
    };
    // Title, source, change, column header, and a footer line.
    let limit = match w.args.view.limit {
        Some(0) | None => rows.saturating_sub(5),
        Some(n) => n.min(rows.saturating_sub(5)),
    };
    let report = w.report(Some(limit))?;
    let opts = TableOptions {
        title: Some(w.title(true)),
        exact: w.args.view.exact,
        width: Some(cols),
        no_limit_hint: true,
        pretty: false,
    };
    let lines = allocinfo_output::table::render(&report, &w.meta(), &opts);
    let mut out = io::stdout().lock();
    queue!(out, cursor::MoveTo(0, 0), terminal::Clear(ClearType::All))?;
    for (i, line) in lines.iter().take(rows).enumerate() {
        queue!(out, cursor::MoveTo(0, i as u16))?;
        // The title and the column header stand out.
        if i == 0 || i == 3 {
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
    Ok(())
}

fn run_terminal(w: &mut Watcher) -> Result<()> {
    let _screen = Screen::enter()?;
    loop {
        draw(w)?;
        if w.done() {
            return Ok(());
        }
        let deadline = Instant::now() + w.interval;
        while let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
        {
            if !event::poll(left)? {
                break;
            }
            match event::read()? {
                Event::Key(key) if key.kind != KeyEventKind::Release => match key.code {
                    KeyCode::Char('q' | 'Q') | KeyCode::Esc => return Ok(()),
                    KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                        return Ok(());
                    }
                    KeyCode::Char('s' | 'S') => {
                        w.sort = w.sort.next();
                        draw(w)?;
                    }
                    _ => {}
                },
                Event::Resize(..) => draw(w)?,
                _ => {}
            }
        }
        w.advance()?;
    }
}
