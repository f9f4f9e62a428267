// SPDX-License-Identifier: GPL-2.0

//! The DWARF of a relocatable ELF object, with its relocations applied, and
//! the names it exports.
//!
//! In a `.o`, a reference from `.debug_info` into `.debug_str` (and the other
//! sections) is a relocation: with RELA the bytes in the section are zero and
//! the offset is the addend. So each DWARF section is read with its
//! relocations applied, as a linker would.

use object::{Object, ObjectSection, ObjectSymbol, RelocationKind, RelocationTarget};
use std::{borrow::Cow, fs, path::Path};

use crate::Error;

/// One object's DWARF sections, owned.
pub struct Sections {
    pub dwarf: gimli::DwarfSections<Vec<u8>>,
    pub endian: gimli::RunTimeEndian,
}

fn parse<'d>(path: &Path, bytes: &'d [u8]) -> Result<object::File<'d>, Error> {
    object::File::parse(bytes).map_err(|e| Error(format!("{}: {e}", path.display())))
}

fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    fs::read(path).map_err(|e| Error(format!("{}: {e}", path.display())))
}

/// Reads `path`'s DWARF.
pub fn load(path: &Path) -> Result<Sections, Error> {
    let bytes = read_file(path)?;
    let file = parse(path, &bytes)?;
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let dwarf = gimli::DwarfSections::load(|id| section(&file, id.name(), endian))
        .map_err(|e| Error(format!("{}: {e}", path.display())))?;
    Ok(Sections { dwarf, endian })
}

/// The names `path` exports: its `__export_symbol_NAME` symbols, which
/// include/linux/export.h makes for each EXPORT_SYMBOL(NAME), in the
/// symbol table's order.
pub fn exports(path: &Path) -> Result<Vec<String>, Error> {
    let bytes = read_file(path)?;
    let file = parse(path, &bytes)?;
    Ok(file
        .symbols()
        .filter_map(|s| {
            s.name()
                .ok()?
                .strip_prefix("__export_symbol_")
                .map(str::to_owned)
        })
        .collect())
}

fn section(
    file: &object::File<'_>,
    name: &str,
    endian: gimli::RunTimeEndian,
) -> Result<Vec<u8>, Error> {
    let Some(sec) = file.section_by_name(name) else {
        return Ok(Vec::new());
    };
    let data: Cow<'_, [u8]> = sec
        .uncompressed_data()
        .map_err(|e| Error(format!("{name}: {e}")))?;
    let mut data = data.into_owned();
    for (offset, reloc) in sec.relocations() {
        // Only absolute relocations occur in DWARF; anything else is left
        // as it is, and an address it would have given is never read.
        if reloc.kind() != RelocationKind::Absolute {
            continue;
        }
        let base = match reloc.target() {
            RelocationTarget::Symbol(i) => {
                file.symbol_by_index(i).map(|s| s.address()).unwrap_or(0)
            }
            RelocationTarget::Section(i) => {
                file.section_by_index(i).map(|s| s.address()).unwrap_or(0)
            }
            _ => 0,
        };
        let width = usize::from(reloc.size() / 8);
        let at = usize::try_from(offset)
            .map_err(|_| Error(format!("{name}: relocation at {offset:#x}")))?;
        let Some(field) = data.get_mut(at..at + width) else {
            return Err(Error(format!(
                "{name}: relocation at {offset:#x} outside the section"
            )));
        };
        let implicit = if reloc.has_implicit_addend() {
            read(field, endian)
        } else {
            0
        };
        let value = base
            .wrapping_add(reloc.addend() as u64)
            .wrapping_add(implicit);
        write(field, value, endian);
    }
    Ok(data)
}

fn read(field: &[u8], endian: gimli::RunTimeEndian) -> u64 {
    let mut v = 0u64;
    for (i, b) in field.iter().enumerate() {
        let shift = if endian == gimli::RunTimeEndian::Little {
            i
        } else {
            field.len() - 1 - i
        };
        v |= u64::from(*b) << (8 * shift);
    }
    v
}

fn write(field: &mut [u8], value: u64, endian: gimli::RunTimeEndian) {
    let len = field.len();
    for (i, b) in field.iter_mut().enumerate() {
        let shift = if endian == gimli::RunTimeEndian::Little {
            i
        } else {
            len - 1 - i
        };
        *b = (value >> (8 * shift)) as u8;
    }
}
