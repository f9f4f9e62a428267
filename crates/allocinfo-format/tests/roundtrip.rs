//! Property tests: printing then parsing gives back the same profile, the
//! parser tolerates the whitespace real kernels vary in, and never panics.

use allocinfo_format::{Profile, Tag, Version};
use proptest::prelude::*;

fn word() -> impl Strategy<Value = String> {
    // Printable, no ASCII whitespace; includes ':' '[' ']' and non-ASCII.
    "[a-zA-Z0-9_./:\\[\\]#+é-]{1,24}"
}

fn tag() -> impl Strategy<Value = Tag> {
    let extra = proptest::collection::vec(("[a-z_]{1,10}", "[a-zA-Z0-9_:.-]{0,10}"), 0..3);
    (
        any::<i64>(),
        any::<u64>(),
        word(),
        any::<u32>(),
        proptest::option::of(word()),
        word(),
        extra,
    )
        .prop_map(|(bytes, calls, file, line, module, function, extra)| Tag {
            bytes,
            calls,
            file,
            line,
            module,
            function,
            extra,
        })
        .prop_filter("the printed line must be unambiguous", |t| {
            t.validate().is_ok()
        })
}

fn profile() -> impl Strategy<Value = Profile> {
    let version = prop_oneof![
        Just(Version::V1_0),
        Just(Version::V2_0),
        (1u32..=2, 0u32..100).prop_map(|(major, minor)| Version { major, minor })
    ];
    (version, proptest::collection::vec(tag(), 0..40))
        .prop_map(|(version, tags)| Profile { version, tags })
}

proptest! {
    #[test]
    fn print_then_parse_is_identity(p in profile()) {
        let text = p.to_string();
        let back = Profile::parse(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(back.to_string(), text);
    }

    #[test]
    fn whitespace_variations_parse_the_same(p in profile(), seps in proptest::collection::vec("[ \t]{1,3}", 8), crlf in any::<bool>()) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut text = format!("{}allocinfo{}-{}version:{}{}{eol}#<size> <calls>{eol}", seps[0], seps[1], seps[2], seps[3], p.version);
        for t in &p.tags {
            text += &format!("{}{}{}{}{}{}:{}", seps[4], t.bytes, seps[5], t.calls, seps[6], t.file, t.line);
            if let Some(m) = &t.module {
                text += &format!("{}[{m}]", seps[7]);
            }
            text += &format!("{}func:{}", seps[4], t.function);
            for (k, v) in &t.extra {
                text += &format!("{}{k}:{v}", seps[5]);
            }
            text += &format!("{}{eol}{eol}", seps[6]);
        }
        prop_assert_eq!(Profile::parse(text.as_bytes()).unwrap(), p);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let with_header = [b"allocinfo - version: 1.0\n#\n".as_slice(), &bytes].concat();
        for input in [&bytes[..], &with_header[..]] {
            if let Err(e) = Profile::parse(input) {
                let lines = input.split(|&b| b == b'\n').count();
                prop_assert!(e.line >= 1 && e.line <= lines + 1, "{} of {}", e, lines);
            }
        }
    }

    #[test]
    fn arbitrary_tag_lines_error_or_print_canonically(line in "[ 0-9a-z:./\\[\\]_-]{0,60}") {
        let text = format!("allocinfo - version: 2.0\n#\n{line}\n");
        match Profile::parse(text.as_bytes()) {
            Ok(p) => {
                // Whatever parsed prints in the canonical form and parses again.
                let again = Profile::parse(p.to_string().as_bytes()).unwrap();
                prop_assert_eq!(again, p);
            }
            Err(e) => prop_assert_eq!(e.line, 3),
        }
    }
}
