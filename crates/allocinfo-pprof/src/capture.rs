//! A profile of capture's `live` report: one sample per group of live
//! objects with the same call site, stack, process and kind, whose stack is
//! the call site (its function, file and line) and then the stack depot's
//! frames as the report prints them, so that pprof's flame graph shows the
//! paths that hold live memory.

use crate::{Builder, LabelValue, SAMPLE_TYPES, SiteOptions};
use allocinfo_format::Tag;
use allocinfo_format::capture::{Live, Object};
use std::collections::BTreeMap;

/// A frame as `%pS` prints it: `func+0x1a/0x40 [module]`, or an address.
struct Frame<'a> {
    function: &'a str,
    module: Option<&'a str>,
}

fn frame(text: &str) -> Frame<'_> {
    let (symbol, module) = match text.rsplit_once(" [") {
        Some((s, m)) if m.ends_with(']') => (s, Some(&m[..m.len() - 1])),
        _ => (text, None),
    };
    let function = symbol.split_once('+').map_or(symbol, |(f, _)| f);
    Frame { function, module }
}

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
        let site: Tag = format!("0 0 {}", o.site)
            .parse()
            .map_err(|e| format!("site={}: {e}", o.site))?;
        let object = site.module.as_deref().unwrap_or("vmlinux");
        let mut stack =
            vec![b.location(object, &site.function, &site.file, i64::from(site.line), "")];
        for (i, text) in o.stack.iter().enumerate() {
            let f = frame(text);
            // The first frame is the call site's function: its location
            // above says more (the file and line).
            if i == 0 && f.function == site.function {
                continue;
            }
            stack.push(b.location(f.module.unwrap_or("vmlinux"), f.function, "", 0, text));
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

    #[test]
    fn frames_name_their_function_and_module() {
        let f = frame("f+0x1a/0x40 [m]");
        assert_eq!((f.function, f.module), ("f", Some("m")));
        let f = frame("do_one_initcall+0x5c/0x2f0");
        assert_eq!((f.function, f.module), ("do_one_initcall", None));
        let f = frame("0xffffffffc0001234");
        assert_eq!((f.function, f.module), ("0xffffffffc0001234", None));
    }
}
