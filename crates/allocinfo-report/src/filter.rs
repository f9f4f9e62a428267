//! Which tags a report keeps: name patterns by one rule in every command
//! (a glob, or the name exactly, or for source files a path suffix), the
//! tags of unloaded modules, and a minimum size.

use crate::BUILTIN_MODULE;
use allocinfo_format::Tag;

/// Error for an invalid glob pattern in a [`Filter`].
#[derive(Debug, thiserror::Error)]
#[error("invalid pattern {pattern:?}: {reason}")]
pub struct PatternError {
    pattern: String,
    // Not a `source`: the message says it once.
    reason: glob::PatternError,
}

/// A name pattern, by the one rule every command uses:
///
/// - a pattern with `*`, `?` or `[` is a glob over the whole name (in a
///   path, `*` also matches `/`);
/// - otherwise it is the name exactly; a source file also matches by a path
///   suffix that starts after a `/` (`slub.c` and `mm/slub.c` match
///   `mm/slub.c`, `ub.c` does not).
#[derive(Clone, Debug)]
pub enum NamePattern {
    Exact(String),
    Glob(glob::Pattern),
}

impl NamePattern {
    /// Whether `p` would be a glob.
    pub fn is_glob(p: &str) -> bool {
        p.contains(['*', '?', '['])
    }

    pub fn new(p: &str) -> Result<NamePattern, PatternError> {
        if Self::is_glob(p) {
            glob::Pattern::new(p)
                .map(NamePattern::Glob)
                .map_err(|reason| PatternError {
                    pattern: p.to_owned(),
                    reason,
                })
        } else {
            Ok(NamePattern::Exact(p.to_owned()))
        }
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        match self {
            NamePattern::Exact(s) => s,
            NamePattern::Glob(g) => g.as_str(),
        }
    }

    /// Whether a function or module name matches: exactly or by the glob.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            NamePattern::Exact(s) => s == name,
            NamePattern::Glob(g) => g.matches(name),
        }
    }

    /// Whether a source file's path matches: exactly, by a path suffix
    /// that starts after a `/`, or by the glob.
    pub fn matches_path(&self, path: &str) -> bool {
        match self {
            NamePattern::Exact(s) => is_path_suffix(s, path),
            NamePattern::Glob(g) => g.matches(path),
        }
    }
}

/// Whether `suffix` is `path` or ends it after a `/`.
pub fn is_path_suffix(suffix: &str, path: &str) -> bool {
    !suffix.is_empty()
        && path
            .strip_suffix(suffix)
            .is_some_and(|head| head.is_empty() || head.ends_with('/') || suffix.starts_with('/'))
}

/// Which tags take part. Each list matches if any entry matches; an empty
/// list matches everything. `min_bytes` applies to rows after grouping.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Module names ([`NamePattern::matches`]); [`BUILTIN_MODULE`] is built-in code.
    pub modules: Vec<NamePattern>,
    /// Source file paths ([`NamePattern::matches_path`]).
    pub files: Vec<NamePattern>,
    /// Function names ([`NamePattern::matches`]).
    pub functions: Vec<NamePattern>,
    /// Rows with fewer (current) bytes are dropped.
    pub min_bytes: Option<i64>,
    /// Only the tags of unloaded modules (`unloaded:yes`).
    pub unloaded: bool,
}

impl Filter {
    /// Compiles a pattern for [`Filter::modules`], [`Filter::files`] or
    /// [`Filter::functions`].
    pub fn pattern(p: &str) -> Result<NamePattern, PatternError> {
        NamePattern::new(p)
    }

    /// Whether a tag passes the module, file, function and unloaded filters.
    pub fn matches(&self, tag: &Tag) -> bool {
        let module = tag.module.as_deref().unwrap_or(BUILTIN_MODULE);
        (self.modules.is_empty() || self.modules.iter().any(|m| m.matches(module)))
            && (self.files.is_empty() || self.files.iter().any(|p| p.matches_path(&tag.file)))
            && (self.functions.is_empty()
                || self.functions.iter().any(|p| p.matches(&tag.function)))
            && (!self.unloaded || tag.is_unloaded())
    }

    /// The patterns that match no tag of `tags`, as `(what, pattern)`
    /// (`what` is `module`, `file` or `function`), for a warning.
    pub fn unmatched(&self, tags: &[Tag]) -> Vec<(&'static str, &str)> {
        let mut out = Vec::new();
        for m in &self.modules {
            if !tags
                .iter()
                .any(|t| m.matches(t.module.as_deref().unwrap_or(BUILTIN_MODULE)))
            {
                out.push(("module", m.as_str()));
            }
        }
        for p in &self.files {
            if !tags.iter().any(|t| p.matches_path(&t.file)) {
                out.push(("file", p.as_str()));
            }
        }
        for f in &self.functions {
            if !tags.iter().any(|t| f.matches(&t.function)) {
                out.push(("function", f.as_str()));
            }
        }
        out
    }
}
