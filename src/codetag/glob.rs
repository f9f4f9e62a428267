// SPDX-License-Identifier: GPL-2.0

//! Shell-style patterns in selectors, with the rule the `allocinfo` tool applies to names: `*`
//! is any run of bytes (`/` included), `?` one byte, `[abc]`, `[a-z]` one byte of a set and
//! `[!a]` (or `[^a]`) one byte not in it; a `]` right after the `[` is a member.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! Matching allocates nothing and uses no recursion: a failed byte backtracks to the last `*`,
//! so a match costs at most the pattern's length times the name's.

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

/// Returns whether `pattern` (which [`is_valid`]) matches the whole of `text`.
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
