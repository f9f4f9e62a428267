// SPDX-License-Identifier: GPL-2.0

//! Where each symbol's DWARF is: every unit of every object, each DIE's
//! parent, and the DIE that describes each linkage name.

use std::collections::HashMap;

use gimli::{AttributeValue, DwTag, EndianSlice, RunTimeEndian, UnitOffset};

use crate::{Error, elf::Sections};

pub type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// A DIE: the index of its unit in [`Index::units`] and its offset there.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct Loc {
    pub unit: usize,
    pub offset: UnitOffset,
}

/// One unit and the object it came from.
pub struct IndexedUnit<'a> {
    pub object: usize,
    pub unit: gimli::Unit<R<'a>>,
    parents: HashMap<UnitOffset, UnitOffset>,
}

/// The units of all objects given, and the symbols they describe.
pub struct Index<'a> {
    pub dwarfs: Vec<gimli::Dwarf<R<'a>>>,
    pub units: Vec<IndexedUnit<'a>>,
    /// Linkage name, or a C external's name, to the DIE that says most of it.
    symbols: HashMap<String, (u8, Loc)>,
}

fn err(e: gimli::Error) -> Error {
    Error(format!("DWARF: {e}"))
}

impl<'a> Index<'a> {
    pub fn new(objects: &'a [Sections]) -> Result<Self, Error> {
        let mut index = Index {
            dwarfs: Vec::new(),
            units: Vec::new(),
            symbols: HashMap::new(),
        };
        for (object, sections) in objects.iter().enumerate() {
            let dwarf = sections
                .dwarf
                .borrow(|s| EndianSlice::new(s, sections.endian));
            let mut headers = dwarf.units();
            while let Some(header) = headers.next().map_err(err)? {
                let unit = dwarf.unit(header).map_err(err)?;
                let at = index.units.len();
                let parents = index.scan(&dwarf, &unit, at)?;
                index.units.push(IndexedUnit {
                    object,
                    unit,
                    parents,
                });
            }
            index.dwarfs.push(dwarf);
        }
        Ok(index)
    }

    /// Records each DIE's parent and the unit's symbols.
    fn scan(
        &mut self,
        dwarf: &gimli::Dwarf<R<'a>>,
        unit: &gimli::Unit<R<'a>>,
        at: usize,
    ) -> Result<HashMap<UnitOffset, UnitOffset>, Error> {
        let mut parents = HashMap::new();
        let mut stack: Vec<UnitOffset> = Vec::new();
        let mut depth: isize = 0;
        let mut entries = unit.entries();
        while let Some((delta, entry)) = entries.next_dfs().map_err(err)? {
            depth += delta;
            stack.truncate(usize::try_from(depth).map_err(|_| Error("DWARF: bad depth".into()))?);
            if let Some(parent) = stack.last() {
                parents.insert(entry.offset(), *parent);
            }
            stack.push(entry.offset());
            let tag = entry.tag();
            if tag != gimli::DW_TAG_subprogram && tag != gimli::DW_TAG_variable {
                continue;
            }
            let loc = Loc {
                unit: at,
                offset: entry.offset(),
            };
            let linkage = match entry.attr_value(gimli::DW_AT_linkage_name).map_err(err)? {
                Some(v) => Some(v),
                None => entry
                    .attr_value(gimli::DW_AT_MIPS_linkage_name)
                    .map_err(err)?,
            };
            let name = match linkage {
                Some(v) => v,
                // A C external is known by its own name.
                None if entry
                    .attr_value(gimli::DW_AT_external)
                    .map_err(err)?
                    .is_some() =>
                {
                    match entry.attr_value(gimli::DW_AT_name).map_err(err)? {
                        Some(v) => v,
                        None => continue,
                    }
                }
                None => continue,
            };
            let name = dwarf
                .attr_string(unit, name)
                .map_err(err)?
                .to_string_lossy()
                .into_owned();
            let score = u8::from(entry.has_children()) * 2
                + u8::from(entry.attr_value(gimli::DW_AT_type).map_err(err)?.is_some())
                + u8::from(
                    entry
                        .attr_value(gimli::DW_AT_declaration)
                        .map_err(err)?
                        .is_none(),
                ) * 4;
            match self.symbols.get(&name) {
                Some((best, _)) if *best >= score => {}
                _ => {
                    self.symbols.insert(name, (score, loc));
                }
            }
        }
        Ok(parents)
    }

    /// The DIE that describes `name`. A symbol without one of its own (an
    /// alias that LLVM made of an identical function, which rust/Makefile
    /// turns off) has none: the types of the function it shares are not
    /// its own.
    pub fn symbol(&self, name: &str) -> Option<Loc> {
        self.symbols.get(name).map(|(_, loc)| *loc)
    }

    pub fn entry(
        &self,
        loc: Loc,
    ) -> Result<gimli::DebuggingInformationEntry<'_, '_, R<'a>>, Error> {
        self.units[loc.unit].unit.entry(loc.offset).map_err(err)
    }

    pub fn parent(&self, loc: Loc) -> Option<Loc> {
        self.units[loc.unit]
            .parents
            .get(&loc.offset)
            .map(|offset| Loc {
                unit: loc.unit,
                offset: *offset,
            })
    }

    /// The DIE a reference attribute of a DIE in `from`'s unit names.
    pub fn resolve(&self, from: Loc, value: AttributeValue<R<'a>>) -> Option<Loc> {
        match value {
            AttributeValue::UnitRef(offset) => Some(Loc {
                unit: from.unit,
                offset,
            }),
            AttributeValue::DebugInfoRef(offset) => {
                let object = self.units[from.unit].object;
                self.units.iter().enumerate().find_map(|(i, u)| {
                    if u.object != object {
                        return None;
                    }
                    offset
                        .to_unit_offset(&u.unit.header)
                        .map(|offset| Loc { unit: i, offset })
                })
            }
            _ => None,
        }
    }

    /// A string attribute of the DIE at `loc`.
    pub fn string(&self, loc: Loc, value: AttributeValue<R<'a>>) -> Result<String, Error> {
        let u = &self.units[loc.unit];
        let s = self.dwarfs[u.object]
            .attr_string(&u.unit, value)
            .map_err(err)?;
        Ok(s.to_string_lossy().into_owned())
    }

    /// The DIE's tag.
    pub fn tag(&self, loc: Loc) -> Result<DwTag, Error> {
        Ok(self.entry(loc)?.tag())
    }

    /// The DIE's children, in order.
    pub fn children(&self, loc: Loc) -> Result<Vec<Loc>, Error> {
        let u = &self.units[loc.unit].unit;
        let mut tree = u.entries_tree(Some(loc.offset)).map_err(err)?;
        let root = tree.root().map_err(err)?;
        let mut children = root.children();
        let mut out = Vec::new();
        while let Some(child) = children.next().map_err(err)? {
            out.push(Loc {
                unit: loc.unit,
                offset: child.entry().offset(),
            });
        }
        Ok(out)
    }
}
