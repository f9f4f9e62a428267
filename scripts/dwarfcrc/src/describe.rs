// SPDX-License-Identifier: GPL-2.0

//! A symbol's type, as text: what its CRC is taken over.
//!
//! A function is its parameters' and return value's types, a variable its
//! type. Every type reachable from them is written out in full the first
//! time it is met, through pointers too, as genksyms expands a C symbol's
//! types: a change in any of them (a field's type, offset or name, an
//! enumerator's value, a size) changes the CRC. A type met again is written
//! as `^N`, N its number in the order the types were first met (names would
//! not do: pointer and array types have none), which also ends every cycle.
//! Nothing in the text depends on where the DWARF lies in the object, only
//! on what it says.

use std::collections::HashMap;
use std::fmt::Write;

use gimli::{AttributeValue, DwAt, DwTag};

use crate::{
    Error,
    index::{Index, Loc},
};

/// The attributes written for a DIE, in this order, besides its name and
/// type.
const ATTRS: &[DwAt] = &[
    gimli::DW_AT_byte_size,
    gimli::DW_AT_bit_size,
    gimli::DW_AT_data_member_location,
    gimli::DW_AT_data_bit_offset,
    gimli::DW_AT_bit_offset,
    gimli::DW_AT_alignment,
    gimli::DW_AT_encoding,
    gimli::DW_AT_const_value,
    gimli::DW_AT_discr_value,
    gimli::DW_AT_lower_bound,
    gimli::DW_AT_upper_bound,
    gimli::DW_AT_count,
    gimli::DW_AT_declaration,
];

/// The children written inside a type; the rest (methods, nested
/// declarations) are not part of its layout.
const CHILDREN: &[DwTag] = &[
    gimli::DW_TAG_member,
    gimli::DW_TAG_variant_part,
    gimli::DW_TAG_variant,
    gimli::DW_TAG_enumerator,
    gimli::DW_TAG_formal_parameter,
    gimli::DW_TAG_unspecified_parameters,
    gimli::DW_TAG_subrange_type,
    gimli::DW_TAG_template_type_parameter,
    gimli::DW_TAG_inheritance,
];

/// Tags whose name is their qualified name: the scopes they are in name them.
const SCOPES: &[DwTag] = &[
    gimli::DW_TAG_namespace,
    gimli::DW_TAG_structure_type,
    gimli::DW_TAG_union_type,
    gimli::DW_TAG_class_type,
    gimli::DW_TAG_enumeration_type,
];

/// Writes the description of the symbol at `loc`.
pub fn symbol(index: &Index<'_>, loc: Loc) -> Result<String, Error> {
    let mut d = Describer {
        index,
        out: String::new(),
        seen: HashMap::new(),
    };
    d.symbol(loc)?;
    Ok(d.out)
}

struct Describer<'i, 'a> {
    index: &'i Index<'a>,
    out: String,
    /// Each type written out, numbered in the order met.
    seen: HashMap<Loc, usize>,
}

impl<'a> Describer<'_, 'a> {
    fn symbol(&mut self, loc: Loc) -> Result<(), Error> {
        if self.index.tag(loc)? == gimli::DW_TAG_variable {
            self.out.push_str("var ");
            return self.type_of(loc);
        }
        self.out.push_str("fn(");
        // The parameters of the first DIE in the chain that lists any: an
        // out-of-line copy of an inlined function may list none, or list
        // them without types.
        let mut params = Vec::new();
        for at in self.chain(loc)? {
            for child in self.index.children(at)? {
                let tag = self.index.tag(child)?;
                if tag == gimli::DW_TAG_formal_parameter
                    || tag == gimli::DW_TAG_unspecified_parameters
                {
                    params.push((tag, child));
                }
            }
            if !params.is_empty() {
                break;
            }
        }
        for (tag, param) in params {
            if tag == gimli::DW_TAG_unspecified_parameters {
                self.out.push_str("...,");
            } else {
                self.type_of(param)?;
                self.out.push(',');
            }
        }
        self.out.push_str(")->");
        // A function that never returns (Rust's `-> !`) has no type to say so.
        let noreturn = self
            .index
            .entry(loc)?
            .attr_value(gimli::DW_AT_noreturn)
            .map_err(dw)?;
        if noreturn.is_some() {
            self.out.push('!');
        }
        self.type_of(loc)
    }

    /// `loc`, then the DIEs its `DW_AT_abstract_origin` or
    /// `DW_AT_specification` name, one after the other: a concrete copy of
    /// an inlined function, or a definition, says part of what it is there.
    fn chain(&self, loc: Loc) -> Result<Vec<Loc>, Error> {
        let mut chain = vec![loc];
        let mut at = loc;
        for _ in 0..8 {
            let entry = self.index.entry(at)?;
            let next = match entry.attr_value(gimli::DW_AT_abstract_origin).map_err(dw)? {
                Some(v) => Some(v),
                None => entry.attr_value(gimli::DW_AT_specification).map_err(dw)?,
            };
            match next.and_then(|v| self.index.resolve(at, v)) {
                Some(next) if !chain.contains(&next) => {
                    chain.push(next);
                    at = next;
                }
                _ => break,
            }
        }
        Ok(chain)
    }

    /// The `DW_AT_type` of `loc` or of the first DIE of its chain that has
    /// one, or `void`.
    fn type_of(&mut self, loc: Loc) -> Result<(), Error> {
        for at in self.chain(loc)? {
            let value = self
                .index
                .entry(at)?
                .attr_value(gimli::DW_AT_type)
                .map_err(dw)?;
            if let Some(ty) = value.and_then(|v| self.index.resolve(at, v)) {
                return self.die(ty, true);
            }
        }
        self.out.push_str("void");
        Ok(())
    }

    /// A type, or a type's child (`top` false: written where it is, never
    /// as a reference).
    fn die(&mut self, loc: Loc, top: bool) -> Result<(), Error> {
        if top {
            if let Some(n) = self.seen.get(&loc) {
                let _ = write!(self.out, "^{n}");
                return Ok(());
            }
            self.seen.insert(loc, self.seen.len());
        }
        let entry = self.index.entry(loc)?;
        let tag = entry.tag();
        let _ = write!(
            self.out,
            "{}",
            tag.static_string()
                .unwrap_or("DW_TAG_?")
                .trim_start_matches("DW_TAG_")
        );
        let name = if top {
            self.qualified_name(loc)?
        } else {
            self.name(loc)?
        };
        if !name.is_empty() {
            self.out.push(' ');
            self.out.push_str(&name);
        }
        for &at in ATTRS {
            let Some(attr) = entry.attr(at).map_err(dw)? else {
                continue;
            };
            let _ = write!(
                self.out,
                " {}=",
                at.static_string()
                    .unwrap_or("?")
                    .trim_start_matches("DW_AT_")
            );
            self.value(loc, attr.value())?;
        }
        if entry.attr_value(gimli::DW_AT_type).map_err(dw)?.is_some() {
            self.out.push_str(" :");
            self.type_of(loc)?;
        }
        if entry.has_children() {
            self.out.push_str(" {");
            for child in self.index.children(loc)? {
                if CHILDREN.contains(&self.index.tag(child)?) {
                    self.die(child, false)?;
                    self.out.push(';');
                }
            }
            self.out.push('}');
        }
        Ok(())
    }

    fn value(&mut self, loc: Loc, value: AttributeValue<crate::index::R<'a>>) -> Result<(), Error> {
        match value {
            AttributeValue::Sdata(v) => {
                let _ = write!(self.out, "{v}");
            }
            AttributeValue::Flag(v) => {
                let _ = write!(self.out, "{v}");
            }
            AttributeValue::Encoding(v) => {
                let _ = write!(self.out, "{}", v.static_string().unwrap_or("?"));
            }
            AttributeValue::Block(b) | AttributeValue::Exprloc(gimli::Expression(b)) => {
                for byte in b.slice() {
                    let _ = write!(self.out, "{byte:02x}");
                }
            }
            AttributeValue::String(_)
            | AttributeValue::DebugStrRef(_)
            | AttributeValue::DebugStrOffsetsIndex(_)
            | AttributeValue::DebugLineStrRef(_) => {
                let s = self.index.string(loc, value)?;
                self.out.push_str(&s);
            }
            other => match other.udata_value() {
                Some(v) => {
                    let _ = write!(self.out, "{v}");
                }
                None => self.out.push('?'),
            },
        }
        Ok(())
    }

    fn name(&self, loc: Loc) -> Result<String, Error> {
        match self
            .index
            .entry(loc)?
            .attr_value(gimli::DW_AT_name)
            .map_err(dw)?
        {
            Some(v) => self.index.string(loc, v),
            None => Ok(String::new()),
        }
    }

    /// The DIE's name after the names of the namespaces and types it is in.
    fn qualified_name(&self, loc: Loc) -> Result<String, Error> {
        let mut parts = vec![self.name(loc)?];
        let mut at = loc;
        while let Some(parent) = self.index.parent(at) {
            if !SCOPES.contains(&self.index.tag(parent)?) {
                break;
            }
            parts.push(self.name(parent)?);
            at = parent;
        }
        parts.reverse();
        Ok(parts.join("::"))
    }
}

fn dw(e: gimli::Error) -> Error {
    Error(format!("DWARF: {e}"))
}
