//! Tiles on the wire: the level-of-detail rects of several lanes at one resolution, as a
//! [`TileSet`] header and a flat `u32` buffer (`RECT_WORDS` words per rect).
//!
//! Names are sent once per answer, deduplicated: a rect's name word indexes `TileSet::names`,
//! with [`RECT_MATCH`] set when its slice matches the search text. Bounded by the LOD contract
//! (at most rows × buckets rects per lane), so an answer stays small whatever the trace size.

use crate::index::search::Query as Search;
use crate::index::Index;
use crate::model::strings::FxHashMap;
use crate::model::{LaneId, StrId, Trace};
use protocol::{TileSet, RECT_MATCH, RECT_WORDS};

/// Most lanes one answer covers; the app asks for the visible lanes only.
pub const MAX_LANES: usize = 4096;

/// The rects of `lanes` over `[start_ns, end_ns)` at `resolution_ns` per bucket; unknown lanes
/// answer with no rects.
pub fn tiles(
    trace: &Trace,
    index: &Index,
    lanes: &[u32],
    (start_ns, end_ns): (i64, i64),
    resolution_ns: i64,
    search: Option<&Search>,
) -> (TileSet, Vec<u32>) {
    let mut set = TileSet::default();
    let mut words = Vec::new();
    let mut names: FxHashMap<StrId, u32> = FxHashMap::default();
    for &lane in lanes.iter().take(MAX_LANES) {
        let tile = index.lane_tile(trace, LaneId(lane), start_ns, end_ns, resolution_ns);
        set.start_ns = tile.start_ns;
        set.end_ns = tile.end_ns;
        set.resolution_ns = tile.resolution_ns;
        words.reserve(tile.len() * RECT_WORDS);
        for i in 0..tile.len() {
            let id = tile.slice[i];
            let Some(&name) = trace.slices.name.get(id as usize) else {
                continue;
            };
            let next = names.len() as u32;
            let mut word = *names.entry(name).or_insert_with(|| {
                set.names.push(trace.strings.get(name).into_owned());
                next
            });
            if search.is_some_and(|q| q.matches(trace, id)) {
                word |= RECT_MATCH;
            }
            words.extend_from_slice(&[
                u32::from(tile.row[i]),
                tile.start_bucket[i],
                tile.end_bucket[i],
                id,
                word,
                tile.count[i],
            ]);
        }
        let rects = words.len() / RECT_WORDS
            - set.lanes.iter().map(|&(_, n)| n as usize).sum::<usize>();
        set.lanes.push((lane, rects as u32));
    }
    (set, words)
}
