//! Names as the ioctl carries them, and the conversion between the ABI's
//! [`AllocinfoTagData`] and the text model's [`Tag`].

use crate::abi::{ALLOCINFO_STR_SIZE, AllocinfoCounter, AllocinfoTag, AllocinfoTagData};
use allocinfo_format::Tag;
use std::borrow::Cow;

/// The longest name the ioctl carries, in bytes: longer names keep their
/// last `NAME_MAX` bytes, in answers and in filters alike.
pub const NAME_MAX: usize = ALLOCINFO_STR_SIZE - 1;

/// The bytes of `name` the kernel keeps: its last [`NAME_MAX`] bytes.
pub fn trimmed_bytes(name: &str) -> &[u8] {
    let b = name.as_bytes();
    &b[b.len().saturating_sub(NAME_MAX)..]
}

/// `name` as the ioctl reports it: its last [`NAME_MAX`] bytes. A cut inside
/// a multi-byte character leaves U+FFFD, as decoding the kernel's answer does.
///
/// ```
/// use allocinfo_ioctl::trim_name;
/// assert_eq!(trim_name("kmalloc"), "kmalloc");
/// let long = format!("{}::push", "a".repeat(70));
/// assert_eq!(trim_name(&long).len(), 63);
/// assert!(trim_name(&long).ends_with("aaa::push"));
/// ```
pub fn trim_name(name: &str) -> Cow<'_, str> {
    if name.len() <= NAME_MAX {
        Cow::Borrowed(name)
    } else {
        String::from_utf8_lossy(trimmed_bytes(name))
    }
}

/// Whether the kernel may have trimmed a name it reported: a name of
/// [`NAME_MAX`] bytes is either whole or the tail of a longer one.
pub fn may_be_trimmed(name: &str) -> bool {
    name.len() >= NAME_MAX
}

/// A NUL-terminated name buffer holding the trimmed `name`.
pub fn encode_name(name: &str) -> [u8; ALLOCINFO_STR_SIZE] {
    let mut buf = [0; ALLOCINFO_STR_SIZE];
    let b = trimmed_bytes(name);
    buf[..b.len()].copy_from_slice(b);
    buf
}

/// The name in a buffer: up to the first NUL (the whole buffer if the kernel
/// left none), invalid UTF-8 replaced by U+FFFD.
pub fn decode_name(buf: &[u8; ALLOCINFO_STR_SIZE]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// An answer that does not fit the text model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("line number {0} of {1} is out of range (expected an unsigned 32-bit integer)")]
    LineNumber(u64, String),
}

/// The tag in the kernel's answer, as the text model holds it: bytes as
/// `%lli` prints the kernel's `u64`, `module` `None` for built-in code (an
/// empty `modname`), and in [`Tag::extra`] `accurate:no` when the kernel
/// lost counts and `unloaded:yes` when the tag's module is gone, as text
/// format 2.0 prints them (in that order).
pub fn decode(data: &AllocinfoTagData) -> Result<Tag, DecodeError> {
    let t = &data.tag;
    let file = decode_name(&t.filename);
    let line =
        u32::try_from(t.lineno).map_err(|_| DecodeError::LineNumber(t.lineno, file.clone()))?;
    let module = decode_name(&t.modname);
    Ok(Tag {
        bytes: data.counter.bytes as i64,
        calls: data.counter.calls,
        file,
        line,
        module: (!module.is_empty()).then_some(module),
        function: decode_name(&t.function),
        extra: reported_pairs(data.counter.accurate != 0, data.counter.unloaded != 0),
    })
}

/// The `key:value` pairs the ioctl's flags stand for, in the order format
/// 2.0 prints them.
fn reported_pairs(accurate: bool, unloaded: bool) -> Vec<(String, String)> {
    let mut extra = Vec::new();
    if !accurate {
        extra.push(("accurate".to_owned(), "no".to_owned()));
    }
    if unloaded {
        extra.push(("unloaded".to_owned(), "yes".to_owned()));
    }
    extra
}

/// The answer the ioctl gives for a tag of the text: names trimmed, and of
/// the `key:value` pairs only `accurate:no` and `unloaded:yes`. Queries on
/// the text print this, so that both paths print the same.
pub fn as_reported(tag: &Tag) -> Tag {
    Tag {
        bytes: tag.bytes,
        calls: tag.calls,
        file: trim_name(&tag.file).into_owned(),
        line: tag.line,
        module: tag.module.as_deref().map(|m| trim_name(m).into_owned()),
        function: trim_name(&tag.function).into_owned(),
        extra: reported_pairs(tag.is_accurate(), tag.is_unloaded()),
    }
}

/// A tag as the kernel answers for it: the inverse of [`decode`] on what
/// [`as_reported`] gives (for tests and fakes of the kernel).
pub fn encode(tag: &Tag) -> AllocinfoTagData {
    AllocinfoTagData {
        tag: AllocinfoTag {
            modname: encode_name(tag.module.as_deref().unwrap_or("")),
            function: encode_name(&tag.function),
            filename: encode_name(&tag.file),
            lineno: tag.line.into(),
        },
        counter: AllocinfoCounter {
            bytes: tag.bytes as u64,
            calls: tag.calls,
            accurate: tag.is_accurate().into(),
            unloaded: tag.is_unloaded().into(),
            pad: [0; 6],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `allocinfo_tag_data` as the kernel writes it, byte by byte, at the
    /// header's offsets (x86-64, little endian).
    fn synthetic(modname: &[u8], function: &[u8], filename: &[u8], line: u64) -> Vec<u8> {
        let mut buf = vec![0xEE_u8; 224]; // padding and unused bytes: garbage
        for (off, name) in [(0, modname), (64, function), (128, filename)] {
            buf[off..off + name.len()].copy_from_slice(name);
            if name.len() < 64 {
                buf[off + name.len()] = 0;
            }
        }
        buf[192..200].copy_from_slice(&line.to_le_bytes());
        buf[200..208].copy_from_slice(&(-8192_i64 as u64).to_le_bytes()); // bytes
        buf[208..216].copy_from_slice(&35_u64.to_le_bytes()); // calls
        buf[216] = 0; // accurate
        buf[217] = 0; // unloaded
        buf
    }

    #[test]
    fn decodes_a_synthetic_buffer() {
        let buf = synthetic(b"xfs", b"xfs_buf_alloc_pages", b"fs/xfs/xfs_buf.c", 411);
        let data = AllocinfoTagData::from_bytes(buf.as_slice().try_into().unwrap());
        assert_eq!(data.tag.lineno, 411);
        assert_eq!((data.counter.calls, data.counter.accurate), (35, 0));
        let tag = decode(&data).unwrap();
        assert_eq!(
            tag.to_string(),
            "       -8192       35 fs/xfs/xfs_buf.c:411 [xfs] func:xfs_buf_alloc_pages accurate:no "
        );
        assert!(!tag.is_accurate());

        // Built-in code, accurate, and a name filling the whole buffer with
        // no NUL (a kernel bug, read as 64 bytes rather than past the end).
        let mut buf = synthetic(b"", b"f", &[b'a'; 64], 7);
        buf[216] = 1;
        let tag = decode(&AllocinfoTagData::from_bytes(
            buf.as_slice().try_into().unwrap(),
        ))
        .unwrap();
        assert_eq!(tag.module, None);
        assert_eq!(tag.file, "a".repeat(64));
        assert!(tag.extra.is_empty() && tag.is_accurate());

        // A module unloaded with live allocations: its flag at offset 17 of
        // the counter, after the (here lost) accuracy.
        let mut buf = synthetic(b"foo", b"foo_probe", b"drivers/foo.c", 12);
        buf[217] = 1;
        let data = AllocinfoTagData::from_bytes(buf.as_slice().try_into().unwrap());
        assert_eq!((data.counter.accurate, data.counter.unloaded), (0, 1));
        let tag = decode(&data).unwrap();
        assert_eq!(
            tag.to_string(),
            "       -8192       35 drivers/foo.c:12 [foo] func:foo_probe accurate:no unloaded:yes "
        );
        assert!(tag.is_unloaded());
        buf[216] = 1;
        let tag = decode(&AllocinfoTagData::from_bytes(
            buf.as_slice().try_into().unwrap(),
        ))
        .unwrap();
        assert_eq!(tag.extra, [("unloaded".into(), "yes".into())]);

        let buf = synthetic(b"", b"f", b"a.c", 1 << 32);
        let e = decode(&AllocinfoTagData::from_bytes(
            buf.as_slice().try_into().unwrap(),
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "line number 4294967296 of a.c is out of range (expected an unsigned 32-bit integer)"
        );
    }

    #[test]
    fn decode_inverts_encode() {
        let text = Tag {
            bytes: 4096,
            calls: 1,
            file: "mm/percpu.c".into(),
            line: 3191,
            module: None,
            function: "pcpu_embed_first_chunk".into(),
            extra: vec![("hint".into(), "x".into())],
        };
        let data = encode(&text);
        assert_eq!((data.counter.accurate, data.counter.unloaded), (1, 0));
        assert_eq!(decode(&data).unwrap(), as_reported(&text));
        assert!(as_reported(&text).extra.is_empty());
        // The pairs the ioctl carries, in format 2.0's order whatever the
        // text's; other values and pairs are the text's only.
        let gone = Tag {
            extra: vec![
                ("unloaded".into(), "yes".into()),
                ("hint".into(), "x".into()),
                ("accurate".into(), "no".into()),
            ],
            ..text.clone()
        };
        let data = encode(&gone);
        assert_eq!((data.counter.accurate, data.counter.unloaded), (0, 1));
        let reported = as_reported(&gone);
        assert_eq!(decode(&data).unwrap(), reported);
        assert_eq!(
            reported.extra,
            [
                ("accurate".into(), "no".into()),
                ("unloaded".into(), "yes".into())
            ]
        );
        let not = Tag {
            extra: vec![("unloaded".into(), "no".into())],
            ..text
        };
        assert_eq!(encode(&not).counter.unloaded, 0);
        assert!(as_reported(&not).extra.is_empty());
    }

    #[test]
    fn trimming_keeps_the_last_63_bytes() {
        let exact = "x".repeat(63);
        assert_eq!(trim_name(&exact), exact.as_str());
        assert!(matches!(trim_name(&exact), Cow::Borrowed(_)));
        assert!(may_be_trimmed(&exact) && !may_be_trimmed(&exact[1..]));
        let long = format!("kernel::alloc::{}::push", "Vec".repeat(20));
        let t = trim_name(&long);
        assert_eq!(t.len(), NAME_MAX);
        assert_eq!(t, &long[long.len() - 63..]);
        // The buffer: 63 bytes and the NUL; decoding gives the trimmed name.
        let buf = encode_name(&long);
        assert_eq!(buf[63], 0);
        assert_eq!(decode_name(&buf), t);
        assert_eq!(decode_name(&encode_name("")), "");
        // A cut inside a character: the same U+FFFD on both paths.
        let wide = format!("{}é", "a".repeat(62)); // 64 bytes, é is 2
        assert_eq!(trimmed_bytes(&wide).len(), 63);
        assert_eq!(
            trim_name(&format!("b{wide}")),
            decode_name(&encode_name(&format!("b{wide}")))
        );
        let cut = format!("é{}", "a".repeat(62)); // 64 bytes: the cut splits é
        assert_eq!(trim_name(&cut), format!("\u{FFFD}{}", "a".repeat(62)));
        assert_eq!(decode_name(&encode_name(&cut)), trim_name(&cut));
    }
}
