//! Whether vmlinux's tags fit in the free bits of `page->flags`, and which
//! Kconfig changes would free the bits they are short of, from how the
//! layout spends them.

use super::parse::{Layout, Status};
use super::plural;

/// The most bits an index may have (include/linux/alloctag_pgflags.h).
pub const MAX_INDEX_BITS: u32 = 16;

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

impl Status {
    /// The bits this configuration leaves, as vmlinux's tags are short of them:
    /// `unused`, negative where last_cpupid is counted but does not fit; or
    /// `free_bits` where that is less (figures that disagree, warned about).
    pub fn left(&self) -> i32 {
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
    pub fn list(&self) -> &[Fix] {
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
