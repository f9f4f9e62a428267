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

/// A rectangle's aspect ratio, 1 for a square.
fn aspect(r: &Rect) -> f64 {
    (r.w / r.h).max(r.h / r.w)
}

/// The aspect ratio of `rects` averaged over their area: how elongated the
/// rectangles that most of the drawing is made of are. A sliver across
/// the whole bounds weighs in with about the bounds' side squared over their
/// area however thin it is, so a layout of strips (slice-and-dice) of n
/// tags has a mean near n.
fn mean_aspect(rects: &[Rect]) -> f64 {
    // aspect(r) * r.area() is the longer side squared (and 0, not NaN, for
    // an empty rectangle).
    let area: f64 = rects.iter().map(Rect::area).sum();
    rects.iter().map(|r| r.w.max(r.h).powi(2)).sum::<f64>() / area
}

/// The bound on `mean_aspect` of a squarified layout in bounds no more
/// than twice as long as wide, whatever the weights (strips would give
/// about n).
const MEAN_ASPECT_MAX: f64 = 3.0;

/// Squarified, with the weights sorted in descending order as callers do.
fn squarified(mut weights: Vec<f64>, bounds: Rect) -> Vec<Rect> {
    weights.sort_by(|a, b| b.total_cmp(a));
    squarify(&weights, bounds)
}

/// Bounds of area 10^6, `w` by `h` in proportion.
fn bounds(w: f64, h: f64) -> Rect {
    let k = (1e6 / (w * h)).sqrt();
    Rect {
        x: 3.0,
        y: 4.0,
        w: w * k,
        h: h * k,
    }
}

/// Skewed weights, `n` of them, the same on every run: a Zipf law (1/i and
/// 1/i²), geometric ones (halving, and 0.9), one tag that holds nearly
/// everything among small ones, one that holds a tenth (too little for a
/// square of the bounds' side, too much to share a row with the small
/// ones: a 10:1 strip), tiers each a hundred times smaller than the one
/// before, and sizes spread evenly over six decades on a log scale.
fn skewed(n: usize) -> Vec<(&'static str, Vec<f64>)> {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let f = |g: &dyn Fn(f64) -> f64| (0..n).map(|i| g(i as f64)).collect::<Vec<_>>();
    vec![
        ("zipf", f(&|i| 1e6 / (i + 1.0))),
        ("zipf2", f(&|i| 1e6 / ((i + 1.0) * (i + 1.0)))),
        ("halving", f(&|i| 0.5f64.powf(i))),
        ("geometric", f(&|i| 0.9f64.powf(i))),
        (
            "one big",
            f(&|i| if i == 0.0 { 1e9 } else { 1.0 + i % 7.0 }),
        ),
        (
            "a tenth",
            f(&|i| if i == 0.0 { (n - 1) as f64 / 9.0 } else { 1.0 }),
        ),
        ("tiers", f(&|i| 100f64.powf(-(i + 1.0).log2().floor()))),
        (
            "six decades",
            (0..n).map(|_| 10f64.powf(6.0 * next())).collect(),
        ),
    ]
}

#[test]
fn squares_stay_squarish() {
    // k² equal weights in a square: the k by k grid of squares; 2k² in a
    // rectangle twice as wide: squares too.
    for k in 1..=10 {
        for (w, h, n) in [(1.0, 1.0, k * k), (2.0, 1.0, 2 * k * k)] {
            let b = bounds(w, h);
            let side = b.h / k as f64;
            for r in squarify(&vec![1.0; n], b) {
                assert!(
                    (r.w - side).abs() < 1e-6 && (r.h - side).abs() < 1e-6,
                    "{n} equal weights in {b:?}: {r:?}"
                );
                let (col, row) = ((r.x - b.x) / side, (r.y - b.y) / side);
                assert!(
                    (col - col.round()).abs() < 1e-6 && (row - row.round()).abs() < 1e-6,
                    "{n} equal weights in {b:?}: {r:?} off the grid"
                );
            }
        }
    }
    // Any number of equal weights: no rectangle longer than 3 to 1 (three in
    // a square give two 4:3 and one 3:1, the worst).
    for n in 1..=300 {
        for (w, h) in [(1.0, 1.0), (3.0, 2.0), (2.0, 3.0), (2.0, 1.0)] {
            for r in squarify(&vec![1.0; n], bounds(w, h)) {
                assert!(
                    aspect(&r) <= 3.0 + 1e-9,
                    "{n} equal weights, {w}:{h}: {r:?}"
                );
            }
        }
    }
    // Skewed weights, few and many: a tiny tag may end up in a sliver, but
    // the area as a whole is drawn in squarish rectangles.
    for n in [2, 3, 5, 8, 13, 40, 100, 300, 1000] {
        for (name, weights) in skewed(n) {
            for (w, h) in [(1.0, 1.0), (3.0, 2.0), (2.0, 3.0), (2.0, 1.0), (1.0, 2.0)] {
                let m = mean_aspect(&squarified(weights.clone(), bounds(w, h)));
                assert!(
                    m <= MEAN_ASPECT_MAX,
                    "{n} {name} weights, {w}:{h}: mean aspect ratio {m}"
                );
            }
        }
    }
}

proptest! {
    /// Random weights over up to six decades, 1 to 300 of them, with or
    /// without one tag that holds from 1% to 99% of the total, in bounds of
    /// any proportion up to 2:1: the area-weighted mean aspect ratio stays
    /// under MEAN_ASPECT_MAX. (No bound holds for each rectangle: the
    /// smallest tags can end up in a sliver, and a tag with a tenth of the
    /// total among small ones in a 10:1 strip.)
    #[test]
    fn squares_stay_squarish_whatever_the_weights(
        exponents in proptest::collection::vec(0.0f64..6.0, 1..300),
        big in proptest::option::of(0.01f64..0.99),
        proportion in 0.5f64..2.0,
    ) {
        let mut weights: Vec<f64> = exponents.iter().map(|e| 10f64.powf(*e)).collect();
        if let Some(share) = big {
            let rest: f64 = weights.iter().sum();
            weights.push(rest * share / (1.0 - share));
        }
        let rects = squarified(weights, bounds(proportion, 1.0));
        let m = mean_aspect(&rects);
        prop_assert!(m <= MEAN_ASPECT_MAX, "mean aspect ratio {}", m);
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
