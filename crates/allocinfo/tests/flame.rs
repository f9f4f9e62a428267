//! Issue 72: `allocinfo flame`'s SVGs, drawn by inferno: well-formed XML
//! (read whole by quick-xml), whose frames are the text's call sites (an
//! icicle by directory, file, function and line) or the live report's
//! stacks, with the bytes the text and the report hold.

use std::path::PathBuf;

mod common;

fn draw(args: &[&str], name: &str) -> String {
    let out = std::env::temp_dir().join(format!("allocinfo-flame-{}-{name}", std::process::id()));
    let mut all = vec!["flame"];
    all.extend(args);
    all.extend(["-o", out.to_str().unwrap()]);
    common::ok_in(&common::crate_data(), &all);
    let svg = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(out).unwrap();
    svg
}

/// The `<title>`s of the SVG's frames, which must parse as XML to its end.
fn titles(svg: &str) -> Vec<String> {
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut titles = Vec::new();
    let mut in_title = false;
    loop {
        match reader
            .read_event()
            .unwrap_or_else(|e| panic!("not XML at {}: {e}", reader.buffer_position()))
        {
            quick_xml::events::Event::Start(e) => in_title = e.name().as_ref() == b"title",
            quick_xml::events::Event::Text(t) if in_title => {
                titles.push(t.decode().unwrap().into_owned())
            }
            quick_xml::events::Event::End(_) => in_title = false,
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    titles
}

/// `N,NNN` as inferno prints counts.
fn grouped(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn the_call_sites_tree_is_drawn_with_the_texts_bytes() {
    let svg = draw(&["query.txt"], "sites.svg");
    let titles = titles(&svg);
    let text = std::fs::read_to_string(common::crate_data().join("query.txt")).unwrap();
    let sites: Vec<(i64, &str)> = text
        .lines()
        .skip(2)
        .map(|line| {
            let w: Vec<&str> = line.split_whitespace().collect();
            (w[0].parse().unwrap(), w[2])
        })
        .filter(|(bytes, _)| *bytes > 0)
        .collect();
    let total: i64 = sites.iter().map(|(b, _)| b).sum();
    // Frames narrower than inferno's 0.1 pixel (of 1200) are left out, as
    // flamegraph.pl leaves them: every site of more than 0.1% is drawn.
    for (bytes, site) in &sites {
        if *bytes * 1000 > total {
            assert!(
                titles.iter().any(|t| t.starts_with(&format!("{site} ("))),
                "no frame {site}"
            );
        }
    }
    let all = format!("all ({} bytes, 100%)", grouped(total));
    assert!(titles.contains(&all), "{all}: {titles:?}");
    assert!(titles.iter().any(|t| t.starts_with("alloc_slab_page (")));
}

#[test]
fn the_live_objects_are_drawn_by_stack() {
    let live: PathBuf = common::format_data().join("debugfs/live.txt");
    let svg = draw(&["--live", live.to_str().unwrap()], "live.svg");
    let titles = titles(&svg);
    for frame in [
        "all (4,608 bytes, 100%)",
        "do_one_initcall (4,352 bytes, 94.44%)",
        "lib/m.c:42 (4,352 bytes, 94.44%)",
        "lib/m.c:50 (256 bytes, 5.56%)",
    ] {
        assert!(titles.iter().any(|t| t == frame), "{frame}: {titles:?}");
    }
}

#[test]
fn nothing_to_draw_is_an_error() {
    let out = common::run_in(
        &common::crate_data(),
        &["flame", "query.txt", "--path", "no/such/*", "-o", "-"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to draw"));
}
