use std::fmt;

/// The second header line, exactly as the kernel prints it.
pub const COLUMN_HEADER: &str = "#     <size>  <calls> <tag info>";

/// Format version from the first header line (`allocinfo - version: 1.0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl Version {
    /// Linux 6.12: `bytes calls file:line [module] func:name`.
    pub const V1_0: Version = Version { major: 1, minor: 0 };
    /// Newer kernels: as 1.0, plus optional `key:value` pairs after the function.
    pub const V2_0: Version = Version { major: 2, minor: 0 };

    /// Whether this tool understands the line format of this version.
    pub fn is_supported(self) -> bool {
        matches!(self.major, 1 | 2)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// One allocation tag (call site) and its live counters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tag {
    /// Bytes currently allocated from this site (signed in the kernel: `%lli`).
    pub bytes: i64,
    /// Number of live allocations from this site.
    pub calls: u64,
    /// Source file, relative to the kernel tree (`mm/slub.c`).
    pub file: String,
    /// Source line.
    pub line: u32,
    /// Module name for tags in loadable modules, `None` for built-in code.
    pub module: Option<String>,
    /// Function containing the call site.
    pub function: String,
    /// `key:value` pairs after the function name (format 2.0), in input order.
    pub extra: Vec<(String, String)>,
}

impl Tag {
    /// Value of an extra `key:value` pair, if present.
    pub fn extra(&self, key: &str) -> Option<&str> {
        self.extra
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// False when the kernel marked the counters inaccurate (`accurate:no`).
    pub fn is_accurate(&self) -> bool {
        self.extra("accurate") != Some("no")
    }

    /// True when the tag's module was unloaded while allocations it made
    /// were live (`unloaded:yes`, alloctag's format 2.0): the kernel lists
    /// the tag until they are freed. Format 1.0 does not say so.
    pub fn is_unloaded(&self) -> bool {
        self.extra("unloaded") == Some("yes")
    }

    /// The bytes of each node share, as alloctag's format 2.0 prints them
    /// with per-node counting on: `nid0:` up to the last node id, in
    /// order, then per-CPU memory's (`percpu:`) last, as the kernel's
    /// node split indexes them. `None` for a line without them, or with
    /// pairs that do not read so.
    pub fn node_bytes(&self) -> Option<Vec<i64>> {
        let mut shares = Vec::new();
        let mut percpu = None;
        for (k, v) in &self.extra {
            // percpu: once, after every nidN:, as the kernel prints it.
            if percpu.is_some() && (k == "percpu" || k.starts_with("nid")) {
                return None;
            }
            if k == "percpu" {
                percpu = Some(v.parse().ok()?);
            } else if let Some(n) = k.strip_prefix("nid") {
                if !n.bytes().all(|b| b.is_ascii_digit())
                    || n.parse::<usize>().ok()? != shares.len()
                {
                    return None;
                }
                shares.push(v.parse().ok()?);
            }
        }
        shares.push(percpu?);
        Some(shares)
    }

    /// Directory part of [`Tag::file`], `.` when the file has none.
    pub fn dir(&self) -> &str {
        match self.file.rfind('/') {
            Some(0) => "/",
            Some(i) => &self.file[..i],
            None => ".",
        }
    }

    /// The tag info as the kernel prints it, without counters and without
    /// extras: `file:line [module] func:name`.
    pub fn location(&self) -> Location<'_> {
        Location(self)
    }

    /// Checks that the tag prints as a line that parses back to itself.
    /// Returns the name of the first offending field.
    pub fn validate(&self) -> Result<(), &'static str> {
        fn word(s: &str) -> bool {
            !s.is_empty() && !s.bytes().any(|b| b.is_ascii_whitespace())
        }
        if !word(&self.file) {
            return Err("file");
        }
        if self.module.as_deref().is_some_and(|m| !word(m)) {
            return Err("module");
        }
        if !word(&self.function) {
            return Err("function");
        }
        for (k, v) in &self.extra {
            if !word(k) || k.contains(':') || v.bytes().any(|b| b.is_ascii_whitespace()) {
                return Err("extra");
            }
        }
        Ok(())
    }
}

/// Display adapter for [`Tag::location`].
pub struct Location<'a>(&'a Tag);

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        match &t.module {
            Some(m) => write!(f, "{}:{} [{}] func:{}", t.file, t.line, m, t.function),
            None => write!(f, "{}:{} func:{}", t.file, t.line, t.function),
        }
    }
}

/// Prints the line exactly as the kernel does, without the newline:
/// `%12lli %8llu file:line [module] func:name[ key:value...] `.
impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:12} {:8} {}", self.bytes, self.calls, self.location())?;
        for (k, v) in &self.extra {
            write!(f, " {k}:{v}")?;
        }
        f.write_str(" ")
    }
}

/// Sums over a set of tags. Sums saturate instead of overflowing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub bytes: i64,
    pub calls: u64,
    /// Number of tags (lines).
    pub tags: usize,
}

impl Totals {
    pub fn add(&mut self, tag: &Tag) {
        self.bytes = self.bytes.saturating_add(tag.bytes);
        self.calls = self.calls.saturating_add(tag.calls);
        self.tags += 1;
    }
}

impl<'a> FromIterator<&'a Tag> for Totals {
    fn from_iter<I: IntoIterator<Item = &'a Tag>>(iter: I) -> Self {
        let mut t = Totals::default();
        for tag in iter {
            t.add(tag);
        }
        t
    }
}

/// A whole `/proc/allocinfo` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub version: Version,
    pub tags: Vec<Tag>,
}

/// The model knows nothing of the text: `Profile::parse` and the header
/// check are in `parse.rs`, which builds these types.
impl Profile {
    /// Removes the tags whose bytes are `i64::MIN`: no size, and no change
    /// of one, is that (a corrupt tag, whose magnitude `check_sums` cannot
    /// hold). Returned for the caller to report; alloctop likewise turns
    /// such figures into 0 and says so.
    pub fn drop_corrupt(&mut self) -> Vec<Tag> {
        let (corrupt, kept) = std::mem::take(&mut self.tags)
            .into_iter()
            .partition(|t| t.bytes == i64::MIN);
        self.tags = kept;
        corrupt
    }

    /// Sums of bytes, calls and tag count over all tags.
    pub fn totals(&self) -> Totals {
        self.tags.iter().collect()
    }

    /// Checks that every sum over any subset of the tags is exact: the
    /// bytes' magnitudes add up within `i64` and the calls within `u64`.
    /// Reports built on a profile that passes never saturate.
    pub fn check_sums(&self) -> Result<(), OverflowError> {
        let mut bytes: u64 = 0;
        let mut calls: u64 = 0;
        for tag in &self.tags {
            bytes = bytes
                .checked_add(tag.bytes.unsigned_abs())
                .filter(|&b| b <= i64::MAX as u64)
                .ok_or(OverflowError::Bytes)?;
            calls = calls.checked_add(tag.calls).ok_or(OverflowError::Calls)?;
        }
        Ok(())
    }
}

/// Error from [`Profile::check_sums`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OverflowError {
    #[error("the sizes add up beyond 8 EiB (64-bit overflow): no kernel has that much memory")]
    Bytes,
    #[error("the calls add up beyond 2^64 (64-bit overflow)")]
    Calls,
}

/// Prints the profile in the kernel's exact format, header included.
impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "allocinfo - version: {}", self.version)?;
        writeln!(f, "{COLUMN_HEADER}")?;
        for tag in &self.tags {
            writeln!(f, "{tag}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod sum_tests {
    use super::*;

    fn profile(lines: &str) -> Profile {
        Profile::parse(format!("allocinfo - version: 1.0\n{COLUMN_HEADER}\n{lines}").as_bytes())
            .unwrap()
    }

    #[test]
    fn sums_beyond_64_bits_are_refused() {
        let half = i64::MAX / 2 + 1;
        let p = profile(&format!("{half} 1 a.c:1 func:f\n{half} 1 b.c:1 func:g\n"));
        assert_eq!(p.check_sums(), Err(OverflowError::Bytes));
        // Magnitudes: a negative tag cannot hide a positive overflow in a subset.
        let p = profile(&format!("{half} 1 a.c:1 func:f\n-{half} 1 b.c:1 func:g\n"));
        assert_eq!(p.check_sums(), Err(OverflowError::Bytes));
        let p = profile(&format!("1 {} a.c:1 func:f\n1 1 b.c:1 func:g\n", u64::MAX));
        assert_eq!(p.check_sums(), Err(OverflowError::Calls));
        let p = profile(&format!(
            "{} 1 a.c:1 func:f\n1 0 b.c:1 func:g\n",
            i64::MAX - 1
        ));
        assert_eq!(p.check_sums(), Ok(()));
    }
}
