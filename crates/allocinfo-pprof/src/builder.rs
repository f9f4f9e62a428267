//! Building a profile: the string table, functions, locations and mappings
//! made once each and referred to by index, as `profile.proto` wants them.

use crate::proto::{Function, Label, Line, Location, Mapping, Profile, Sample, ValueType};
use std::collections::HashMap;

/// A label's value: a string, or a number with its unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LabelValue<'a> {
    Str(&'a str),
    Num(i64, &'a str),
}

/// What makes a location one: its mapping, function, file, line, and the
/// frame's text where it has no line (two offsets of one function are two).
type LocationKey = (u64, u64, i64, String);

/// A profile being built.
pub struct Builder {
    profile: Profile,
    strings: HashMap<String, i64>,
    functions: HashMap<(i64, i64), u64>,
    locations: HashMap<LocationKey, u64>,
    mappings: HashMap<String, u64>,
}

impl Builder {
    /// A profile whose samples have values of `types` (type, unit), shown by
    /// default as `default`'s.
    pub fn new(types: &[(&str, &str)], default: &str) -> Builder {
        let mut b = Builder {
            profile: Profile::default(),
            strings: HashMap::new(),
            functions: HashMap::new(),
            locations: HashMap::new(),
            mappings: HashMap::new(),
        };
        b.string("");
        for (t, unit) in types {
            let vt = ValueType {
                r#type: b.string(t),
                unit: b.string(unit),
            };
            b.profile.sample_type.push(vt);
        }
        b.profile.default_sample_type = b.string(default);
        b
    }

    /// The index of `s` in the string table, added once.
    pub fn string(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.strings.get(s) {
            return i;
        }
        let i = self.profile.string_table.len() as i64;
        self.profile.string_table.push(s.to_owned());
        self.strings.insert(s.to_owned(), i);
        i
    }

    /// The mapping of `object` (`vmlinux` or a module's name): symbolized
    /// already, so readers do not look for the binary.
    fn mapping(&mut self, object: &str) -> u64 {
        if let Some(&id) = self.mappings.get(object) {
            return id;
        }
        let id = self.profile.mapping.len() as u64 + 1;
        let filename = self.string(object);
        self.profile.mapping.push(Mapping {
            id,
            filename,
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            ..Mapping::default()
        });
        self.mappings.insert(object.to_owned(), id);
        id
    }

    fn function(&mut self, name: &str, file: &str) -> u64 {
        let key = (self.string(name), self.string(file));
        if let Some(&id) = self.functions.get(&key) {
            return id;
        }
        let id = self.profile.function.len() as u64 + 1;
        self.profile.function.push(Function {
            id,
            name: key.0,
            system_name: key.0,
            filename: key.1,
            start_line: 0,
        });
        self.functions.insert(key, id);
        id
    }

    /// The location of `function` at `file:line` in `object` (vmlinux or a
    /// module); `frame` tells apart places without a line (stack frames at
    /// different offsets of one function).
    pub fn location(
        &mut self,
        object: &str,
        function: &str,
        file: &str,
        line: i64,
        frame: &str,
    ) -> u64 {
        let mapping = self.mapping(object);
        let function_id = self.function(function, file);
        let key = (mapping, function_id, line, frame.to_owned());
        if let Some(&id) = self.locations.get(&key) {
            return id;
        }
        let id = self.profile.location.len() as u64 + 1;
        self.profile.location.push(Location {
            id,
            mapping_id: mapping,
            address: 0,
            line: vec![Line { function_id, line }],
            is_folded: false,
        });
        self.locations.insert(key, id);
        id
    }

    /// Adds a sample at `stack` (its leaf first) with `values` (one per
    /// sample type) and `labels`.
    pub fn sample(&mut self, stack: Vec<u64>, values: Vec<i64>, labels: &[(&str, LabelValue<'_>)]) {
        let label = labels
            .iter()
            .map(|(key, value)| {
                let key = self.string(key);
                match value {
                    LabelValue::Str(s) => Label {
                        key,
                        str: self.string(s),
                        ..Label::default()
                    },
                    LabelValue::Num(n, unit) => Label {
                        key,
                        num: *n,
                        num_unit: if unit.is_empty() {
                            0
                        } else {
                            self.string(unit)
                        },
                        ..Label::default()
                    },
                }
            })
            .collect();
        self.profile.sample.push(Sample {
            location_id: stack,
            value: values,
            label,
        });
    }

    /// Adds a comment line (`go tool pprof -comments`).
    pub fn comment(&mut self, text: &str) {
        let i = self.string(text);
        self.profile.comment.push(i);
    }

    /// Sets when the profile was taken, nanoseconds since the epoch.
    pub fn time_nanos(&mut self, ns: i64) {
        self.profile.time_nanos = ns;
    }

    pub fn finish(self) -> Profile {
        self.profile
    }
}
