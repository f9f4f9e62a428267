use allocinfo_format::{Profile, Tag};
use allocinfo_treemap::{Options, Rect, hierarchy, layout::squarify, render};
use proptest::prelude::*;

fn golden(name: &str) -> Profile {
    let path = format!(
        "{}/../allocinfo-format/tests/data/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    Profile::parse(&std::fs::read(path).unwrap()).unwrap()
}

fn opts() -> Options {
    Options {
        width: 1200,
        height: 800,
        title: "test <&>".into(),
    }
}

const EPS: f64 = 1e-6;

fn inside(r: &Rect, b: &Rect) -> bool {
    r.x >= b.x - EPS
        && r.y >= b.y - EPS
        && r.x + r.w <= b.x + b.w + EPS
        && r.y + r.h <= b.y + b.h + EPS
}

fn overlap(a: &Rect, b: &Rect) -> f64 {
    let w = (a.x + a.w).min(b.x + b.w) - a.x.max(b.x);
    let h = (a.y + a.h).min(b.y + b.h) - a.y.max(b.y);
    w.max(0.0) * h.max(0.0)
}

proptest! {
    /// Every weight gets a rectangle inside the bounds with an area
    /// proportional to it, and rectangles do not overlap.
    #[test]
    fn squarify_partitions_the_bounds(
        mut weights in proptest::collection::vec(1.0f64..1e9, 1..40),
        w in 10.0f64..2000.0, h in 10.0f64..2000.0,
    ) {
        weights.sort_by(|a, b| b.total_cmp(a));
        let bounds = Rect { x: 5.0, y: 7.0, w, h };
        let rects = squarify(&weights, bounds);
        prop_assert_eq!(rects.len(), weights.len());
        let total: f64 = weights.iter().sum();
        for (r, weight) in rects.iter().zip(&weights) {
            prop_assert!(inside(r, &bounds), "{:?} outside {:?}", r, bounds);
            let expected = bounds.area() * weight / total;
            prop_assert!((r.area() - expected).abs() <= 1e-6 * bounds.area(), "{} vs {}", r.area(), expected);
        }
        for i in 0..rects.len() {
            for j in i + 1..rects.len() {
                prop_assert!(overlap(&rects[i], &rects[j]) <= 1e-6 * bounds.area());
            }
        }
        let covered: f64 = rects.iter().map(Rect::area).sum();
        prop_assert!((covered - bounds.area()).abs() <= 1e-6 * bounds.area());
    }
}

#[test]
fn squarify_gives_empty_rects_to_non_positive_weights() {
    let b = Rect {
        x: 0.0,
        y: 0.0,
        w: 100.0,
        h: 50.0,
    };
    let rects = squarify(&[3.0, 0.0, -1.0, f64::NAN, 1.0], b);
    assert_eq!(rects[1].area() + rects[2].area() + rects[3].area(), 0.0);
    assert!((rects[0].area() - 3750.0).abs() < 1e-6 && (rects[4].area() - 1250.0).abs() < 1e-6);
    assert!(squarify(&[], b).is_empty());
    assert_eq!(squarify(&[1.0], Rect { w: 0.0, ..b })[0].area(), 0.0);
}

#[test]
fn squares_stay_squarish() {
    // Four equal weights in a square: four squares.
    for r in squarify(
        &[1.0; 4],
        Rect {
            x: 0.0,
            y: 0.0,
            w: 100.0,
            h: 100.0,
        },
    ) {
        assert!(
            (r.w - 50.0).abs() < 1e-9 && (r.h - 50.0).abs() < 1e-9,
            "{r:?}"
        );
    }
}

#[test]
fn hierarchy_is_dir_file_site_with_positive_bytes() {
    let p = golden("linux-6.12.txt");
    let tags: Vec<&Tag> = p.tags.iter().collect();
    let dirs = hierarchy(&tags);
    let positive: i64 = p.tags.iter().filter(|t| t.bytes > 0).map(|t| t.bytes).sum();
    assert_eq!(dirs.iter().map(|d| d.bytes).sum::<i64>(), positive);
    assert_eq!(dirs[0].label, "drivers/gpu/drm/ttm/");
    let mm = dirs.iter().find(|d| d.label == "mm/").unwrap();
    let slub = mm.children.iter().find(|f| f.label == "slub.c").unwrap();
    assert_eq!(slub.children[0].name, "mm/slub.c:2478 func:alloc_slab_page");
    // The header inline call site appears twice in the input, once here.
    let pgalloc = dirs
        .iter()
        .find(|d| d.label == "include/asm-generic/")
        .unwrap();
    assert_eq!(pgalloc.children[0].children.len(), 1);
    assert_eq!(pgalloc.children[0].children[0].calls, 261);
    for d in &dirs {
        assert!(d.children.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }
    assert!(
        !dirs
            .iter()
            .flat_map(|d| &d.children)
            .any(|f| f.name == "mm/vmalloc.c" && f.bytes <= 0)
    );
}

#[test]
fn svg_is_well_formed_with_one_rect_per_node() {
    let p = golden("linux-6.12-later.txt");
    let tags: Vec<&Tag> = p.tags.iter().collect();
    let svg = render(&tags, &opts());
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("width"), Some("1200"));
    let dirs = hierarchy(&tags);
    let nodes: usize = dirs
        .iter()
        .map(|d| {
            1 + d
                .children
                .iter()
                .map(|f| 1 + f.children.len())
                .sum::<usize>()
        })
        .sum();
    let titled = root
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.first_element_child().is_some())
        .count();
    assert_eq!(titled, nodes);
    let title = root
        .descendants()
        .find(|n| n.has_tag_name("text"))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        title.starts_with("test <&>: 231 MiB live in 42 call sites"),
        "{title}"
    );
    assert!(root.descendants().any(|n| n.text()
        == Some("mm/slub.c:2478 func:alloc_slab_page\n57 MiB (59768832 bytes) in 5399 calls")));
    for r in root.descendants().filter(|n| n.has_tag_name("rect")) {
        let num = |a| r.attribute(a).unwrap().parse::<f64>().unwrap();
        assert!(num("x") >= 0.0 && num("x") + num("width") <= 1200.0 + 1e-6);
        assert!(num("y") >= 0.0 && num("y") + num("height") <= 800.0 + 1e-6);
    }
}

#[test]
fn svg_of_nothing_says_so() {
    let svg = render(&[], &opts());
    assert!(roxmltree::Document::parse(&svg).is_ok());
    assert!(svg.contains(">no live allocations</text>"));
}

#[test]
fn names_are_escaped() {
    let tag = Tag {
        bytes: 4096,
        calls: 1,
        file: "a<b>/c&d\".c".into(),
        line: 1,
        module: Some("m'x".into()),
        function: "f<g>".into(),
        extra: vec![],
    };
    let svg = render(&[&tag], &opts());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert!(doc.descendants().any(|n| {
        n.text()
            .is_some_and(|t| t.starts_with("a<b>/c&d\".c:1 [m'x] func:f<g>"))
    }));
}
