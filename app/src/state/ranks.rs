//! The Run tab's ranks timeline as a plain struct: which ranks are stacked, on which clock, the
//! worker holding their models, the search over every rank, and the selection with the
//! collective instance it belongs to. The panels themselves are a [`super::stack::StackState`]
//! (one panel per held rank, `TraceRef::Rank`), kept beside this.
//!
//! Inputs: the rank choice ([`default_ranks`], then the user's), `HoldRanks` sent and its
//! `RanksHeld` answer, the clock switch, search answers (one `Query::Search` per rank, asked one
//! after another on the one `StackSearch` channel, so none supersedes another), and the
//! selection's `Details` then `Collective` answers (likewise one after the other on
//! `StackSelect`). Output: the panels to open, the queries to send next, the bands to mark.
//!
//! Invariants: `chosen` holds at most [`MAX_HELD_RANKS`] distinct ranks, ascending; `counts`
//! has one entry per panel of the search's text; at most one query is pending per channel.

use protocol::{Align, Answer, CollectiveMatch, Query, RunData, SearchHit, SliceDetails, SliceRef, TraceRef, MAX_HELD_RANKS};

/// Where the ranks' time 0 is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// The run's clock as recorded: 0 is the earliest rank's start.
    #[default]
    Recorded,
    /// The run's clock, each rank shifted by its offset estimated from collective ends.
    Collectives,
    /// Each rank's start of step N.
    Step(u64),
}

impl Clock {
    /// The layout alignment asking for it.
    pub fn align(self) -> Align {
        match self {
            Clock::Recorded => Align::Recorded,
            Clock::Collectives => Align::Collectives,
            Clock::Step(n) => Align::Step(n),
        }
    }

    /// `recorded`, `collectives` or `step` (the clock select's values, the test hook).
    pub fn as_str(self) -> &'static str {
        match self {
            Clock::Recorded => "recorded",
            Clock::Collectives => "collectives",
            Clock::Step(_) => "step",
        }
    }
}

/// The selected slice: which panel, rank and slice.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// Panel index.
    pub pane: usize,
    /// Its rank.
    pub rank: u32,
    /// Slice id in that rank's trace.
    pub slice: u32,
    /// Its details, once answered.
    pub details: Option<SliceDetails>,
}

/// The search box over every rank.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RankSearch {
    /// Text typed, as typed (the box shows it).
    pub typed: String,
    /// Text searched: `typed` trimmed (empty: no search).
    pub text: String,
    /// Matches per panel, once counted.
    pub counts: Vec<Option<u64>>,
    /// Each panel's first match in time, once counted.
    pub hits: Vec<Option<SliceRef>>,
    /// The count awaited: panel index and query id.
    pending: Option<(usize, u32)>,
}

impl RankSearch {
    /// Matches over every rank counted so far, and whether every rank is counted.
    pub fn total(&self) -> (u64, bool) {
        let sum = self.counts.iter().flatten().sum();
        (sum, self.counts.iter().all(Option::is_some))
    }
}

/// Everything the ranks timeline knows besides its panels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RanksState {
    /// Ranks asked for, ascending.
    pub chosen: Vec<u32>,
    /// Where time 0 is.
    pub clock: Clock,
    /// The `HoldRanks` id awaited.
    pub hold: Option<u32>,
    /// Ranks whose models the worker holds (the panels), ascending.
    pub held: Vec<u32>,
    /// Ranks that could not be held, with why.
    pub failed: Vec<(u32, String)>,
    /// Progress of the models being reloaded: the file index and percent done, if known.
    pub reloading: Option<(u32, Option<u64>)>,
    /// The search over every rank.
    pub search: RankSearch,
    /// The selected slice.
    pub selection: Option<Selection>,
    /// The collective instance the selection belongs to (`None` also when it is none).
    pub collective: Option<CollectiveMatch>,
    /// The selection query awaited on `StackSelect`.
    select_pending: Option<u32>,
    /// Enter / Shift+Enter in the search box: the panel searched and the direction.
    navigate: Option<(usize, bool)>,
}

/// What the worker's answer to a selection query asks the controller to do.
#[derive(Debug, PartialEq)]
pub enum SelectNext {
    /// Nothing more to ask (the collective arrived, or the answer was stale).
    Done,
    /// Ask this query next: the collective once the details arrived, or the search in the
    /// next rank when one had no further match.
    Ask(Query),
    /// A search match was found in panel `.0`: bring it into view and ask for its details.
    Reveal(usize, SliceRef, Query),
}

impl RanksState {
    /// A new run: nothing chosen.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Asks for `ranks` (deduplicated, ascending, at most [`MAX_HELD_RANKS`]); returns them.
    pub fn choose(&mut self, ranks: &[u32]) -> Vec<u32> {
        let mut r = ranks.to_vec();
        r.sort_unstable();
        r.dedup();
        r.truncate(MAX_HELD_RANKS);
        self.chosen = r.clone();
        self.selection = None;
        self.collective = None;
        r
    }

    /// `HoldRanks` `id` was sent.
    pub fn sent_hold(&mut self, id: u32) {
        self.hold = Some(id);
        self.reloading = None;
    }

    /// `RanksHeld` arrived; false when another hold superseded `id`.
    pub fn held(&mut self, id: u32, mut held: Vec<u32>, failed: Vec<(u32, String)>) -> bool {
        if self.hold != Some(id) {
            return false;
        }
        held.sort_unstable();
        self.hold = None;
        self.reloading = None;
        self.held = held;
        self.failed = failed;
        true
    }

    /// The panels to open: one per held rank, ascending.
    pub fn panels(&self) -> Vec<(TraceRef, String)> {
        self.held.iter().map(|&r| (TraceRef::Rank(r), format!("rank {r}"))).collect()
    }

    /// True while the hold, a search count or a selection query is awaited.
    pub fn busy(&self) -> bool {
        self.hold.is_some() || self.search.pending.is_some() || self.select_pending.is_some()
    }

    /// The search text changed to `text`: the first count to ask (panel 0's), if any.
    pub fn search_begin(&mut self, text: &str) -> Option<Query> {
        let n = self.held.len();
        self.search = RankSearch { typed: text.to_owned(), counts: vec![None; n], hits: vec![None; n], text: text.trim().to_owned(), pending: None };
        self.search_query(0)
    }

    /// The count query for panel `i`, if the search has text and `i` is a panel.
    fn search_query(&self, i: usize) -> Option<Query> {
        let rank = *self.held.get(i)?;
        (!self.search.text.is_empty()).then(|| Query::Search {
            text: self.search.text.clone(),
            from_slice: None,
            from_ns: 0,
            forward: true,
            trace: TraceRef::Rank(rank),
        })
    }

    /// Panel `i`'s count was asked as `id`.
    pub fn search_sent(&mut self, i: usize, id: u32) {
        self.search.pending = Some((i, id));
    }

    /// A count arrived: the next panel's query to ask, if any (with its panel index).
    pub fn search_apply(&mut self, id: u32, hit: &SearchHit) -> Option<(usize, Query)> {
        let (i, _) = self.search.pending.filter(|&(_, p)| p == id)?;
        self.search.pending = None;
        if hit.text != self.search.text {
            return None;
        }
        if let Some(c) = self.search.counts.get_mut(i) {
            *c = Some(hit.total);
        }
        if let Some(h) = self.search.hits.get_mut(i) {
            h.clone_from(&hit.hit);
        }
        Some((i + 1, self.search_query(i + 1)?))
    }

    /// A search or selection query failed: stop waiting for it.
    pub fn failed(&mut self, id: u32) {
        if self.search.pending.is_some_and(|(_, p)| p == id) {
            self.search.pending = None;
        }
        if self.select_pending == Some(id) {
            self.select_pending = None;
        }
    }

    /// The next (`forward`) or previous match of the search across ranks: after the selection
    /// in its rank, else from the first (last) rank's start (end); the query to ask on
    /// `StackSelect`.
    pub fn search_step(&mut self, forward: bool) -> Option<Query> {
        if self.search.text.is_empty() || self.held.is_empty() {
            return None;
        }
        let here = self.selection.as_ref().map(|s| (s.pane, Some(s.slice)));
        let edge = if forward { 0 } else { self.held.len() - 1 };
        let (pane, from) = here.unwrap_or((edge, None));
        self.navigate = Some((pane, forward));
        self.nav_query(pane, from, forward)
    }

    /// The search for the match after (before) slice `from` of panel `pane`, or from its start
    /// (end).
    fn nav_query(&self, pane: usize, from: Option<u32>, forward: bool) -> Option<Query> {
        Some(Query::Search {
            text: self.search.text.clone(),
            from_slice: from,
            from_ns: if forward { i64::MIN } else { i64::MAX },
            forward,
            trace: TraceRef::Rank(*self.held.get(pane)?),
        })
    }

    /// A navigation answer: the match to select, else the search in the next rank that has
    /// matches (none past the last).
    fn navigated(&mut self, hit: &SearchHit) -> SelectNext {
        let Some((pane, forward)) = self.navigate.take() else { return SelectNext::Done };
        if let Some(r) = hit.hit.clone() {
            return match self.select(pane, r.id) {
                Some(query) => SelectNext::Reveal(pane, r, query),
                None => SelectNext::Done,
            };
        }
        let next = |p: usize| if forward { p.checked_add(1) } else { p.checked_sub(1) };
        let mut p = next(pane);
        while let Some(q) = p.filter(|&q| q < self.held.len()) {
            if self.search.counts.get(q).copied().flatten() != Some(0) {
                self.navigate = Some((q, forward));
                return self.nav_query(q, None, forward).map_or(SelectNext::Done, SelectNext::Ask);
            }
            p = next(q);
        }
        SelectNext::Done
    }

    /// Every other panel's first match of the search, as (panel, lane, row): where a search's
    /// Enter scrolls them while panel `pane` shows the match it selected.
    pub fn other_matches(&self, pane: usize) -> Vec<(usize, u32, u16)> {
        let hits = self.search.hits.iter().enumerate().filter(|&(i, _)| i != pane);
        hits.filter_map(|(i, h)| h.as_ref().map(|h| (i, h.lane, h.row))).collect()
    }

    /// Slice `slice` of panel `pane` is clicked: the details query to ask (the collective
    /// follows once they arrive); `None` when `pane` is not a panel.
    pub fn select(&mut self, pane: usize, slice: u32) -> Option<Query> {
        let rank = *self.held.get(pane)?;
        self.selection = Some(Selection { pane, rank, slice, details: None });
        self.collective = None;
        Some(Query::Details { slice, trace: TraceRef::Rank(rank) })
    }

    /// Clears the selection and the collective marked.
    pub fn deselect(&mut self) {
        self.selection = None;
        self.collective = None;
        self.select_pending = None;
        self.navigate = None;
    }

    /// A selection query was sent as `id`.
    pub fn select_sent(&mut self, id: u32) {
        self.select_pending = Some(id);
    }

    /// True when `id` is the selection query awaited.
    pub fn awaits_select(&self, id: u32) -> bool {
        self.select_pending == Some(id)
    }

    /// True when `id` is the search count awaited.
    pub fn awaits_search(&self, id: u32) -> bool {
        self.search.pending.is_some_and(|(_, p)| p == id)
    }

    /// The answer to the selection query `id`.
    pub fn select_apply(&mut self, id: u32, answer: Answer) -> SelectNext {
        if !self.awaits_select(id) {
            return SelectNext::Done;
        }
        self.select_pending = None;
        if let Answer::Search(hit) = &answer {
            return self.navigated(hit);
        }
        let Some(sel) = self.selection.as_mut() else { return SelectNext::Done };
        match answer {
            Answer::Details(Some(d)) if d.slice.id == sel.slice => {
                sel.details = Some(d);
                SelectNext::Ask(Query::Collective { trace: TraceRef::Rank(sel.rank), slice: sel.slice })
            }
            Answer::Collective(m) => {
                self.collective = m;
                SelectNext::Done
            }
            _ => SelectNext::Done,
        }
    }

    /// The span the selected collective ran on `rank`, ns in its trace.
    pub fn band(&self, rank: u32) -> Option<(f64, f64)> {
        let m = self.collective.as_ref()?.members.iter().find(|m| m.rank == rank)?;
        Some((m.start_ns as f64, m.end_ns as f64))
    }
}

/// The ranks stacked by default: the stragglers first, then the rank of median mean step time,
/// then the lowest ranks, up to [`MAX_HELD_RANKS`] (ascending).
pub fn default_ranks(data: &RunData) -> Vec<u32> {
    let known: Vec<u32> = data.ranks.iter().filter_map(|r| r.rank).collect();
    let mut timed: Vec<(f64, u32)> = data.ranks.iter().filter_map(|r| Some((r.step_mean_us?, r.rank?))).collect();
    timed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let median = timed.get(timed.len().saturating_sub(1) / 2).map(|&(_, r)| r);
    let mut lowest = known.clone();
    lowest.sort_unstable();
    let candidates = data.stragglers.iter().filter_map(|s| s.rank).chain(median).chain(lowest);
    let mut out: Vec<u32> = Vec::new();
    for r in candidates {
        if out.len() == MAX_HELD_RANKS {
            break;
        }
        if known.contains(&r) && !out.contains(&r) {
            out.push(r);
        }
    }
    out.sort_unstable();
    out
}

/// The clock the run's analysis uses, as the switch's default.
pub fn default_clock(data: &RunData) -> Clock {
    match data.clock.as_deref() {
        Some(c) if c.contains("align") => Clock::Collectives,
        _ => Clock::Recorded,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use protocol::{CollectiveMember, RunRank, RunStraggler};

    fn run(world: u32, stragglers: &[u32]) -> RunData {
        let rank = |r: u32| RunRank { rank: Some(r), step_mean_us: Some(100.0 + f64::from((r * 7) % world)), ..RunRank::default() };
        RunData {
            ranks: (0..world).map(rank).collect(),
            stragglers: stragglers.iter().map(|&r| RunStraggler { rank: Some(r), ..RunStraggler::default() }).collect(),
            ..RunData::default()
        }
    }

    #[test]
    fn default_ranks_put_stragglers_and_the_median_first() {
        // 64 ranks, step means 100 + (7r mod 64): the lower median (131 µs) is rank 41.
        let d = run(64, &[57, 60]);
        let r = default_ranks(&d);
        assert_eq!(r.len(), MAX_HELD_RANKS);
        assert_eq!(r, vec![0, 1, 2, 3, 4, 41, 57, 60]);
        assert_eq!(default_ranks(&run(4, &[3])), vec![0, 1, 2, 3], "a small run: every rank");
        assert_eq!(default_ranks(&run(2, &[9])), vec![0, 1], "a straggler not in the run is skipped");
    }

    fn details(id: u32) -> SliceDetails {
        SliceDetails { slice: SliceRef { id, name: "ncclKernel_AllReduce".into(), ..SliceRef::default() }, ..SliceDetails::default() }
    }

    #[test]
    fn hold_search_and_select_follow_their_answers() {
        let mut s = RanksState::default();
        assert_eq!(s.choose(&[3, 1, 3, 0, 2]), vec![0, 1, 2, 3]);
        s.sent_hold(5);
        assert!(s.busy());
        assert!(!s.held(4, vec![], vec![]), "a superseded hold");
        assert!(s.held(5, vec![3, 0, 1], vec![(2, "gone".into())]));
        assert_eq!(s.panels()[2], (TraceRef::Rank(3), "rank 3".into()));
        assert!(!s.busy());

        // Counts are asked one rank after another, then summed.
        let q = s.search_begin(" nccl ").unwrap();
        assert!(matches!(q, Query::Search { ref text, trace: TraceRef::Rank(0), .. } if text == "nccl"));
        s.search_sent(0, 7);
        let first = SliceRef { id: 3, lane: 2, ..SliceRef::default() };
        let hit = |total| SearchHit { text: "nccl".into(), total, hit: Some(first.clone()), rank: Some(1) };
        let (i, q) = s.search_apply(7, &hit(10)).unwrap();
        assert_eq!((i, matches!(q, Query::Search { trace: TraceRef::Rank(1), .. })), (1, true));
        s.search_sent(1, 8);
        assert!(s.search_apply(7, &hit(99)).is_none(), "a stale count");
        s.search_apply(8, &hit(11)).unwrap();
        s.search_sent(2, 9);
        assert_eq!(s.search_apply(9, &hit(12)), None, "the last rank");
        assert_eq!(s.search.total(), (33, true));
        assert_eq!(s.search.hits[2].as_ref().map(|h| h.lane), Some(2));
        assert_eq!(s.other_matches(1), vec![(0, 2, 0), (2, 2, 0)], "Enter scrolls the other panels to theirs");

        // A click: details, then the collective it belongs to.
        assert_eq!(s.select(2, 40), Some(Query::Details { slice: 40, trace: TraceRef::Rank(3) }));
        s.select_sent(11);
        let next = s.select_apply(11, Answer::Details(Some(details(40))));
        assert_eq!(next, SelectNext::Ask(Query::Collective { trace: TraceRef::Rank(3), slice: 40 }));
        assert_eq!(s.selection.as_ref().and_then(|x| x.details.as_ref()).map(|d| d.slice.id), Some(40));
        s.select_sent(12);
        let member = |rank, start_ns, arrival| CollectiveMember { rank, start_ns, end_ns: start_ns + 50, arrival, wait_us: 0.0 };
        let m = CollectiveMatch { members: vec![member(0, 1000, 1), member(3, 900, 0)], ..CollectiveMatch::default() };
        assert_eq!(s.select_apply(12, Answer::Collective(Some(m))), SelectNext::Done);
        assert_eq!(s.band(3), Some((900.0, 950.0)));
        assert_eq!(s.band(1), None);
        s.deselect();
        assert_eq!(s.band(3), None);
        assert!(!s.busy());

        // Enter: rank 0's first match, then past rank 0's last one, rank 1's first.
        let q = s.search_step(true).unwrap();
        assert!(matches!(q, Query::Search { from_slice: None, from_ns: i64::MIN, forward: true, trace: TraceRef::Rank(0), .. }));
        s.select_sent(13);
        let found = SearchHit { text: "nccl".into(), total: 10, hit: Some(SliceRef { id: 5, ..SliceRef::default() }), rank: Some(1) };
        let next = s.select_apply(13, Answer::Search(found));
        assert!(matches!(next, SelectNext::Reveal(0, ref r, Query::Details { slice: 5, trace: TraceRef::Rank(0) }) if r.id == 5));
        s.select_sent(14);
        s.select_apply(14, Answer::Details(Some(details(5))));
        let q = s.search_step(true).unwrap();
        assert!(matches!(q, Query::Search { from_slice: Some(5), trace: TraceRef::Rank(0), .. }));
        s.select_sent(15);
        let none = SearchHit { text: "nccl".into(), total: 10, hit: None, rank: None };
        let next = s.select_apply(15, Answer::Search(none));
        assert!(matches!(next, SelectNext::Ask(Query::Search { from_slice: None, trace: TraceRef::Rank(1), .. })));
    }
}
