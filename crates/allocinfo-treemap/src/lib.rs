//! An SVG treemap of live bytes: directory → source file → call site, laid
//! out with the squarified algorithm (Bruls, Huizing, van Wijk, 2000).
//! Rectangles carry `<title>` tooltips; labels are drawn where they fit.

use allocinfo_format::Tag;
use allocinfo_format::size::format_iec;
use std::collections::BTreeMap;
use std::fmt::Write;

pub mod layout;
pub use layout::Rect;

/// Picture options.
#[derive(Clone, Debug)]
pub struct Options {
    pub width: u32,
    pub height: u32,
    /// Shown in the title bar, followed by the total.
    pub title: String,
}

/// A box in the treemap: its weight is the sum of its children's, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub label: String,
    /// Full name for the tooltip.
    pub name: String,
    pub bytes: i64,
    pub calls: u64,
    pub children: Vec<Node>,
}

/// Builds the directory → file → call site hierarchy from tags with
/// positive bytes. Identical call sites are merged; children are sorted by
/// bytes, descending.
pub fn hierarchy(tags: &[&Tag]) -> Vec<Node> {
    type Sites = BTreeMap<(u32, Option<String>, String), (i64, u64)>;
    let mut tree: BTreeMap<&str, BTreeMap<&str, Sites>> = BTreeMap::new();
    for t in tags.iter().filter(|t| t.bytes > 0) {
        let site = tree.entry(t.dir()).or_default().entry(&t.file).or_default();
        let e = site
            .entry((t.line, t.module.clone(), t.function.clone()))
            .or_default();
        e.0 = e.0.saturating_add(t.bytes);
        e.1 = e.1.saturating_add(t.calls);
    }
    let mut dirs: Vec<Node> = tree
        .into_iter()
        .map(|(dir, files)| {
            let files = files
                .into_iter()
                .map(|(file, sites)| {
                    let sites = sites
                        .into_iter()
                        .map(|((line, module, function), (bytes, calls))| {
                            let m = module.map(|m| format!(" [{m}]")).unwrap_or_default();
                            Node {
                                label: function.clone(),
                                name: format!("{file}:{line}{m} func:{function}"),
                                bytes,
                                calls,
                                children: vec![],
                            }
                        })
                        .collect();
                    let base = file.rsplit('/').next().unwrap_or(file);
                    parent(base.to_owned(), file.to_owned(), sites)
                })
                .collect();
            parent(format!("{dir}/"), format!("{dir}/"), files)
        })
        .collect();
    sort(&mut dirs);
    dirs
}

fn parent(label: String, name: String, mut children: Vec<Node>) -> Node {
    sort(&mut children);
    let bytes = children.iter().fold(0i64, |a, c| a.saturating_add(c.bytes));
    let calls = children.iter().fold(0u64, |a, c| a.saturating_add(c.calls));
    Node {
        label,
        name,
        bytes,
        calls,
        children,
    }
}

fn sort(nodes: &mut [Node]) {
    nodes.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
}

/// Escapes text for XML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

const TITLE_BAR: f64 = 28.0;
const CHAR_WIDTH: f64 = 0.58;

struct Svg {
    out: String,
}

impl Svg {
    fn rect(&mut self, r: &Rect, fill: &str, stroke: &str, tooltip: &str) {
        let _ = writeln!(
            self.out,
            r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{fill}" stroke="{stroke}"><title>{}</title></rect>"#,
            r.x,
            r.y,
            r.w,
            r.h,
            escape(tooltip)
        );
    }

    /// Draws `text` at the top left of `r` if at least a few characters fit,
    /// shortened with an ellipsis otherwise.
    fn label(&mut self, r: &Rect, text: &str, size: f64, weight: &str) -> bool {
        if r.h < size + 2.0 {
            return false;
        }
        let fits = ((r.w - 6.0) / (size * CHAR_WIDTH)).floor();
        if fits < 4.0 {
            return false;
        }
        let fits = fits as usize;
        let shown: String = if text.chars().count() > fits {
            text.chars().take(fits - 1).chain(['…']).collect()
        } else {
            text.to_owned()
        };
        let _ = writeln!(
            self.out,
            r#"<text x="{:.2}" y="{:.2}" font-size="{size}" font-weight="{weight}">{}</text>"#,
            r.x + 3.0,
            r.y + size,
            escape(&shown)
        );
        true
    }
}

fn tooltip(n: &Node) -> String {
    format!(
        "{}\n{} ({} bytes) in {} calls",
        n.name,
        format_iec(n.bytes),
        n.bytes,
        n.calls
    )
}

/// The fill colour of a directory, and of its files and call sites.
fn hue(index: usize) -> f64 {
    (index as f64 * 137.508) % 360.0
}

/// Slack ratios (slack / bytes, 0 to 1) of call sites, by their name as
/// [`Node::name`] has it: `file:line [module] func:name`.
pub type SlackRatios = BTreeMap<String, f64>;

/// The fill of a call site with this slack ratio: green (none) through
/// yellow to red (all of the bytes); grey without a ratio.
pub fn slack_fill(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) => format!("hsl({:.0},70%,60%)", 120.0 * (1.0 - r.clamp(0.0, 1.0))),
        None => "hsl(0,0%,78%)".to_owned(),
    }
}

/// Renders the treemap of `tags` as an SVG document.
pub fn render(tags: &[&Tag], opts: &Options) -> String {
    render_with_slack(tags, opts, None)
}

/// As [`render`]; with `slack`, call sites are coloured by their slack
/// ratio ([`slack_fill`]) on grey directories and files, and their
/// tooltips say the ratio.
pub fn render_with_slack(tags: &[&Tag], opts: &Options, slack: Option<&SlackRatios>) -> String {
    let (w, h) = (f64::from(opts.width), f64::from(opts.height));
    let dirs = hierarchy(tags);
    let total = dirs.iter().fold(0i64, |a, d| a.saturating_add(d.bytes));
    let mut svg = Svg { out: String::new() };
    let _ = writeln!(
        svg.out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans, Verdana, sans-serif">"#
    );
    let _ = writeln!(
        svg.out,
        r##"<rect x="0" y="0" width="{w}" height="{h}" fill="#f4f4f4"/>"##
    );
    let title = format!(
        "{}: {} live in {} call sites",
        opts.title,
        format_iec(total),
        count_sites(&dirs)
    );
    svg.label(
        &Rect {
            x: 4.0,
            y: 4.0,
            w: w - 8.0,
            h: TITLE_BAR - 4.0,
        },
        &title,
        16.0,
        "bold",
    );
    let area = Rect {
        x: 2.0,
        y: TITLE_BAR,
        w: w - 4.0,
        h: h - TITLE_BAR - 2.0,
    };
    if dirs.is_empty() {
        svg.label(&area, "no live allocations", 14.0, "normal");
    }
    let dir_rects = layout::squarify(&weights(&dirs), area);
    for (i, (dir, r)) in dirs.iter().zip(&dir_rects).enumerate() {
        let hue = hue(i);
        // Directories and files in grey when call sites show slack.
        let sat = |pct: u32| if slack.is_some() { 0 } else { pct };
        svg.rect(
            r,
            &format!("hsl({hue:.0},{}%,72%)", sat(45)),
            "#ffffff",
            &tooltip(dir),
        );
        let head = format!("{} {}", dir.label, format_iec(dir.bytes));
        let inner = inset(
            r,
            if svg.label(r, &head, 12.0, "bold") {
                15.0
            } else {
                1.0
            },
            1.5,
        );
        for (file, fr) in dir
            .children
            .iter()
            .zip(layout::squarify(&weights(&dir.children), inner))
        {
            svg.rect(
                &fr,
                &format!("hsl({hue:.0},{}%,80%)", sat(50)),
                &format!("hsl({hue:.0},{}%,55%)", sat(30)),
                &tooltip(file),
            );
            let head = format!("{} {}", file.label, format_iec(file.bytes));
            let inner = inset(
                &fr,
                if svg.label(&fr, &head, 10.0, "bold") {
                    12.0
                } else {
                    1.0
                },
                1.0,
            );
            let site_rects = layout::squarify(&weights(&file.children), inner);
            for (k, (site, sr)) in file.children.iter().zip(&site_rects).enumerate() {
                let light = 88 - (k % 4) as u32 * 4;
                let (fill, tip) = match slack {
                    None => (format!("hsl({hue:.0},55%,{light}%)"), tooltip(site)),
                    Some(ratios) => {
                        let ratio = ratios.get(&site.name).copied();
                        let said = match ratio {
                            Some(r) => format!("slack: {:.1}% of the bytes", 100.0 * r),
                            None => "slack: no waste figures".to_owned(),
                        };
                        (slack_fill(ratio), format!("{}\n{said}", tooltip(site)))
                    }
                };
                svg.rect(sr, &fill, &format!("hsl({hue:.0},30%,65%)"), &tip);
                svg.label(
                    sr,
                    &format!("{} {}", site.label, format_iec(site.bytes)),
                    9.0,
                    "normal",
                );
            }
        }
    }
    svg.out.push_str("</svg>\n");
    svg.out
}

fn count_sites(dirs: &[Node]) -> usize {
    dirs.iter()
        .flat_map(|d| &d.children)
        .map(|f| f.children.len())
        .sum()
}

fn weights(nodes: &[Node]) -> Vec<f64> {
    nodes.iter().map(|n| n.bytes as f64).collect()
}

/// `r` without a header of `top` pixels and a margin of `pad` on the other sides.
fn inset(r: &Rect, top: f64, pad: f64) -> Rect {
    Rect {
        x: r.x + pad,
        y: r.y + top,
        w: (r.w - 2.0 * pad).max(0.0),
        h: (r.h - top - pad).max(0.0),
    }
}
