//! [`TagFilter`]: the filter of `ALLOCINFO_IOC_GET_AT`, with the kernel's
//! semantics, both as the ABI's [`AllocinfoFilter`] and as a predicate on
//! the text model's tags, so that the ioctl and the text give the same tags.

use crate::abi::*;
use crate::tag::{encode_name, trimmed_bytes};
use allocinfo_format::Tag;

/// Which tags match: every field given must match. Names match exactly,
/// compared as the kernel compares them, by their last
/// [`NAME_MAX`](crate::NAME_MAX) bytes on both sides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagFilter {
    /// Module name; `""` selects built-in code.
    pub module: Option<String>,
    pub function: Option<String>,
    /// Source file, as the tag names it (`mm/slub.c`).
    pub file: Option<String>,
    pub line: Option<u64>,
    /// `Some(false)`: only tags whose counts the kernel lost (`accurate:no`);
    /// `Some(true)`: only the others.
    pub accurate: Option<bool>,
    /// At least this many bytes (the kernel's unsigned counter).
    pub min_size: Option<u64>,
    /// At most this many bytes.
    pub max_size: Option<u64>,
    /// Only the tags of unloaded modules (`unloaded:yes`). The ABI has no
    /// way to ask for the others.
    pub unloaded: bool,
}

impl TagFilter {
    /// Whether no field is given (every tag matches).
    pub fn is_empty(&self) -> bool {
        *self == TagFilter::default()
    }

    /// Whether the kernel takes the filter: it refuses a minimum size above
    /// the maximum (`EINVAL`).
    pub fn is_valid(&self) -> bool {
        match (self.min_size, self.max_size) {
            (Some(min), Some(max)) => min <= max,
            _ => true,
        }
    }

    /// The filter as `ALLOCINFO_IOC_GET_AT` takes it.
    pub fn to_abi(&self) -> AllocinfoFilter {
        let mut f = AllocinfoFilter::NONE;
        if let Some(m) = &self.module {
            f.mask |= ALLOCINFO_FILTER_MASK_MODNAME;
            f.fields.modname = encode_name(m);
        }
        if let Some(func) = &self.function {
            f.mask |= ALLOCINFO_FILTER_MASK_FUNCTION;
            f.fields.function = encode_name(func);
        }
        if let Some(file) = &self.file {
            f.mask |= ALLOCINFO_FILTER_MASK_FILENAME;
            f.fields.filename = encode_name(file);
        }
        if let Some(line) = self.line {
            f.mask |= ALLOCINFO_FILTER_MASK_LINENO;
            f.fields.lineno = line;
        }
        if let Some(accurate) = self.accurate {
            f.mask |= ALLOCINFO_FILTER_MASK_INACCURATE;
            f.inaccurate = (!accurate).into();
        }
        if let Some(min) = self.min_size {
            f.mask |= ALLOCINFO_FILTER_MASK_MIN_SIZE;
            f.min_size = min;
        }
        if let Some(max) = self.max_size {
            f.mask |= ALLOCINFO_FILTER_MASK_MAX_SIZE;
            f.max_size = max;
        }
        if self.unloaded {
            f.mask |= ALLOCINFO_FILTER_MASK_UNLOADED;
        }
        f
    }

    /// Whether a tag of the text matches, as the kernel would decide for the
    /// same tag. Bytes compare as the kernel's unsigned counter (the text
    /// prints it signed); accuracy is `accurate:no` and an unloaded module
    /// `unloaded:yes`, which only format 2.0 prints.
    pub fn matches(&self, tag: &Tag) -> bool {
        let name = |want: &Option<String>, have: &str| {
            want.as_deref()
                .is_none_or(|w| trimmed_bytes(w) == trimmed_bytes(have))
        };
        let bytes = tag.bytes as u64;
        name(&self.module, tag.module.as_deref().unwrap_or(""))
            && name(&self.function, &tag.function)
            && name(&self.file, &tag.file)
            && self.line.is_none_or(|l| l == u64::from(tag.line))
            && self.accurate.is_none_or(|a| a == tag.is_accurate())
            && self.min_size.is_none_or(|min| bytes >= min)
            && self.max_size.is_none_or(|max| bytes <= max)
            && (!self.unloaded || tag.is_unloaded())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tag::trim_name;

    fn tag(line: &str) -> Tag {
        let text = format!("allocinfo - version: 2.0\n#\n{line}\n");
        allocinfo_format::Profile::parse(text.as_bytes())
            .unwrap()
            .tags
            .remove(0)
    }

    #[test]
    fn abi_filter_fields_and_mask() {
        assert_eq!(TagFilter::default().to_abi(), AllocinfoFilter::NONE);
        let sizes = |min, max| TagFilter {
            min_size: Some(min),
            max_size: Some(max),
            ..Default::default()
        };
        assert!(sizes(4096, 4096).is_valid() && !sizes(4097, 4096).is_valid());
        assert!(TagFilter::default().is_empty());
        let f = TagFilter {
            module: Some(String::new()),
            function: Some(format!("{}tail", "x".repeat(80))),
            file: Some("mm/slub.c".into()),
            line: Some(2478),
            accurate: Some(false),
            min_size: Some(4096),
            max_size: Some(1 << 20),
            unloaded: true,
        }
        .to_abi();
        assert_eq!(f.mask, ALLOCINFO_FILTER_MASKS);
        assert_eq!(f.fields.modname, [0; 64]);
        assert_eq!(
            &f.fields.function[..63],
            trimmed_bytes(&format!("{}tail", "x".repeat(80)))
        );
        assert_eq!(f.fields.function[63], 0);
        assert_eq!(&f.fields.filename[..10], b"mm/slub.c\0");
        assert_eq!(
            (f.fields.lineno, f.min_size, f.max_size),
            (2478, 4096, 1 << 20)
        );
        assert_eq!(f.inaccurate, 1);
        let only_accurate = TagFilter {
            accurate: Some(true),
            ..Default::default()
        }
        .to_abi();
        assert_eq!(
            (only_accurate.mask, only_accurate.inaccurate),
            (ALLOCINFO_FILTER_MASK_INACCURATE, 0)
        );
        let unloaded = TagFilter {
            unloaded: true,
            ..Default::default()
        };
        assert!(!unloaded.is_empty() && unloaded.is_valid());
        assert_eq!(
            unloaded.to_abi(),
            AllocinfoFilter {
                mask: ALLOCINFO_FILTER_MASK_UNLOADED,
                ..AllocinfoFilter::NONE
            },
            "a bit alone: no value field"
        );
    }

    #[test]
    fn text_semantics() {
        let builtin = tag("        4096        1 mm/percpu.c:3191 func:pcpu_embed_first_chunk ");
        let module = tag(
            "      143360       35 fs/xfs/xfs_buf.c:411 [xfs] func:xfs_buf_alloc_pages accurate:no ",
        );
        let f = |f: TagFilter| (f.matches(&builtin), f.matches(&module));
        let d = TagFilter::default;
        assert_eq!(f(d()), (true, true));
        let m = |s: &str| TagFilter {
            module: Some(s.into()),
            ..d()
        };
        assert_eq!(f(m("")), (true, false));
        assert_eq!(f(m("xfs")), (false, true));
        assert_eq!(f(m("xf")), (false, false), "exact, not a prefix");
        let func = |s: &str| TagFilter {
            function: Some(s.into()),
            ..d()
        };
        assert_eq!(f(func("pcpu_embed_first_chunk")), (true, false));
        assert_eq!(f(func("pcpu_*")), (false, false), "no globs");
        let file = |s: &str| TagFilter {
            file: Some(s.into()),
            ..d()
        };
        assert_eq!(f(file("fs/xfs/xfs_buf.c")), (false, true));
        assert_eq!(f(file("xfs_buf.c")), (false, false), "the whole name");
        let line = TagFilter {
            line: Some(411),
            ..d()
        };
        assert_eq!(f(line), (false, true));
        let inaccurate = TagFilter {
            accurate: Some(false),
            ..d()
        };
        assert_eq!(f(inaccurate), (false, true));
        let accurate = TagFilter {
            accurate: Some(true),
            ..d()
        };
        assert_eq!(f(accurate), (true, false));
        let unloaded = TagFilter {
            unloaded: true,
            ..d()
        };
        assert_eq!(f(unloaded.clone()), (false, false));
        let gone = tag("4096 1 drivers/foo.c:12 [foo] func:foo_probe accurate:no unloaded:yes ");
        assert!(unloaded.matches(&gone) && d().matches(&gone));
        let other = tag("4096 1 drivers/foo.c:12 [foo] func:foo_probe unloaded:no ");
        assert!(!unloaded.matches(&other), "yes only");
        let both = TagFilter {
            accurate: Some(false),
            ..unloaded
        };
        assert!(both.matches(&gone));
        let size = |min: Option<u64>, max: Option<u64>| TagFilter {
            min_size: min,
            max_size: max,
            ..d()
        };
        assert_eq!(f(size(Some(4096), Some(4096))), (true, false), "inclusive");
        assert_eq!(f(size(Some(4097), None)), (false, true));
        assert_eq!(f(size(None, Some(143359))), (true, false));
        // Negative bytes (as %lli prints the u64) are huge, as in the kernel.
        let negative = tag("       -8192       3 a/b.c:7 func:f ");
        assert!(size(Some(1 << 63), None).matches(&negative));
        assert!(!size(None, Some(1 << 40)).matches(&negative));
    }

    #[test]
    fn long_names_compare_by_their_last_63_bytes() {
        let long = format!("{}::RustSample::allocate", "alloctag_rust_sample".repeat(4));
        let t = tag(&format!("1 1 a.rs:1 func:{long}"));
        let by = |s: &str| {
            TagFilter {
                function: Some(s.into()),
                ..Default::default()
            }
            .matches(&t)
        };
        assert!(by(&long));
        assert!(
            by(&trim_name(&long)),
            "the trimmed name, as the kernel reports it"
        );
        assert!(
            by(&format!("other_prefix{long}")),
            "only the last 63 bytes count"
        );
        assert!(!by(&long[..long.len() - 1]));
    }
}
