//! One step of the search box: the match count and the next or previous match from a slice
//! (the current match) or a time (the view's start), with its rank in time order.

use super::slice_ref;
use crate::index::search::{Cursor, Query};
use crate::model::Trace;
use protocol::SearchHit;

/// The match after (`forward`) or before the cursor; wraps around at either end so next /
/// previous cycle through all matches.
pub fn step(
    trace: &Trace,
    query: &Query,
    text: &str,
    cursor: Cursor,
    forward: bool,
) -> SearchHit {
    let total = query.run(trace, 0).total;
    let found = if forward {
        query.next(trace, cursor).or_else(|| query.next(trace, Cursor::Time(i64::MIN)))
    } else {
        query.prev(trace, cursor).or_else(|| query.prev(trace, Cursor::Time(i64::MAX)))
    };
    SearchHit {
        text: text.to_owned(),
        total,
        hit: found.and_then(|id| slice_ref(trace, id)),
        rank: found.map(|id| rank(trace, query, id)),
    }
}

/// 1-based position of match `id` in (start, id) order.
fn rank(trace: &Trace, query: &Query, id: u32) -> u64 {
    let s = &trace.slices;
    let key = (s.start_ns.get(id as usize).copied().unwrap_or(0), id);
    let before = trace
        .lanes
        .iter()
        .flat_map(|l| l.slices.clone())
        .filter(|&j| (s.start_ns[j as usize], j) < key && query.matches(trace, j))
        .count();
    before as u64 + 1
}
