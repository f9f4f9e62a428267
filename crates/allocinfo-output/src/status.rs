//! `allocinfo status`'s outputs: a text for people and a JSON document
//! (`allocinfo_format::status`: the status file and the fit).

use allocinfo_format::size::format_iec_u64;
use allocinfo_format::status::{
    Change, Counters, Fit, Fixes, MAX_INDEX_BITS, ModuleTags, PageExt, PageTags, Status,
    UnloadedModules, fixes, plural,
};
use serde_json::{Value, json};
use std::fmt::Write as _;

/// The boot parameter that asks for page tags in page flags.
const COMPRESSED: &str = "sysctl.vm.mem_profiling=1,compressed";
/// How a boot asks for page tags in page_ext.
const PAGE_EXT_ASKED: &str = "sysctl.vm.mem_profiling=V,page_ext";

/// The schema of `status --json`.
pub const SCHEMA: &str = "allocinfo-status/1";

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
        (PageTags::PageExt, false) => match s.page_ext_requested {
            Some(true) => {
                let _ = writeln!(out, "page tags: in page_ext, as {PAGE_EXT_ASKED} asked");
                fit_text(
                    s,
                    &mut out,
                    "without ,page_ext they would fit in page flags",
                    "without ,page_ext they would not fit in page flags either",
                );
            }
            // A kernel that puts them in page flags by default where they fit.
            Some(false) => {
                let _ = writeln!(out, "page tags: in page_ext, as they do not fit in page flags");
                fit_text(s, &mut out, "why: not said", "why");
            }
            // An older kernel, whose default is page_ext.
            None => {
                let _ = writeln!(out, "page tags: in page_ext (the default)");
                fit_text(
                    s,
                    &mut out,
                    &format!("with {COMPRESSED} they would fit in page flags"),
                    &format!("with {COMPRESSED} they would not fit in page flags"),
                );
            }
        },
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
    match s.counters {
        Some(Counters::None) => {
            let _ = writeln!(
                out,
                "counters: none (profiling never on since boot; the first switch-on makes them)"
            );
        }
        Some(Counters::MadeAt { micros }) => {
            let _ = writeln!(
                out,
                "counters: made {}.{:06} s after boot",
                micros / 1_000_000,
                micros % 1_000_000
            );
        }
        None => {}
    }
    let page_ext = match s.page_ext {
        Some(PageExt::None) => {
            Some("none (page tags in page flags, or in page_ext that the first switch-on makes)")
        }
        Some(PageExt::ReservedAtBoot) => Some("reserved at boot, 8 bytes a page"),
        Some(PageExt::ReservedForAnotherUser) => Some(
            "reserved at boot, 8 bytes a page: another user needed page_ext at boot, which \
             cannot grow later",
        ),
        Some(PageExt::MadeAtSwitchOn) => Some("made at the first switch-on, 8 bytes a page"),
        None => None,
    };
    if let Some(p) = page_ext {
        let _ = writeln!(out, "page_ext for page tags: {p}");
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
        "page_ext_requested": s.page_ext_requested,
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
        // null without the line; made_at_us null while no tag has counters.
        "counters": s.counters.map(|c| json!({
            "made_at_us": match c {
                Counters::None => None,
                Counters::MadeAt { micros } => Some(micros),
            },
        })),
        // null without the line.
        "page_ext": s.page_ext.map(PageExt::name),
    })
}

#[cfg(test)]
mod tests;
