// SPDX-License-Identifier: GPL-2.0

//! The DWARF of a relocatable ELF object, with its relocations applied.
//!
//! In a `.o`, a reference from `.debug_info` into `.debug_str` (and the other
//! sections) is a relocation: with RELA the bytes in the section are zero and
//! the offset is the addend. So each DWARF section is read with its
//! relocations applied, as a linker would.

use object::{
    Object, ObjectSection, ObjectSymbol, RelocationKind, RelocationTarget, SectionFlags,
    SectionIndex, SymbolSection,
};
use std::{borrow::Cow, collections::HashMap, fs, path::Path};

use crate::Error;

/// One object's DWARF sections, owned, and where its symbols are.
pub struct Sections {
    pub dwarf: gimli::DwarfSections<Vec<u8>>,
    pub endian: gimli::RunTimeEndian,
    /// Each defined symbol's [`place`].
    pub symbols: HashMap<String, u64>,
}

/// An address in a relocatable object, made unique: functions and data each
/// have a section of their own, at address 0, so an address alone says
/// nothing. The section's index goes in the top 16 bits.
pub fn place(section: SectionIndex, offset: u64) -> u64 {
    ((section.0 as u64 + 1) << 48) | (offset & ((1 << 48) - 1))
}

/// Reads `path`'s DWARF.
pub fn load(path: &Path) -> Result<Sections, Error> {
    let bytes = fs::read(path).map_err(|e| Error(format!("{}: {e}", path.display())))?;
    let file =
        object::File::parse(&*bytes).map_err(|e| Error(format!("{}: {e}", path.display())))?;
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let dwarf = gimli::DwarfSections::load(|id| section(&file, id.name(), endian))
        .map_err(|e| Error(format!("{}: {e}", path.display())))?;
    let symbols = file
        .symbols()
        .filter_map(|sym| match (sym.section(), sym.name()) {
            (SymbolSection::Section(i), Ok(name)) if !name.is_empty() => {
                Some((name.to_owned(), place(i, sym.address())))
            }
            _ => None,
        })
        .collect();
    Ok(Sections {
        dwarf,
        endian,
        symbols,
    })
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
        let (target, base) = match reloc.target() {
            RelocationTarget::Symbol(i) => match file.symbol_by_index(i) {
                Ok(s) => (s.section_index(), s.address()),
                Err(_) => (None, 0),
            },
            RelocationTarget::Section(i) => (
                Some(i),
                file.section_by_index(i).map(|s| s.address()).unwrap_or(0),
            ),
            _ => (None, 0),
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
        let mut value = base
            .wrapping_add(reloc.addend() as u64)
            .wrapping_add(implicit);
        // An address of code or data (a subprogram's DW_AT_low_pc, a
        // variable's DW_OP_addr) is made a place, to be matched with the
        // symbols at it.
        if let Some(section) = target.filter(|_| width == 8)
            && file.section_by_index(section).is_ok_and(|s| {
                matches!(s.flags(), SectionFlags::Elf { sh_flags } if sh_flags & u64::from(object::elf::SHF_ALLOC) != 0)
            })
        {
            value = place(section, value);
        }
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
