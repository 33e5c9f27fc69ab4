//! The tile cache: the last [`TileSet`] the worker sent with its rect words, indexed by lane,
//! and the request policy that decides when to ask for new tiles.
//!
//! Policy (Perfetto's "fetch wider than visible"): a request covers the visible lanes plus one
//! screen above and below, and three times the visible time span, at the visible resolution
//! rounded down to a power of two. Panning inside that window or scrolling within the margin
//! needs no request; zooming by 2× or more, or a new search text, does. While a request is in
//! flight the old tiles are drawn scaled, so the view never goes blank.

use protocol::{TileSet, RECT_MATCH, RECT_WORDS};
use std::collections::HashMap;

/// One rect, decoded from its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    /// Display row in the lane.
    pub row: u16,
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Representative slice id.
    pub slice: u32,
    /// Index into the set's names.
    pub name: u32,
    /// The slice matches the search text.
    pub matched: bool,
    /// Slices this rect stands for.
    pub count: u32,
}

/// What a tile request asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileRequest {
    /// Lanes, in track order.
    pub lanes: Vec<u32>,
    /// Window start, ns.
    pub start_ns: i64,
    /// Window end, ns.
    pub end_ns: i64,
    /// ns per bucket, a power of two.
    pub resolution_ns: i64,
    /// Search text whose matches are flagged.
    pub search: Option<String>,
}

impl TileRequest {
    /// True when this request's data can draw `want` (same resolution and search, wider
    /// window, all its lanes).
    pub fn covers(&self, want: &TileRequest) -> bool {
        self.resolution_ns == want.resolution_ns
            && self.search == want.search
            && self.start_ns <= want.start_ns
            && self.end_ns >= want.end_ns
            && want.lanes.iter().all(|l| self.lanes.contains(l))
    }
}

/// The power of two at or below `ns_per_px` (at least 1).
pub fn resolution(ns_per_px: f64) -> i64 {
    // NaN becomes 1 (`max` ignores it); the cap keeps the shift below 2^62.
    let r = ns_per_px.max(1.0).clamp(1.0, 4e18) as u64;
    1i64 << (63 - r.leading_zeros()).min(62)
}

/// The request for a view of `[start, end]` over `lanes` at `ns_per_px`, with margins.
pub fn request(lanes: Vec<u32>, start: f64, end: f64, ns_per_px: f64, search: Option<String>) -> TileRequest {
    let span = end - start;
    TileRequest {
        lanes,
        start_ns: (start - span).floor() as i64,
        end_ns: (end + span).ceil() as i64,
        resolution_ns: resolution(ns_per_px),
        search,
    }
}

/// The visible part of a request: what must be covered now.
pub fn visible(lanes: Vec<u32>, start: f64, end: f64, ns_per_px: f64, search: Option<String>) -> TileRequest {
    TileRequest {
        lanes,
        start_ns: start.floor() as i64,
        end_ns: end.ceil() as i64,
        resolution_ns: resolution(ns_per_px),
        search,
    }
}

/// Tiles received, with per-lane rect ranges and a palette slot per name.
#[derive(Clone, Debug, Default)]
pub struct Tiles {
    /// The answer's header.
    pub set: TileSet,
    /// What was asked (the answer's window is the request widened to whole buckets).
    pub request: Option<TileRequest>,
    words: Vec<u32>,
    /// Per lane: first rect and rect count.
    lanes: HashMap<u32, (usize, usize)>,
    /// Palette slot of each name (stable hash of the text).
    pub color: Vec<u32>,
}

impl Tiles {
    /// Indexes an answer.
    pub fn new(set: TileSet, words: Vec<u32>, request: Option<TileRequest>) -> Self {
        let mut lanes = HashMap::new();
        let mut at = 0;
        for &(lane, n) in &set.lanes {
            lanes.insert(lane, (at, n as usize));
            at += n as usize;
        }
        let color = set.names.iter().map(|n| name_hash(n)).collect();
        Self {
            set,
            request,
            words,
            lanes,
            color,
        }
    }

    /// Number of rects.
    pub fn len(&self) -> usize {
        self.words.len() / RECT_WORDS
    }

    /// True when there are no rects.
    pub fn is_empty(&self) -> bool {
        self.words.len() < RECT_WORDS
    }

    /// Rects of `lane`, ordered by row then start.
    pub fn lane(&self, lane: u32) -> impl Iterator<Item = Rect> + '_ {
        let (first, n) = self.lanes.get(&lane).copied().unwrap_or((0, 0));
        (first..first + n).filter_map(move |i| self.rect(i))
    }

    /// Rect `i`, if it exists.
    pub fn rect(&self, i: usize) -> Option<Rect> {
        let w = self.words.get(i * RECT_WORDS..(i + 1) * RECT_WORDS)?;
        let res = self.set.resolution_ns;
        Some(Rect {
            row: w[0] as u16,
            start_ns: self.set.start_ns + i64::from(w[1]) * res,
            end_ns: self.set.start_ns + i64::from(w[2]) * res,
            slice: w[3],
            name: w[4] & !RECT_MATCH,
            matched: w[4] & RECT_MATCH != 0,
            count: w[5],
        })
    }

    /// The rect of `lane`, `row` under time `ns`, allowing `slop_ns` either side (a pixel or
    /// two, so thin slices can be hovered); the nearest one wins.
    pub fn hit(&self, lane: u32, row: u16, ns: f64, slop_ns: f64) -> Option<Rect> {
        self.lane(lane)
            .filter(|r| r.row == row)
            .filter(|r| (r.start_ns as f64) - slop_ns <= ns && ns <= (r.end_ns as f64) + slop_ns)
            .min_by(|a, b| distance(a, ns).total_cmp(&distance(b, ns)))
    }

    /// Name text of rect name index `i`.
    pub fn name(&self, i: u32) -> &str {
        self.set.names.get(i as usize).map_or("", String::as_str)
    }
}

fn distance(r: &Rect, ns: f64) -> f64 {
    if ns < r.start_ns as f64 {
        r.start_ns as f64 - ns
    } else if ns > r.end_ns as f64 {
        ns - r.end_ns as f64
    } else {
        0.0
    }
}

/// FNV-1a of the name with digits after `#` ignored, so `ProfilerStep#3` and `#4` share a color.
pub fn name_hash(name: &str) -> u32 {
    let base = name.split('#').next().unwrap_or(name);
    let mut h: u32 = 0x811c_9dc5;
    for b in base.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiles() -> Tiles {
        let set = TileSet {
            start_ns: 1000,
            end_ns: 2000,
            resolution_ns: 10,
            lanes: vec![(7, 2), (9, 1)],
            names: vec!["a".into(), "b".into()],
        };
        let words = vec![
            0, 0, 10, 5, 0, 1, //
            1, 2, 3, 6, 1 | RECT_MATCH, 4, //
            0, 50, 60, 8, 1, 1,
        ];
        Tiles::new(set, words, None)
    }

    #[test]
    fn decodes_rects_per_lane() {
        let t = tiles();
        assert_eq!(t.len(), 3);
        let r: Vec<Rect> = t.lane(7).collect();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].start_ns, r[0].end_ns), (1000, 1100));
        assert!(r[1].matched && r[1].count == 4 && r[1].name == 1);
        assert_eq!(t.lane(9).next().map(|r| r.slice), Some(8));
        assert_eq!(t.lane(3).count(), 0);
    }

    #[test]
    fn hit_finds_the_nearest_rect_of_the_row() {
        let t = tiles();
        assert_eq!(t.hit(7, 0, 1050.0, 0.0).map(|r| r.slice), Some(5));
        assert_eq!(t.hit(7, 1, 1025.0, 0.0).map(|r| r.slice), Some(6));
        assert_eq!(t.hit(7, 1, 1031.0, 0.0), None);
        assert_eq!(t.hit(7, 1, 1031.0, 2.0).map(|r| r.slice), Some(6));
        assert_eq!(t.hit(7, 2, 1050.0, 0.0), None);
    }

    #[test]
    fn requests_cover_panning_but_not_zooming() {
        let want = request(vec![1, 2], 1000.0, 2000.0, 1.5, None);
        assert_eq!((want.start_ns, want.end_ns, want.resolution_ns), (0, 3000, 1));
        assert!(want.covers(&visible(vec![2], 1500.0, 2500.0, 1.9, None)));
        assert!(!want.covers(&visible(vec![2], 1500.0, 2500.0, 2.0, None)));
        assert!(!want.covers(&visible(vec![3], 1500.0, 2500.0, 1.0, None)));
        assert!(!want.covers(&visible(vec![2], 1500.0, 2500.0, 1.0, Some("x".into()))));
        assert_eq!(resolution(1000.0), 512);
        assert_eq!(resolution(0.1), 1);
    }

    #[test]
    fn step_names_share_a_color() {
        assert_eq!(name_hash("ProfilerStep#3"), name_hash("ProfilerStep#44"));
        assert_ne!(name_hash("aten::mm"), name_hash("aten::add"));
    }
}
