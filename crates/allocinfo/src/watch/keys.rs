//! The keys of the full-screen `watch`, read from its terminal with
//! poll(2), so that a terminal that goes away (tmux's session killed, an
//! ssh connection dropped: a hangup, end of file or an error) ends watch,
//! and a signal is seen within [`TICK`].
//!
//! crossterm's event reader is not used: on end of file it loops on
//! `read() = 0` inside `event::poll` and never returns (crossterm 0.29,
//! src/event/source/unix/mio.rs).

use std::fs::File;
use std::io::{self, IsTerminal};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// The longest wait for a key, so that the stop flag and a resize are seen.
pub const TICK: Duration = Duration::from_millis(50);

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// q, Esc or Ctrl-C.
    Quit,
    /// s: the next sort key.
    Sort,
    /// r: the order reversed.
    Reverse,
    /// Ctrl-Z: stop, as a shell's job (the terminal is in raw mode, so
    /// the kernel does not turn it into SIGTSTP).
    Suspend,
}

/// What waiting for keys found.
#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    Keys(Vec<Key>),
    /// The terminal hung up, reached end of file or failed.
    Gone,
}

/// The terminal read for keys: standard input when it is one, else /dev/tty.
pub struct Terminal {
    fd: RawFd,
    _tty: Option<File>,
}

impl Terminal {
    pub fn open() -> io::Result<Terminal> {
        if io::stdin().is_terminal() {
            return Ok(Terminal {
                fd: io::stdin().as_raw_fd(),
                _tty: None,
            });
        }
        let tty = File::open("/dev/tty")?;
        Ok(Terminal {
            fd: tty.as_raw_fd(),
            _tty: Some(tty),
        })
    }

    /// Waits at most `timeout` for keys: none when nothing was typed.
    pub fn wait(&mut self, timeout: Duration) -> Input {
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd, for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n < 0 {
            return match io::Error::last_os_error().kind() {
                io::ErrorKind::Interrupted => Input::Keys(Vec::new()),
                _ => Input::Gone,
            };
        }
        if n == 0 {
            return Input::Keys(Vec::new());
        }
        if pfd.revents & libc::POLLIN == 0 {
            // POLLHUP, POLLERR or POLLNVAL without data.
            return Input::Gone;
        }
        let mut buf = [0u8; 64];
        // SAFETY: `buf` is writable for its length.
        let read = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
        match read {
            0 => Input::Gone,
            n if n > 0 => Input::Keys(parse(&buf[..n as usize])),
            _ => match io::Error::last_os_error().kind() {
                io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => Input::Keys(Vec::new()),
                _ => Input::Gone,
            },
        }
    }
}

/// The keys in bytes read from a raw-mode terminal. An escape sequence
/// (an arrow key: ESC [ A) is skipped; an ESC alone is the Esc key.
pub fn parse(bytes: &[u8]) -> Vec<Key> {
    let mut keys = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'q' | b'Q' | 0x03 => keys.push(Key::Quit),
            b's' | b'S' => keys.push(Key::Sort),
            b'r' | b'R' => keys.push(Key::Reverse),
            0x1a => keys.push(Key::Suspend),
            0x1b if i + 1 == bytes.len() => keys.push(Key::Quit),
            0x1b => {
                // CSI (ESC [) and SS3 (ESC O): up to the final byte.
                i += 1;
                if matches!(bytes[i], b'[' | b'O') {
                    i += 1;
                    while i < bytes.len() && !(0x40..=0x7e).contains(&bytes[i]) {
                        i += 1;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_escape_sequences() {
        use Key::*;
        assert_eq!(parse(b"q"), [Quit]);
        assert_eq!(parse(b"\x1b"), [Quit]);
        assert_eq!(parse(b"\x03"), [Quit]);
        assert_eq!(parse(b"\x1a"), [Suspend]);
        assert_eq!(parse(b"sRx"), [Sort, Reverse]);
        // Arrow keys, F1 (SS3) and Page Down are no keys of watch.
        assert_eq!(parse(b"\x1b[A\x1bOP\x1b[6~s"), [Sort]);
    }

    #[test]
    fn end_of_file_is_gone() {
        let (reader, writer) = io::pipe().unwrap();
        drop(writer);
        let mut t = Terminal {
            fd: reader.as_raw_fd(),
            _tty: None,
        };
        assert_eq!(t.wait(Duration::from_secs(5)), Input::Gone);
        drop(reader);
    }
}
