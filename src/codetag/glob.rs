// SPDX-License-Identifier: GPL-2.0

//! Shell-style patterns in selectors, with the rule the `allocinfo` tool applies to names: `*`
//! is any run of bytes (`/` included), `?` one byte, `[abc]`, `[a-z]` one byte of a set and
//! `[!a]` (or `[^a]`) one byte not in it; a `]` right after the `[` is a member.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! A pattern is compiled once, when its selection is parsed ([`Glob::new`]), into the masks of
//! a bit-parallel automaton (shift-and, with `*` as a self-loop): matching then reads each byte
//! of the name once and does a few word operations per byte, whatever the pattern, allocates
//! nothing and never recurses. (A backtracking matcher costs the pattern's length times the
//! name's on patterns such as `*[!a]*[!b]*...Q`, which made a deselection, which matches every
//! remaining selection again, hold the registry's lock for a quarter of a second.)

use kernel::{alloc::flags::GFP_KERNEL, prelude::*};

/// Returns whether `pattern` is a glob: it has a `*`, `?` or `[`.
pub(crate) fn is_glob(pattern: &[u8]) -> bool {
    pattern.iter().any(|c| matches!(c, b'*' | b'?' | b'['))
}

/// Returns the index of the `]` that ends the set whose `[` is at `start`.
fn set_end(pattern: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    if matches!(pattern.get(i), Some(b'!' | b'^')) {
        i += 1;
    }
    // A `]` first in the set is a member, not its end.
    if pattern.get(i) == Some(&b']') {
        i += 1;
    }
    pattern[i.min(pattern.len())..]
        .iter()
        .position(|&c| c == b']')
        .map(|n| i + n)
}

/// Returns whether every `[` of `pattern` has its `]`.
pub(crate) fn is_valid(pattern: &[u8]) -> bool {
    let mut i = 0;
    while i < pattern.len() {
        if pattern[i] == b'[' {
            match set_end(pattern, i) {
                Some(end) => i = end,
                None => return false,
            }
        }
        i += 1;
    }
    true
}

/// Returns whether `c` is in the set `set`, the bytes between a `[` and its `]`.
fn in_set(set: &[u8], c: u8) -> bool {
    let (negated, members) = match set.first() {
        Some(b'!' | b'^') => (true, &set[1..]),
        _ => (false, set),
    };
    let mut found = false;
    let mut i = 0;
    while i < members.len() {
        if i + 2 < members.len() && members[i + 1] == b'-' {
            found |= (members[i]..=members[i + 2]).contains(&c);
            i += 3;
        } else {
            found |= members[i] == c;
            i += 1;
        }
    }
    found != negated
}

/// Returns whether `pattern` (which [`is_valid`]) matches the whole of `text`, by backtracking:
/// the reference [`Glob`] is tested against.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn matches(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // Where to resume after the last `*`: the pattern after it, and the text it covers up to.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        let step = match pattern.get(p) {
            Some(b'*') => {
                star = Some((p + 1, t));
                p += 1;
                continue;
            }
            Some(b'?') => Some(p + 1),
            Some(b'[') => set_end(pattern, p)
                .filter(|&end| in_set(&pattern[p + 1..end], text[t]))
                .map(|end| end + 1),
            Some(&c) if c == text[t] => Some(p + 1),
            _ => None,
        };
        match (step, star) {
            (Some(next), _) => {
                p = next;
                t += 1;
            }
            // The last `*` covers one more byte.
            (None, Some((after, covered))) => {
                star = Some((after, covered + 1));
                p = after;
                t = covered + 1;
            }
            (None, None) => return false,
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
}

/// The longest pattern [`Glob::new`] compiles, in bytes (a selector's longest text).
pub(crate) const MAX_LEN: usize = 256;

/// Words of the automaton's state: one bit per position in the pattern's tokens, and one for
/// the end.
const WORDS: usize = (MAX_LEN + 1).div_ceil(64);

/// A set of positions of the automaton.
type State = [u64; WORDS];

/// A pattern compiled for matching: its tokens (a byte of a set, or a `*`, runs of `*` made
/// one) are the automaton's positions; position `i` moves to `i + 1` on a byte its token
/// takes, and a `*` also stays and may be skipped.
///
/// # Invariants
///
/// `tokens <= MAX_LEN`; `masks` holds `words` words per byte class, bit `i` set where token
/// `i` is not a `*` and takes the class's bytes; `class` maps each byte to a class of `masks`;
/// `words` is `(tokens + 1).div_ceil(64)`.
pub(crate) struct Glob {
    tokens: usize,
    words: usize,
    /// The positions that are a `*`.
    stars: State,
    /// The class of each byte: bytes that every token treats alike share one.
    class: [u8; 256],
    masks: KVec<u64>,
}

/// Sets bit `i` of `state`.
fn set(state: &mut State, i: usize) {
    state[i / 64] |= 1 << (i % 64);
}

/// Returns whether bit `i` of `state` is set.
fn test(state: &State, i: usize) -> bool {
    state[i / 64] & (1 << (i % 64)) != 0
}

/// Returns `state` with every position moved one up.
fn shifted(state: &State, words: usize) -> State {
    let mut out = [0; WORDS];
    let mut carry = 0;
    for (o, &w) in out.iter_mut().zip(state).take(words) {
        *o = (w << 1) | carry;
        carry = w >> 63;
    }
    out
}

impl Glob {
    /// Compiles `pattern`, which [`is_valid`] and is at most [`MAX_LEN`] bytes (`EINVAL`
    /// otherwise).
    pub(crate) fn new(pattern: &[u8]) -> Result<Self> {
        if pattern.len() > MAX_LEN || !is_valid(pattern) {
            return Err(EINVAL);
        }
        // The tokens, as the set of bytes each takes (a `*`: none, and a bit in `stars`).
        let mut sets: KVec<[u64; 4]> = KVec::with_capacity(pattern.len(), GFP_KERNEL)?;
        let mut stars = [0; WORDS];
        let mut p = 0;
        while p < pattern.len() {
            let mut taken = [0u64; 4];
            match pattern[p] {
                b'*' => {
                    while pattern.get(p + 1) == Some(&b'*') {
                        p += 1;
                    }
                    set(&mut stars, sets.len());
                }
                b'?' => taken = [u64::MAX; 4],
                b'[' => {
                    let end = set_end(pattern, p).ok_or(EINVAL)?;
                    for c in 0..=255u8 {
                        if in_set(&pattern[p + 1..end], c) {
                            taken[usize::from(c / 64)] |= 1 << (c % 64);
                        }
                    }
                    p = end;
                }
                c => taken[usize::from(c / 64)] |= 1 << (c % 64),
            }
            sets.push(taken, GFP_KERNEL)?;
            p += 1;
        }
        let tokens = sets.len();
        let words = (tokens + 1).div_ceil(64);
        // One mask per byte, then bytes with equal masks share a class.
        let mut class = [0u8; 256];
        let mut masks: KVec<u64> = KVec::new();
        let mut classes = 0;
        for c in 0..=255u8 {
            let mut mask = [0u64; WORDS];
            for (i, taken) in sets.iter().enumerate() {
                if taken[usize::from(c / 64)] & (1 << (c % 64)) != 0 {
                    set(&mut mask, i);
                }
            }
            let mask = &mask[..words];
            let found = (0..classes).find(|&k| &masks[k * words..(k + 1) * words] == mask);
            class[usize::from(c)] = match found {
                Some(k) => k as u8,
                None => {
                    masks.extend_from_slice(mask, GFP_KERNEL)?;
                    classes += 1;
                    // At most 256 classes, one per byte: the index fits in a `u8`.
                    (classes - 1) as u8
                }
            };
        }
        // INVARIANT: At most one token per pattern byte; `masks` and `class` as built above.
        Ok(Self {
            tokens,
            words,
            stars,
            class,
            masks,
        })
    }

    /// Adds to `state` the positions reached by skipping a `*`: runs of `*` are one token, so
    /// one step reaches them all.
    fn skip_stars(&self, state: &mut State) {
        let mut on_star = [0; WORDS];
        for (o, (&s, &st)) in on_star.iter_mut().zip(state.iter().zip(&self.stars)) {
            *o = s & st;
        }
        for (s, m) in state.iter_mut().zip(shifted(&on_star, self.words)) {
            *s |= m;
        }
    }

    /// Returns whether the pattern matches the whole of `text`: each byte read once.
    pub(crate) fn matches(&self, text: &[u8]) -> bool {
        let words = self.words;
        let mut state = [0; WORDS];
        set(&mut state, 0);
        self.skip_stars(&mut state);
        for &c in text {
            let k = usize::from(self.class[usize::from(c)]);
            let mask = self.masks.get(k * words..(k + 1) * words).unwrap_or(&[]);
            let mut taken = [0; WORDS];
            for ((t, &s), &m) in taken.iter_mut().zip(&state).zip(mask) {
                *t = s & m;
            }
            let moved = shifted(&taken, words);
            let mut any = 0;
            for i in 0..words {
                // A token that took the byte moves on; a `*` also stays.
                state[i] = moved[i] | (state[i] & self.stars[i]);
                any |= state[i];
            }
            if any == 0 {
                return false;
            }
            self.skip_stars(&mut state);
        }
        test(&state, self.tokens)
    }
}
