//! Lists of tags, as `allocinfo query` prints them: the kernel's own lines,
//! or one JSON document (schema `allocinfo-query/1`).

use allocinfo_format::Tag;
use serde::Serialize;
use std::io::{self, Write};

/// Identifies the document layout of [`write_json`]; bumped on incompatible
/// changes.
pub const QUERY_SCHEMA: &str = "allocinfo-query/1";

/// One line per tag, as `/proc/allocinfo` prints it (no header lines):
/// `%12lli %8llu file:line [module] func:name[ key:value...] `.
pub fn write_lines(out: &mut dyn Write, tags: &[Tag]) -> io::Result<()> {
    for tag in tags {
        writeln!(out, "{}", crate::printable(&tag.to_string()))?;
    }
    Ok(())
}

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    source: JsonSource<'a>,
    tags: Vec<JsonTag<'a>>,
}

#[derive(Serialize)]
struct JsonSource<'a> {
    path: &'a str,
}

#[derive(Serialize)]
struct JsonTag<'a> {
    file: &'a str,
    line: u32,
    module: Option<&'a str>,
    function: &'a str,
    bytes: i64,
    calls: u64,
    accurate: bool,
    unloaded: bool,
}

/// One JSON document on one line: `{"schema":"allocinfo-query/1",
/// "source":{"path":...},"tags":[{"file":...,"line":...,"module":null,
/// "function":...,"bytes":...,"calls":...,"accurate":true,"unloaded":false}]}`.
/// One line, or indented with `pretty`.
pub fn write_json(out: &mut dyn Write, source: &str, tags: &[Tag], pretty: bool) -> io::Result<()> {
    let doc = Document {
        schema: QUERY_SCHEMA,
        source: JsonSource { path: source },
        tags: tags
            .iter()
            .map(|t| JsonTag {
                file: &t.file,
                line: t.line,
                module: t.module.as_deref(),
                function: &t.function,
                bytes: t.bytes,
                calls: t.calls,
                accurate: t.is_accurate(),
                unloaded: t.is_unloaded(),
            })
            .collect(),
    };
    crate::document::write_json(out, &doc, pretty)
}
