//! A profile of capture's `live` report: one sample per group of live
//! objects with the same call site, stack, process and kind, whose stack is
//! the stack depot's frames as the report prints them (the allocator's own
//! first, from the capture hook), the call site's function at its file and
//! line, so that pprof's flame graph shows the paths that hold live memory.

use crate::{Builder, LabelValue, SAMPLE_TYPES, SiteOptions};
use allocinfo_format::capture::{Live, Object, frame};
use std::collections::BTreeMap;

/// What groups objects into one sample.
type GroupKey<'a> = (&'a str, &'a [String], i64, &'a str, &'a str);

/// The sums of a group: objects, bytes, the oldest's age.
#[derive(Default)]
struct Sums {
    objects: i64,
    bytes: i64,
    oldest_ns: u64,
}

/// The profile of `live`: its groups, and the untracked remainder (objects
/// the selected sites' counters hold that have no record) as one sample at
/// `[untracked]`, so that the totals are the sites'.
pub fn from_capture(live: &Live, opts: &SiteOptions) -> Result<crate::proto::Profile, String> {
    let mut groups: BTreeMap<GroupKey<'_>, (&Object, Sums)> = BTreeMap::new();
    for o in &live.objects {
        let key = (
            o.site.as_str(),
            o.stack.as_slice(),
            o.tgid,
            o.comm.as_str(),
            o.kind.as_str(),
        );
        let (_, s) = groups.entry(key).or_insert((o, Sums::default()));
        s.objects = s.objects.checked_add(1).ok_or("too many objects")?;
        let bytes = i64::try_from(o.bytes).map_err(|_| "an object of more than 2^63 bytes")?;
        s.bytes = s
            .bytes
            .checked_add(bytes)
            .ok_or("the objects' bytes pass 2^63")?;
        s.oldest_ns = s.oldest_ns.max(o.age_ns);
    }
    let mut b = Builder::new(&SAMPLE_TYPES, "inuse_space");
    for c in &opts.comments {
        b.comment(c);
    }
    b.time_nanos(opts.time_nanos);
    for (o, s) in groups.values() {
        let site = o
            .site_tag()
            .ok_or_else(|| format!("site={}: not a call site", o.site))?;
        let at_site = crate::sites::site_location(&mut b, &site);
        // The frame of the call site's function (the first from the leaf)
        // is its location with the file and line; without one, the site is
        // the leaf.
        let at = o.site_frame(&site.function);
        let mut stack: Vec<u64> = o
            .stack
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let f = frame(text);
                if Some(i) == at {
                    at_site
                } else {
                    b.location(f.module.unwrap_or("vmlinux"), f.function, "", 0, text)
                }
            })
            .collect();
        if at.is_none() {
            stack.insert(0, at_site);
        }
        let age = i64::try_from(s.oldest_ns).unwrap_or(i64::MAX);
        b.sample(
            stack,
            vec![s.objects, s.bytes],
            &[
                ("pid", LabelValue::Num(o.tgid, "")),
                ("comm", LabelValue::Str(&o.comm)),
                ("kind", LabelValue::Str(&o.kind)),
                ("oldest_age", LabelValue::Num(age, "nanoseconds")),
            ],
        );
    }
    let u = live.untracked;
    if u.objects != 0 || u.bytes != 0 {
        let loc = b.location("vmlinux", "[untracked]", "", 0, "");
        let objects = i64::try_from(u.objects).unwrap_or(i64::MAX);
        b.sample(
            vec![loc],
            vec![objects, u.bytes],
            &[("untracked", LabelValue::Str("yes"))],
        );
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the functions of `p`'s sample `i`'s stack, leaf first,
    /// and the line of each.
    fn stack(p: &crate::proto::Profile, i: usize) -> Vec<(String, i64)> {
        p.sample[i]
            .location_id
            .iter()
            .map(|id| {
                let line = p.location[*id as usize - 1].line[0];
                let f = p.function[line.function_id as usize - 1];
                (p.string_table[f.name as usize].clone(), line.line)
            })
            .collect()
    }

    #[test]
    fn the_sites_frame_gets_its_line_among_the_allocators() {
        let live = allocinfo_format::capture::parse(
            "object age_ns=1 bytes=256 pid=7 tgid=7 comm=cat cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x1 site=lib/m.c:42 [m] func:f\n  slab_post_alloc_hook+0x2da/0x350\n  f+0x30/0x60 [m]\n  g+0x20/0x60 [m]\n\
             object age_ns=1 bytes=64 pid=7 tgid=7 comm=cat cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x2 site=lib/m.c:9 [m] func:h\n  x+0x1/0x2\n",
        )
        .unwrap();
        let p = from_capture(&live, &SiteOptions::default()).unwrap();
        let s = |v: &[(&str, i64)]| {
            v.iter()
                .map(|(f, l)| (f.to_string(), *l))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            stack(&p, 0),
            s(&[("slab_post_alloc_hook", 0), ("f", 42), ("g", 0)])
        );
        // No frame of h: the site is the leaf.
        assert_eq!(stack(&p, 1), s(&[("h", 9), ("x", 0)]));
        assert_eq!(p.sample[0].value, [1, 256]);
    }
}
