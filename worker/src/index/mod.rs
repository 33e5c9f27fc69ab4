//! Index: the read-only structures built once after load that the timeline, the details panel
//! and the search box query (the queries the UI needs; docs/architecture.md).
//!
//! ```text
//! model::Trace ─Index::build─▶ Index ─ by_row + forest ─▶ lod::Tile       (lane_tile)
//!                                    ─ flows_by_to, launched ─▶ details::Details (slice_details)
//!                                    ─ args_order ─▶ search::Query           (names, arg values)
//! ```
//!
//! Inputs: a finished [`Trace`] (slices of a lane contiguous, sorted by start ascending then
//! duration descending; `row` < the lane's `rows`; two slices of one row never overlap, their
//! extents `[start, max(end, start + 1))` included, see `lod`). Outputs: `u32` slice ids into the
//! trace's columns, times in `i64` ns from the trace origin.
//!
//! Layout (all `u32`; n = slices, F = flows, K = device activities with a launch):
//!
//! ```text
//! lane_rows  [lanes + 1]   lane l owns rows[lane_rows[l]..lane_rows[l + 1]], one per display row
//! rows       [Σ lane.rows] RowSpan { first, len, forest }: where the row lives in by_row / forest
//! by_row     [n]           slice ids grouped by (lane, row), start ascending inside a row
//! forest     [≈ n / 4]     segment-forest nodes of every row (see `lod`)
//! flows_by_to[F]           indexes into trace.flows sorted by (to, from): flows into a slice
//! launched   [K]           device activity ids sorted by (launch, id): what a runtime call launched
//! args_order [A]           ids of slices with args, sorted by args place: args byte -> slice
//!                          (built by the first search, see `search`)
//! ```
//!
//! About 5 bytes per slice plus 4 per flow and per linked kernel (9 per slice once searched):
//! 1-3 % of the JSON, a slice being 150-500 JSON bytes.
//!
//! Cost: `build` is O(n) for rows and forest (one counting pass per lane, every forest level
//! half the one below) plus O(F log F + K log K) sorts; the first search adds O(A log A).
//! Queries: see each submodule.
//!
//! Why: per-row arrays of ids rather than copies of start/dur columns (a copy would cost 16
//! bytes per slice; the id indirection costs a cache miss per search step, which the tile query
//! can afford). No text index: a per-distinct-name match table plus one memchr scan of the args
//! answers a new search text in tens of milliseconds on a 300 MB trace, while a substring index
//! (suffix array, n-grams) would cost more memory than the whole model.

pub mod details;
pub mod lod;
pub mod search;

use crate::model::{LaneId, Trace, NONE};

pub use details::{slice_details, Details, StableKey};
pub use lod::{Aggregate, Tile};
pub use search::{Cursor, Query, SearchResult};

/// Where one (lane, row) lives in [`Index`]'s flat arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RowSpan {
    /// First position in `by_row`.
    pub first: u32,
    /// Number of slices in the row.
    pub len: u32,
    /// First node in `forest` (nodes of the row's levels, bottom level first).
    pub forest: u32,
}

/// Per-lane, per-row slice order with segment forests, and reverse link maps.
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// `rows[lane_rows[l] as usize..lane_rows[l + 1] as usize]` are lane `l`'s rows.
    pub(crate) lane_rows: Vec<u32>,
    /// One span per (lane, row).
    pub(crate) rows: Vec<RowSpan>,
    /// Slice ids grouped by (lane, row); start ascending within a row.
    pub(crate) by_row: Vec<u32>,
    /// Segment-forest nodes (slice ids) of all rows.
    pub(crate) forest: Vec<u32>,
    /// Indexes into `trace.flows`, sorted by (to, from).
    pub(crate) flows_by_to: Vec<u32>,
    /// Device activities with a launch call, sorted by (launch, id).
    pub(crate) launched: Vec<u32>,
    /// Slices with non-empty args, sorted by args offset (args spans never overlap). Built by
    /// the first search that needs it: sorting costs as much as the rest of the build, and many
    /// sessions never search arg values.
    pub(crate) args_order: std::sync::OnceLock<Vec<u32>>,
}

impl Index {
    /// Builds the index of `trace`. Never fails: slices whose row is outside their lane's
    /// `rows` (a broken model invariant) widen the lane's row count instead of being dropped.
    pub fn build(trace: &Trace) -> Self {
        let mut index = Self {
            lane_rows: Vec::with_capacity(trace.lanes.len() + 1),
            ..Self::default()
        };
        index.by_row = vec![NONE; trace.slices.len()];
        index.lane_rows.push(0);
        for lane in &trace.lanes {
            index.add_lane(
                trace,
                lane.slices.start as usize..lane.slices.end as usize,
                lane.rows,
            );
            index.lane_rows.push(index.rows.len() as u32);
        }
        index.forest.shrink_to_fit();
        index.rows.shrink_to_fit();
        index.flows_by_to = details::flows_by_to(trace);
        index.launched = details::launched(trace);
        index
    }

    /// Groups one lane's slices by row (a stable counting sort keeps start order) and builds
    /// each row's forest.
    fn add_lane(&mut self, trace: &Trace, range: std::ops::Range<usize>, rows: u16) {
        let s = &trace.slices;
        let (Some(row_col), true) = (s.row.get(range.clone()), range.end <= self.by_row.len())
        else {
            return;
        };
        let used = row_col
            .iter()
            .map(|&r| usize::from(r) + 1)
            .max()
            .unwrap_or(0);
        let mut counts = vec![0u32; used.max(usize::from(rows))];
        for &r in row_col {
            counts[usize::from(r)] += 1;
        }
        let mut next = Vec::with_capacity(counts.len());
        let mut at = range.start as u32;
        for &c in &counts {
            next.push(at);
            at += c;
        }
        for (i, &r) in range.clone().zip(row_col) {
            let slot = &mut next[usize::from(r)];
            self.by_row[*slot as usize] = i as u32;
            *slot += 1;
        }
        let mut first = range.start as u32;
        for &len in &counts {
            let forest = self.forest.len() as u32;
            let ids = &self.by_row[first as usize..(first + len) as usize];
            lod::build_forest(trace, ids, &mut self.forest);
            self.rows.push(RowSpan { first, len, forest });
            first += len;
        }
    }

    /// Display rows of `lane` known to the index (0 for an unknown lane).
    pub fn rows(&self, lane: LaneId) -> u16 {
        let l = lane.0 as usize;
        match (self.lane_rows.get(l), self.lane_rows.get(l + 1)) {
            (Some(&a), Some(&b)) => u16::try_from(b - a).unwrap_or(u16::MAX),
            _ => 0,
        }
    }

    /// The span of (`lane`, `row`), if both exist.
    pub(crate) fn span(&self, lane: LaneId, row: u16) -> Option<RowSpan> {
        let l = lane.0 as usize;
        let (&a, &b) = (self.lane_rows.get(l)?, self.lane_rows.get(l + 1)?);
        let i = a as usize + usize::from(row);
        if i < b as usize {
            self.rows.get(i).copied()
        } else {
            None
        }
    }

    /// Slice ids of (`lane`, `row`) in start order; empty when either does not exist.
    pub fn row_slices(&self, lane: LaneId, row: u16) -> &[u32] {
        match self.span(lane, row) {
            Some(sp) => self
                .by_row
                .get(sp.first as usize..(sp.first + sp.len) as usize)
                .unwrap_or(&[]),
            None => &[],
        }
    }

    /// The level-of-detail tile of `lane` over `[start_ns, end_ns)`; see [`lod`].
    pub fn lane_tile(
        &self,
        trace: &Trace,
        lane: LaneId,
        start_ns: i64,
        end_ns: i64,
        resolution_ns: i64,
    ) -> Tile {
        lod::lane_tile(self, trace, lane, start_ns, end_ns, resolution_ns)
    }

    /// Approximate heap bytes held by the index.
    pub fn heap_bytes(&self) -> usize {
        self.lane_rows.capacity() * 4
            + self.rows.capacity() * std::mem::size_of::<RowSpan>()
            + (self.by_row.capacity()
                + self.forest.capacity()
                + self.flows_by_to.capacity()
                + self.launched.capacity()
                + self.args_order.get().map_or(0, Vec::capacity))
                * 4
    }
}

/// Sorts `ids` by (`key(id)`, id). Keys are read once, in the given order, into packed
/// (key, id) words: reading them through the ids while sorting (random access into a column)
/// cost several times more.
pub(crate) fn sort_by_u32_key(ids: &mut [u32], key: impl Fn(u32) -> u32) {
    let mut pairs: Vec<u64> = ids
        .iter()
        .map(|&id| (u64::from(key(id)) << 32) | u64::from(id))
        .collect();
    pairs.sort_unstable();
    for (id, p) in ids.iter_mut().zip(&pairs) {
        // The low half is the id put there above.
        *id = *p as u32;
    }
}
