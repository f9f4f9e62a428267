//! The output of a command that prints one thing, not a [`Report`]: a text
//! for people, or one JSON document for machines (`status`, `waste`,
//! `fail list`, `capture list`, `live`). Each command makes its text and
//! its JSON value; how either reaches the reader is said once, here.
//!
//! [`Report`]: allocinfo_report::Report

use serde::Serialize;
use serde_json::Value;
use std::io::{self, Write};

/// One command's output.
#[derive(Clone, Debug, PartialEq)]
pub enum Document {
    /// Text for people (or CSV, or the Prometheus text format), written as it is.
    Text(String),
    /// One JSON value and a newline: on one line, or indented (`pretty`).
    Json { value: Value, pretty: bool },
}

impl Document {
    /// The JSON document `json()` makes when `json` is asked for, else the
    /// text `text()` makes; only the one chosen is made.
    pub fn either(
        json: bool,
        pretty: bool,
        value: impl FnOnce() -> Value,
        text: impl FnOnce() -> String,
    ) -> Document {
        if json {
            Document::Json {
                value: value(),
                pretty,
            }
        } else {
            Document::Text(text())
        }
    }

    /// Writes the document to `out`.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        match self {
            Document::Text(text) => out.write_all(text.as_bytes()),
            Document::Json { value, pretty } => write_json(out, value, *pretty),
        }
    }
}

/// Writes `value` as JSON and a newline: on one line, or indented
/// (`pretty`). Every JSON this crate writes is written here.
pub(crate) fn write_json(
    out: &mut dyn Write,
    value: &impl Serialize,
    pretty: bool,
) -> io::Result<()> {
    if pretty {
        serde_json::to_writer_pretty(&mut *out, value)?;
    } else {
        serde_json::to_writer(&mut *out, value)?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn written(doc: Document) -> String {
        let mut out = Vec::new();
        doc.write(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn json_is_one_line_or_indented() {
        let value = json!({"a": [1, 2]});
        assert_eq!(
            written(Document::Json {
                value: value.clone(),
                pretty: false
            }),
            "{\"a\":[1,2]}\n"
        );
        assert_eq!(
            written(Document::Json {
                value: value.clone(),
                pretty: true
            }),
            format!("{}\n", serde_json::to_string_pretty(&value).unwrap())
        );
        assert_eq!(written(Document::Text("t\n".into())), "t\n");
    }
}
