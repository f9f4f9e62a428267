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
    /// A function's or variable's place (object, [`crate::elf::place`]) to
    /// its DIE: a symbol that LLVM made an alias of an identical function
    /// has no DIE of its own, only the place it shares.
    places: HashMap<(usize, u64), Loc>,
    /// Each object's symbols' places.
    symbol_places: Vec<&'a HashMap<String, u64>>,
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
            places: HashMap::new(),
            symbol_places: objects.iter().map(|o| &o.symbols).collect(),
        };
        for (object, sections) in objects.iter().enumerate() {
            let dwarf = sections
                .dwarf
                .borrow(|s| EndianSlice::new(s, sections.endian));
            let mut headers = dwarf.units();
            while let Some(header) = headers.next().map_err(err)? {
                let unit = dwarf.unit(header).map_err(err)?;
                let at = index.units.len();
                let parents = index.scan(&dwarf, &unit, at, object)?;
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
        object: usize,
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
            if let Some(place) = place_of(entry)? {
                self.places.entry((object, place)).or_insert(loc);
            }
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

    /// The DIE that describes `name`: its own, or the one at its place.
    pub fn symbol(&self, name: &str) -> Option<Loc> {
        if let Some((_, loc)) = self.symbols.get(name) {
            return Some(*loc);
        }
        self.symbol_places
            .iter()
            .enumerate()
            .find_map(|(object, places)| {
                let place = places.get(name)?;
                self.places.get(&(object, *place)).copied()
            })
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

/// Where a subprogram's code or a variable's data starts, as a place.
fn place_of(entry: &gimli::DebuggingInformationEntry<'_, '_, R<'_>>) -> Result<Option<u64>, Error> {
    if let Some(AttributeValue::Addr(a)) = entry.attr_value(gimli::DW_AT_low_pc).map_err(err)? {
        return Ok(Some(a));
    }
    // A variable's DW_AT_location that is exactly DW_OP_addr ADDRESS.
    if let Some(AttributeValue::Exprloc(expr)) =
        entry.attr_value(gimli::DW_AT_location).map_err(err)?
    {
        let bytes = expr.0.slice();
        if bytes.len() == 9 && bytes[0] == gimli::DW_OP_addr.0 {
            let mut a = [0u8; 8];
            a.copy_from_slice(&bytes[1..]);
            return Ok(Some(match gimli::Reader::endian(&expr.0) {
                gimli::RunTimeEndian::Little => u64::from_le_bytes(a),
                gimli::RunTimeEndian::Big => u64::from_be_bytes(a),
            }));
        }
    }
    Ok(None)
}
