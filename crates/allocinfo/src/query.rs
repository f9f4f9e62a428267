//! `allocinfo query`: the tags matching filters, through the kernel's ioctl
//! where it has one, printed as the kernel's lines or JSON.

use crate::args::{InputArgs, pattern_arg, size_arg};
use crate::messages::{STDOUT, usage};
use crate::via::{self, ViaArgs};
use allocinfo_format::Tag;
use allocinfo_report::NamePattern;
use anyhow::{Context, Result};
use clap::Args;
use std::io::{self, Write};

#[derive(Args, Debug)]
pub struct QueryArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub via: ViaArgs,
    #[command(flatten)]
    pub filter: QueryFilterArgs,
    /// JSON, one document (schema allocinfo-query/1) on one line, instead of the kernel's lines.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json", help_heading = "Output")]
    pub pretty: bool,
    /// One line per call site: its instances (an unloaded module's and the reloaded module's) summed, unloaded:yes only if all parts were.
    #[arg(long, help_heading = "Output")]
    pub fold: bool,
}

/// Every filter given must match. Names match by the one rule (see
/// [`FilterArgs`]); exact module and function names and the numbers go to
/// the kernel, which filters before anything is formatted. Names of 63
/// bytes or more compare by their last 63 bytes, as the kernel's do.
#[derive(Args, Debug)]
#[command(next_help_heading = "Filters")]
pub struct QueryFilterArgs {
    /// Only this module, exactly or by glob; `vmlinux` is built-in code.
    #[arg(short = 'm', long = "module", value_name = "NAME", value_parser = pattern_arg)]
    pub module: Option<NamePattern>,
    /// Only this function, exactly or by glob, e.g. alloc_slab_page.
    #[arg(long = "function", value_name = "NAME", value_parser = pattern_arg)]
    pub function: Option<NamePattern>,
    /// Only this source file: its path, a path suffix (slub.c) or a glob.
    #[arg(short = 'p', long = "path", alias = "filename", value_name = "PATH", value_parser = pattern_arg)]
    pub path: Option<NamePattern>,
    /// Only this source line.
    #[arg(short = 'l', long = "line", value_name = "N")]
    pub line: Option<u32>,
    /// Only tags with at least this many bytes, e.g. 4096, 64K (K, KiB: 1024; kB, MB: powers of 1000).
    #[arg(long = "min-size", value_name = "SIZE", allow_hyphen_values = true, value_parser = unsigned_size_arg)]
    pub min_size: Option<u64>,
    /// Only tags with at most this many bytes.
    #[arg(long = "max-size", value_name = "SIZE", allow_hyphen_values = true, value_parser = unsigned_size_arg)]
    pub max_size: Option<u64>,
    /// Only tags whose counts the kernel lost (accurate:no).
    #[arg(long)]
    pub inaccurate: bool,
    /// Only tags of modules unloaded while their allocations were live (unloaded:yes).
    #[arg(long)]
    pub unloaded: bool,
}

fn unsigned_size_arg(s: &str) -> Result<u64, String> {
    let v = size_arg(s)?;
    u64::try_from(v).map_err(|_| format!("invalid size {s:?}: sizes are not negative"))
}

impl QueryFilterArgs {
    /// The filter the kernel applies: exact names (not globs, not path
    /// suffixes) and the numbers. [`QueryFilterArgs::names`] does the rest.
    pub fn filter(&self) -> allocinfo_ioctl::TagFilter {
        let exact = |p: &Option<NamePattern>| match p {
            Some(NamePattern::Exact(s)) => Some(s.clone()),
            _ => None,
        };
        let builtin = |m: String| {
            if m == allocinfo_report::BUILTIN_MODULE {
                String::new()
            } else {
                m
            }
        };
        allocinfo_ioctl::TagFilter {
            module: exact(&self.module).map(builtin),
            function: exact(&self.function),
            file: None,
            line: self.line.map(u64::from),
            accurate: self.inaccurate.then_some(false),
            min_size: self.min_size,
            max_size: self.max_size,
            unloaded: self.unloaded,
        }
    }

    /// Whether a tag's bytes pass --min-size and --max-size as `top` reads
    /// them: a negative figure (which the kernel compares as a huge
    /// unsigned one) is below every size.
    pub fn sizes_match(&self, tag: &allocinfo_format::Tag) -> bool {
        let bytes = u64::try_from(tag.bytes).unwrap_or(0);
        self.min_size.is_none_or(|min| bytes >= min) && self.max_size.is_none_or(|max| bytes <= max)
    }

    /// Whether any name pattern is given.
    pub fn has_names(&self) -> bool {
        self.module.is_some() || self.function.is_some() || self.path.is_some()
    }

    /// Whether a tag, as the kernel reports it (names of 63 bytes or more
    /// by their last 63), passes the name patterns: exact names compare
    /// as the kernel's do, by their last 63 bytes.
    pub fn names_match(&self, tag: &allocinfo_format::Tag) -> bool {
        use allocinfo_ioctl::trimmed_bytes;
        let name = |p: &Option<NamePattern>, have: &str, path: bool| match p {
            None => true,
            Some(NamePattern::Exact(want)) => {
                trimmed_bytes(want) == trimmed_bytes(have)
                    || path && allocinfo_report::is_path_suffix(want, have)
            }
            Some(NamePattern::Glob(g)) => g.matches(have),
        };
        let module = tag
            .module
            .as_deref()
            .unwrap_or(allocinfo_report::BUILTIN_MODULE);
        name(&self.module, module, false)
            && name(&self.function, &tag.function, false)
            && name(&self.path, &tag.file, true)
    }
}

impl QueryArgs {
    /// The usage errors no reading can fix, found before anything is read.
    pub fn validate(&self) -> Result<()> {
        via::check(&self.via, &self.input.path())?;
        if !self.filter.filter().is_valid() {
            return Err(usage(
                "--min-size is above --max-size (the kernel refuses such a filter)",
            ));
        }
        Ok(())
    }
}

pub fn run(a: QueryArgs) -> Result<()> {
    a.validate()?;
    let file = a.input.path();
    let filter = a.filter.filter();
    let (tags, taken) = via::query(&file, &a.via, &filter)?;
    let tags: Vec<Tag> = tags
        .into_iter()
        .filter(|t| a.filter.names_match(t) && a.filter.sizes_match(t))
        .collect();
    let path = file.to_string_lossy().into_owned();
    if a.via.verbose {
        let line = via::describe("query", &path, &taken, tags.len(), "matching tag");
        eprintln!("{line}");
    }
    if tags.is_empty() && a.filter.has_names() {
        eprintln!(
            "allocinfo: warning: the name patterns and filters match no tag in {}",
            allocinfo_output::source_name(&path)
        );
    }
    // After the filters: they select tags as the kernel's filter does.
    let tags = if a.fold {
        allocinfo_report::fold_tags(&tags)
    } else {
        tags
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    if a.json {
        allocinfo_output::tags::write_json(&mut out, &path, &tags, a.pretty).context(STDOUT)?;
    } else {
        allocinfo_output::tags::write_lines(&mut out, &tags).context(STDOUT)?;
    }
    out.flush().context(STDOUT)?;
    Ok(())
}
