// SPDX-License-Identifier: GPL-2.0

//! Names of Rust functions from their v0 symbols, for the function field of dynamic tags.
//!
//! The kernel's Rust symbols are mangled with `-Csymbol-mangling-version=v0` and kallsyms gives
//! them as they are (`_RNvMCs..._19alloctag_rust_plainNtB2_5Plain8allocate`). This reads the
//! part of the grammar that names a function's path and prints it as `alloctag::tags!` and
//! `alloc_hooks!` do, with `::` between the components and no spaces, since
//! `/proc/allocinfo` shows the function as one field: `alloctag_rust_plain::Plain::allocate`,
//! `<alloctag_rust_plain::Plain_as_kernel::Module>::init`. Generic arguments are left out.
//! Closures read `{closure}`. Anything it does not understand makes it give up, and the
//! caller keeps the symbol as kallsyms gave it.
//!
//! Reference: <https://doc.rust-lang.org/rustc/symbol-mangling/v0.html>

/// Deepest nesting of paths and types followed; deeper symbols are left mangled.
const MAX_DEPTH: u32 = 32;

/// Where the name is written: a NUL-terminated buffer, cut when full, and a switch to parse
/// without writing (generic arguments).
struct Out<'a> {
    buf: &'a mut [u8],
    len: usize,
    on: bool,
}

impl Out<'_> {
    fn put(&mut self, s: &[u8]) {
        if !self.on {
            return;
        }
        for &c in s {
            if self.len + 1 >= self.buf.len() {
                return;
            }
            self.buf[self.len] = if c == b' ' { b'_' } else { c };
            self.len += 1;
        }
    }
}

/// A reader of the symbol after `_R`; positions are what backreferences count.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: u32,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.pos += 1;
        }
        found
    }

    /// `{ 0-9 a-z A-Z } _`: the value plus one, or 0 for `_` alone.
    fn base62(&mut self) -> Option<usize> {
        if self.eat(b'_') {
            return Some(0);
        }
        let mut x: usize = 0;
        loop {
            let c = self.next()?;
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'z' => c - b'a' + 10,
                b'A'..=b'Z' => c - b'A' + 36,
                b'_' => return x.checked_add(1),
                _ => return None,
            };
            x = x.checked_mul(62)?.checked_add(d as usize)?;
        }
    }

    fn decimal(&mut self) -> Option<usize> {
        let mut x: usize = 0;
        let mut any = false;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            x = x.checked_mul(10)?.checked_add((c - b'0') as usize)?;
            self.pos += 1;
            any = true;
        }
        any.then_some(x)
    }

    /// `[s base62]`.
    fn disambiguator(&mut self) -> Option<()> {
        if self.eat(b's') {
            self.base62()?;
        }
        Some(())
    }

    /// `[u] decimal [_] bytes`.
    fn ident(&mut self) -> Option<&'a [u8]> {
        self.eat(b'u');
        let len = self.decimal()?;
        self.eat(b'_');
        let start = self.pos;
        let end = start.checked_add(len)?;
        let id = self.s.get(start..end)?;
        self.pos = end;
        Some(id)
    }

    /// Follows a backreference: runs `f` at its target, then comes back.
    fn backref(
        &mut self,
        out: &mut Out<'_>,
        f: fn(&mut Self, &mut Out<'_>) -> Option<()>,
    ) -> Option<()> {
        let start = self.pos - 1;
        let target = self.base62()?;
        if target >= start {
            return None;
        }
        let back = self.pos;
        self.pos = target;
        let r = f(self, out);
        self.pos = back;
        r
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn path(&mut self, out: &mut Out<'_>) -> Option<()> {
        self.enter()?;
        let r = self.path_inner(out);
        self.depth -= 1;
        r
    }

    fn path_inner(&mut self, out: &mut Out<'_>) -> Option<()> {
        match self.next()? {
            b'C' => {
                self.disambiguator()?;
                let id = self.ident()?;
                out.put(id);
            }
            b'N' => {
                let ns = self.next()?;
                self.path(out)?;
                self.disambiguator()?;
                let id = self.ident()?;
                match ns {
                    b'C' => out.put(b"::{closure}"),
                    b'S' => out.put(b"::{shim}"),
                    _ if id.is_empty() => {}
                    _ => {
                        out.put(b"::");
                        out.put(id);
                    }
                }
            }
            b'M' => {
                self.disambiguator()?;
                let on = core::mem::replace(&mut out.on, false);
                let r = self.path(out);
                out.on = on;
                r?;
                self.ty(out)?;
            }
            b'X' => {
                self.disambiguator()?;
                let on = core::mem::replace(&mut out.on, false);
                let r = self.path(out);
                out.on = on;
                r?;
                out.put(b"<");
                self.ty(out)?;
                out.put(b" as ");
                self.path(out)?;
                out.put(b">");
            }
            b'Y' => {
                out.put(b"<");
                self.ty(out)?;
                out.put(b" as ");
                self.path(out)?;
                out.put(b">");
            }
            b'I' => {
                self.path(out)?;
                let on = core::mem::replace(&mut out.on, false);
                let r = self.generic_args(out);
                out.on = on;
                r?;
            }
            b'B' => self.backref(out, Self::path)?,
            _ => return None,
        }
        Some(())
    }

    /// `{generic-arg} E`.
    fn generic_args(&mut self, out: &mut Out<'_>) -> Option<()> {
        while !self.eat(b'E') {
            if self.eat(b'L') {
                self.base62()?;
            } else if self.eat(b'K') {
                self.konst(out)?;
            } else {
                self.ty(out)?;
            }
        }
        Some(())
    }

    /// A constant: `p`, a backreference, or a basic type and its hexadecimal value.
    fn konst(&mut self, out: &mut Out<'_>) -> Option<()> {
        match self.next()? {
            b'p' => Some(()),
            b'B' => self.backref(out, Self::konst),
            c if basic(c).is_some() => {
                self.eat(b'n');
                while self.next()? != b'_' {}
                Some(())
            }
            _ => None,
        }
    }

    fn ty(&mut self, out: &mut Out<'_>) -> Option<()> {
        self.enter()?;
        let r = self.ty_inner(out);
        self.depth -= 1;
        r
    }

    fn ty_inner(&mut self, out: &mut Out<'_>) -> Option<()> {
        let c = self.peek()?;
        if let Some(name) = basic(c) {
            self.pos += 1;
            out.put(name);
            return Some(());
        }
        match c {
            b'C' | b'N' | b'M' | b'X' | b'Y' | b'I' => self.path(out),
            _ => {
                self.pos += 1;
                match c {
                    b'B' => self.backref(out, Self::ty),
                    b'A' => {
                        out.put(b"[");
                        self.ty(out)?;
                        out.put(b"; _]");
                        let on = core::mem::replace(&mut out.on, false);
                        let r = self.konst(out);
                        out.on = on;
                        r
                    }
                    b'S' => {
                        out.put(b"[");
                        self.ty(out)?;
                        out.put(b"]");
                        Some(())
                    }
                    b'T' => {
                        out.put(b"(");
                        let mut first = true;
                        while !self.eat(b'E') {
                            if !first {
                                out.put(b", ");
                            }
                            first = false;
                            self.ty(out)?;
                        }
                        out.put(b")");
                        Some(())
                    }
                    b'R' | b'Q' => {
                        if self.eat(b'L') {
                            self.base62()?;
                        }
                        out.put(if c == b'R' { &b"&"[..] } else { &b"&mut "[..] });
                        self.ty(out)
                    }
                    b'P' | b'O' => {
                        out.put(if c == b'P' {
                            &b"*const "[..]
                        } else {
                            &b"*mut "[..]
                        });
                        self.ty(out)
                    }
                    b'F' => {
                        out.put(b"fn");
                        let on = core::mem::replace(&mut out.on, false);
                        let r = self.fn_sig(out);
                        out.on = on;
                        r
                    }
                    b'D' => {
                        out.put(b"dyn ");
                        self.dyn_bounds(out)?;
                        self.eat(b'L').then(|| self.base62()).flatten().map(|_| ())
                    }
                    _ => None,
                }
            }
        }
    }

    /// `[G base62] [U] [K abi] {type} E type`.
    fn fn_sig(&mut self, out: &mut Out<'_>) -> Option<()> {
        if self.eat(b'G') {
            self.base62()?;
        }
        self.eat(b'U');
        if self.eat(b'K') && !self.eat(b'C') {
            self.ident()?;
        }
        while !self.eat(b'E') {
            self.ty(out)?;
        }
        self.ty(out)
    }

    /// `[G base62] {path {p ident type}} E`.
    fn dyn_bounds(&mut self, out: &mut Out<'_>) -> Option<()> {
        if self.eat(b'G') {
            self.base62()?;
        }
        let mut first = true;
        while !self.eat(b'E') {
            if !first {
                out.put(b" + ");
            }
            first = false;
            self.path(out)?;
            while self.eat(b'p') {
                self.ident()?;
                let on = core::mem::replace(&mut out.on, false);
                let r = self.ty(out);
                out.on = on;
                r?;
            }
        }
        Some(())
    }
}

/// Returns the name of a basic type's letter.
fn basic(c: u8) -> Option<&'static [u8]> {
    let name: &'static [u8] = match c {
        b'a' => b"i8",
        b'b' => b"bool",
        b'c' => b"char",
        b'd' => b"f64",
        b'e' => b"str",
        b'f' => b"f32",
        b'h' => b"u8",
        b'i' => b"isize",
        b'j' => b"usize",
        b'l' => b"i32",
        b'm' => b"u32",
        b'n' => b"i128",
        b'o' => b"u128",
        b's' => b"i16",
        b't' => b"u16",
        b'u' => b"()",
        b'v' => b"...",
        b'x' => b"i64",
        b'y' => b"u64",
        b'z' => b"!",
        b'p' => b"_",
        _ => return None,
    };
    Some(name)
}

/// Writes the demangled path of the v0 symbol `symbol` into `out`, NUL-terminated, spaces made
/// `_`, cut to fit. Returns `false`, having written nothing usable, when `symbol` is not a v0
/// symbol it can read.
pub(crate) fn demangle(symbol: &[u8], out: &mut [u8]) -> bool {
    let Some(rest) = symbol.strip_prefix(b"_R") else {
        return false;
    };
    if out.is_empty() {
        return false;
    }
    let mut parser = Parser {
        s: rest,
        pos: 0,
        depth: 0,
    };
    // An encoding version other than the first is a decimal here.
    if parser.decimal().is_some() {
        return false;
    }
    let mut o = Out {
        buf: out,
        len: 0,
        on: true,
    };
    if parser.path(&mut o).is_none() || o.len == 0 {
        return false;
    }
    let len = o.len;
    out[len] = 0;
    true
}
