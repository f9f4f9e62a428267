//! The squarified treemap layout.

/// An axis-aligned rectangle.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn area(&self) -> f64 {
        self.w * self.h
    }
}

/// The worst aspect ratio of a row of `areas` summing to `sum`, laid along
/// a side of length `side`.
fn worst(areas: &[f64], sum: f64, side: f64) -> f64 {
    let (s2, w2) = (sum * sum, side * side);
    areas
        .iter()
        .map(|&a| (w2 * a / s2).max(s2 / (w2 * a)))
        .fold(0.0, f64::max)
}

/// Divides `bounds` into one rectangle per weight, each with an area
/// proportional to its weight, keeping aspect ratios close to 1. Weights
/// should be sorted in descending order; non-positive or non-finite weights
/// get empty rectangles.
pub fn squarify(weights: &[f64], bounds: Rect) -> Vec<Rect> {
    let mut out = vec![
        Rect {
            x: bounds.x,
            y: bounds.y,
            w: 0.0,
            h: 0.0
        };
        weights.len()
    ];
    let valid = |w: f64| w.is_finite() && w > 0.0;
    let total: f64 = weights.iter().copied().filter(|&w| valid(w)).sum();
    if total <= 0.0 || bounds.w <= 0.0 || bounds.h <= 0.0 {
        return out;
    }
    let scale = bounds.area() / total;
    let items: Vec<(usize, f64)> = weights
        .iter()
        .enumerate()
        .filter(|(_, w)| valid(**w))
        .map(|(i, &w)| (i, w * scale))
        .collect();
    let mut rect = bounds;
    let mut i = 0;
    while i < items.len() {
        let side = rect.w.min(rect.h);
        let mut j = i + 1;
        let mut sum = items[i].1;
        let areas =
            |from: usize, to: usize| items[from..to].iter().map(|&(_, a)| a).collect::<Vec<_>>();
        let mut best = worst(&areas(i, j), sum, side);
        while j < items.len() {
            let next = sum + items[j].1;
            let ratio = worst(&areas(i, j + 1), next, side);
            if ratio > best {
                break;
            }
            best = ratio;
            sum = next;
            j += 1;
        }
        let last = j == items.len();
        if rect.w >= rect.h {
            // A column at the left.
            let cw = if last {
                rect.w
            } else {
                (sum / rect.h).min(rect.w)
            };
            let mut y = rect.y;
            for (k, &(index, a)) in items[i..j].iter().enumerate() {
                let hk = if k + 1 == j - i {
                    rect.y + rect.h - y
                } else {
                    a / cw
                };
                out[index] = Rect {
                    x: rect.x,
                    y,
                    w: cw,
                    h: hk.max(0.0),
                };
                y += hk;
            }
            rect.x += cw;
            rect.w = (rect.w - cw).max(0.0);
        } else {
            // A row at the top.
            let rh = if last {
                rect.h
            } else {
                (sum / rect.w).min(rect.h)
            };
            let mut x = rect.x;
            for (k, &(index, a)) in items[i..j].iter().enumerate() {
                let wk = if k + 1 == j - i {
                    rect.x + rect.w - x
                } else {
                    a / rh
                };
                out[index] = Rect {
                    x,
                    y: rect.y,
                    w: wk.max(0.0),
                    h: rh,
                };
                x += wk;
            }
            rect.y += rh;
            rect.h = (rect.h - rh).max(0.0);
        }
        i = j;
    }
    out
}
