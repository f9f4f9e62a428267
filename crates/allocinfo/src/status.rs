//! `allocinfo status`: where the kernel keeps page tags, read from
//! `/sys/kernel/debug/alloctag/status` (alloctag's Rust core, root only):
//! in spare bits of `page->flags` as an index (booted with
//! `sysctl.vm.mem_profiling=1,compressed`) or as a pointer per page in
//! page_ext; and, when vmlinux's tags do not fit in the free bits, which
//! Kconfig changes would free enough of them, from how `page->flags`' bits
//! are spent.
//!
//! `page_flags`' `unused` is 6.12's `NR_UNUSED_PAGEFLAG_BITS`, which counts
//! last_cpupid by its shift even where it does not fit in page flags (and
//! lives in `struct page` instead): it is then negative, and `free_bits`
//! is 0. The fields, `unused` included, add up to `long` all the same, and
//! vmlinux's tags are short by `needed_bits - unused`.
//!
//! The file is one `key: value` a line; keys this tool does not know are
//! skipped (later kernels may add lines), a key it needs that is missing is
//! an error naming it. The last two, `module_tags` (the module data memory
//! that holds loaded and unloaded modules' tags) and `unloaded_modules` (the
//! modules unloaded with live allocations, whose tags are kept), came later:
//! an older kernel's file has neither, and they are then not reported.

use crate::args::InputArgs;
use crate::input;
use allocinfo_format::size::format_iec_u64;
use anyhow::{Result, anyhow};
use clap::{Arg, Args};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// The kernel's status file.
pub const STATUS: &str = "/sys/kernel/debug/alloctag/status";

/// Where debugfs is mounted.
const DEBUGFS: &str = "/sys/kernel/debug";

/// `DEBUGFS_MAGIC` of include/uapi/linux/magic.h.
const DEBUGFS_MAGIC: i64 = 0x6462_6720;

/// The most read from a status file (the kernel's is a few hundred bytes).
const MAX_STATUS: u64 = 1 << 20;

/// The most bits an index may have (include/linux/alloctag_pgflags.h).
pub const MAX_INDEX_BITS: u32 = 16;

/// The boot parameter that asks for page tags in page flags.
const COMPRESSED: &str = "sysctl.vm.mem_profiling=1,compressed";

/// The schema of `status --json`.
pub const SCHEMA: &str = "allocinfo-status/1";

/// `LAST__PID_SHIFT` of include/linux/page-flags-layout.h: last_cpupid is
/// these bits and `NR_CPUS_BITS` (`order_base_2(NR_CPUS)`).
const LAST_PID_SHIFT: u32 = 8;

/// The fewest CPUs, as a power of 2, that a smaller NR_CPUS is suggested
/// down to: 64, x86_64's default without MAXSMP.
const MIN_CPU_BITS: u32 = 6;

/// The NODES_SHIFT that x86's MAXSMP forces (arch/x86/Kconfig), with NR_CPUS=8192.
const MAXSMP_NODES_SHIFT: u32 = 10;

/// The `NR_CPUS_BITS` of more than 4096 CPUs: x86's MAXSMP forces 8192.
const MAXSMP_CPU_BITS: u32 = 13;

#[derive(Args, Debug)]
#[command(mut_args(status_input_help))]
pub struct StatusArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// JSON, one document (schema allocinfo-status/1) on one line.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// Indent the JSON.
    #[arg(long, requires = "json", help_heading = "Output")]
    pub pretty: bool,
}

/// The help of [`InputArgs`] in `status` (every argument is passed, in place, as in `waste`).
fn status_input_help(arg: Arg) -> Arg {
    match arg.get_id().as_str() {
        "positional" => arg.help(
            "The status file to read [default: /sys/kernel/debug/alloctag/status]; \
             `-` reads standard input",
        ),
        "file" => arg.help("The status file to read, as an option (the same as FILE)"),
        _ => arg,
    }
}

/// Where page tags live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageTags {
    /// An index in spare bits of `page->flags`.
    PageFlags,
    /// A pointer per page in page_ext (the default).
    PageExt,
}

impl PageTags {
    fn name(self) -> &'static str {
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
    /// The width of `name`: one of [`FIELDS`], which parsing made sure are there.
    pub fn get(&self, name: &str) -> i32 {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |&(_, v)| v)
    }

    /// The width of `name`, a field other than `unused` (0 to 64).
    fn width(&self, name: &str) -> u32 {
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

/// The keys read, in the kernel's order.
const KEYS: [&str; 12] = [
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
        let line = get("compressed_requested")?;
        let compressed_requested = match line.1 {
            "yes" => true,
            "no" => false,
            _ => return Err(invalid("compressed_requested", line, "yes or no")),
        };
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

    /// The bits this configuration leaves, as vmlinux's tags are short of them:
    /// `unused`, negative where last_cpupid is counted but does not fit; or
    /// `free_bits` where that is less (figures that disagree, warned about).
    fn left(&self) -> i32 {
        self.page_flags
            .get("unused")
            .min(self.free_bits.min(64).cast_signed())
    }

    /// Whether vmlinux's tags fit in the bits this configuration leaves.
    pub fn fit(&self) -> Fit {
        if self.needed_bits > MAX_INDEX_BITS {
            Fit::TooMany
        } else if self.needed_bits > self.free_bits {
            // needed_bits > free_bits >= left: more than 0.
            Fit::Short((self.needed_bits.cast_signed() - self.left()).unsigned_abs())
        } else {
            Fit::Fits
        }
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
fn parse_layout((n, value): (usize, &str)) -> Result<Layout, String> {
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

/// Whether vmlinux's tags fit in the free bits of `page->flags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    Fits,
    /// This many bits short.
    Short(u32),
    /// They need more than [`MAX_INDEX_BITS`]: no layout holds them.
    TooMany,
}

/// One Kconfig change and the bits it frees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The settings, e.g. `NUMA_BALANCING=n`, `MAXSMP=n` and `NODES_SHIFT=5`.
    pub kconfig: Vec<String>,
    /// The `page_flags` fields it shrinks.
    pub fields: &'static [&'static str],
    /// The bits it frees.
    pub bits: u32,
    /// The bits of its fields (more than `bits` for a smaller NODES_SHIFT or NR_CPUS).
    pub of: u32,
    /// What else to know of it, for people.
    pub note: Option<String>,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}: ",
            self.kconfig.join(" and "),
            self.fields.join(", ")
        )?;
        if self.bits < self.of {
            write!(f, "{} of {} bits", self.bits, self.of)?;
        } else {
            write!(f, "{}", plural(self.bits, "bit"))?;
        }
        match &self.note {
            Some(note) => write!(f, "; {note})"),
            None => write!(f, ")"),
        }
    }
}

/// Changes that together free enough bits.
pub type Fix = Vec<Change>;

/// What would free the bits missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fixes {
    /// Each of these frees enough alone.
    Alone(Vec<Fix>),
    /// No change does alone; each of these sets does, and none of its parts is spare.
    Together(Vec<Fix>),
    /// Not even these together, the changes that free the most, free enough.
    NotEnough(Fix),
}

impl Fixes {
    fn list(&self) -> &[Fix] {
        match self {
            Fixes::Alone(f) | Fixes::Together(f) => f,
            Fixes::NotEnough(_) => &[],
        }
    }
}

/// A Kconfig change that shrinks fields of `page->flags`.
struct Candidate {
    /// The most bits it frees.
    max: u32,
    /// The fields it shrinks: two changes of one field do not add up.
    fields: &'static [&'static str],
    /// Whether it frees what it must (a smaller NODES_SHIFT or NR_CPUS),
    /// rather than all `max`.
    partial: bool,
    /// Its change, freeing `bits` (`max` unless `partial`).
    change: Box<dyn Fn(u32) -> Change>,
}

/// The changes that would shrink fields of `layout`, in the order they are
/// suggested (NUMA=n, the most sweeping, last). The bits are those that
/// `NR_UNUSED_PAGEFLAG_BITS` counts: last_cpupid's by its shift, whether or
/// not it fits in page flags.
fn candidates(layout: &Layout) -> Vec<Candidate> {
    let whole = |kconfig: &'static [&'static str], fields: &'static [&'static str]| {
        let max: u32 = fields.iter().map(|f| layout.width(f)).sum();
        Candidate {
            max,
            fields,
            partial: false,
            change: Box::new(move |_| Change {
                kconfig: kconfig.iter().map(|s| (*s).to_owned()).collect(),
                fields,
                bits: max,
                of: max,
                note: None,
            }),
        }
    };
    let nodes = layout.width("nodes");
    let cpupid = layout.width("last_cpupid");
    // NR_CPUS_BITS, with NUMA_BALANCING.
    let cpu_bits = if cpupid > 0 {
        cpupid.saturating_sub(LAST_PID_SHIFT)
    } else {
        0
    };
    let mut all = vec![
        whole(&["NUMA_BALANCING=n"], &["last_cpupid"]),
        whole(&["LRU_GEN=n"], &["lru_gen", "lru_refs"]),
        // A kernel with NUMA keeps NODES_SHIFT=1 at least; x86's MAXSMP
        // forces 10 (its prompt is `if !MAXSMP`), and NR_CPUS=8192.
        Candidate {
            max: nodes.saturating_sub(1),
            fields: &["nodes"],
            partial: true,
            change: Box::new(move |bits| {
                let maxsmp = nodes == MAXSMP_NODES_SHIFT;
                let mut kconfig = Vec::new();
                if maxsmp {
                    kconfig.push("MAXSMP=n".to_owned());
                }
                kconfig.push(format!("NODES_SHIFT={}", nodes - bits));
                Change {
                    kconfig,
                    fields: &["nodes"],
                    bits,
                    of: nodes,
                    note: (maxsmp && cpupid > 0)
                        .then(|| "MAXSMP=n also lets NR_CPUS shrink".to_owned()),
                }
            }),
        },
        // last_cpupid is 8 bits and NR_CPUS_BITS: NR_CPUS=2^k frees
        // NR_CPUS_BITS - k, down to 64 CPUs.
        Candidate {
            max: cpu_bits.saturating_sub(MIN_CPU_BITS),
            fields: &["last_cpupid"],
            partial: true,
            change: Box::new(move |bits| {
                let k = cpu_bits - bits;
                let mut kconfig = Vec::new();
                if cpu_bits >= MAXSMP_CPU_BITS {
                    kconfig.push("MAXSMP=n".to_owned());
                }
                kconfig.push(format!("NR_CPUS={}", 1u64 << k));
                Change {
                    kconfig,
                    fields: &["last_cpupid"],
                    bits,
                    of: cpupid,
                    note: (k == MIN_CPU_BITS)
                        .then(|| format!("{} CPUs, the fewest suggested", 1u64 << MIN_CPU_BITS)),
                }
            }),
        },
        whole(&["KASAN_SW_TAGS=n", "KASAN_HW_TAGS=n"], &["kasan_tag"]),
        whole(&["SPARSEMEM_VMEMMAP=y"], &["sections"]),
    ];
    // NUMA=n frees all of nodes, and last_cpupid too: NUMA_BALANCING
    // depends on NUMA. Without nodes in page flags it frees no more than
    // NUMA_BALANCING=n.
    if nodes > 0 {
        let (fields, note): (&'static [&'static str], _) = if cpupid > 0 {
            (
                &["nodes", "last_cpupid"],
                Some("NUMA_BALANCING goes with it"),
            )
        } else {
            (&["nodes"], None)
        };
        let max = nodes + cpupid;
        all.push(Candidate {
            max,
            fields,
            partial: false,
            change: Box::new(move |_| Change {
                kconfig: vec!["NUMA=n".to_owned()],
                fields,
                bits: max,
                of: max,
                note: note.map(str::to_owned),
            }),
        });
    }
    all.retain(|c| c.max > 0);
    all
}

/// The changes of `set` (indices of `cands`) that together free `short`
/// bits: the whole ones all theirs, the partial ones, in order, each what
/// the later ones at their most leave.
fn assign(cands: &[Candidate], set: &[usize], short: u32) -> Fix {
    let whole: u32 = set
        .iter()
        .filter(|&&i| !cands[i].partial)
        .map(|&i| cands[i].max)
        .sum();
    let mut left = short.saturating_sub(whole);
    set.iter()
        .enumerate()
        .map(|(n, &i)| {
            let c = &cands[i];
            if !c.partial {
                return (c.change)(c.max);
            }
            let later: u32 = set[n + 1..]
                .iter()
                .filter(|&&j| cands[j].partial)
                .map(|&j| cands[j].max)
                .sum();
            let bits = left.saturating_sub(later).min(c.max);
            left -= bits;
            (c.change)(bits)
        })
        .collect()
}

/// The Kconfig changes that free `short` more bits of `layout`: those that
/// do alone, else the smallest sets that do together, else the set that frees
/// the most. No set has two changes of one field.
pub fn fixes(layout: &Layout, short: u32) -> Fixes {
    let cands = candidates(layout);
    let alone: Vec<Fix> = cands
        .iter()
        .filter(|c| c.max >= short)
        .map(|c| vec![(c.change)(short.min(c.max))])
        .collect();
    if !alone.is_empty() {
        return Fixes::Alone(alone);
    }
    // Every set of changes of different fields, with the bits it frees at most.
    let mut compatible: Vec<(Vec<usize>, u32)> = Vec::new();
    for mask in 1u32..(1 << cands.len()) {
        let set: Vec<usize> = (0..cands.len()).filter(|i| mask & (1 << i) != 0).collect();
        let mut fields: Vec<&str> = set.iter().flat_map(|&i| cands[i].fields).copied().collect();
        let n = fields.len();
        fields.sort_unstable();
        fields.dedup();
        if fields.len() == n {
            let sum = set.iter().map(|&i| cands[i].max).sum();
            compatible.push((set, sum));
        }
    }
    // The fewest changes first, then in the order of [`candidates`].
    compatible.sort_by(|(a, _), (b, _)| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    // Enough, and none of them spare.
    let sets: Vec<&Vec<usize>> = compatible
        .iter()
        .filter(|(set, sum)| *sum >= short && set.iter().all(|&i| sum - cands[i].max < short))
        .map(|(set, _)| set)
        .collect();
    if sets.is_empty() {
        // The first of those that free the most.
        let most = compatible.iter().map(|&(_, sum)| sum).max().unwrap_or(0);
        let best = compatible
            .iter()
            .find(|&&(_, sum)| sum == most)
            .map_or(&[][..], |(set, _)| set);
        return Fixes::NotEnough(
            best.iter()
                .map(|&i| (cands[i].change)(cands[i].max))
                .collect(),
        );
    }
    Fixes::Together(sets.iter().map(|set| assign(&cands, set, short)).collect())
}

/// `n thing`, `n things`.
fn plural(n: impl Into<u64>, thing: &str) -> String {
    let n = n.into();
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// Why vmlinux's tags do or do not fit, as a sentence, and what would free the bits.
fn fit_text(s: &Status, out: &mut String, fits_lead: &str, short_lead: &str) {
    let need = format!(
        "vmlinux's {} need an index of {}",
        plural(s.vmlinux_tags, "allocation tag"),
        plural(s.needed_bits, "bit")
    );
    match s.fit() {
        Fit::TooMany => {
            let _ = writeln!(
                out,
                "{short_lead}: {need}, more than the {MAX_INDEX_BITS} an index may have: \
                 no page->flags layout holds them"
            );
        }
        Fit::Fits => {
            let _ = writeln!(
                out,
                "{fits_lead}: {need}, and this configuration leaves {} of page->flags free",
                plural(s.free_bits, "bit")
            );
        }
        Fit::Short(short) => {
            let left = s.left();
            let cpupid = s.page_flags.get("last_cpupid");
            let leaves = if left >= 0 {
                format!("{} of page->flags free", plural(left.unsigned_abs(), "bit"))
            } else if cpupid > 0 {
                format!(
                    "{left} bits of page->flags free (last_cpupid's {cpupid} bits do not fit \
                     there, yet NR_UNUSED_PAGEFLAG_BITS counts them)"
                )
            } else {
                format!("{left} bits of page->flags free")
            };
            let _ = writeln!(
                out,
                "{short_lead}: {need}, and this configuration leaves {leaves}: {short} more {} \
                 needed",
                if short == 1 { "bit" } else { "bits" }
            );
            match fixes(&s.page_flags, short) {
                Fixes::Alone(list) => {
                    let _ = writeln!(out, "Kconfig changes that free enough bits alone:");
                    for fix in list {
                        let _ = writeln!(out, "  {}", fix[0]);
                    }
                }
                Fixes::Together(list) => {
                    let _ = writeln!(
                        out,
                        "no Kconfig change frees {} alone; together:",
                        plural(short, "bit")
                    );
                    for fix in list {
                        let parts: Vec<String> = fix.iter().map(Change::to_string).collect();
                        let _ = writeln!(out, "  {}", parts.join(" + "));
                    }
                }
                Fixes::NotEnough(all) if all.is_empty() => {
                    let _ = writeln!(
                        out,
                        "no Kconfig change this tool knows frees page->flags bits here \
                         (NUMA_BALANCING, LRU_GEN, NODES_SHIFT, NR_CPUS, KASAN tags, \
                         sections and NUMA take none)"
                    );
                }
                Fixes::NotEnough(all) => {
                    let freed: u32 = all.iter().map(|c| c.bits).sum();
                    let parts: Vec<String> = all.iter().map(Change::to_string).collect();
                    let _ = writeln!(
                        out,
                        "even these together, the changes that free the most, free only \
                         {freed} of the {short}: {}",
                        parts.join(" + ")
                    );
                }
            }
        }
    }
}

/// The text for people.
pub fn text(s: &Status) -> String {
    let mut out = String::new();
    match (s.page_tags, s.compressed_requested) {
        (PageTags::PageFlags, _) => {
            let _ = writeln!(
                out,
                "page tags: in page flags ({} free bits, index of {}: {} of {} indices used, {} by vmlinux)",
                s.free_bits,
                plural(s.index_bits, "bit"),
                s.indices_used,
                s.indices_capacity,
                s.vmlinux_tags
            );
        }
        (PageTags::PageExt, true) => {
            let _ = writeln!(
                out,
                "page tags: in page_ext, although {COMPRESSED} asked for page flags"
            );
            let cap = s.free_bits.min(MAX_INDEX_BITS);
            if s.fit() == Fit::Fits && s.needed_bits > s.index_bits && s.index_bits < cap {
                let _ = writeln!(
                    out,
                    "why: vmlinux's {} need an index of {}, and the index was limited to {} \
                     (below the {} free: a test parameter lowered it)",
                    plural(s.vmlinux_tags, "allocation tag"),
                    plural(s.needed_bits, "bit"),
                    plural(s.index_bits, "bit"),
                    s.free_bits
                );
            } else if s.fit() == Fit::Fits {
                let _ = writeln!(
                    out,
                    "why: not said: vmlinux's {} need an index of {}, which {} free bits hold \
                     (the boot log says more: dmesg | grep alloctag)",
                    plural(s.vmlinux_tags, "allocation tag"),
                    plural(s.needed_bits, "bit"),
                    s.free_bits
                );
            } else {
                fit_text(s, &mut out, "why", "why");
            }
        }
        (PageTags::PageExt, false) => {
            let _ = writeln!(out, "page tags: in page_ext (the default)");
            fit_text(
                s,
                &mut out,
                &format!("with {COMPRESSED} they would fit in page flags"),
                &format!("with {COMPRESSED} they would not fit in page flags"),
            );
        }
    }
    if s.tags_without_index > 0 {
        let n = s.tags_without_index;
        let _ = writeln!(
            out,
            "index full: {} got no index; {} pages are not counted \
             (accurate:no in /proc/allocinfo format 2.0)",
            plural(n, "module or dynamic tag"),
            if n == 1 { "its" } else { "their" }
        );
    }
    let fields: Vec<String> = s
        .page_flags
        .fields
        .iter()
        .filter(|(n, _)| n != "long")
        .map(|(n, v)| format!("{n} {v}"))
        .collect();
    let _ = writeln!(
        out,
        "page->flags ({} bits): {}",
        s.page_flags.get("long"),
        fields.join(", ")
    );
    // Lines an older kernel does not have: nothing when they are not there.
    match s.module_tags {
        Some(ModuleTags {
            chunks: 0,
            mapped: 0,
            used: 0,
        }) => {
            let _ = writeln!(out, "module tags: none (no chunks mapped)");
        }
        Some(m) => {
            let _ = writeln!(
                out,
                "module tags: {} in {} ({} mapped)",
                plural(m.used, "byte"),
                plural(m.chunks, "chunk"),
                format_iec_u64(m.mapped)
            );
        }
        None => {}
    }
    match s.unloaded_modules {
        Some(UnloadedModules { count: 0, .. }) => {
            let _ = writeln!(out, "unloaded modules: none kept");
        }
        Some(u) => {
            let _ = writeln!(
                out,
                "unloaded modules: {} kept with live allocations ({} of names); list them with \
                 allocinfo --unloaded",
                u.count,
                plural(u.names, "byte")
            );
        }
        None => {}
    }
    out
}

/// The JSON document.
pub fn json(s: &Status) -> Value {
    let layout: serde_json::Map<String, Value> = s
        .page_flags
        .fields
        .iter()
        .map(|(n, v)| (n.clone(), Value::from(*v)))
        .collect();
    let (short, fixes) = match s.fit() {
        Fit::Fits => (Some(0), Vec::new()),
        Fit::TooMany => (None, Vec::new()),
        Fit::Short(short) => (Some(short), fixes(&s.page_flags, short).list().to_vec()),
    };
    let fixes: Vec<Value> = fixes
        .iter()
        .map(|fix| {
            json!({
                "bits": fix.iter().map(|c| c.bits).sum::<u32>(),
                "changes": fix.iter().map(|c| json!({
                    "kconfig": c.kconfig,
                    "fields": c.fields,
                    "bits": c.bits,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "schema": SCHEMA,
        "page_tags": s.page_tags.name(),
        "compressed_requested": s.compressed_requested,
        "free_bits": s.free_bits,
        "index_bits": s.index_bits,
        "needed_bits": s.needed_bits,
        "vmlinux_tags": s.vmlinux_tags,
        "indices_used": s.indices_used,
        "indices_capacity": s.indices_capacity,
        "tags_without_index": s.tags_without_index,
        "page_flags": layout,
        "fits": s.fit() == Fit::Fits,
        "bits_short": short,
        "fixes": fixes,
        // null where the kernel has no such line (an older kernel).
        "module_tags": s.module_tags.map(|m| json!({
            "chunks": m.chunks,
            "mapped": m.mapped,
            "used": m.used,
        })),
        "unloaded_modules": s.unloaded_modules.map(|u| json!({
            "count": u.count,
            "names": u.names,
        })),
    })
}

/// Whether debugfs is mounted on [`DEBUGFS`]; `None` when that cannot be told.
fn debugfs_mounted() -> Option<bool> {
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: a NUL-terminated path; statfs writes a `struct statfs` into
    // `st`, which is large enough.
    let rc = unsafe { libc::statfs(c"/sys/kernel/debug".as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: the call succeeded, so it filled `st`.
    let st = unsafe { st.assume_init() };
    // f_type is i64 here, u32 or u64 on other architectures.
    #[allow(clippy::unnecessary_cast)]
    Some(st.f_type as i64 == DEBUGFS_MAGIC)
}

/// The value of the last `debugfs=` on the kernel's command line
/// (`on`, `no-mount`, `off`), if any; `None` when that cannot be told.
fn debugfs_param() -> Option<String> {
    let cmdline = std::fs::read_to_string("/proc/cmdline").ok()?;
    cmdline
        .split_ascii_whitespace()
        .filter_map(|w| w.strip_prefix("debugfs="))
        .next_back()
        .map(str::to_owned)
}

/// Why the status file could not be opened: for the kernel's path, the
/// likely reasons (`mounted`: whether debugfs is, if known; `param`: the
/// kernel's `debugfs=`, if any). A path elsewhere was given by hand, and its
/// own error says enough. Kernel lockdown is none of them: debugfs makes its
/// files under lockdown, and a read-only 0400 file without ioctl or mmap,
/// as this one, opens under it (fs/debugfs/file.c, `debugfs_locked_down`).
fn open_error(
    path: &Path,
    e: &io::Error,
    mounted: Option<bool>,
    param: Option<&str>,
) -> anyhow::Error {
    let name = path.display();
    if !path.starts_with(DEBUGFS) {
        return anyhow!("reading {name}: {e}");
    }
    const MOUNT: &str = "mount -t debugfs none /sys/kernel/debug";
    const RUST: &str = "alloctag's Rust core (CONFIG_MEM_ALLOC_PROFILING_RUST)";
    // debugfs=off and debugfs=no-mount leave no debugfs to mount.
    let unmountable = param.filter(|&p| p == "off" || p == "no-mount");
    let why = match (e.kind(), e.raw_os_error()) {
        (io::ErrorKind::NotFound, _) => match (mounted, unmountable) {
            (Some(true), _) => format!(
                "debugfs is mounted, but this kernel has no such file: it lacks {RUST}, \
                 or is older than the file"
            ),
            (_, Some(p)) => format!(
                "debugfs is not mounted, and cannot be: the kernel was booted with \
                 debugfs={p} (boot without it, or with debugfs=on)"
            ),
            (Some(false), None) => format!(
                "debugfs is not mounted ({MOUNT}; a kernel without CONFIG_DEBUG_FS, or booted \
                 with debugfs=off or debugfs=no-mount, has none to mount)"
            ),
            (None, None) => format!(
                "debugfs is not mounted ({MOUNT}), or the kernel was booted with debugfs=off \
                 or debugfs=no-mount, or lacks CONFIG_DEBUG_FS or {RUST}"
            ),
        },
        (io::ErrorKind::PermissionDenied, Some(libc::EACCES)) => {
            "the file is root's (debugfs is mode 0700, the file 0400): run as root".to_owned()
        }
        (io::ErrorKind::PermissionDenied, _) => {
            "not root (run as root), or a security module refused it".to_owned()
        }
        _ => return anyhow!("reading {name}: {e}"),
    };
    anyhow!("reading {name}: {e}: {why}")
}

/// Reads the status file at `path` (`-`: standard input) whole, bounded.
fn read(path: &Path) -> Result<String> {
    let (raw, name) = if path.as_os_str() == "-" {
        let name = "standard input";
        (
            input::read_text(io::stdin().lock(), name, MAX_STATUS, "alloctag status file")?,
            name.to_owned(),
        )
    } else {
        let name = path.display().to_string();
        let file = std::fs::File::open(path)
            .map_err(|e| open_error(path, &e, debugfs_mounted(), debugfs_param().as_deref()))?;
        (
            input::read_text(file, &name, MAX_STATUS, "alloctag status file")?,
            name,
        )
    };
    String::from_utf8(raw).map_err(|e| anyhow!("{name}: not UTF-8 text: {e}"))
}

pub fn run(args: StatusArgs) -> Result<()> {
    let path = args.input.path_or(STATUS);
    let raw = read(&path)?;
    let name = allocinfo_output::source_name(&path.to_string_lossy()).to_owned();
    let status = Status::parse(&raw).map_err(|e| anyhow!("{name}: {e}"))?;
    for warning in status.inconsistencies() {
        eprintln!("allocinfo: warning: {name}: {warning}");
    }
    let out = match (args.json, args.pretty) {
        (false, _) => text(&status),
        (true, false) => format!("{}\n", json(&status)),
        (true, true) => format!("{}\n", serde_json::to_string_pretty(&json(&status))?),
    };
    crate::write_stdout(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN: &str = "\
page_tags: page_ext
compressed_requested: yes
free_bits: 2
index_bits: 2
needed_bits: 12
vmlinux_tags: 3700
indices_used: 0
indices_capacity: 0
tags_without_index: 0
page_flags: long 64 flags 24 sections 0 nodes 10 zones 2 last_cpupid 21 kasan_tag 0 lru_gen 3 lru_refs 2 unused 2
";

    fn layout(text: &str) -> Layout {
        parse_layout((1, text)).unwrap()
    }

    fn settings(fix: &Fix) -> Vec<String> {
        fix.iter().map(|c| c.kconfig.join(" and ")).collect()
    }

    #[test]
    fn debian_needs_numa_balancing_off() {
        let s = Status::parse(DEBIAN).unwrap();
        assert_eq!(s.fit(), Fit::Short(10));
        assert!(s.inconsistencies().is_empty());
        let Fixes::Alone(list) = fixes(&s.page_flags, 10) else {
            panic!("NUMA_BALANCING=n alone frees 21 bits")
        };
        // NODES_SHIFT=1 frees only 9, NR_CPUS=64 7, LRU_GEN=n 5; NUMA=n
        // frees nodes and last_cpupid.
        let names: Vec<String> = list.iter().map(|f| f[0].to_string()).collect();
        assert_eq!(
            names,
            [
                "NUMA_BALANCING=n (last_cpupid: 21 bits)",
                "NUMA=n (nodes, last_cpupid: 31 bits; NUMA_BALANCING goes with it)"
            ]
        );
        assert_eq!(list[0][0].bits, 21);
    }

    #[test]
    fn without_numa_balancing_combinations_are_minimal() {
        let l = layout(
            "long 64 flags 24 sections 0 nodes 10 zones 2 last_cpupid 0 kasan_tag 0 lru_gen 3 lru_refs 2 unused 23",
        );
        // 11 short: NODES_SHIFT frees 9 at most (and needs MAXSMP=n, which
        // forces 10), NUMA=n 10, LRU_GEN 5: LRU_GEN with either, and
        // NODES_SHIFT only as much as LRU_GEN leaves; never NODES_SHIFT with NUMA=n.
        let Fixes::Together(list) = fixes(&l, 11) else {
            panic!()
        };
        let names: Vec<Vec<String>> = list.iter().map(settings).collect();
        assert_eq!(
            names,
            [
                vec!["LRU_GEN=n", "MAXSMP=n and NODES_SHIFT=4"],
                vec!["LRU_GEN=n", "NUMA=n"]
            ]
        );
        assert_eq!(list[0].iter().map(|c| c.bits).collect::<Vec<_>>(), [5, 6]);
        // No NR_CPUS note: without NUMA_BALANCING, NR_CPUS takes no bits.
        assert_eq!(
            list[0][1].to_string(),
            "MAXSMP=n and NODES_SHIFT=4 (nodes: 6 of 10 bits)"
        );
        assert_eq!(list[1][1].to_string(), "NUMA=n (nodes: 10 bits)");
        // 10 short: NUMA=n alone.
        let Fixes::Alone(list) = fixes(&l, 10) else {
            panic!()
        };
        let names: Vec<Vec<String>> = list.iter().map(settings).collect();
        assert_eq!(names, [vec!["NUMA=n"]]);
        // 4 short: LRU_GEN=n, NODES_SHIFT=6 or NUMA=n alone.
        let Fixes::Alone(list) = fixes(&l, 4) else {
            panic!()
        };
        let names: Vec<Vec<String>> = list.iter().map(settings).collect();
        assert_eq!(
            names,
            [
                vec!["LRU_GEN=n"],
                vec!["MAXSMP=n and NODES_SHIFT=6"],
                vec!["NUMA=n"]
            ]
        );
        // 16 short: not even LRU_GEN=n and NUMA=n, the most (NODES_SHIFT's
        // bits are NUMA=n's: they do not add up).
        let Fixes::NotEnough(all) = fixes(&l, 16) else {
            panic!()
        };
        let names: Vec<String> = all.iter().map(|c| c.kconfig.join(" and ")).collect();
        assert_eq!(names, ["LRU_GEN=n", "NUMA=n"]);
        assert_eq!(all.iter().map(|c| c.bits).sum::<u32>(), 15);
    }

    /// A MAXSMP kernel with NUMA_BALANCING, LRU_GEN=n and 32 page flags:
    /// last_cpupid's 21 bits do not fit, and NR_UNUSED_PAGEFLAG_BITS is -1.
    const MAXSMP: &str = "\
page_tags: page_ext
compressed_requested: yes
free_bits: 0
index_bits: 0
needed_bits: 12
vmlinux_tags: 3700
indices_used: 0
indices_capacity: 0
tags_without_index: 0
page_flags: long 64 flags 32 sections 0 nodes 10 zones 2 last_cpupid 21 kasan_tag 0 lru_gen 0 lru_refs 0 unused -1
";

    #[test]
    fn a_negative_unused_is_bits_owed() {
        let s = Status::parse(MAXSMP).unwrap();
        assert_eq!(s.page_flags.get("unused"), -1);
        // The fields add up to long, and free_bits is unused at least 0.
        assert!(s.inconsistencies().is_empty(), "{:?}", s.inconsistencies());
        // 12 needed of -1: 13, not 12 - free_bits.
        assert_eq!(s.fit(), Fit::Short(13));
        let out = text(&s);
        assert_eq!(
            out.lines().nth(1).unwrap(),
            "why: vmlinux's 3700 allocation tags need an index of 12 bits, and this \
             configuration leaves -1 bits of page->flags free (last_cpupid's 21 bits do not \
             fit there, yet NR_UNUSED_PAGEFLAG_BITS counts them): 13 more bits needed"
        );
        assert!(out.ends_with("lru_refs 0, unused -1\n"), "{out}");
        let v = json(&s);
        assert_eq!(v["page_flags"]["unused"], -1);
        assert_eq!(v["free_bits"], 0);
        assert_eq!(v["bits_short"], 13);
        // The advice closes the 13: NR_CPUS (7 at most) and NODES_SHIFT (9)
        // do not alone.
        let Fixes::Alone(list) = fixes(&s.page_flags, 13) else {
            panic!()
        };
        let names: Vec<Vec<String>> = list.iter().map(settings).collect();
        assert_eq!(names, [vec!["NUMA_BALANCING=n"], vec!["NUMA=n"]]);
        assert!(list.iter().all(|f| f[0].bits >= 13));
    }

    #[test]
    fn a_shortfall_of_more_than_the_free_bits_needs_more_changes() {
        // 12 bits needed, unused -4: 16 short, not 12 (needed_bits -
        // free_bits), which only NUMA_BALANCING=n and NUMA=n free alone.
        let s = Status::parse(
            &MAXSMP
                .replace("flags 32", "flags 35")
                .replace("unused -1", "unused -4"),
        )
        .unwrap();
        assert!(s.inconsistencies().is_empty(), "{:?}", s.inconsistencies());
        assert_eq!(s.fit(), Fit::Short(16));
        let Fixes::Alone(list) = fixes(&s.page_flags, 16) else {
            panic!()
        };
        let names: Vec<Vec<String>> = list.iter().map(settings).collect();
        assert_eq!(names, [vec!["NUMA_BALANCING=n"], vec!["NUMA=n"]]);
        // 9 short: NODES_SHIFT=1 alone (MAXSMP=n, which also lets NR_CPUS shrink).
        let Fixes::Alone(list) = fixes(&s.page_flags, 9) else {
            panic!()
        };
        assert_eq!(
            list[1][0].to_string(),
            "MAXSMP=n and NODES_SHIFT=1 (nodes: 9 of 10 bits; MAXSMP=n also lets NR_CPUS shrink)"
        );
    }

    #[test]
    fn a_smaller_nr_cpus_frees_last_cpupid_bits() {
        // MAXSMP's NR_CPUS=8192: last_cpupid 8 + 13.
        let l = layout(
            "long 64 flags 24 sections 0 nodes 0 zones 2 last_cpupid 21 kasan_tag 0 lru_gen 3 lru_refs 2 unused 12",
        );
        let Fixes::Alone(list) = fixes(&l, 4) else {
            panic!()
        };
        let names: Vec<String> = list.iter().map(|f| f[0].to_string()).collect();
        // No NUMA=n: without nodes in page flags it frees what NUMA_BALANCING=n does.
        assert_eq!(
            names,
            [
                "NUMA_BALANCING=n (last_cpupid: 21 bits)",
                "LRU_GEN=n (lru_gen, lru_refs: 5 bits)",
                "MAXSMP=n and NR_CPUS=512 (last_cpupid: 4 of 21 bits)"
            ]
        );
        // Down to 64 CPUs, and no further.
        let Fixes::Alone(list) = fixes(&l, 7) else {
            panic!()
        };
        assert_eq!(
            list[1][0].to_string(),
            "MAXSMP=n and NR_CPUS=64 (last_cpupid: 7 of 21 bits; 64 CPUs, the fewest suggested)"
        );
        let Fixes::Alone(list) = fixes(&l, 8) else {
            panic!()
        };
        assert_eq!(settings(&list[0]), ["NUMA_BALANCING=n"]);
        assert_eq!(list.len(), 1);
        // NR_CPUS=512 (last_cpupid 17) needs no MAXSMP=n; 64 CPUs or fewer free nothing.
        let l = layout(
            "long 64 flags 24 sections 0 nodes 0 zones 2 last_cpupid 17 kasan_tag 0 lru_gen 3 lru_refs 2 unused 16",
        );
        let Fixes::Alone(list) = fixes(&l, 2) else {
            panic!()
        };
        assert_eq!(
            list[2][0].to_string(),
            "NR_CPUS=128 (last_cpupid: 2 of 17 bits)"
        );
        let l = layout(
            "long 64 flags 24 sections 0 nodes 0 zones 2 last_cpupid 14 kasan_tag 0 lru_gen 3 lru_refs 2 unused 19",
        );
        let Fixes::Alone(list) = fixes(&l, 1) else {
            panic!()
        };
        assert!(
            list.iter().all(|f| !f[0].kconfig[0].starts_with("NR_CPUS")),
            "{list:?}"
        );
    }

    #[test]
    fn changes_of_one_field_are_not_added_up() {
        // Debian's: last_cpupid is NUMA_BALANCING=n's, NR_CPUS' and NUMA=n's,
        // nodes NODES_SHIFT's and NUMA=n's.
        let l = Status::parse(DEBIAN).unwrap().page_flags;
        let Fixes::Together(list) = fixes(&l, 32) else {
            panic!()
        };
        let names: Vec<Vec<String>> = list.iter().map(settings).collect();
        assert_eq!(
            names,
            [
                vec!["LRU_GEN=n", "NUMA=n"],
                vec![
                    "NUMA_BALANCING=n",
                    "LRU_GEN=n",
                    "MAXSMP=n and NODES_SHIFT=4"
                ],
            ]
        );
        // NODES_SHIFT frees what the others leave: 32 - 21 - 5.
        assert_eq!(list[1][2].bits, 6);
        // 37 short: the most is 36, LRU_GEN=n with NUMA=n, not 21 + 7 + 9 + 31 + 5.
        let Fixes::NotEnough(all) = fixes(&l, 37) else {
            panic!()
        };
        let names: Vec<String> = all.iter().map(|c| c.kconfig.join(" and ")).collect();
        assert_eq!(names, ["LRU_GEN=n", "NUMA=n"]);
        assert_eq!(all.iter().map(|c| c.bits).sum::<u32>(), 36);
    }

    #[test]
    fn a_negative_unused_that_does_not_add_up_is_warned_about() {
        let bad = |from: &str, to: &str| {
            Status::parse(&MAXSMP.replace(from, to))
                .unwrap()
                .inconsistencies()
        };
        assert_eq!(
            bad("free_bits: 0", "free_bits: 1"),
            ["free_bits is 1 but page_flags' unused is -1, which leaves 0"]
        );
        // Below 0 by more than last_cpupid's bits: the fields do not add up either.
        assert_eq!(
            bad("unused -1", "unused -22")[1],
            "page_flags' unused is -22, but only last_cpupid (21 bits), counted where it does \
             not fit, can take it below 0, and not by more than its bits"
        );
        // A free_bits above unused: short by needed_bits - unused all the same.
        let s = Status::parse(&MAXSMP.replace("free_bits: 0", "free_bits: 3")).unwrap();
        assert_eq!(s.fit(), Fit::Short(13));
    }

    #[test]
    fn combinations_leave_out_sets_with_a_spare_part() {
        // sections 8, kasan 4, lru 5, last_cpupid 3: 9 short.
        let l = layout(
            "long 64 flags 24 sections 8 nodes 0 zones 2 last_cpupid 3 kasan_tag 4 lru_gen 3 lru_refs 2 unused 18",
        );
        let Fixes::Together(list) = fixes(&l, 9) else {
            panic!()
        };
        let names: Vec<Vec<String>> = list.iter().map(settings).collect();
        assert_eq!(
            names,
            [
                vec!["NUMA_BALANCING=n", "SPARSEMEM_VMEMMAP=y"],
                vec!["LRU_GEN=n", "KASAN_SW_TAGS=n and KASAN_HW_TAGS=n"],
                vec!["LRU_GEN=n", "SPARSEMEM_VMEMMAP=y"],
                vec!["KASAN_SW_TAGS=n and KASAN_HW_TAGS=n", "SPARSEMEM_VMEMMAP=y"],
            ]
        );
    }

    /// DEBIAN with `key`'s value replaced.
    fn debian_with(edits: &[(&str, &str)]) -> Status {
        let text: String = DEBIAN
            .lines()
            .map(|l| {
                let key = l.split_once(':').unwrap().0;
                match edits.iter().find(|(k, _)| *k == key) {
                    Some((k, v)) => format!("{k}: {v}\n"),
                    None => format!("{l}\n"),
                }
            })
            .collect();
        Status::parse(&text).unwrap()
    }

    #[test]
    fn an_index_lowered_below_the_free_bits_is_no_kconfig_matter() {
        // The test kernel's pgflags-fallback boot: 4 bits granted of 41.
        let s = debian_with(&[
            ("free_bits", "41"),
            ("index_bits", "4"),
            ("needed_bits", "11"),
            ("vmlinux_tags", "1049"),
            (
                "page_flags",
                "long 64 flags 21 sections 0 nodes 0 zones 2 last_cpupid 0 kasan_tag 0 lru_gen 0 lru_refs 0 unused 41",
            ),
        ]);
        assert!(s.inconsistencies().is_empty());
        let out = text(&s);
        assert_eq!(
            out.lines().nth(1).unwrap(),
            "why: vmlinux's 1049 allocation tags need an index of 11 bits, and the index was \
             limited to 4 bits (below the 41 free: a test parameter lowered it)"
        );
        assert!(!out.contains("Kconfig"), "{out}");
        assert_eq!(json(&s)["fits"], true);
    }

    #[test]
    fn more_than_sixteen_bits_fit_no_layout() {
        let s = debian_with(&[("needed_bits", "17"), ("vmlinux_tags", "70000")]);
        assert_eq!(s.fit(), Fit::TooMany);
        let out = text(&s);
        assert!(
            out.contains(
                "why: vmlinux's 70000 allocation tags need an index of 17 bits, more than \
                 the 16 an index may have: no page->flags layout holds them\n"
            ),
            "{out}"
        );
        assert!(!out.contains("NUMA_BALANCING"), "{out}");
        let v = json(&s);
        assert_eq!(v["bits_short"], Value::Null);
        assert_eq!(v["fits"], false);
    }

    #[test]
    fn a_fallback_the_figures_do_not_explain_points_at_the_log() {
        let s = debian_with(&[
            ("free_bits", "14"),
            ("index_bits", "14"),
            ("needed_bits", "11"),
        ]);
        assert!(text(&s).contains("why: not said:"), "{}", text(&s));
    }

    #[test]
    fn no_field_to_shrink() {
        let s = debian_with(&[(
            "page_flags",
            "long 64 flags 60 sections 0 nodes 0 zones 2 last_cpupid 0 kasan_tag 0 lru_gen 0 lru_refs 0 unused 2",
        )]);
        let out = text(&s);
        assert!(
            out.contains("no Kconfig change this tool knows frees page->flags bits here"),
            "{out}"
        );
    }

    #[test]
    fn sections_and_kasan_tags_are_suggested() {
        let l = layout(
            "long 64 flags 24 sections 12 nodes 0 zones 2 last_cpupid 0 kasan_tag 8 lru_gen 0 lru_refs 0 unused 18",
        );
        let Fixes::Alone(list) = fixes(&l, 8) else {
            panic!()
        };
        let names: Vec<String> = list.iter().map(|f| f[0].to_string()).collect();
        assert_eq!(
            names,
            [
                "KASAN_SW_TAGS=n and KASAN_HW_TAGS=n (kasan_tag: 8 bits)",
                "SPARSEMEM_VMEMMAP=y (sections: 12 bits)"
            ]
        );
    }

    #[test]
    fn missing_file_reasons() {
        let missing = io::Error::from_raw_os_error(libc::ENOENT);
        let p = Path::new(STATUS);
        let unmounted = open_error(p, &missing, Some(false), None).to_string();
        assert!(
            unmounted.starts_with("reading /sys/kernel/debug/alloctag/status: No such file")
                && unmounted.contains("mount -t debugfs none /sys/kernel/debug")
                && unmounted.contains("CONFIG_DEBUG_FS")
                && unmounted.contains("debugfs=off or debugfs=no-mount"),
            "{unmounted}"
        );
        let mounted = open_error(p, &missing, Some(true), Some("on")).to_string();
        assert!(
            mounted.ends_with(
                "debugfs is mounted, but this kernel has no such file: it lacks alloctag's \
                 Rust core (CONFIG_MEM_ALLOC_PROFILING_RUST), or is older than the file"
            ),
            "{mounted}"
        );
        let unknown = open_error(p, &missing, None, None).to_string();
        for reason in [
            "mount -t debugfs",
            "debugfs=off",
            "debugfs=no-mount",
            "CONFIG_DEBUG_FS",
            "CONFIG_MEM_ALLOC_PROFILING_RUST",
        ] {
            assert!(unknown.contains(reason), "{reason}: {unknown}");
        }
        // debugfs=off or no-mount on the command line: nothing to mount.
        for param in ["off", "no-mount"] {
            for mounted in [Some(false), None] {
                let e = open_error(p, &missing, mounted, Some(param)).to_string();
                assert!(
                    e.ends_with(&format!(
                        "debugfs is not mounted, and cannot be: the kernel was booted with \
                         debugfs={param} (boot without it, or with debugfs=on)"
                    )),
                    "{e}"
                );
            }
        }
        let denied = open_error(p, &io::Error::from_raw_os_error(libc::EACCES), None, None);
        assert!(denied.to_string().ends_with("run as root"), "{denied}");
        let eperm = open_error(p, &io::Error::from_raw_os_error(libc::EPERM), None, None);
        assert!(eperm.to_string().contains("not root"), "{eperm}");
        // Lockdown neither keeps debugfs from making the file nor this
        // read-only 0400 file from opening.
        for e in [&unmounted, &mounted, &unknown, &eperm.to_string()] {
            assert!(!e.contains("lockdown"), "{e}");
        }
        // A file named by hand: its error alone.
        let other = open_error(Path::new("/tmp/status"), &missing, Some(false), None).to_string();
        assert_eq!(
            other,
            "reading /tmp/status: No such file or directory (os error 2)"
        );
    }
}
