//! The kernel's status file, `key: value` a line, parsed: where page tags
//! live, the widths of `page->flags`' fields and what the module tags take.

use super::plural;
use std::collections::HashMap;

/// Where page tags live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageTags {
    /// An index in spare bits of `page->flags`.
    PageFlags,
    /// A pointer per page in page_ext (the default).
    PageExt,
}

impl PageTags {
    pub fn name(self) -> &'static str {
        match self {
            PageTags::PageFlags => "page_flags",
            PageTags::PageExt => "page_ext",
        }
    }
}

/// The fields of `page_flags:` the tool needs, in the kernel's order; a
/// later kernel's other fields are kept and shown too.
const FIELDS: [&str; 10] = [
    "long",
    "flags",
    "sections",
    "nodes",
    "zones",
    "last_cpupid",
    "kasan_tag",
    "lru_gen",
    "lru_refs",
    "unused",
];

/// How `page->flags`' bits are spent: each field's width, in the file's
/// order. Every width is 0 to 64 but `unused`'s, which may be negative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub fields: Vec<(String, i32)>,
}

impl Layout {
    /// The width of `name`: one of `FIELDS`, which parsing made sure are there.
    pub fn get(&self, name: &str) -> i32 {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |&(_, v)| v)
    }

    /// The width of `name`, a field other than `unused` (0 to 64).
    pub(super) fn width(&self, name: &str) -> u32 {
        self.get(name).max(0).unsigned_abs()
    }

    /// The bits of every field but `long`, which they share (`unused` may take some back).
    fn sum(&self) -> i32 {
        self.fields
            .iter()
            .filter(|(n, _)| n != "long")
            .map(|&(_, v)| v)
            .sum()
    }
}

/// The kernel's status file, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub page_tags: PageTags,
    pub compressed_requested: bool,
    pub free_bits: u32,
    pub index_bits: u32,
    pub needed_bits: u32,
    pub vmlinux_tags: u64,
    pub indices_used: u64,
    pub indices_capacity: u64,
    pub tags_without_index: u64,
    pub page_flags: Layout,
    /// `module_tags:`, if the kernel has the line.
    pub module_tags: Option<ModuleTags>,
    /// `unloaded_modules:`, if the kernel has the line.
    pub unloaded_modules: Option<UnloadedModules>,
    /// `counters:`, if the kernel has the line.
    pub counters: Option<Counters>,
    /// `page_ext:`, if the kernel has the line.
    pub page_ext: Option<PageExt>,
    /// `page_ext_requested:` (`,page_ext` on the boot parameter), if the
    /// kernel has the line: one that has it puts page tags in page flags by
    /// default where they fit.
    pub page_ext_requested: Option<bool>,
}

/// `page_ext:`: where page tags' page_ext (8 bytes a page) came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageExt {
    /// None: page tags are in page flags, or profiling has not been on since
    /// a boot that reserved none.
    None,
    /// Reserved at boot for page tags (booted on, debug checks, flat memory).
    ReservedAtBoot,
    /// Reserved at boot because another user needed page_ext then.
    ReservedForAnotherUser,
    /// Made when profiling first turned on.
    MadeAtSwitchOn,
}

impl PageExt {
    /// Parses the value of a `page_ext:` line.
    fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "none" => Self::None,
            "reserved at boot" => Self::ReservedAtBoot,
            "reserved at boot for another user" => Self::ReservedForAnotherUser,
            "made at the first switch-on" => Self::MadeAtSwitchOn,
            _ => return None,
        })
    }

    /// The name JSON gives it.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ReservedAtBoot => "reserved_at_boot",
            Self::ReservedForAnotherUser => "reserved_for_another_user",
            Self::MadeAtSwitchOn => "made_at_switch_on",
        }
    }
}

/// `counters: none` or `counters: made at S s`: whether the tags hold per-CPU
/// counters yet, which the first switch-on since boot makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counters {
    /// No tag holds counters: profiling was never on since boot.
    None,
    /// Made this many microseconds after boot (the log's clock).
    MadeAt {
        /// Microseconds of boot time.
        micros: u64,
    },
}

impl Counters {
    /// Parses the value of a `counters:` line.
    fn parse(value: &str) -> Option<Self> {
        if value == "none" {
            return Some(Self::None);
        }
        let secs = value.strip_prefix("made at ")?.strip_suffix(" s")?;
        let (whole, frac) = secs.split_once('.')?;
        if frac.len() != 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let micros = whole
            .parse::<u64>()
            .ok()?
            .checked_mul(1_000_000)?
            .checked_add(frac.parse::<u64>().ok()?)?;
        Some(Self::MadeAt { micros })
    }
}

/// `module_tags: chunks N mapped BYTES used BYTES`: the memory that holds
/// loaded and unloaded modules' tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleTags {
    /// Chunks of module data memory.
    pub chunks: u64,
    /// The bytes the chunks take.
    pub mapped: u64,
    /// The bytes of tag sections in them.
    pub used: u64,
}

/// `unloaded_modules: N names BYTES`: the modules unloaded while their
/// allocations were live, whose tags stay listed (unloaded) until freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnloadedModules {
    /// The modules whose tags are kept.
    pub count: u64,
    /// The bytes of the copies of their tags' names.
    pub names: u64,
}

/// What a `page_ext:` line may say.
const PAGE_EXT: &str = "none, reserved at boot, reserved at boot for another user or made at the \
                        first switch-on";

/// The keys read, in the kernel's order.
const KEYS: [&str; 15] = [
    "page_tags",
    "compressed_requested",
    "free_bits",
    "index_bits",
    "needed_bits",
    "vmlinux_tags",
    "indices_used",
    "indices_capacity",
    "tags_without_index",
    "page_flags",
    "module_tags",
    "unloaded_modules",
    "counters",
    "page_ext",
    "page_ext_requested",
];

/// A width of bits in a long: 0 to 64.
fn bits(value: &str) -> Option<u32> {
    value.parse::<u32>().ok().filter(|&v| v <= 64)
}

/// `page_flags`' `unused`: -64 to 64 (negative where last_cpupid is counted
/// but does not fit).
fn signed_bits(value: &str) -> Option<i32> {
    value.parse::<i32>().ok().filter(|v| (-64..=64).contains(v))
}

impl Status {
    /// Parses the file's text; an error says the line.
    pub fn parse(text: &str) -> Result<Status, String> {
        // Each known key's line number and value.
        let mut seen: HashMap<&str, (usize, &str)> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                return Err(format!("line {n}: expected 'key: value', not {line:?}"));
            };
            let key = key.trim();
            let Some(&key) = KEYS.iter().find(|&&k| k == key) else {
                // A later kernel's key.
                continue;
            };
            if let Some((first, _)) = seen.insert(key, (n, value.trim())) {
                return Err(format!(
                    "line {n}: {key} given twice (first on line {first})"
                ));
            }
        }
        let get = |key: &str| {
            seen.get(key)
                .copied()
                .ok_or_else(|| format!("missing key '{key}' (no '{key}:' line)"))
        };
        let invalid = |key: &str, (n, value): (usize, &str), expected: &str| {
            format!("line {n}: invalid {key} {value:?}: expected {expected}")
        };
        let width = |key: &str| {
            let line = get(key)?;
            bits(line.1).ok_or_else(|| invalid(key, line, "a number of bits from 0 to 64"))
        };
        let count = |key: &str| {
            let line = get(key)?;
            line.1
                .parse::<u64>()
                .map_err(|_| invalid(key, line, "an unsigned 64-bit integer"))
        };
        let line = get("page_tags")?;
        let page_tags = match line.1 {
            "page_flags" => PageTags::PageFlags,
            "page_ext" => PageTags::PageExt,
            _ => return Err(invalid("page_tags", line, "page_flags or page_ext")),
        };
        let yes_no = |key: &str, line: (usize, &str)| match line.1 {
            "yes" => Ok(true),
            "no" => Ok(false),
            _ => Err(invalid(key, line, "yes or no")),
        };
        let compressed_requested =
            yes_no("compressed_requested", get("compressed_requested")?)?;
        let page_ext_requested = seen
            .get("page_ext_requested")
            .map(|&line| yes_no("page_ext_requested", line))
            .transpose()?;
        Ok(Status {
            page_tags,
            compressed_requested,
            free_bits: width("free_bits")?,
            index_bits: width("index_bits")?,
            needed_bits: width("needed_bits")?,
            vmlinux_tags: count("vmlinux_tags")?,
            indices_used: count("indices_used")?,
            indices_capacity: count("indices_capacity")?,
            tags_without_index: count("tags_without_index")?,
            page_flags: parse_layout(get("page_flags")?)?,
            module_tags: seen
                .get("module_tags")
                .map(|&line| {
                    let v = numbers(line.1, &["chunks", "N", "mapped", "N", "used", "N"])
                        .ok_or_else(|| invalid("module_tags", line, MODULE_TAGS))?;
                    Ok::<_, String>(ModuleTags {
                        chunks: v[0],
                        mapped: v[1],
                        used: v[2],
                    })
                })
                .transpose()?,
            unloaded_modules: seen
                .get("unloaded_modules")
                .map(|&line| {
                    let v = numbers(line.1, &["N", "names", "N"])
                        .ok_or_else(|| invalid("unloaded_modules", line, UNLOADED_MODULES))?;
                    Ok::<_, String>(UnloadedModules {
                        count: v[0],
                        names: v[1],
                    })
                })
                .transpose()?,
            counters: seen
                .get("counters")
                .map(|&line| {
                    Counters::parse(line.1)
                        .ok_or_else(|| invalid("counters", line, "none or made at S.UUUUUU s"))
                })
                .transpose()?,
            page_ext: seen
                .get("page_ext")
                .map(|&line| {
                    PageExt::parse(line.1).ok_or_else(|| invalid("page_ext", line, PAGE_EXT))
                })
                .transpose()?,
            page_ext_requested,
        })
    }

    /// What does not add up, for warnings: the fields of `page_flags` and
    /// `long`; `free_bits` and `unused` (`NR_UNUSED_PAGEFLAG_BITS`, of which
    /// `free_bits` is the part at least 0); an `unused` below 0 by more than
    /// last_cpupid, the one field it counts where it does not fit.
    pub fn inconsistencies(&self) -> Vec<String> {
        let l = &self.page_flags;
        let unused = l.get("unused");
        let mut out = Vec::new();
        if l.sum() != l.get("long") {
            out.push(format!(
                "page_flags' fields add up to {} bits, not long's {}",
                l.sum(),
                l.get("long")
            ));
        }
        if unused.max(0).unsigned_abs() != self.free_bits {
            out.push(format!(
                "free_bits is {} but page_flags' unused is {unused}{}",
                self.free_bits,
                if unused < 0 { ", which leaves 0" } else { "" }
            ));
        }
        if unused < -l.get("last_cpupid") {
            out.push(format!(
                "page_flags' unused is {unused}, but only last_cpupid ({}), counted where it \
                 does not fit, can take it below 0, and not by more than its bits",
                plural(l.width("last_cpupid"), "bit")
            ));
        }
        out
    }
}

/// What `module_tags:` should be, for errors.
const MODULE_TAGS: &str = "chunks N mapped BYTES used BYTES";

/// What `unloaded_modules:` should be, for errors.
const UNLOADED_MODULES: &str = "N names BYTES";

/// The unsigned 64-bit numbers of `value`, whose words are `pattern`'s:
/// each `N` a number, each other word itself; `None` if it is anything else.
fn numbers(value: &str, pattern: &[&str]) -> Option<Vec<u64>> {
    let words: Vec<&str> = value.split_ascii_whitespace().collect();
    if words.len() != pattern.len() {
        return None;
    }
    let mut out = Vec::new();
    for (&word, &expected) in words.iter().zip(pattern) {
        if expected == "N" {
            out.push(word.parse::<u64>().ok()?);
        } else if word != expected {
            return None;
        }
    }
    Some(out)
}

/// `page_flags: long 64 flags 24 ...`: names and widths in pairs.
pub fn parse_layout((n, value): (usize, &str)) -> Result<Layout, String> {
    let words: Vec<&str> = value.split_ascii_whitespace().collect();
    let mut fields: Vec<(String, i32)> = Vec::new();
    for pair in words.chunks(2) {
        let name = pair[0];
        let Some(&width) = pair.get(1) else {
            return Err(format!(
                "line {n}: invalid page_flags: {name:?} has no width"
            ));
        };
        // Only `unused` may be negative.
        let (parsed, least) = if name == "unused" {
            (signed_bits(width), -64)
        } else {
            (bits(width).map(u32::cast_signed), 0)
        };
        let Some(width) = parsed else {
            return Err(format!(
                "line {n}: invalid page_flags: {name} {width:?}: expected a number of bits from {least} to 64"
            ));
        };
        if fields.iter().any(|(f, _)| f == name) {
            return Err(format!("line {n}: invalid page_flags: {name} given twice"));
        }
        fields.push((name.to_owned(), width));
    }
    if let Some(missing) = FIELDS
        .iter()
        .find(|&&f| !fields.iter().any(|(n, _)| n == f))
    {
        return Err(format!(
            "line {n}: invalid page_flags: no {missing} field (expected {})",
            FIELDS.join(", ")
        ));
    }
    Ok(Layout { fields })
}
