// SPDX-License-Identifier: GPL-2.0

//! CRCs computed from objects that rustc and the C compiler build here: a
//! change to a symbol's types changes its CRC, anything else does not.

use std::{path::Path, process::Command};

use dwarfcrc::{describe, elf, index::Index};

/// Builds `source` (Rust, or C when `c`) into an object with DWARF.
fn object(dir: &Path, name: &str, source: &str, c: bool) -> std::path::PathBuf {
    object_with(dir, name, source, c, &[])
}

/// As [`object`], with more of rustc's flags (its `-Z` ones allowed).
fn object_with(
    dir: &Path,
    name: &str,
    source: &str,
    c: bool,
    flags: &[&str],
) -> std::path::PathBuf {
    let src = dir.join(if c {
        format!("{name}.c")
    } else {
        format!("{name}.rs")
    });
    let obj = dir.join(format!("{name}.o"));
    std::fs::write(&src, source).unwrap();
    let status = if c {
        Command::new("cc")
            .args(["-g", "-O1", "-c", "-o"])
            .arg(&obj)
            .arg(&src)
            .status()
    } else {
        Command::new("rustc")
            .env("RUSTC_BOOTSTRAP", "1")
            .args([
                "--crate-type=lib",
                "--emit=obj",
                "-g",
                "-Copt-level=1",
                "--edition=2021",
            ])
            // Later flags win: these may change the ones above.
            .args(flags)
            .arg("-o")
            .arg(&obj)
            .arg(&src)
            .status()
    };
    assert!(status.unwrap().success(), "building {}", src.display());
    obj
}

/// The CRC of each symbol named, None where the objects do not describe it.
fn crcs(objects: &[&Path], names: &[&str]) -> Vec<Option<u32>> {
    let sections: Vec<_> = objects.iter().map(|o| elf::load(o).unwrap()).collect();
    let index = Index::new(&sections).unwrap();
    names
        .iter()
        .map(|n| {
            index
                .symbol(n)
                .map(|loc| dwarfcrc::crc(&describe::symbol(&index, loc).unwrap()))
        })
        .collect()
}

fn crc_of(dir: &Path, source: &str, name: &str) -> u32 {
    let obj = object(dir, "t", source, false);
    crcs(&[&obj], &[name])[0].expect("the symbol is described")
}

const BASE: &str = r#"
pub struct Inner { pub a: u32, pub b: u64 }
pub struct Outer { pub inner: Inner, pub next: *const Outer }
#[unsafe(no_mangle)]
pub extern "C" fn takes(o: &Outer) -> u64 { o.inner.b }
#[unsafe(no_mangle)]
pub extern "C" fn other(x: u32) -> u32 { x + 1 }
#[unsafe(no_mangle)]
pub static TABLE: [u16; 4] = [1, 2, 3, 4];
"#;

fn tmp() -> tempdir::Dir {
    tempdir::Dir::new()
}

mod tempdir {
    /// A directory of its own under the target directory, removed on drop.
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Self {
            use std::sync::atomic::{AtomicU32, Ordering};
            static N: AtomicU32 = AtomicU32::new(0);
            let p = std::env::temp_dir().join(format!(
                "dwarfcrc-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The CRC of `name` in BASE with each `(from, to)` replaced; each `from`
/// must be there, or the test would compare BASE with itself.
fn crc_changed(dir: &Path, edits: &[(&str, &str)], name: &str) -> u32 {
    let mut source = BASE.to_owned();
    for (from, to) in edits {
        assert!(source.contains(from), "{from} is not in the source");
        source = source.replace(from, to);
    }
    crc_of(dir, &source, name)
}

#[test]
fn same_source_same_crc() {
    let (a, b) = (tmp(), tmp());
    assert_eq!(crc_of(&a.0, BASE, "takes"), crc_of(&b.0, BASE, "takes"));
}

#[test]
fn a_field_type_reached_through_a_reference_changes_the_crc() {
    let d = tmp();
    let edits = [
        ("pub b: u64", "pub b: u32"),
        ("o.inner.b", "o.inner.b as u64"),
    ];
    assert_ne!(
        crc_of(&d.0, BASE, "takes"),
        crc_changed(&d.0, &edits, "takes")
    );
}

#[test]
fn a_field_name_or_order_changes_the_crc() {
    let d = tmp();
    let base = crc_of(&d.0, BASE, "takes");
    assert_ne!(
        base,
        crc_changed(&d.0, &[("pub a: u32", "pub c: u32")], "takes")
    );
    // rustc may keep the layout of a reordered struct: the member order in
    // the DWARF still differs.
    let reorder = [("pub a: u32, pub b: u64", "pub b: u64, pub a: u32")];
    assert_ne!(base, crc_changed(&d.0, &reorder, "takes"));
}

#[test]
fn a_parameter_or_return_type_changes_the_crc() {
    let d = tmp();
    let base = crc_of(&d.0, BASE, "other");
    let fun = "fn other(x: u32) -> u32 { x + 1 }";
    let param = [(fun, "fn other(x: u64) -> u32 { x as u32 }")];
    assert_ne!(base, crc_changed(&d.0, &param, "other"));
    let ret = [(fun, "fn other(x: u32) -> u64 { x as u64 }")];
    assert_ne!(base, crc_changed(&d.0, &ret, "other"));
}

#[test]
fn a_body_or_an_unrelated_type_does_not_change_the_crc() {
    let d = tmp();
    let base = crc_of(&d.0, BASE, "other");
    assert_eq!(base, crc_changed(&d.0, &[("x + 1", "x * 3")], "other"));
    // Inner is not reachable from other().
    assert_eq!(
        base,
        crc_changed(&d.0, &[("pub a: u32", "pub a: u8")], "other")
    );
}

#[test]
fn a_variable_is_versioned_by_its_type() {
    let d = tmp();
    let base = crc_of(&d.0, BASE, "TABLE");
    assert_eq!(
        base,
        crc_changed(&d.0, &[("[1, 2, 3, 4]", "[5, 6, 7, 8]")], "TABLE")
    );
    let longer = [("[u16; 4] = [1, 2, 3, 4]", "[u16; 5] = [1, 2, 3, 4, 5]")];
    assert_ne!(base, crc_changed(&d.0, &longer, "TABLE"));
}

#[test]
fn names_come_through_the_relocations() {
    // In a .o, .debug_info reaches .debug_str through relocations: read
    // without them, every name would be the section's first string.
    let d = tmp();
    let obj = object(&d.0, "t", BASE, false);
    let sections = [elf::load(&obj).unwrap()];
    let index = Index::new(&sections).unwrap();
    let text = describe::symbol(&index, index.symbol("takes").unwrap()).unwrap();
    assert!(
        text.contains("Outer") && text.contains("member inner") && text.contains("member next"),
        "{text}"
    );
    // The self-reference through `next` ends in a back-reference.
    assert!(
        text.contains("member next") && text.contains("*const t::Outer :^1;"),
        "{text}"
    );
}

#[test]
fn a_symbol_without_dwarf_is_not_described() {
    let d = tmp();
    let obj = object(&d.0, "t", BASE, false);
    assert_eq!(crcs(&[&obj], &["no_such_symbol"]), vec![None]);
}

#[test]
fn a_c_function_is_found_by_its_name_across_objects() {
    let d = tmp();
    let c = "struct s { int a; long b; };\nlong helper(struct s *p) { return p->b; }\n";
    let rust = object(&d.0, "r", BASE, false);
    let obj = object(&d.0, "c", c, true);
    let both = crcs(&[&rust, &obj], &["takes", "helper"]);
    assert_eq!(both[0], crcs(&[&rust], &["takes"])[0]);
    let helper = both[1].expect("helper is described");
    let obj2 = object(&d.0, "c2", &c.replace("long b;", "int b;"), true);
    assert_ne!(Some(helper), crcs(&[&obj2], &["helper"])[0]);
}

/// Two functions whose code is the same but whose types are not.
const TWINS: &str = r#"
pub struct A { pub x: u32 }
pub struct B { pub y: u32 }
#[unsafe(no_mangle)]
pub extern "C" fn twin_a(v: &A) -> u32 { v.x.wrapping_mul(7) }
#[unsafe(no_mangle)]
pub extern "C" fn twin_b(v: &B) -> u32 { v.y.wrapping_mul(7) }
"#;

#[test]
fn a_merged_function_has_no_description_of_its_own() {
    // LLVM makes one twin an alias of the other, with no DWARF of its own:
    // it is not described (rust/Makefile turns merging off).
    let d = tmp();
    let merged = object_with(
        &d.0,
        "m",
        TWINS,
        false,
        &["-Zmerge-functions=aliases", "-Copt-level=2"],
    );
    let got = crcs(&[&merged], &["twin_a", "twin_b"]);
    assert_eq!(got.iter().filter(|c| c.is_none()).count(), 1, "{got:?}");
    // Not merged, each has its own, and their types differ.
    let apart = object_with(
        &d.0,
        "a",
        TWINS,
        false,
        &["-Zmerge-functions=disabled", "-Copt-level=2"],
    );
    let got = crcs(&[&apart], &["twin_a", "twin_b"]);
    assert!(
        got[0].is_some() && got[1].is_some() && got[0] != got[1],
        "{got:?}"
    );
}

#[test]
fn pointer_types_met_before_stay_apart() {
    // Pointer types have no name: met again, each must still be told
    // from the other.
    let d = tmp();
    let c = "struct a { int x; };\nstruct b { long y; };\n\
             struct s { struct a *p; struct b *q; struct a *last; };\n\
             long f(struct s *s) { return s->q->y; }\n";
    let before = object(&d.0, "p1", c, true);
    let after = object(
        &d.0,
        "p2",
        &c.replace("struct a *last", "struct b *last"),
        true,
    );
    assert_ne!(crcs(&[&before], &["f"])[0], crcs(&[&after], &["f"])[0]);
}
