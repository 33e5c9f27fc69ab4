//! Level of detail: per (lane, row) segment forests and the tile query the timeline draws from
//! (events of a lane in [t0, t1] at a given resolution; docs/architecture.md).
//!
//! `lane_tile(lane, start_ns, end_ns, resolution_ns)` answers exactly this naive query
//! (tests/lod.rs runs both on every real fixture and compares them rect for rect):
//!
//! ```text
//! r      = resolution_ns rounded down to a power of two (at least 1)
//! W      = [start_ns, end_ns) widened outwards to multiples of r, at most MAX_TILE_BUCKETS wide
//! extent = [start, max(end, start + 1))       every slice covers at least 1 ns
//! SELECT row, bucket = floor(max(start, W.start) / r),
//!        longest = the slice with the longest extent ∩ W (ties: smallest id), count(*)
//! FROM   slices of the lane WHERE extent ∩ W is not empty
//! GROUP  BY row, bucket   ORDER BY row, bucket
//! rect   = extent(longest) ∩ W, widened outwards to whole buckets, relative to W.start
//! ```
//!
//! Consequences the renderer relies on:
//! - at most one rect per (row, bucket): a tile never holds more than rows × buckets rects,
//!   whatever the trace size;
//! - a slice is grouped by the bucket where it starts (clipped to W), but drawn over its whole
//!   clipped extent: a long parent is one rect across the many buckets it covers;
//! - a slice whose clipped extent is at least r always represents its group (the others in
//!   its group lie in the part of its bucket before it, so are shorter than r): everything one
//!   pixel wide or more is drawn as itself; narrower slices are summarized by `count`;
//! - consecutive rects of a row may share one boundary bucket (a slice ending inside the bucket
//!   where the next group starts); drawing them in order is correct.
//!
//! Structure: per (lane, row), the row's slice ids in start order (`Index::by_row`). Extents
//! of one row never overlap (a row is one depth of one nesting layer, and `model::nest` makes
//! a slice starting inside an open one, even a zero-length one at its end, its child), so start
//! order is also end order: a binary search finds the first slice intersecting W and each
//! group is the contiguous run of slices starting in one bucket. Over each row a segment forest
//! (gigatrace's `IForestIndex`, Perfetto's mipmap) keeps the longest slice of every aligned
//! block of `LEAF_BLOCK << k` slices; the [`Aggregate`] monoid (longest, count) combines them.
//! Counts need no storage: a run's count is its length. Only the two runs at W's edges use
//! clipped extents; their edge slices are combined explicitly, the interior comes from the
//! forest, whose keys are unclipped extents.
//!
//! Cost: per row O(G · (log n + LEAF_BLOCK)) where G ≤ buckets is the number of non-empty
//! groups and n the row's slices (galloping search for run ends, O(log run) forest levels).
//! Memory: n / LEAF_BLOCK + n / (2 · LEAF_BLOCK) + ... ≈ n / 4 `u32` nodes per row (the bottom
//! blocks of 8 are scanned instead of stored: 1 byte per slice instead of 8).
//!
//! Rejected: bucketing by start only (a parent starting before W would vanish, and a
//! 100-pixel parent would shrink to one pixel); a fixed pyramid of pre-rendered tiles (memory
//! grows with zoom levels and any resolution must be served); storing count per node (a run's
//! length is its count).

use super::{Index, RowSpan};
use crate::model::{LaneId, Slices, Trace, NONE};

/// Slices per bottom block of the forest, scanned rather than stored (a power of two).
pub const LEAF_BLOCK: usize = 8;
const _: () = assert!(LEAF_BLOCK.is_power_of_two());
/// Widest tile in buckets; wider requests are cut at `start_ns + MAX_TILE_BUCKETS × r`.
pub const MAX_TILE_BUCKETS: i64 = 1 << 16;
/// Requested times are clamped to ±2^62 ns (146 years) so bucket arithmetic cannot overflow.
const TIME_LIMIT_NS: i64 = 1 << 62;

/// Rectangles of one lane at one resolution, one per (row, bucket) group, ordered by row then
/// bucket. Columns have equal length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    /// The lane asked for.
    pub lane: LaneId,
    /// Window start actually used: the request floored to a multiple of `resolution_ns`.
    pub start_ns: i64,
    /// Window end actually used: the request ceiled to a multiple of `resolution_ns`, cut at
    /// `MAX_TILE_BUCKETS` buckets.
    pub end_ns: i64,
    /// ns per bucket (pixel): a power of two.
    pub resolution_ns: i64,
    /// Display rows of the lane (overflow layers included).
    pub rows: u16,
    /// Display row of each rect.
    pub row: Vec<u16>,
    /// Representative slice: the longest of its group.
    pub slice: Vec<u32>,
    /// First bucket the rect covers, counted from `start_ns`.
    pub start_bucket: Vec<u32>,
    /// Bucket after the last one the rect covers (> `start_bucket`).
    pub end_bucket: Vec<u32>,
    /// Slices the rect stands for (>= 1).
    pub count: Vec<u32>,
}

impl Tile {
    /// Number of rects.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// True when no slice intersects the window.
    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }

    /// Number of buckets (pixel columns) in the window.
    pub fn buckets(&self) -> u64 {
        u64::try_from((self.end_ns - self.start_ns) / self.resolution_ns.max(1)).unwrap_or(0)
    }

    /// Start of rect `i` in ns relative to `start_ns`.
    ///
    /// # Panics
    /// When `i >= self.len()`.
    pub fn start_rel_ns(&self, i: usize) -> i64 {
        i64::from(self.start_bucket[i]) * self.resolution_ns
    }

    /// End of rect `i` in ns relative to `start_ns`.
    ///
    /// # Panics
    /// When `i >= self.len()`.
    pub fn end_rel_ns(&self, i: usize) -> i64 {
        i64::from(self.end_bucket[i]) * self.resolution_ns
    }
}

/// The summary of a run of slices: its longest member (by extent, ties to the smallest id)
/// and its size. A monoid: `empty` is neutral and `combine` is associative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aggregate {
    /// Longest slice, or [`NONE`] when empty.
    pub longest: u32,
    /// Its extent in ns (within the window, when built with [`Aggregate::from_slice`]).
    pub extent_ns: i64,
    /// Slices summarized.
    pub count: u32,
}

impl Aggregate {
    /// The neutral element.
    pub const fn empty() -> Self {
        Self {
            longest: NONE,
            extent_ns: -1,
            count: 0,
        }
    }

    /// One slice, its extent clipped to `[start_ns, end_ns)`.
    pub fn from_slice(slices: &Slices, id: u32, start_ns: i64, end_ns: i64) -> Self {
        let (s, e) = extent(slices, id);
        Self {
            longest: id,
            extent_ns: e.min(end_ns) - s.max(start_ns),
            count: 1,
        }
    }

    /// Both runs together.
    #[must_use]
    pub fn combine(self, other: Self) -> Self {
        let take_other = other.extent_ns > self.extent_ns
            || (other.extent_ns == self.extent_ns && other.longest < self.longest);
        let count = self.count.saturating_add(other.count);
        if take_other {
            Self { count, ..other }
        } else {
            Self { count, ..self }
        }
    }
}

/// `[start, max(end, start + 1))` of slice `id`. Ids come from the index, which only holds
/// ids of existing slices.
#[inline]
fn extent(s: &Slices, id: u32) -> (i64, i64) {
    let start = s.start_ns[id as usize];
    (start, start.saturating_add(s.dur_ns[id as usize].max(1)))
}

/// The longer of two slices (ties and [`NONE`] resolved as in [`Aggregate::combine`]).
#[inline]
fn longer(s: &Slices, a: u32, b: u32) -> u32 {
    if a == NONE {
        return b;
    }
    if b == NONE {
        return a;
    }
    let (da, db) = (s.dur_ns[a as usize].max(1), s.dur_ns[b as usize].max(1));
    if db > da || (db == da && b < a) {
        b
    } else {
        a
    }
}

/// Appends the forest of one row (`ids` in start order) to `out`: level 1 holds the longest
/// of each block of `LEAF_BLOCK` ids, each next level the longer of each pair below, up to a
/// single root. Nothing for an empty row.
pub(crate) fn build_forest(trace: &Trace, ids: &[u32], out: &mut Vec<u32>) {
    let s = &trace.slices;
    let mut lo = out.len();
    out.extend(
        ids.chunks(LEAF_BLOCK)
            .map(|block| block.iter().fold(NONE, |best, &id| longer(s, best, id))),
    );
    let mut hi = out.len();
    while hi - lo > 1 {
        for j in (lo..hi).step_by(2) {
            let right = if j + 1 < hi { out[j + 1] } else { NONE };
            out.push(longer(s, out[j], right));
        }
        (lo, hi) = (hi, out.len());
    }
}

impl Index {
    /// The longest slice among positions `[lo, hi)` of a row (`ids` is the row), or [`NONE`].
    fn longest(&self, s: &Slices, sp: RowSpan, ids: &[u32], mut lo: usize, mut hi: usize) -> u32 {
        let mut best = NONE;
        while lo < hi && lo & (LEAF_BLOCK - 1) != 0 {
            best = longer(s, best, ids[lo]);
            lo += 1;
        }
        while hi > lo && hi & (LEAF_BLOCK - 1) != 0 {
            hi -= 1;
            best = longer(s, best, ids[hi]);
        }
        let (mut l, mut h) = (lo / LEAF_BLOCK, hi / LEAF_BLOCK);
        let mut offset = sp.forest as usize;
        let mut len = (sp.len as usize).div_ceil(LEAF_BLOCK);
        while l < h {
            // `h <= len` at every level (see `build_forest`), so both reads are in the level.
            let Some(level) = self.forest.get(offset..offset + len) else {
                break;
            };
            if l % 2 == 1 {
                best = longer(s, best, level[l]);
                l += 1;
            }
            if l < h && h % 2 == 1 {
                h -= 1;
                best = longer(s, best, level[h]);
            }
            (l, h) = (l / 2, h / 2);
            offset += len;
            len = len.div_ceil(2);
        }
        best
    }
}

/// The tile window in absolute ns and buckets.
#[derive(Clone, Copy)]
struct Window {
    start_ns: i64,
    end_ns: i64,
    shift: u32,
    first_bucket: i64,
}

/// See the module docs for the semantics. An unknown lane gives an empty tile.
pub fn lane_tile(
    index: &Index,
    trace: &Trace,
    lane: LaneId,
    start_ns: i64,
    end_ns: i64,
    resolution_ns: i64,
) -> Tile {
    let shift = if resolution_ns <= 1 {
        0
    } else {
        (63 - resolution_ns.leading_zeros()).min(62)
    };
    let r = 1i64 << shift;
    let start = start_ns.clamp(-TIME_LIMIT_NS, TIME_LIMIT_NS);
    let end = end_ns.clamp(start, TIME_LIMIT_NS);
    let b0 = start >> shift;
    let b1 = ((end + (r - 1)) >> shift).min(b0 + MAX_TILE_BUCKETS);
    let w = Window {
        start_ns: b0 << shift,
        end_ns: b1 << shift,
        shift,
        first_bucket: b0,
    };
    let rows = index.rows(lane);
    let mut tile = Tile {
        lane,
        start_ns: w.start_ns,
        end_ns: w.end_ns,
        resolution_ns: r,
        rows,
        row: Vec::new(),
        slice: Vec::new(),
        start_bucket: Vec::new(),
        end_bucket: Vec::new(),
        count: Vec::new(),
    };
    if w.end_ns > w.start_ns {
        for row in 0..rows {
            if let Some(sp) = index.span(lane, row) {
                row_tile(index, &trace.slices, sp, row, w, &mut tile);
            }
        }
    }
    tile
}

/// Appends the rects of one row.
fn row_tile(index: &Index, s: &Slices, sp: RowSpan, row: u16, w: Window, tile: &mut Tile) {
    let Some(ids) = index
        .by_row
        .get(sp.first as usize..(sp.first + sp.len) as usize)
    else {
        return;
    };
    let start_of = |id: u32| s.start_ns[id as usize];
    // Slices of a row are disjoint: only the one before the first start in the window can
    // reach into it.
    let mut i = ids.partition_point(|&id| start_of(id) < w.start_ns);
    if i > 0 && extent(s, ids[i - 1]).1 > w.start_ns {
        i -= 1;
    }
    while i < ids.len() {
        let first_start = start_of(ids[i]);
        if first_start >= w.end_ns {
            break;
        }
        let bucket = first_start.max(w.start_ns) >> w.shift;
        let limit = ((bucket + 1) << w.shift).min(w.end_ns);
        let j = gallop(ids, i + 1, |&id| start_of(id) < limit);
        let (mut lo, mut hi) = (i, j);
        let mut agg = Aggregate::empty();
        if first_start < w.start_ns {
            agg = agg.combine(Aggregate::from_slice(s, ids[lo], w.start_ns, w.end_ns));
            lo += 1;
        }
        if hi > lo && extent(s, ids[hi - 1]).1 > w.end_ns {
            agg = agg.combine(Aggregate::from_slice(s, ids[hi - 1], w.start_ns, w.end_ns));
            hi -= 1;
        }
        if hi > lo {
            let id = index.longest(s, sp, ids, lo, hi);
            let (a, b) = extent(s, id);
            agg = agg.combine(Aggregate {
                longest: id,
                extent_ns: b - a,
                count: (hi - lo) as u32,
            });
        }
        push_rect(s, w, row, agg, tile);
        i = j;
    }
}

/// Appends the rect of one group's aggregate.
fn push_rect(s: &Slices, w: Window, row: u16, agg: Aggregate, tile: &mut Tile) {
    if agg.longest == NONE {
        return;
    }
    let (a, b) = extent(s, agg.longest);
    let r_minus_1 = (1i64 << w.shift) - 1;
    let first = (a.max(w.start_ns) >> w.shift) - w.first_bucket;
    let last = ((b.min(w.end_ns) + r_minus_1) >> w.shift) - w.first_bucket;
    // Both lie in [0, MAX_TILE_BUCKETS] because the extent intersects the window.
    tile.row.push(row);
    tile.slice.push(agg.longest);
    tile.start_bucket.push(u32::try_from(first).unwrap_or(0));
    tile.end_bucket.push(u32::try_from(last).unwrap_or(0));
    tile.count.push(agg.count);
}

/// First position at or after `from` where `pred` fails (`pred` holds on a prefix of
/// `items[from..]`): exponential then binary search, O(log distance).
fn gallop<T>(items: &[T], from: usize, pred: impl Fn(&T) -> bool) -> usize {
    let n = items.len();
    let mut bound = 1;
    while from + bound <= n && pred(&items[from + bound - 1]) {
        bound *= 2;
    }
    let lo = (from + bound / 2).min(n);
    let hi = (from + bound).min(n);
    lo + items[lo..hi].partition_point(|x| pred(x))
}

#[cfg(test)]
mod tests {
    use super::{Aggregate, Slices};

    #[test]
    fn aggregate_is_a_monoid_keeping_the_longest_then_the_first() {
        let s = Slices {
            start_ns: vec![0, 10, 20, 30],
            dur_ns: vec![5, 0, 7, 7],
            ..Slices::default()
        };
        let one = |id| Aggregate::from_slice(&s, id, 0, 100);
        let (a, b, c, d) = (one(0), one(1), one(2), one(3));
        let e = Aggregate::empty();
        assert_eq!(e.combine(a), a);
        assert_eq!(a.combine(e), a);
        assert_eq!(a.combine(b).combine(c), a.combine(b.combine(c)));
        assert_eq!(c.combine(d).longest, 2, "ties go to the smaller id");
        assert_eq!(d.combine(c).longest, 2);
        assert_eq!(b.extent_ns, 1, "a zero-length slice covers 1 ns");
        let all = a.combine(b).combine(c).combine(d);
        assert_eq!((all.longest, all.count), (2, 4));
        assert_eq!(Aggregate::from_slice(&s, 2, 22, 25).extent_ns, 3, "clipped");
    }
}
