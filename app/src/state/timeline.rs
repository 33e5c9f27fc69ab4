//! Timeline view state as a plain struct: layout and tracks, the visible window, vertical
//! scroll, the tile and counter caches, selection, hover, range and search.
//!
//! Inputs: the worker's answers on the layout, tiles, counters, details, hover and search
//! channels ([`TimelineState::apply`], matched to the ids recorded by [`TimelineState::sent`]),
//! and view changes (zoom, pan, scroll, resize, collapse) made by the controller. Outputs: what
//! the canvas draws, and the queries to send ([`TimelineState::tile_request`],
//! [`TimelineState::counter_request`]).
//!
//! Invariants: at most one pending id per channel (latest wins, as in the bridge); `tracks` is
//! rebuilt whenever the layout, the collapsed groups or the counter series change.

use super::tiles::{self, TileRequest, Tiles};
use super::tracks::{self, Track, TrackKind};
use super::viewport::Viewport;
use protocol::{Answer, Channel, CounterSet, Layout, SearchHit, SliceDetails, SliceRef};
use std::sync::Arc;

/// How many draw times the frame statistics keep.
const FRAME_WINDOW: usize = 600;

/// A counter request: the window and bucket count asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CounterRequest {
    /// Window start, ns.
    pub start_ns: i64,
    /// Window end, ns.
    pub end_ns: i64,
    /// Buckets.
    pub buckets: u32,
}

/// The search box's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchState {
    /// Text typed (matches are flagged in tiles once non-empty).
    pub text: String,
    /// The latest answer for `text`.
    pub hit: Option<SearchHit>,
    /// The next answer should move the selection to its match (next / previous was asked).
    pub navigate: bool,
}

/// What the pointer is over.
#[derive(Clone, Debug, PartialEq)]
pub struct Hover {
    /// Pointer position in the canvas, CSS px.
    pub x: f64,
    /// Pointer position in the canvas, CSS px.
    pub y: f64,
    /// Slice under the pointer.
    pub slice: u32,
    /// Its name.
    pub name: String,
    /// Slices the rect stands for.
    pub count: u32,
    /// Lane label.
    pub lane: String,
    /// Details once the hover query answered (duration, self time).
    pub details: Option<SliceDetails>,
}

/// Draw-time statistics for the benchmark.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frames {
    /// Last draw times, ms (a ring of [`FRAME_WINDOW`]).
    pub ms: Vec<f64>,
    /// Frames drawn since load.
    pub count: u64,
    /// Time from the load's end to the first frame with tiles, ms.
    pub first_paint_ms: Option<f64>,
    /// Time from the load's end to the first tiles answer, ms (where first paint time goes).
    pub tiles_ms: Option<f64>,
}

impl Frames {
    /// Records one draw.
    pub fn push(&mut self, ms: f64) {
        if self.ms.len() == FRAME_WINDOW {
            self.ms.remove(0);
        }
        self.ms.push(ms);
        self.count += 1;
    }

    /// The `q` quantile (0..=1) of the recorded draw times.
    pub fn quantile(&self, q: f64) -> f64 {
        let mut v = self.ms.clone();
        v.sort_by(f64::total_cmp);
        let i = ((v.len() as f64 - 1.0) * q.clamp(0.0, 1.0)).round() as usize;
        v.get(i).copied().unwrap_or(0.0)
    }
}

/// Everything the timeline shows.
#[derive(Clone, Debug, Default)]
pub struct TimelineState {
    /// Lanes and steps of the loaded trace.
    pub layout: Option<Arc<Layout>>,
    /// Folded groups, by group index.
    pub collapsed: Vec<bool>,
    /// Groups pinned to the top by the user (indices into the layout's groups), top first.
    pub pinned: Vec<usize>,
    /// Tracks top to bottom.
    pub tracks: Vec<Track>,
    /// The visible window.
    pub view: Viewport,
    /// The time the ruler labels 0, ns: 0 on the main timeline, the aligned step's start in a
    /// stacked compare panel (`state::stack`).
    pub origin_ns: f64,
    /// Vertical scroll of the tracks, CSS px.
    pub scroll_y: f64,
    /// Height of the track area, CSS px.
    pub height: f64,
    /// Tile cache.
    pub tiles: Tiles,
    /// Counter series (the latest window asked for).
    pub counters: Option<CounterSet>,
    /// The selected slice's details.
    pub selected: Option<SliceDetails>,
    /// Bring the next selected slice into view when its details arrive (a selection by id,
    /// whose place is not known before).
    pub reveal_selected: bool,
    /// Draw every dependency arrow of the selected CUDA graph node's launch, not only the
    /// node's own (the details panel's `graph-arrows`; kept across selections).
    pub graph_arrows: bool,
    /// Pointer hover.
    pub hover: Option<Hover>,
    /// Selected time range, ns.
    pub range: Option<(f64, f64)>,
    /// Search box.
    pub search: SearchState,
    /// Slices outlined as evidence of the active or hovered finding.
    pub highlight: Vec<SliceRef>,
    /// The critical path overlay, while its toggle is on and the paths are in.
    pub critical: Option<Arc<super::critical::Overlay>>,
    /// Draw statistics.
    pub frames: Frames,
    /// When the load finished (page clock, ms), for the first-paint figure.
    pub loaded_at: Option<f64>,
    /// Pending query ids by channel, with the tile / counter request they stand for.
    pending: Vec<(Channel, u32)>,
    tiles_pending: Option<TileRequest>,
    counters_pending: Option<CounterRequest>,
    counters_request: Option<CounterRequest>,
}

impl TimelineState {
    /// A new load started: forget everything.
    pub fn reset(&mut self) {
        let (width, height) = (self.view.width, self.height);
        *self = Self::default();
        self.view.resize(width);
        self.height = height;
    }

    /// Channels with an unanswered query.
    pub fn pending_channels(&self) -> Vec<String> {
        self.pending.iter().map(|(c, _)| format!("{c:?}")).collect()
    }

    /// True while any timeline query is unanswered.
    pub fn busy(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Records that query `id` was sent on `channel`.
    pub fn sent(&mut self, channel: Channel, id: u32) {
        self.pending.retain(|&(c, _)| c != channel);
        self.pending.push((channel, id));
    }

    /// Records a tile request sent as `id`.
    pub fn sent_tiles(&mut self, id: u32, request: TileRequest) {
        self.sent(Channel::Tiles, id);
        self.tiles_pending = Some(request);
    }

    /// Records a counter request sent as `id`.
    pub fn sent_counters(&mut self, id: u32, request: CounterRequest) {
        self.sent(Channel::Counters, id);
        self.counters_pending = Some(request);
    }

    /// True when `id` is awaited here.
    pub fn awaits(&self, id: u32) -> bool {
        self.pending.iter().any(|&(_, p)| p == id)
    }

    /// Applies the answer to query `id` (with the tile words); false when it is not awaited.
    pub fn apply(&mut self, id: u32, answer: Answer, words: Option<Vec<u32>>) -> bool {
        let Some(k) = self.pending.iter().position(|&(_, p)| p == id) else {
            return false;
        };
        let (channel, _) = self.pending.remove(k);
        match (channel, answer) {
            (Channel::Layout, Answer::Layout(layout)) => self.set_layout(layout),
            (Channel::Tiles, Answer::Tiles(set)) => {
                let request = self.tiles_pending.take();
                self.tiles = Tiles::new(set, words.unwrap_or_default(), request);
            }
            (Channel::Counters, Answer::Counters(set)) => {
                self.counters_request = self.counters_pending.take();
                self.counters = Some(set);
                self.rebuild_tracks();
            }
            (Channel::Details, Answer::Details(d)) => {
                if std::mem::take(&mut self.reveal_selected) {
                    if let Some(r) = d.as_ref().map(|d| &d.slice) {
                        self.reveal(r.lane, r.row, r.start_ns as f64, r.dur_ns as f64);
                    }
                }
                self.selected = d;
            }
            (Channel::Hover, Answer::Details(d)) => {
                if let Some(h) = self.hover.as_mut() {
                    if d.as_ref().is_some_and(|d| d.slice.id == h.slice) {
                        h.details = d;
                    }
                }
            }
            (Channel::Search, Answer::Search(hit)) if hit.text == self.search.text.trim() => {
                self.search.hit = Some(hit);
            }
            _ => {}
        }
        true
    }

    /// A query failed: stop waiting for it (a failed tile or counter request is asked again
    /// on the next view change).
    pub fn failed(&mut self, id: u32) -> bool {
        let Some(k) = self.pending.iter().position(|&(_, p)| p == id) else {
            return false;
        };
        match self.pending.remove(k).0 {
            Channel::Tiles => self.tiles_pending = None,
            Channel::Counters => self.counters_pending = None,
            _ => {}
        }
        true
    }

    /// The match to move to, once, after a next / previous answer arrived.
    pub fn take_navigation(&mut self) -> Option<SliceRef> {
        if !self.search.navigate {
            return None;
        }
        let hit = self.search.hit.as_ref()?.hit.clone()?;
        self.search.navigate = false;
        Some(hit)
    }

    /// The loaded trace's layout: groups unfolded unless it folds them (a stacked rank's
    /// other CPU threads), the whole trace in view.
    pub fn set_layout(&mut self, layout: Layout) {
        self.collapsed = layout.groups.iter().map(|g| g.folded).collect();
        self.pinned.clear();
        self.view = Viewport::new(layout.end_ns as f64, self.view.width);
        self.layout = Some(Arc::new(layout));
        self.scroll_y = 0.0;
        self.rebuild_tracks();
    }

    /// Folds or unfolds group `g`.
    pub fn toggle_group(&mut self, g: usize) {
        if let Some(c) = self.collapsed.get_mut(g) {
            *c = !*c;
            self.rebuild_tracks();
        }
    }

    /// Pins group `g` to the top (below the groups pinned before it), or unpins it.
    pub fn toggle_pin(&mut self, g: usize) {
        let known = self.layout.as_ref().is_some_and(|l| g < l.groups.len());
        if let Some(k) = self.pinned.iter().position(|&p| p == g) {
            self.pinned.remove(k);
        } else if known {
            self.pinned.push(g);
        }
        self.rebuild_tracks();
    }

    /// The pinned groups' names, top first (what a share link keeps).
    pub fn pinned_names(&self) -> Vec<String> {
        let Some(layout) = &self.layout else { return Vec::new() };
        self.pinned.iter().filter_map(|&g| layout.groups.get(g).map(|x| x.name.clone())).collect()
    }

    /// Pins the groups named `names`, in that order (a share link's; unknown names are dropped).
    pub fn pin_names(&mut self, names: &[String]) {
        let Some(layout) = &self.layout else { return };
        let mut pinned: Vec<usize> = Vec::new();
        for name in names {
            let g = layout.groups.iter().position(|x| &x.name == name);
            pinned.extend(g.filter(|g| !pinned.contains(g)));
        }
        self.pinned = pinned;
        self.rebuild_tracks();
    }

    fn rebuild_tracks(&mut self) {
        if let Some(layout) = &self.layout {
            self.tracks = tracks::build(layout, &self.collapsed, &self.pinned, self.counters.as_ref());
            self.scroll_by(0.0);
        }
    }

    /// Scrolls the tracks by `dy` CSS px, within the content.
    pub fn scroll_by(&mut self, dy: f64) {
        let max = (tracks::content_height(&self.tracks) - self.height).max(0.0);
        self.scroll_y = (self.scroll_y + dy).clamp(0.0, max);
    }

    /// Lanes whose tracks are on screen or within one screen of it.
    pub fn nearby_lanes(&self) -> Vec<u32> {
        self.lanes_between(self.scroll_y - self.height, self.scroll_y + 2.0 * self.height)
    }

    /// Lanes whose tracks are on screen.
    fn visible_lanes(&self) -> Vec<u32> {
        self.lanes_between(self.scroll_y, self.scroll_y + self.height)
    }

    /// Lanes whose tracks intersect content heights `[top, bottom]`.
    fn lanes_between(&self, top: f64, bottom: f64) -> Vec<u32> {
        self.tracks
            .iter()
            .filter(|t| t.y + t.height >= top && t.y <= bottom)
            .filter_map(|t| match t.kind {
                TrackKind::Lane { lane, .. } => Some(lane),
                _ => None,
            })
            .collect()
    }

    fn search_text(&self) -> Option<String> {
        Some(self.search.text.trim().to_owned()).filter(|t| !t.is_empty())
    }

    /// The tile request to send now, if the cached and pending tiles cannot draw the view.
    pub fn tile_request(&self) -> Option<TileRequest> {
        self.layout.as_ref()?;
        let v = &self.view;
        let want = tiles::visible(self.visible_lanes(), v.start, v.end, v.ns_per_px(), self.search_text());
        let covered = |r: &Option<TileRequest>| r.as_ref().is_some_and(|r| r.covers(&want));
        if covered(&self.tiles.request) || covered(&self.tiles_pending) {
            return None;
        }
        Some(tiles::request(self.nearby_lanes(), v.start, v.end, v.ns_per_px(), self.search_text()))
    }

    /// True once the first tiles of the load are in (work that must not delay the first paint
    /// waits for this).
    pub fn has_tiles(&self) -> bool {
        self.tiles.request.is_some()
    }

    /// The counter request to send now, if the series held do not cover the view at about its
    /// resolution. None before the first tiles: on a large trace the first counter answer builds
    /// the GPU index, and the worker answers in order.
    pub fn counter_request(&self) -> Option<CounterRequest> {
        let layout = self.layout.as_ref()?;
        if !self.has_tiles() || !layout.groups.iter().any(|g| g.kind == "gpu") {
            return None;
        }
        let v = &self.view;
        let ok = |r: &Option<CounterRequest>| {
            r.is_some_and(|r| {
                let bucket = (r.end_ns - r.start_ns) as f64 / f64::from(r.buckets.max(1));
                r.start_ns as f64 <= v.start.max(0.0)
                    && r.end_ns as f64 >= v.end.min(layout.end_ns as f64)
                    && bucket <= v.ns_per_px() * 2.0
                    && bucket >= v.ns_per_px() / 2.0
            })
        };
        if ok(&self.counters_request) || ok(&self.counters_pending) {
            return None;
        }
        let span = v.span();
        let start = (v.start - span).max(0.0);
        let end = (v.end + span).min(layout.end_ns as f64).max(start + 1.0);
        let buckets = ((end - start) / v.ns_per_px()).ceil().clamp(1.0, 4096.0) as u32;
        Some(CounterRequest {
            start_ns: start.floor() as i64,
            end_ns: end.ceil() as i64,
            buckets,
        })
    }

    /// The pointer is at (`x`, `y`) of the drawing area: sets the hover to the rect there (or
    /// none); returns the slice whose details to ask for when the hovered slice changed.
    pub fn hover_at(&mut self, x: f64, y: f64) -> Option<u32> {
        let found = tracks::track_at(&self.tracks, y + self.scroll_y).and_then(|track| {
            let TrackKind::Lane { lane, .. } = track.kind else {
                return None;
            };
            let row = tracks::row_at(track, y + self.scroll_y)?;
            let r = self.tiles.hit(lane, row, self.view.ns_at(x), self.view.ns_per_px())?;
            Some((r, track.label.clone()))
        });
        let Some((r, lane)) = found else {
            self.hover = None;
            return None;
        };
        let same = self.hover.as_ref().is_some_and(|h| h.slice == r.slice);
        let details = self.hover.take().filter(|_| same).and_then(|h| h.details);
        self.hover = Some(Hover {
            x,
            y,
            slice: r.slice,
            name: self.tiles.name(r.name).to_owned(),
            count: r.count,
            lane,
            details,
        });
        (!same).then_some(r.slice)
    }

    /// Stops waiting for the query pending on `channel`, if any (its reply will be ignored).
    pub fn forget(&mut self, channel: Channel) {
        if let Some(&(_, id)) = self.pending.iter().find(|&&(c, _)| c == channel) {
            self.failed(id);
        }
    }

    /// The lane track showing row `row` of `lane` (a thread's Python stack is a track of its own).
    pub fn lane_track(&self, lane: u32, row: u16) -> Option<&Track> {
        self.tracks.iter().find(|t| tracks::shows(t, lane, row))
    }

    /// Brings slice (`lane`, `row`, `[start, start + dur]`) into view ([`Viewport::bring`]),
    /// unfolds its group and scrolls its row on screen.
    pub fn reveal(&mut self, lane: u32, row: u16, start: f64, dur: f64) {
        self.view.bring(start, start + dur);
        self.reveal_row(lane, row);
    }

    /// Unfolds the group of row `row` of `lane` and scrolls it on screen, keeping the window.
    pub fn reveal_row(&mut self, lane: u32, row: u16) {
        let group = self.layout.as_ref().and_then(|l| {
            l.groups.iter().position(|g| g.lanes.iter().any(|x| x.lane == lane && x.shows(row)))
        });
        if let Some(g) = group.filter(|&g| self.collapsed.get(g) == Some(&true)) {
            self.toggle_group(g);
        }
        if let Some(t) = self.lane_track(lane, row) {
            let y = tracks::row_y(t, row);
            if y < self.scroll_y || y + tracks::ROW_H > self.scroll_y + self.height {
                self.scroll_by(y - self.scroll_y - self.height / 3.0);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use protocol::{LaneGroup, LaneInfo, TileSet};

    fn loaded() -> TimelineState {
        let mut t = TimelineState::default();
        t.view.resize(1000.0);
        t.height = 400.0;
        let layout = Layout {
            end_ns: 1_000_000,
            groups: vec![LaneGroup {
                name: "gpu".into(),
                kind: "gpu".into(),
                device: Some(0),
                folded: false,
                lanes: (0..40)
                    .map(|lane| LaneInfo {
                        lane,
                        name: format!("s{lane}"),
                        rows: 1,
                        first_row: 0,
                        slices: 1,
                    })
                    .collect(),
            }],
            steps: vec![],
            focus: None,
            origin_ns: 0,
        };
        t.set_layout(layout);
        t
    }

    #[test]
    fn tiles_are_requested_once_per_covering_window() {
        let mut t = loaded();
        let r = t.tile_request().unwrap();
        // Lanes of 24 px under a 22 px header, down to two screens below the top.
        assert_eq!(r.lanes.len(), ((800.0 - 22.0) / 24.0) as usize + 1);
        t.sent_tiles(2, r.clone());
        assert!(t.tile_request().is_none(), "pending request covers the view");
        assert!(t.busy());
        let set = TileSet {
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            resolution_ns: r.resolution_ns,
            lanes: vec![],
            names: vec![],
        };
        assert!(t.apply(2, Answer::Tiles(set), Some(vec![])));
        assert!(!t.busy());
        assert!(t.tile_request().is_none());
        t.view.pan_px(300.0);
        assert!(t.tile_request().is_none(), "a pan inside the fetched window needs nothing");
        t.view.zoom(0.4, 500.0);
        assert!(t.tile_request().is_some(), "zooming in changes the resolution");
        t.view.zoom(2.5, 500.0);
        t.search.text = "mm".into();
        assert!(t.tile_request().is_some(), "a new search needs flagged tiles");
    }

    #[test]
    fn pins_are_named_for_the_link_and_restored_by_name() {
        let mut t = loaded();
        let mut layout = (**t.layout.as_ref().unwrap()).clone();
        let mut cpu = layout.groups[0].clone();
        cpu.name = "cpu".into();
        layout.groups.push(cpu);
        t.set_layout(layout);
        t.toggle_pin(1);
        assert_eq!(t.pinned_names(), vec!["cpu".to_owned()]);
        assert_eq!(t.tracks[0].group, 1, "the pinned group is drawn first");
        t.toggle_pin(1);
        assert!(t.pinned.is_empty());
        t.pin_names(&["nope".into(), "cpu".into(), "gpu".into(), "cpu".into()]);
        assert_eq!(t.pinned, vec![1, 0]);
        t.toggle_pin(7);
        assert_eq!(t.pinned, vec![1, 0], "no such group");
    }

    #[test]
    fn stale_answers_are_ignored_and_reveal_scrolls() {
        let mut t = loaded();
        t.sent(Channel::Details, 5);
        t.sent(Channel::Details, 6);
        assert!(!t.apply(5, Answer::Details(None), None));
        assert!(t.apply(6, Answer::Details(None), None));
        t.reveal(39, 0, 500_000.0, 10.0);
        let track = t.lane_track(39, 0).unwrap().clone();
        assert!(track.y >= t.scroll_y && track.y <= t.scroll_y + t.height);
        assert!(t.view.start <= 500_000.0 && t.view.end >= 500_010.0);
    }

    #[test]
    fn a_selection_by_id_is_revealed_when_its_details_arrive() {
        let mut t = loaded();
        // Lane 39 of 40 sits below the 400 px the lanes have.
        let at = SliceRef { id: 3, lane: 39, row: 0, start_ns: 500_000, dur_ns: 10, ..SliceRef::default() };
        let details = |slice: &SliceRef| Answer::Details(Some(SliceDetails { slice: slice.clone(), ..SliceDetails::default() }));
        let in_view = |t: &TimelineState| t.lane_track(39, 0).is_some_and(|tr| tr.y >= t.scroll_y && tr.y <= t.scroll_y + t.height);
        // Near miss: a plain selection leaves the view where it is.
        t.sent(Channel::Details, 7);
        assert!(t.apply(7, details(&at), None));
        assert!(!in_view(&t));
        t.reveal_selected = true;
        t.sent(Channel::Details, 8);
        assert!(t.apply(8, details(&at), None));
        assert!(in_view(&t));
        assert!(!t.reveal_selected, "once");
    }

    #[test]
    fn frame_quantiles() {
        let mut f = Frames::default();
        for i in 1..=100 {
            f.push(f64::from(i));
        }
        assert_eq!(f.quantile(0.95), 95.0);
        assert_eq!(f.count, 100);
    }
}
