//! The commands of `allocinfo-fuzz` (the guest's fuzzer of alloctag's user
//! interfaces, `src/main.rs`) and what it compares: valid commands of each
//! control file made from its grammar, mutated word by word, and the state
//! a control file's read shows, without the counters that move by
//! themselves.
//!
//! The grammars are those of Documentation/alloctag.rst, capture.rst and
//! waste.rst, as contrib/syzkaller/alloctag.txt describes them:
//!
//! - `fail`: `add SELECTOR... [probability=P] [interval=N] [times=N]
//!   [space=N] [verbose=N] [pid=N]`, `remove ID`, `clear`;
//! - `capture`: `add SELECTOR...`, `remove ID`, `clear`, `limit N`;
//! - `waste`: `on`, `off`, with at most one trailing newline;
//! - `vm.mem_profiling`: `0` or `1` (proc_dointvec_minmax()).
//!
//! Everything here is a pure function of a seeded generator, so that a seed
//! gives the same commands again, and is tested on the host.

use rand::{Rng, RngExt, seq::IndexedRandom};

/// The longest command a control file takes (src/debugfs.rs).
pub const MAX_COMMAND: usize = 1024;

/// The longest selector (Documentation/alloctag.rst).
pub const MAX_SELECTOR: usize = 256;

/// The control files the fuzzer writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctl {
    Fail,
    Capture,
    Waste,
    Sysctl,
}

impl Ctl {
    pub fn name(self) -> &'static str {
        match self {
            Ctl::Fail => "fail",
            Ctl::Capture => "capture",
            Ctl::Waste => "waste",
            Ctl::Sysctl => "vm.mem_profiling",
        }
    }
}

/// Selectors of the test modules' call sites only: fault injection armed
/// there fails nothing but the modules the fuzzer loads, never the guest's
/// shell or the fuzzer's own reads. A mutation drops, repeats or breaks
/// words, so it cannot widen a selection past these.
const FAIL_SELECTORS: &[&str] = &[
    "module:alloctag_test",
    "module:alloctag_errpath",
    "module:alloctag_rust_sample",
    "module:alloctag_rust_plain",
    "module:alloctag_holder",
    "module:alloctag_*",
    "module:alloctag_[er]*",
    "func:alloctag_test_init",
    "func:hold_object",
    "tests/modules/alloctag_test.c",
    "alloctag_test.c",
    "alloctag_errpath.c",
    "*/alloctag_errpath.c",
    "lib/alloctag/tests/modules/*.rs",
    "alloctag_rust_sample.rs",
];

/// Capture may select anything: the pool bounds what it keeps.
const CAPTURE_SELECTORS: &[&str] = &[
    "kernel/fork.c",
    "fork.c",
    "fs/dcache.c",
    "fs/inode.c",
    "mm/percpu.c",
    "mm/slub.c",
    "mm/vmalloc.c",
    "mm/page_alloc.c",
    "*",
    "mm/*",
    "*.c",
    "*.rs",
    "kernel/f?rk.c",
    "[a-m]*/*.c",
    "[!k]*",
    "[]a-z]*",
    "fs/*/*.c",
    "func:dup_mm",
    "func:copy_process",
    "func:__d_alloc",
    "func:alloc_inode",
    "func:*",
    "func:dup_*",
    "func:*alloc*",
    "func:*::*",
    "func:?_*",
    "func:[^_]*",
    "func:hold_object",
    "module:alloctag_test",
    "module:*",
    "module:alloctag*",
    "module:[a-z]*",
    "module:",
    "func:",
    "[",
    "[a-",
    "*[",
];

/// Files for FILE:LINE selectors, from the same pools.
const LINE_FILES: &[&str] = &[
    "kernel/fork.c",
    "mm/slub.c",
    "alloctag_test.c",
    "fs/dcache.c",
    "*",
];

/// Values a number may be replaced with: out of range, signed, in other
/// bases, overflowing 32 and 64 bits, empty.
const BAD_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-0",
    "+1",
    "33",
    "101",
    "1048577",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999",
    "0x10",
    "010",
    "1e3",
    "1.5",
    "",
    " ",
    "--1",
    "1-",
];

/// Blanks between words: ASCII white space, and what is not.
const SEPARATORS: &[&[u8]] = &[
    b" ", b" ", b" ", b"\t", b"  ", b"\n", b"\r", b"\x0b", b"\x0c", b"\xa0", b"\0",
];

/// Makes a valid selector for `ctl` (fail or capture).
fn selector(rng: &mut impl Rng, ctl: Ctl) -> String {
    if ctl == Ctl::Fail {
        return pick(rng, FAIL_SELECTORS).to_owned();
    }
    if rng.random_bool(0.2) {
        let line: u32 = rng.random_range(1..5000);
        return format!("{}:{line}", pick(rng, LINE_FILES));
    }
    pick(rng, CAPTURE_SELECTORS).to_owned()
}

fn pick<'a>(rng: &mut impl Rng, from: &[&'a str]) -> &'a str {
    from.choose(rng).copied().unwrap_or("")
}

/// A knob of a fault-injection rule, valid.
fn knob(rng: &mut impl Rng) -> String {
    match rng.random_range(0..6) {
        0 => format!("probability={}", rng.random_range(0..=100)),
        1 => format!("interval={}", rng.random_range(1..=1000)),
        2 => {
            let t: i32 = rng.random_range(-1..=16);
            format!("times={t}")
        }
        3 => format!("space={}", rng.random_range(0..=65536)),
        4 => format!("verbose={}", rng.random_range(0..=2)),
        _ => format!(
            "pid={}",
            [0, 1, std::process::id()].choose(rng).copied().unwrap_or(0)
        ),
    }
}

/// The words of a valid command of `ctl`.
pub fn valid_words(rng: &mut impl Rng, ctl: Ctl) -> Vec<String> {
    let mut w = Vec::new();
    match ctl {
        Ctl::Fail | Ctl::Capture => match rng.random_range(0..10) {
            0..=5 => {
                w.push("add".to_owned());
                for _ in 0..rng.random_range(1..=4) {
                    w.push(selector(rng, ctl));
                }
                if ctl == Ctl::Fail {
                    for _ in 0..rng.random_range(0..=6) {
                        w.push(knob(rng));
                    }
                }
            }
            6 | 7 => {
                w.push("remove".to_owned());
                w.push(rng.random_range(1..=32u32).to_string());
            }
            8 if ctl == Ctl::Capture => {
                w.push("limit".to_owned());
                w.push(rng.random_range(1..=65536u32).to_string());
            }
            _ => w.push("clear".to_owned()),
        },
        Ctl::Waste => w.push(if rng.random_bool(0.5) { "on" } else { "off" }.to_owned()),
        Ctl::Sysctl => w.push(if rng.random_bool(0.5) { "0" } else { "1" }.to_owned()),
    }
    w
}

/// A long word: printable, or bytes of every value.
fn long_word(rng: &mut impl Rng) -> Vec<u8> {
    let n = *[
        MAX_SELECTOR,
        MAX_SELECTOR + 1,
        300,
        MAX_COMMAND - 4,
        MAX_COMMAND + 1,
        4096,
    ]
    .choose(rng)
    .unwrap_or(&MAX_SELECTOR);
    if rng.random_bool(0.5) {
        (0..n).map(|_| rng.random_range(b'!'..=b'~')).collect()
    } else {
        let mut v = b"module:".to_vec();
        v.resize(n, b'a');
        v
    }
}

/// How a command was made, for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Made {
    Valid,
    Mutated,
    Random,
}

/// Mutates `words` in place: one to three of dropping, repeating and
/// swapping words, replacing a number with a bad one, a word with a long
/// one, and putting a NUL, a byte of any value or a glob character in a
/// word.
///
/// For fail, a number is replaced only after a `=` and no `module:` is put
/// in: `module:` alone selects built-in code, every call site of vmlinux.
fn mutate(rng: &mut impl Rng, ctl: Ctl, words: &mut Vec<Vec<u8>>) {
    for _ in 0..rng.random_range(1..=3) {
        let n = words.len();
        let i = if n == 0 { 0 } else { rng.random_range(0..n) };
        match rng.random_range(0..9) {
            0 if n > 0 => {
                words.remove(i);
            }
            1 if n > 0 => {
                let w = words[i].clone();
                words.insert(i, w);
            }
            2 if n > 1 => {
                let j = rng.random_range(0..n);
                words.swap(i, j);
            }
            3 if n > 0 => {
                // The number of KEY=N, FILE:N or a bare number.
                let w = &mut words[i];
                let cut = w
                    .iter()
                    .rposition(|&c| c == b'=' || (c == b':' && ctl != Ctl::Fail))
                    .map_or(0, |p| p + 1);
                if ctl == Ctl::Fail && cut == 0 && !w.iter().all(u8::is_ascii_digit) {
                    continue;
                }
                w.truncate(cut);
                w.extend_from_slice(pick(rng, BAD_NUMBERS).as_bytes());
            }
            4 if n > 0 => words[i] = long_word(rng),
            5 if n > 0 => {
                let w = &mut words[i];
                let at = rng.random_range(0..=w.len());
                w.insert(at, 0);
            }
            6 if n > 0 => {
                let w = &mut words[i];
                let at = rng.random_range(0..=w.len());
                w.insert(at, rng.random());
            }
            7 if n > 0 => {
                let w = &mut words[i];
                let at = rng.random_range(0..=w.len());
                let c = *b"*?[]!^-:=".choose(rng).unwrap_or(&b'*');
                w.insert(at, c);
            }
            _ => {
                let w = [
                    "add", "remove", "clear", "limit", "on", "off", "times=1", "pid=0", "=",
                    "module:",
                ];
                let w = if ctl == Ctl::Fail {
                    &w[..w.len() - 1]
                } else {
                    &w[..]
                };
                words.insert(i.min(n), pick(rng, w).as_bytes().to_vec());
            }
        }
    }
}

/// Joins words with blanks, some not white space, and maybe a newline.
fn join(rng: &mut impl Rng, words: &[Vec<u8>], odd_separators: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if odd_separators && rng.random_bool(0.1) {
        out.extend_from_slice(SEPARATORS.choose(rng).copied().unwrap_or(b" "));
    }
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            if odd_separators && rng.random_bool(0.2) {
                out.extend_from_slice(SEPARATORS.choose(rng).copied().unwrap_or(b" "));
            } else {
                out.push(b' ');
            }
        }
        out.extend_from_slice(w);
    }
    match rng.random_range(0..10) {
        0..=4 => out.push(b'\n'),
        5 if odd_separators => out.extend_from_slice(b"\n\n"),
        6 if odd_separators => out.push(0),
        _ => {}
    }
    out
}

/// One command for `ctl`: valid (a third), a valid one mutated (most of
/// the rest), random bytes; and sometimes cut short, as a partial write
/// that stops inside a word.
pub fn command(rng: &mut impl Rng, ctl: Ctl) -> (Vec<u8>, Made) {
    let roll = rng.random_range(0..100);
    let (mut out, made) = if roll < 35 {
        let words: Vec<Vec<u8>> = valid_words(rng, ctl)
            .into_iter()
            .map(String::into_bytes)
            .collect();
        (join(rng, &words, false), Made::Valid)
    } else if roll < 90 {
        let mut words: Vec<Vec<u8>> = valid_words(rng, ctl)
            .into_iter()
            .map(String::into_bytes)
            .collect();
        mutate(rng, ctl, &mut words);
        (join(rng, &words, true), Made::Mutated)
    } else {
        let n = rng.random_range(0..=MAX_COMMAND + 8);
        let bytes: Vec<u8> = if rng.random_bool(0.5) {
            (0..n).map(|_| rng.random()).collect()
        } else {
            (0..n).map(|_| rng.random_range(b' '..=b'~')).collect()
        };
        (bytes, Made::Random)
    };
    if made != Made::Random && !out.is_empty() && rng.random_bool(0.1) {
        out.truncate(rng.random_range(0..out.len()));
    }
    if ctl == Ctl::Fail {
        guard_fail_rule(rng, &mut out);
    }
    (out, made)
}

/// Words of `text` as the kernel splits them (src/fault/control.rs):
/// separated by ASCII white space.
pub fn words(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
}

/// Whether a word of a fault-injection `add` names only the test modules'
/// call sites, or is a knob.
fn fail_word_is_ours(w: &[u8]) -> bool {
    w.contains(&b'=')
        || w.windows(8).any(|x| x == b"alloctag")
        || w.windows(11).any(|x| x == b"hold_object")
}

/// Bounds every `add` of a fault-injection rule, whatever the mutations
/// and a partial write left of it: when a selector word is not one of the
/// test modules' (a cut word like `module:` or `*` selects vmlinux's call
/// sites), `module:alloctag_test` is added, and a tag must match every
/// selector; and it ends with `times=N verbose=0` (the last word of a knob
/// wins): a rule then fails at most N allocations and prints no stack,
/// which the console check (scripts/run-qemu.sh) would count as a kernel
/// report. A command the kernel would not read as `add` is left as it is.
pub fn guard_fail_rule(rng: &mut impl Rng, cmd: &mut Vec<u8>) {
    if words(cmd).next() != Some(b"add".as_slice()) {
        return;
    }
    while cmd.last() == Some(&b'\n') || cmd.last() == Some(&0) {
        cmd.pop();
    }
    if !words(cmd).skip(1).all(fail_word_is_ours) {
        cmd.extend_from_slice(b" module:alloctag_test");
    }
    let t: u32 = rng.random_range(1..=16);
    cmd.extend_from_slice(format!(" times={t} verbose=0\n").as_bytes());
}

/// The state a read of control file `ctl` shows, less what moves by itself:
/// for fail, each rule's id, knobs but times and space (which count
/// down as the rule fails and lets allocations through) and selection, without its injected count and armed sites (which modules
/// loading and unloading change); for capture, the pool's limit and each
/// selection's id and selectors; waste and the sysctl whole.
pub fn state(ctl: Ctl, text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let kept: Vec<&str> = match ctl {
            Ctl::Fail if line.starts_with("rule ") => line
                .split(' ')
                .filter(|w| {
                    !["times=", "space=", "injected=", "sites=", "unarmed="]
                        .iter()
                        .any(|k| w.starts_with(k))
                })
                .collect(),
            Ctl::Capture if line.starts_with("capture ") => line
                .split(' ')
                .filter(|w| *w == "capture" || w.starts_with("limit="))
                .collect(),
            Ctl::Capture if line.starts_with("selection ") => line
                .split(' ')
                .filter(|w| !w.starts_with("sites=") && !w.starts_with("unmarked="))
                .collect(),
            Ctl::Fail | Ctl::Capture => continue,
            Ctl::Waste | Ctl::Sysctl => vec![line],
        };
        out.push_str(&kept.join(" "));
        out.push('\n');
    }
    out
}

/// `bytes` for the log: escaped, and cut after `max` bytes.
pub fn shown(bytes: &[u8], max: usize) -> String {
    let cut = &bytes[..bytes.len().min(max)];
    let mut s: String = cut.escape_ascii().to_string();
    if bytes.len() > max {
        s.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{SeedableRng, rngs::ChaCha8Rng};

    #[test]
    fn a_seed_gives_the_same_commands() {
        let run = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..200)
                .map(|i| command(&mut rng, [Ctl::Fail, Ctl::Capture, Ctl::Waste][i % 3]).0)
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn valid_commands_follow_the_grammar() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..500 {
            let w = valid_words(&mut rng, Ctl::Capture);
            match w[0].as_str() {
                "add" => assert!((2..=5).contains(&w.len()), "{w:?}"),
                "remove" | "limit" => {
                    assert_eq!(w.len(), 2);
                    assert!(w[1].parse::<u32>().is_ok_and(|n| n >= 1));
                }
                "clear" => assert_eq!(w.len(), 1),
                other => panic!("capture command {other}"),
            }
            let w = valid_words(&mut rng, Ctl::Waste);
            assert!(w == ["on"] || w == ["off"]);
        }
    }

    #[test]
    fn every_fail_add_is_bounded_and_quiet() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut adds = 0;
        for _ in 0..2000 {
            let (cmd, _) = command(&mut rng, Ctl::Fail);
            if words(&cmd).next() != Some(b"add".as_slice()) {
                continue;
            }
            adds += 1;
            let last: Vec<&[u8]> = words(&cmd).collect();
            let n = last.len();
            assert_eq!(last[n - 1], b"verbose=0", "{}", shown(&cmd, 200));
            assert!(last[n - 2].starts_with(b"times="), "{}", shown(&cmd, 200));
            // Every selector names a test module's sites, or the rule is
            // bounded to one test module.
            assert!(
                last[1..].iter().all(|w| fail_word_is_ours(w))
                    || last.contains(&b"module:alloctag_test".as_slice()),
                "fail selectors of {}",
                shown(&cmd, 300)
            );
        }
        assert!(adds > 100);
    }

    #[test]
    fn mutations_make_bad_and_long_commands() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let cmds: Vec<Vec<u8>> = (0..3000)
            .map(|_| command(&mut rng, Ctl::Capture).0)
            .collect();
        assert!(cmds.iter().any(|c| c.len() > MAX_COMMAND));
        assert!(cmds.iter().any(|c| c.contains(&0)));
        assert!(cmds.iter().any(|c| c.windows(8).any(|w| w == b"18446744")));
        assert!(cmds.iter().any(|c| c.is_empty()));
    }

    #[test]
    fn state_leaves_out_what_moves_by_itself() {
        let a = "rule 1 probability=100 interval=1 times=5 space=0 verbose=0 pid=0 injected=2 sites=1 unarmed=0 select=module:m\n\
                 site rule=1 injected=2 lib/m.c:42 [m] func:f\n";
        let b = "rule 1 probability=100 interval=1 times=3 space=0 verbose=0 pid=0 injected=4 sites=0 unarmed=0 select=module:m\n";
        let b2 = "rule 1 probability=100 interval=1 times=3 space=4096 verbose=0 pid=0 injected=4 sites=0 unarmed=0 select=module:m\n";
        assert_eq!(state(Ctl::Fail, b), state(Ctl::Fail, b2));
        assert_eq!(state(Ctl::Fail, a), state(Ctl::Fail, b));
        let c = "rule 2 probability=100 interval=1 times=3 space=0 verbose=0 pid=0 injected=4 sites=0 unarmed=0 select=module:m\n";
        assert_ne!(state(Ctl::Fail, a), state(Ctl::Fail, c));
        let d = "capture limit=4096 size=4096 used=3 dropped=0 busy=0\nselection 1 sites=1 unmarked=0 select=module:m\nsite selection=1 live=3 x\n";
        let e = "capture limit=4096 size=0 used=9 dropped=1 busy=1\nselection 1 sites=0 unmarked=0 select=module:m\n";
        assert_eq!(state(Ctl::Capture, d), state(Ctl::Capture, e));
        let f = "capture limit=4097 size=0 used=9 dropped=1 busy=1\nselection 1 sites=0 unmarked=0 select=module:m\n";
        assert_ne!(state(Ctl::Capture, e), state(Ctl::Capture, f));
        assert_ne!(state(Ctl::Waste, "on\n"), state(Ctl::Waste, "off\n"));
    }
}
