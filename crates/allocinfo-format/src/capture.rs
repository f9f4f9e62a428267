//! The protocol of the kernel's capture files in `/sys/kernel/debug/alloctag/`:
//! the commands written to `capture`, and the `live` report read back, which
//! lists every live object of the selected call sites, oldest first, each
//! followed by its allocation stack, then the untracked remainder:
//!
//! ```text
//! object age_ns=1500 bytes=256 pid=7 tgid=7 comm=cat cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0xffff8880 site=lib/m.c:42 [m] func:f
//!   f+0x1a/0x40 [m]
//!   do_one_initcall+0x5c/0x2f0
//! untracked objects=2 bytes=512 dropped=0 busy=0
//! ```
//!
//! Grouping by stack and by process is done here from that one report.
//! No I/O: `allocinfo capture` and `allocinfo live` talk to the files.

pub mod listing;

use std::collections::BTreeMap;

/// One command for the control file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Add(Vec<String>),
    Remove(u32),
    Clear,
    Limit(u64),
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Add(selectors) => write!(f, "add {}", selectors.join(" ")),
            Command::Remove(id) => write!(f, "remove {id}"),
            Command::Clear => f.write_str("clear"),
            Command::Limit(n) => write!(f, "limit {n}"),
        }
    }
}

/// One live object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub age_ns: u64,
    pub bytes: u64,
    pub pid: i64,
    pub tgid: i64,
    pub comm: String,
    pub cpu: u64,
    pub ctx: String,
    pub gfp: String,
    pub kind: String,
    /// The slab object's address or the first page's pfn, as the kernel printed it.
    pub object: String,
    pub order: u64,
    pub site: String,
    /// The frames, as `%pS` prints them.
    pub stack: Vec<String>,
}

/// A stack frame as `%pS` prints it, `func+0x1a/0x40 [module]` (or an
/// address): its function and module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub function: &'a str,
    pub module: Option<&'a str>,
}

/// Reads a frame of an object's stack.
pub fn frame(text: &str) -> Frame<'_> {
    let (symbol, module) = match text.rsplit_once(" [") {
        Some((s, m)) if m.ends_with(']') => (s, Some(&m[..m.len() - 1])),
        _ => (text, None),
    };
    let function = symbol.split_once('+').map_or(symbol, |(f, _)| f);
    Frame { function, module }
}

impl Object {
    /// The call site as a tag (counters 0); `None` where `site=` does not
    /// read as a tag line's location.
    pub fn site_tag(&self) -> Option<crate::Tag> {
        format!("0 0 {}", self.site).parse().ok()
    }

    /// The index in [`Object::stack`] (the leaf first) of the innermost
    /// frame of `function`, the call site's: the allocator's own frames,
    /// from the capture hook, come before it. `None` where no frame is.
    pub fn site_frame(&self, function: &str) -> Option<usize> {
        self.stack
            .iter()
            .position(|f| frame(f).function == function)
    }
}

/// What the selected sites' counters hold beyond the records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Untracked {
    pub objects: u64,
    pub bytes: i64,
    pub dropped: u64,
    pub busy: u64,
}

/// The `live` report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Live {
    pub objects: Vec<Object>,
    pub untracked: Untracked,
}

/// Returns the value of `key=` among `words`.
fn field<'a>(words: &[&'a str], key: &str) -> Option<&'a str> {
    words
        .iter()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

fn number<T: std::str::FromStr>(words: &[&str], key: &str, line: usize) -> Result<T, String> {
    field(words, key)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("line {line}: no valid {key}="))
}

/// Parses the `live` report.
pub fn parse(text: &str) -> Result<Live, String> {
    let mut live = Live::default();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(frame) = line.strip_prefix("  ") {
            let Some(object) = live.objects.last_mut() else {
                return Err(format!("line {n}: a stack frame before any object"));
            };
            object.stack.push(frame.to_owned());
        } else if let Some(rest) = line.strip_prefix("object ") {
            let (head, site) = rest
                .split_once(" site=")
                .ok_or_else(|| format!("line {n}: no site="))?;
            // A process name may hold spaces: it runs from comm= to the last
            // " cpu=" (the fields after it are the kernel's own).
            let (head, comm) = match (head.find(" comm="), head.rfind(" cpu=")) {
                (Some(c), Some(cpu)) if c < cpu => (
                    format!("{}{}", &head[..c], &head[cpu..]),
                    head[c + " comm=".len()..cpu].to_owned(),
                ),
                _ => (head.to_owned(), String::new()),
            };
            let w: Vec<&str> = head.split_whitespace().collect();
            let kind = field(&w, "kind").unwrap_or("slab").to_owned();
            let object = field(&w, if kind == "pages" { "pfn" } else { "addr" })
                .unwrap_or("")
                .to_owned();
            live.objects.push(Object {
                age_ns: number(&w, "age_ns", n)?,
                bytes: number(&w, "bytes", n)?,
                pid: number(&w, "pid", n)?,
                tgid: number(&w, "tgid", n)?,
                comm,
                cpu: number(&w, "cpu", n)?,
                ctx: field(&w, "ctx").unwrap_or("").to_owned(),
                gfp: field(&w, "gfp").unwrap_or("").to_owned(),
                kind,
                object,
                order: field(&w, "order").and_then(|v| v.parse().ok()).unwrap_or(0),
                site: site.to_owned(),
                stack: Vec::new(),
            });
        } else if let Some(rest) = line.strip_prefix("untracked ") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            live.untracked = Untracked {
                objects: number(&w, "objects", n)?,
                bytes: number(&w, "bytes", n)?,
                dropped: number(&w, "dropped", n)?,
                busy: number(&w, "busy", n)?,
            };
        } else if !line.is_empty() {
            return Err(format!("line {n}: not a line of the live report: {line:?}"));
        }
    }
    Ok(live)
}

/// A group of objects: by stack (with the site) or by process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub count: u64,
    pub bytes: u64,
    pub age_min: u64,
    pub age_max: u64,
    pub age_sum: u128,
    /// Distinct `tgid:comm`, in the order first seen (oldest first).
    pub processes: Vec<(i64, String)>,
    pub site: String,
    pub stack: Vec<String>,
}

impl Group {
    fn new(o: &Object) -> Group {
        Group {
            count: 0,
            bytes: 0,
            age_min: u64::MAX,
            age_max: 0,
            age_sum: 0,
            processes: Vec::new(),
            site: o.site.clone(),
            stack: o.stack.clone(),
        }
    }

    /// Adds `o`; `None` when the count or the bytes would pass 64 bits.
    fn add(&mut self, o: &Object) -> Option<()> {
        self.count = self.count.checked_add(1)?;
        self.bytes = self.bytes.checked_add(o.bytes)?;
        self.age_min = self.age_min.min(o.age_ns);
        self.age_max = self.age_max.max(o.age_ns);
        self.age_sum += u128::from(o.age_ns);
        if !self.processes.iter().any(|(t, _)| *t == o.tgid) {
            self.processes.push((o.tgid, o.comm.clone()));
        }
        Some(())
    }

    pub fn age_avg(&self) -> u64 {
        (self.age_sum / u128::from(self.count.max(1))) as u64
    }
}

/// Error for a group whose bytes or count pass 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow;

impl std::fmt::Display for Overflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the objects' bytes add up beyond 2^64 (64-bit overflow): no kernel has that much memory")
    }
}

impl std::error::Error for Overflow {}

/// Groups `objects` by `key`, in the key's order: each group sums the
/// objects of one key.
fn group<'a, K: Ord>(
    objects: &[&'a Object],
    key: impl Fn(&'a Object) -> K,
) -> Result<Vec<Group>, Overflow> {
    let mut groups: BTreeMap<K, Group> = BTreeMap::new();
    for &o in objects {
        groups
            .entry(key(o))
            .or_insert_with(|| Group::new(o))
            .add(o)
            .ok_or(Overflow)?;
    }
    Ok(groups.into_values().collect())
}

/// Groups `objects` by site and stack, most bytes first.
pub fn by_stack(objects: &[&Object]) -> Result<Vec<Group>, Overflow> {
    let mut v = group(objects, |o| (o.site.as_str(), o.stack.as_slice()))?;
    v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(b.count.cmp(&a.count)));
    Ok(v)
}

/// Groups `objects` by process (thread group), most bytes first.
pub fn by_process(objects: &[&Object]) -> Result<Vec<Group>, Overflow> {
    let mut v = group(objects, |o| o.tgid)?;
    v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.processes.cmp(&b.processes)));
    Ok(v)
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

    const LIVE: &str = include_str!("../tests/data/debugfs/live.txt");

    /// Linux process names may hold spaces (and even ` cpu=`): the name is
    /// everything from `comm=` to the line's last ` cpu=`, as the kernel
    /// prints the fields after it itself.
    #[test]
    fn process_names_with_spaces() {
        let text = "object age_ns=1 bytes=8 pid=7 tgid=7 comm=Web Content cpu=0 ctx=task gfp=0xcc0 kind=slab addr=0x1 site=lib/m.c:42 [m] func:f\n\
            object age_ns=1 bytes=8 pid=8 tgid=8 comm=a cpu=b cpu=1 ctx=task gfp=0xcc0 kind=slab addr=0x2 site=lib/m.c:42 [m] func:f\n";
        let live = parse(text).unwrap();
        assert_eq!(live.objects[0].comm, "Web Content");
        assert_eq!(live.objects[0].cpu, 0);
        assert_eq!(live.objects[0].ctx, "task");
        assert_eq!(live.objects[1].comm, "a cpu=b");
        assert_eq!(live.objects[1].cpu, 1);
    }

    #[test]
    fn parses_objects_stacks_and_untracked() {
        let live = parse(LIVE).unwrap();
        assert_eq!(live.objects.len(), 3);
        let o = &live.objects[1];
        assert_eq!((o.pid, o.tgid, o.comm.as_str()), (9, 8, "sh"));
        assert_eq!(
            (o.kind.as_str(), o.object.as_str(), o.order),
            ("pages", "0x1234", 0)
        );
        assert_eq!(o.site, "lib/m.c:42 [m] func:f");
        assert_eq!(o.stack, ["f+0x1a/0x40 [m]", "do_one_initcall+0x5c/0x2f0"]);
        assert_eq!(
            live.untracked,
            Untracked {
                objects: 2,
                bytes: 512,
                dropped: 1,
                busy: 0
            }
        );
        assert!(parse("  frame first\n").is_err());
        assert!(parse("object bytes=1 site=x\n").is_err());
        assert!(parse("garbage\n").is_err());
    }

    #[test]
    fn groups_by_stack_and_process() {
        let live = parse(LIVE).unwrap();
        let all: Vec<&Object> = live.objects.iter().collect();
        let stacks = by_stack(&all).unwrap();
        assert_eq!(stacks.len(), 2);
        assert_eq!((stacks[0].count, stacks[0].bytes), (2, 4352));
        assert_eq!(
            stacks[0].processes,
            [(7, "cat".to_owned()), (8, "sh".to_owned())]
        );
        assert_eq!(
            (stacks[0].age_min, stacks[0].age_max),
            (1_000_000, 3_000_000_000)
        );
        let procs = by_process(&all).unwrap();
        assert_eq!(procs.len(), 2);
        assert_eq!(
            (procs[0].processes[0].0, procs[0].count, procs[0].bytes),
            (8, 1, 4096)
        );
        assert_eq!(
            (procs[1].processes[0].0, procs[1].count, procs[1].bytes),
            (7, 2, 512)
        );
    }

    #[test]
    fn commands_as_written() {
        assert_eq!(
            Command::Add(vec!["module:m".into(), "func:f".into()]).to_string(),
            "add module:m func:f"
        );
        assert_eq!(Command::Remove(3).to_string(), "remove 3");
        assert_eq!(Command::Limit(64).to_string(), "limit 64");
        assert_eq!(Command::Clear.to_string(), "clear");
    }
}
