// SPDX-License-Identifier: GPL-2.0

//! contrib/syzkaller/: the syzkaller descriptions of what alloctag exposes,
//! against the sources they describe, so that a new ioctl, file, sysctl or
//! boot parameter cannot be added without them: every `ALLOCINFO_IOC_*` of
//! include/uapi/linux/alloc_tag.h is an `ioctl$` with that command,
//! every filter bit is among the mask's flags, and GET_SPLIT's splits and
//! flags are exactly those of its `by` and `flags`; the header's structs are
//! described field for field, at the header's offsets; every file that src/
//! creates (debugfs, procfs, sysctl) is opened by an `openat$`, and no
//! `openat$` opens a file that src/ does not create, but for the test
//! modules' images and files, which are theirs; alloctag.txt.const
//! holds exactly the constants alloctag.txt uses, with the values that the
//! header (and, on x86-64, the syscall table) gives; and the README lists
//! every boot parameter. The descriptions do not run here: syzkaller is not
//! on this machine.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    // tests/scripts → the checkout.
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const DESCRIPTIONS: &str = "contrib/syzkaller/alloctag.txt";
const CONSTS: &str = "contrib/syzkaller/alloctag.txt.const";
const README: &str = "contrib/syzkaller/README";
const HEADER: &str = "include/uapi/linux/alloc_tag.h";

/// A line of syzlang without its comment: `#` outside a string literal.
fn syz_code(line: &str) -> &str {
    let mut in_string = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' | '`' => in_string = !in_string,
            '#' if !in_string => return line[..i].trim_end(),
            _ => {}
        }
    }
    line.trim_end()
}

/// alloctag.txt's lines, comments taken out, empty lines left out.
fn descriptions() -> Vec<String> {
    read(DESCRIPTIONS)
        .lines()
        .map(syz_code)
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// The name of a syscall description line (`openat$allocinfo(...) fd`),
/// with its variant: `openat$allocinfo`.
fn call_name(line: &str) -> Option<&str> {
    let open = line.find('(')?;
    let name = &line[..open];
    (!name.is_empty()
        && !line.starts_with(char::is_whitespace)
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$'))
    .then_some(name)
}

/// The syscall description lines.
fn calls(lines: &[String]) -> Vec<(&str, &str)> {
    lines
        .iter()
        .filter_map(|l| call_name(l).map(|n| (n, l.as_str())))
        .collect()
}

/// The value of a C string literal starting right after `marker` in
/// `line`: `c_str!("NAME")` or `("NAME"`.
fn quoted_after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &line[line.find(marker)? + marker.len()..];
    let rest = rest.strip_prefix('"')?;
    Some(&rest[..rest.find('"')?])
}

/// The `#define`s of the header: name → its value's text, continued lines
/// joined.
fn header_defines() -> Vec<(String, String)> {
    read(HEADER)
        .replace("\\\n", " ")
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            (words.next()? == "#define").then_some(())?;
            let name = words.next()?.to_owned();
            Some((name, words.collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// The header's ioctl commands: every `ALLOCINFO_IOC_*` defined as an
/// `_IO*()` macro.
fn header_ioctls() -> Vec<String> {
    let ioctls: Vec<String> = header_defines()
        .into_iter()
        .filter(|(name, value)| name.starts_with("ALLOCINFO_IOC_") && value.starts_with("_IO"))
        .map(|(name, _)| name)
        .collect();
    assert!(
        !ioctls.is_empty(),
        "{HEADER} defines no ALLOCINFO_IOC_* ioctl: has it moved?"
    );
    ioctls
}

#[test]
fn every_ioctl_and_filter_bit_of_the_header_is_described() {
    let lines = descriptions();
    let calls = calls(&lines);
    let ioctls = header_ioctls();
    let mut missing = Vec::new();
    for name in &ioctls {
        let call = format!("ioctl${name}");
        let cmd = format!("cmd const[{name}]");
        if !calls.iter().any(|(n, l)| *n == call && l.contains(&cmd)) {
            missing.push(format!("{call}(fd fd_allocinfo, {cmd}, ...)"));
        }
    }
    assert!(
        missing.is_empty(),
        "{DESCRIPTIONS} does not describe these ioctls of {HEADER}: {}",
        missing.join("; ")
    );
    let stale: Vec<&str> = calls
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| n.starts_with("ioctl$") && !ioctls.iter().any(|i| n[6..] == **i))
        .collect();
    assert!(
        stale.is_empty(),
        "{DESCRIPTIONS} describes ioctls that {HEADER} lacks: {stale:?}"
    );

    // Every filter bit is a value of the mask's flags.
    let bits: Vec<String> = header_defines()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|n| n.starts_with("ALLOCINFO_FILTER_MASK_"))
        .collect();
    assert!(bits.len() >= 7, "{HEADER}: filter bits {bits:?}");
    let flags = lines
        .iter()
        .find_map(|l| l.strip_prefix("allocinfo_filter_mask = "))
        .unwrap_or_else(|| panic!("{DESCRIPTIONS} has no allocinfo_filter_mask flags"));
    let values: BTreeSet<&str> = flags.split(',').map(str::trim).collect();
    let missing: Vec<&String> = bits
        .iter()
        .filter(|b| !values.contains(b.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "allocinfo_filter_mask in {DESCRIPTIONS} lacks {missing:?}"
    );

    // GET_SPLIT's splits (the enum's values) are those of `by`, its flags
    // those of `flags`: no more, no fewer.
    for (flags, want) in [
        ("allocinfo_split_by", header_enum_values("ALLOCINFO_SPLIT_")),
        (
            "allocinfo_split_flags",
            header_defines()
                .into_iter()
                .map(|(name, _)| name)
                .filter(|n| n.starts_with("ALLOCINFO_SPLIT_"))
                .collect(),
        ),
    ] {
        assert!(!want.is_empty(), "{HEADER}: no values for {flags}");
        let prefix = format!("{flags} = ");
        let values: BTreeSet<String> = lines
            .iter()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("{DESCRIPTIONS} has no {flags} flags"))
            .split(',')
            .map(|v| v.trim().to_owned())
            .collect();
        assert_eq!(values, want, "{flags} in {DESCRIPTIONS} against {HEADER}");
    }
}

/// The names of the header's enum values starting with `prefix`, less the
/// `__` bounds (`__ALLOCINFO_SPLIT_LAST`).
fn header_enum_values(prefix: &str) -> BTreeSet<String> {
    let header = read(HEADER);
    let mut in_enum = false;
    let mut out = BTreeSet::new();
    for line in header.lines() {
        let code = line.split("/*").next().unwrap().trim();
        if code.starts_with("enum") && code.ends_with('{') {
            in_enum = true;
        } else if in_enum && code.starts_with('}') {
            in_enum = false;
        } else if in_enum {
            let name = code
                .split(|c: char| c == ',' || c == '=' || c.is_whitespace())
                .next()
                .unwrap();
            if name.starts_with(prefix) {
                out.insert(name.to_owned());
            }
        }
    }
    out
}

/// Every .rs and .c file under src/, but the KUnit tests' (src/tests/,
/// built only into test kernels).
fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "tests") {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs" || e == "c") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("src"), &mut out);
    out.sort();
    assert!(out.len() > 10, "src/ has {} sources", out.len());
    out
}

/// Whether `line` of the source `rel` is a comment line: `//`, and in C
/// also the lines of a `/* */` block (which start with `/*` or `*`).
fn is_comment(rel: &str, line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("//") || rel.ends_with(".c") && (t.starts_with("/*") || t.starts_with('*'))
}

/// The files that src/ creates, as paths, each with where it is created;
/// a call that creates a file whose name this cannot read fails the test.
fn created_files() -> BTreeMap<String, String> {
    let debugfs = read("src/debugfs.rs");
    let dir = debugfs
        .lines()
        .find_map(|l| quoted_after(l, "dir_name = c_str!("))
        .expect("src/debugfs.rs names alloctag's debugfs directory (dir_name = c_str!(\"...\"))");
    let mut files = BTreeMap::new();
    let mut unread = Vec::new();
    for path in sources() {
        let rel = path.strip_prefix(root()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let code: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !is_comment(&rel, l))
            .collect();
        // The directory of a sysctl table or of a C debugfs file: that of
        // the file's one registration.
        let sysctl_dir = code.iter().find_map(|(_, l)| {
            quoted_after(l, "register_sysctl_sz(c_str!(")
                .or_else(|| quoted_after(l, "register_sysctl(c_str!("))
                .or_else(|| quoted_after(l, "register_sysctl("))
                .or_else(|| quoted_after(l, "register_sysctl_sz("))
        });
        let c_debugfs_dir = code
            .iter()
            .find_map(|(_, l)| quoted_after(l, "debugfs_create_dir("));
        for &(n, line) in &code {
            let at = format!("{rel}:{}", n + 1);
            let mut found = |path: String| {
                files.insert(path, at.clone());
            };
            if let Some(name) = quoted_after(line, "create_file(c_str!(") {
                found(format!("/sys/kernel/debug/{dir}/{name}"));
            } else if let Some(name) = quoted_after(line, "debugfs_create_file(") {
                let d = c_debugfs_dir.unwrap_or_else(|| {
                    panic!("{at}: the debugfs directory of {name} is not in its file")
                });
                found(format!("/sys/kernel/debug/{d}/{name}"));
            } else if let Some(name) = quoted_after(line, "proc_create(c_str!(")
                .or_else(|| quoted_after(line, "proc_create("))
            {
                found(format!("/proc/{name}"));
            } else if let Some(name) = quoted_after(line, "procname: c_str!(")
                .or_else(|| quoted_after(line, ".procname = "))
            {
                let d = sysctl_dir.unwrap_or_else(|| {
                    panic!("{at}: the sysctl directory of {name} is not in its file")
                });
                found(format!("/proc/sys/{}/{name}", d.replace('.', "/")));
            } else if ["create_file(", "proc_create(", "procname:", ".procname ="]
                .iter()
                .any(|m| line.contains(m))
            {
                // The wrappers (src/debugfs.rs, src/seq.rs) and their calls
                // into the kernel, which pass their caller's name on.
                let wrapper = line.contains("fn create_file(")
                    || line.contains("fn proc_create(")
                    || (line.contains("bindings::debugfs_create_file(") && rel == "src/debugfs.rs")
                    || (line.contains("bindings::proc_create(name") && rel == "src/seq.rs")
                    || line.contains("procname: ptr::null()");
                if !wrapper {
                    unread.push(format!("{at}: {}", line.trim()));
                }
            }
        }
    }
    assert!(
        unread.is_empty(),
        "files are created where this test cannot read their names (teach it, and describe \
         them in {DESCRIPTIONS}):\n{}",
        unread.join("\n")
    );
    assert!(
        files.contains_key("/proc/allocinfo"),
        "src/ creates no /proc/allocinfo, as read here: {files:?}"
    );
    files
}

/// The strings of a `string[...]` argument: a literal, or the members of a
/// string set (`NAME = "a", "b"`) defined in `lines`.
fn strings_of<'a>(lines: &'a [String], arg: &'a str) -> Vec<&'a str> {
    if let Some(literal) = arg.strip_prefix('"') {
        return vec![&literal[..literal.find('"').expect("an unterminated string")]];
    }
    let name = &arg[..arg.find([']', ',']).unwrap_or(arg.len())];
    let set = lines
        .iter()
        .find_map(|l| l.strip_prefix(name)?.trim_start().strip_prefix('='))
        .unwrap_or_else(|| panic!("no string set {name} in {DESCRIPTIONS}"));
    set.split('"').skip(1).step_by(2).collect()
}

/// The strings of the call `line`'s first `string[...]` argument.
fn string_arg<'a>(lines: &'a [String], line: &'a str) -> Vec<&'a str> {
    let at = line
        .find("string[")
        .unwrap_or_else(|| panic!("no string[...] argument: {line}"));
    strings_of(lines, &line[at + "string[".len()..])
}

/// The paths that `openat$` descriptions open (`string["PATH"]`, or each
/// member of a string set), with the call that opens them.
fn opened_files(lines: &[String]) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for (n, l) in calls(lines)
        .into_iter()
        .filter(|(n, _)| n.starts_with("openat$"))
    {
        for path in string_arg(lines, l) {
            files.insert(path.to_owned(), n.to_owned());
        }
    }
    files
}

/// Where the test modules' images are for the fuzzer (scripts/syzkaller.sh
/// copies them there), and their debugfs files.
const MODULES_DIR: &str = "/srv/alloctag-syzkaller/modules/";

/// A test module's image, or a file of its debugfs directory (alloctag_*/,
/// beside alloctag's own alloctag/).
fn is_test_module_file(path: &str) -> bool {
    path.starts_with(MODULES_DIR) || path.starts_with("/sys/kernel/debug/alloctag_")
}

#[test]
fn every_file_that_src_creates_is_described() {
    let created = created_files();
    let opened = opened_files(&descriptions());
    let missing: Vec<String> = created
        .iter()
        .filter(|(path, _)| !opened.contains_key(*path))
        .map(|(path, at)| format!("{path} (created at {at})"))
        .collect();
    assert!(
        missing.is_empty(),
        "{DESCRIPTIONS} opens none of these files with an openat$: {}",
        missing.join(", ")
    );
    let stale: Vec<String> = opened
        .iter()
        .filter(|(path, _)| !created.contains_key(*path) && !is_test_module_file(path))
        .map(|(path, call)| format!("{call} opens {path}"))
        .collect();
    assert!(
        stale.is_empty(),
        "{DESCRIPTIONS} opens files that src/ does not create: {}",
        stale.join(", ")
    );
}

/// The test modules' files that the descriptions open are theirs: each
/// image a test module built with CONFIG_ALLOCTAG_TEST_MODULE (patch 13's
/// Makefile) and named, by its name, in the unloads' names; each debugfs
/// file one its module creates in its directory (a literal name, or one of
/// a `{ "NAME", handler }` table's).
#[test]
fn the_test_modules_files_are_theirs() {
    let lines = descriptions();
    let opened = opened_files(&lines);
    let makefile = read("patches/0013-lib-alloctag-KUnit-suites-and-test-modules.patch");
    let (_, unload) = calls(&lines)
        .into_iter()
        .find(|(n, _)| *n == "delete_module$alloctag")
        .expect("no delete_module$alloctag");
    let names: BTreeSet<&str> = string_arg(&lines, unload).into_iter().collect();
    let mut images = BTreeSet::new();
    let mut wrong = Vec::new();
    for path in opened.keys().filter(|p| is_test_module_file(p)) {
        if let Some(image) = path.strip_prefix(MODULES_DIR) {
            let Some(name) = image.strip_suffix(".ko") else {
                wrong.push(format!("{path}: no module image"));
                continue;
            };
            if !makefile.contains(&format!(
                "+obj-$(CONFIG_ALLOCTAG_TEST_MODULE) += tests/modules/{name}.o\n"
            )) {
                wrong.push(format!(
                    "{path}: no test module {name} in patch 13's Makefile"
                ));
            }
            images.insert(name);
            continue;
        }
        let rel = &path["/sys/kernel/debug/".len()..];
        let (dir, file) = rel.split_once('/').unwrap_or((rel, ""));
        let source = root().join(format!("tests/modules/{dir}.c"));
        let Ok(text) = std::fs::read_to_string(&source) else {
            wrong.push(format!("{path}: no tests/modules/{dir}.c"));
            continue;
        };
        let creates_dir = text.contains(&format!("debugfs_create_dir(\"{dir}\""));
        let creates_file = text.contains(&format!("debugfs_create_file(\"{file}\""))
            || text.contains(&format!("{{ \"{file}\", "));
        if !creates_dir || !creates_file {
            wrong.push(format!(
                "{path}: tests/modules/{dir}.c creates no such file"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        !images.is_empty(),
        "{DESCRIPTIONS} opens no test module image"
    );
    assert_eq!(images, names, "the images opened and the modules unloaded");
    let script = read("scripts/syzkaller.sh");
    assert!(
        script.contains(MODULES_DIR.trim_end_matches('/')),
        "scripts/syzkaller.sh does not copy the test modules to {MODULES_DIR}"
    );
}

/// The header's structs: name → field names, in order.
fn header_structs() -> Vec<(String, Vec<String>)> {
    let header = read(HEADER);
    let mut structs = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in header.lines() {
        let line = line.split("/*").next().unwrap().trim();
        if let Some(rest) = line.strip_prefix("struct ")
            && let Some(name) = rest.strip_suffix('{')
        {
            current = Some((name.trim().to_owned(), Vec::new()));
            continue;
        }
        if let Some((name, fields)) = current.as_mut() {
            if line.starts_with('}') {
                structs.push((name.clone(), std::mem::take(fields)));
                current = None;
            } else if let Some(decl) = line.strip_suffix(';') {
                let decl = decl.split('[').next().unwrap();
                let field = decl.split_whitespace().last().unwrap();
                fields.push(field.to_owned());
            }
        }
    }
    assert!(structs.len() >= 6, "{HEADER}: structs {structs:?}");
    structs
}

/// A syzlang struct or union: its fields (name, type) and attributes.
#[derive(Debug)]
struct SyzType {
    union: bool,
    fields: Vec<(String, String)>,
    attrs: String,
}

/// alloctag.txt's structs and unions, templates left out.
fn syz_types(lines: &[String]) -> BTreeMap<String, SyzType> {
    let mut types = BTreeMap::new();
    let mut current: Option<(String, SyzType)> = None;
    for line in lines {
        if let Some((name, ty)) = current.as_mut() {
            let close = if ty.union { ']' } else { '}' };
            if line.starts_with(close) {
                ty.attrs = line[1..].trim().to_owned();
                let (name, ty) = current.take().unwrap();
                types.insert(name, ty);
            } else {
                let line = line.trim();
                let (field, ty_text) = line
                    .split_once(char::is_whitespace)
                    .unwrap_or_else(|| panic!("{name}: field without a type: {line}"));
                // A trailing (in)/(out) attribute is not part of the type.
                let ty_text = ty_text.trim();
                let ty_text = match ty_text.rfind('(') {
                    Some(i) if ty_text.ends_with(')') => ty_text[..i].trim(),
                    _ => ty_text,
                };
                ty.fields.push((field.to_owned(), ty_text.to_owned()));
            }
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(name), Some(open), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if name.contains('[') || !(open == "{" || open == "[") {
            continue;
        }
        let ty = SyzType {
            union: open == "[",
            fields: Vec::new(),
            attrs: String::new(),
        };
        current = Some((name.to_owned(), ty));
    }
    types
}

/// Splits a syzlang type's options at the commas outside brackets.
fn split_options(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// Layouts of syzlang types as syzkaller lays them out (C's rules), for the
/// types alloctag.txt's ABI structs use.
struct Layouts<'a> {
    types: &'a BTreeMap<String, SyzType>,
    consts: &'a BTreeMap<String, u64>,
}

impl Layouts<'_> {
    fn number(&self, s: &str) -> u64 {
        s.parse()
            .ok()
            .or_else(|| self.consts.get(s).copied())
            .unwrap_or_else(|| panic!("{s} is neither a number nor in {CONSTS}"))
    }

    /// (size, alignment) of a type.
    fn of(&self, ty: &str) -> (u64, u64) {
        let (base, options) = match ty.find('[') {
            Some(i) => (&ty[..i], split_options(&ty[i + 1..ty.len() - 1])),
            None => (ty, Vec::new()),
        };
        let int = |name: &str| -> Option<u64> {
            match name.trim_end_matches("be") {
                "int8" | "bool8" => Some(1),
                "int16" | "bool16" => Some(2),
                "int32" | "bool32" => Some(4),
                "int64" | "bool64" | "intptr" | "boolptr" => Some(8),
                _ => None,
            }
        };
        if let Some(size) = int(base) {
            return (size, size);
        }
        match base {
            // amd64's pointers; ptr64 is 8 bytes on every arch.
            "ptr" | "ptr64" => (8, 8),
            "const" | "flags" | "len" | "bytesize" => {
                let size = int(options[1]).unwrap_or_else(|| panic!("{ty}: no int type"));
                (size, size)
            }
            "array" => {
                let (size, align) = self.of(options[0]);
                let n = self.number(options.get(1).unwrap_or_else(|| panic!("{ty}: no size")));
                (size * n, align)
            }
            "string" => (
                self.number(options.get(1).unwrap_or_else(|| panic!("{ty}: no size"))),
                1,
            ),
            _ => {
                let t = self
                    .types
                    .get(base)
                    .unwrap_or_else(|| panic!("{ty}: not a type this test lays out (teach it)"));
                self.of_struct(t).0
            }
        }
    }

    /// ((size, alignment), each field's offset) of a struct or union.
    fn of_struct(&self, t: &SyzType) -> ((u64, u64), Vec<u64>) {
        assert!(
            !t.attrs.contains("packed") && !t.attrs.contains("varlen"),
            "{t:?}"
        );
        let (mut end, mut align, mut offsets) = (0u64, 1u64, Vec::new());
        for (_, ty) in &t.fields {
            let (size, a) = self.of(ty);
            align = align.max(a);
            if t.union {
                offsets.push(0);
                end = end.max(size);
            } else {
                let at = end.next_multiple_of(a);
                offsets.push(at);
                end = at + size;
            }
        }
        if let Some(n) = t
            .attrs
            .strip_prefix("[align[")
            .and_then(|r| r.strip_suffix("]]"))
        {
            align = align.max(self.number(n));
        }
        ((end.next_multiple_of(align), align), offsets)
    }
}

/// alloctag.txt.const: name → value on amd64.
fn const_file() -> BTreeMap<String, u64> {
    let text = read(CONSTS);
    let mut lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let arches = lines.next().and_then(|l| l.strip_prefix("arches = "));
    assert!(
        arches.is_some_and(|a| a.split(',').any(|a| a.trim() == "amd64")),
        "{CONSTS}: the first line must be 'arches = ...' with amd64"
    );
    lines
        .map(|l| {
            let (name, value) = l.split_once('=').unwrap_or_else(|| panic!("{CONSTS}: {l}"));
            // A default value, and values per arch: "56, amd64:257, arm:riscv64:57".
            let (mut default, mut amd64) = (None, None);
            for part in value.split(',').map(str::trim) {
                let mut words: Vec<&str> = part.split(':').map(str::trim).collect();
                let v = words.pop().unwrap();
                if words.is_empty() {
                    default = Some(v);
                } else if words.contains(&"amd64") {
                    amd64 = Some(v);
                }
            }
            let value = amd64
                .or(default)
                .unwrap_or_else(|| panic!("{CONSTS}: {name}: no amd64 value"));
            let parsed = match value.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => value.parse(),
            };
            let parsed = parsed.unwrap_or_else(|e| panic!("{CONSTS}: {name} = {value}: {e}"));
            (name.trim().to_owned(), parsed)
        })
        .collect()
}

/// Compiles `main_body` against the header (and the host's UAPI headers)
/// and runs it: its output's lines, `NAME VALUE`, as a map.
fn run_c(main_body: &str) -> BTreeMap<String, u64> {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include <linux/fcntl.h>\n\
         #include <asm/unistd.h>\n#include <linux/alloc_tag.h>\n\
         #define P(name, value) printf(\"%s %llu\\n\", name, (unsigned long long)(value))\n\
         int main(void)\n{{\n{main_body}\treturn 0;\n}}\n"
    );
    std::fs::write(dir.path().join("p.c"), &program).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let out = Command::new(&cc)
        .arg("-I")
        .arg(root().join("include/uapi"))
        .arg("-o")
        .arg(dir.path().join("p"))
        .arg(dir.path().join("p.c"))
        .output()
        // A missing compiler is a failure, not a pass: the check did not run.
        .unwrap_or_else(|e| {
            panic!("running {cc} on {HEADER}: {e} (install a C compiler, or set CC)")
        });
    assert!(
        out.status.success(),
        "{cc} failed (the UAPI headers, linux-libc-dev, missing?):\n{}\n{program}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(dir.path().join("p")).output().unwrap();
    assert!(run.status.success());
    String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_owned(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn structs_have_the_headers_fields_at_its_offsets() {
    let lines = descriptions();
    let types = syz_types(&lines);
    let consts = const_file();
    let layouts = Layouts {
        types: &types,
        consts: &consts,
    };
    let structs = header_structs();
    let mut c = String::new();
    for (name, fields) in &structs {
        c += &format!("\tP(\"sizeof {name}\", sizeof(struct {name}));\n");
        for f in fields {
            c += &format!("\tP(\"offsetof {name}.{f}\", offsetof(struct {name}, {f}));\n");
        }
    }
    let header = run_c(&c);
    let mut wrong = Vec::new();
    for (name, fields) in &structs {
        let Some(t) = types.get(name) else {
            wrong.push(format!("struct {name} is not described"));
            continue;
        };
        let names: Vec<&String> = t.fields.iter().map(|(f, _)| f).collect();
        if names != fields.iter().collect::<Vec<_>>() {
            wrong.push(format!(
                "{name} has fields {names:?}, the header {fields:?}"
            ));
            continue;
        }
        let ((size, _), offsets) = layouts.of_struct(t);
        if size != header[&format!("sizeof {name}")] {
            wrong.push(format!(
                "{name} is {size} bytes, {} in the header",
                header[&format!("sizeof {name}")]
            ));
        }
        for (f, at) in fields.iter().zip(offsets) {
            let want = header[&format!("offsetof {name}.{f}")];
            if at != want {
                wrong.push(format!("{name}.{f} is at {at}, at {want} in the header"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{DESCRIPTIONS} against {HEADER}:\n{}",
        wrong.join("\n")
    );
}

/// The symbolic constants that alloctag.txt uses, and the syscall numbers
/// its calls need: what syz-extract puts in its .const file.
fn used_consts(lines: &[String]) -> BTreeSet<String> {
    let mut params = BTreeSet::new();
    for l in lines {
        if let Some(rest) = l.strip_prefix("type ")
            && let Some((_, p)) = rest.split_once('[')
        {
            let p = p.split(']').next().unwrap();
            params.extend(p.split(',').map(|s| s.trim().to_owned()));
        }
    }
    let mut used = BTreeSet::new();
    for l in lines {
        if l.starts_with("include ") || l.starts_with("meta ") || l.starts_with("resource ") {
            continue;
        }
        if let Some(name) = call_name(l) {
            used.insert(format!("__NR_{}", name.split('$').next().unwrap()));
        }
        // Identifiers outside string literals; constants are upper case.
        let mut in_string = false;
        let mut word = String::new();
        for c in l.chars().chain([' ']) {
            if c == '"' {
                in_string = !in_string;
            }
            if !in_string && (c.is_ascii_alphanumeric() || c == '_') {
                word.push(c);
                continue;
            }
            let w = std::mem::take(&mut word);
            let is_const = w.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
                && w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && w.len() > 1;
            if is_const && !params.contains(&w) {
                used.insert(w);
            }
        }
    }
    used
}

#[test]
fn const_file_holds_what_the_header_computes() {
    let lines = descriptions();
    let used = used_consts(&lines);
    let consts = const_file();
    let listed: BTreeSet<String> = consts.keys().cloned().collect();
    let missing: Vec<&String> = used.difference(&listed).collect();
    let extra: Vec<&String> = listed.difference(&used).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{CONSTS} against the constants {DESCRIPTIONS} uses: missing {missing:?}, not used {extra:?}"
    );
    // The syscall numbers are x86-64's: checked only where the host's
    // <asm/unistd.h> is x86-64's.
    let check_nr = cfg!(target_arch = "x86_64");
    let names: Vec<&String> = listed
        .iter()
        .filter(|n| check_nr || !n.starts_with("__NR_"))
        .collect();
    let c: String = names
        .iter()
        .map(|n| format!("\tP(\"{n}\", {n});\n"))
        .collect();
    let computed = run_c(&c);
    let wrong: Vec<String> = names
        .iter()
        .filter(|n| computed[n.as_str()] != consts[n.as_str()])
        .map(|n| {
            let (listed, header) = (consts[n.as_str()], computed[n.as_str()]);
            format!("{n} = {listed} (0x{listed:x}), the header gives {header} (0x{header:x})")
        })
        .collect();
    assert!(wrong.is_empty(), "{CONSTS}:\n{}", wrong.join("\n"));
    // The ioctl numbers as _IOC() makes them, from the header's sizes, which
    // the compiler gave: a check of the check.
    for (name, dir, nr, size) in [
        ("ALLOCINFO_IOC_CONTENT_ID", 2u64, 0u64, 8u64),
        ("ALLOCINFO_IOC_GET_AT", 3, 1, 464),
        ("ALLOCINFO_IOC_GET_NEXT", 2, 2, 224),
        ("ALLOCINFO_IOC_GET_SPLIT", 3, 3, 496),
    ] {
        assert_eq!(
            consts[name],
            dir << 30 | size << 16 | 0xA6 << 8 | nr,
            "{name}"
        );
    }
}

#[test]
fn boot_parameters_are_listed_in_the_readme() {
    let readme = read(README);
    let mut params = BTreeMap::new();
    let mut unread = Vec::new();
    for path in sources() {
        let rel = path.strip_prefix(root()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if is_comment(&rel, line) {
                continue;
            }
            let name = quoted_after(line, "EarlyParam::new(c_str!(")
                .or_else(|| quoted_after(line, "early_param("))
                .or_else(|| quoted_after(line, "__setup("));
            match name {
                Some(name) => {
                    params.insert(
                        name.trim_end_matches('=').to_owned(),
                        format!("{rel}:{}", n + 1),
                    );
                }
                None if ["module_param", "core_param", "early_param(", "__setup("]
                    .iter()
                    .any(|m| line.contains(m)) =>
                {
                    unread.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                }
                None => {}
            }
        }
    }
    assert!(
        unread.is_empty(),
        "boot parameters this test cannot read (teach it):\n{}",
        unread.join("\n")
    );
    assert!(
        params.contains_key("sysctl.vm.mem_profiling"),
        "read from src/: {params:?}"
    );
    let missing: Vec<String> = params
        .iter()
        .filter(|(name, _)| !readme.contains(&format!("{name}=")))
        .map(|(name, at)| format!("{name}= ({at})"))
        .collect();
    assert!(
        missing.is_empty(),
        "{README} does not list these boot parameters: {}",
        missing.join(", ")
    );
}

/// The calls of `contrib/syzkaller/manager.json`'s `enable_syscalls`: every
/// call alloctag.txt describes is enabled by one of its entries (syzkaller's
/// trailing `*` matches any rest), and every entry naming one of ours (a
/// `$` variant) enables at least one: the run scripts/syzkaller.sh makes
/// leaves none of the descriptions out and names none that is gone.
#[test]
fn the_managers_syscalls_are_the_descriptions() {
    let json: serde_json::Value =
        serde_json::from_str(&read("contrib/syzkaller/manager.json")).expect("manager.json");
    let entries: Vec<&str> = json["enable_syscalls"]
        .as_array()
        .expect("no enable_syscalls list")
        .iter()
        .map(|e| e.as_str().expect("a call name"))
        .collect();
    assert!(entries.len() > 10, "enable_syscalls: {entries:?}");
    let lines = descriptions();
    let ours: Vec<&str> = calls(&lines).into_iter().map(|(n, _)| n).collect();
    let matches = |pattern: &str, call: &str| match pattern.strip_suffix('*') {
        Some(prefix) => call.starts_with(prefix),
        None => call == pattern,
    };
    let left_out: Vec<&&str> = ours
        .iter()
        .filter(|c| !entries.iter().any(|e| matches(e, c)))
        .collect();
    assert!(
        left_out.is_empty(),
        "manager.json does not enable {left_out:?}"
    );
    let gone: Vec<&&str> = entries
        .iter()
        .filter(|e| e.contains('$') && !ours.iter().any(|c| matches(e, c)))
        // syzkaller's own variants, for the allocations they make
        .filter(|e| !e.starts_with("socketpair$") && !e.starts_with("sendmsg$"))
        .collect();
    assert!(
        gone.is_empty(),
        "manager.json enables calls alloctag.txt does not describe: {gone:?}"
    );
}
