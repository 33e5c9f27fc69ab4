//! Stacked timelines as a plain struct: N panels one above the other (the Compare tab's baseline
//! over its candidate; the Run tab's ranks), each with time 0 at its own origin, one shared
//! time scale and window.
//!
//! Each panel is a [`TimelineState`] (layout, tracks, tile cache and request policy, hover):
//! the painter, the lane labels and the tile fetching of the main timeline serve it unchanged.
//! Its view is in its own trace's ns; every view derives from one *relative* window, ns from
//! the panels' time 0:
//!
//! ```text
//! panel view   = [rel.0 + origin, rel.1 + origin]   origin = the panel layout's `origin_ns`
//!                                                   (compare: its focus step's start; a run's
//!                                                   rank: where the run's axis starts in it)
//! rel window   kept as a Viewport over u = r - lo,  lo = -max(origin), hi = max(end - origin),
//!              so zoom / pan / clamping are the main timeline's (`viewport`), over all traces
//! ```
//!
//! Same width, same ns per pixel, same relative window: a step that took 38 % less ends 38 %
//! further left. Inputs: [`StackState::open`] (the layout queries to send), the worker's
//! answers per panel, view changes (zoom, pan, resize, a window from a share link). Outputs:
//! the panel states to draw, the tile queries to send ([`StackState::tile_requests`]).
//!
//! Invariants: the panels' `view`s are written only by [`StackState::sync`], after every change
//! of the relative window or the width; a panel's pending ids are its own (the controller sends
//! layout and tiles on one bridge channel per panel, [`StackState::channel`], so a new layout
//! resets the panel first). Two stacks never share a channel: each has its own `channel_base`.

use super::tiles::TileRequest;
use super::timeline::TimelineState;
use super::viewport::Viewport;
use protocol::{Align, Answer, Channel, Query, StepMark, TraceRef};

/// Which stacked view: the Compare tab's or the Run tab's ranks timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackId {
    /// Baseline over candidate (`Channel::Stack(0..2)`).
    Compare,
    /// The run's ranks (`Channel::Stack(RANKS_CHANNEL_BASE..)`).
    Ranks,
}

/// The first panel channel of the ranks timeline: after the compare view's two, with room to
/// spare, so neither view's latest-wins stream supersedes the other's.
pub const RANKS_CHANNEL_BASE: u8 = 8;

/// A compare panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// The baseline, drawn above.
    Base = 0,
    /// The candidate (the loaded trace), drawn below.
    Cand = 1,
}

impl Pane {
    /// Both panels, top to bottom.
    pub const BOTH: [Pane; 2] = [Pane::Base, Pane::Cand];

    /// The trace the panel's queries address.
    pub fn trace(self) -> TraceRef {
        match self {
            Pane::Base => TraceRef::Baseline,
            Pane::Cand => TraceRef::Current,
        }
    }

    /// `base` or `cand` (test ids, `window.kinetoscope.compare.stack` keys).
    pub fn as_str(self) -> &'static str {
        match self {
            Pane::Base => "base",
            Pane::Cand => "cand",
        }
    }

    /// The panel's index in the stack.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One panel: the trace its queries address, its title, its timeline and the band it marks
/// (a collective instance's kernel, ns in its trace).
#[derive(Clone, Debug, Default)]
pub struct Panel {
    /// The trace its queries address.
    pub trace: TraceRef,
    /// Its title (`rank 3`, `Baseline`).
    pub label: String,
    /// Its lanes, tiles, view, hover and selection.
    pub timeline: TimelineState,
    /// A time span to mark across its lanes, ns in its trace.
    pub band: Option<(f64, f64)>,
}

/// The panels and the shared relative window.
#[derive(Clone, Debug, Default)]
pub struct StackState {
    /// Panels, top to bottom.
    pub panels: Vec<Panel>,
    /// Where time 0 is (`None`: not opened).
    pub align: Option<Align>,
    /// The relative window, over `u = r - lo` (see the module docs).
    rel: Viewport,
    /// `-max(origin)`: the earliest relative time of any trace.
    lo: f64,
    /// A relative window to show once every layout arrived (share links).
    wanted: Option<(f64, f64)>,
    /// The layouts were asked for.
    pub opened: bool,
    /// The drawing area has been measured (tiles are asked only then).
    pub sized: bool,
    /// Height of each panel's tracks, CSS px.
    height: f64,
    /// Keys and the wheel act on the stack (the pointer went over it last).
    pub active: bool,
    /// Pointer x over a panel's drawing area (zoom anchor).
    pub anchor: Option<f64>,
    /// Panel paints since the page started (tests wait for a frame before a screenshot).
    pub frames: u64,
    /// The bridge channel of panel 0; panel i uses `Stack(channel_base + i)`.
    pub channel_base: u8,
}

impl StackState {
    /// An empty stack whose panels use channels from `Stack(channel_base)` on.
    pub fn new(channel_base: u8) -> Self {
        StackState { channel_base, ..Self::default() }
    }

    /// Starts (again) with `panels` (trace, title) aligned by `align`, keeping the size and the
    /// window asked for; returns the layout queries to send, by panel index.
    pub fn open(&mut self, panels: Vec<(TraceRef, String)>, align: Align) -> Vec<(usize, Query)> {
        let height = self.height.max(1.0);
        self.panels = panels
            .into_iter()
            .map(|(trace, label)| {
                let mut timeline = TimelineState::default();
                timeline.view.resize(self.rel.width);
                timeline.height = height;
                Panel { trace, label, timeline, band: None }
            })
            .collect();
        self.align = Some(align);
        self.opened = true;
        self.panels.iter().enumerate().map(|(i, p)| (i, Query::Layout { trace: p.trace, align })).collect()
    }

    /// The compare view at step `step` (`None`: the first common step): baseline over candidate.
    pub fn open_compare(&mut self, step: Option<u64>) -> Vec<(usize, Query)> {
        let panels = Pane::BOTH.map(|p| (p.trace(), p.as_str().to_owned())).to_vec();
        self.open(panels, step.map_or(Align::First, Align::Step))
    }

    /// The step number asked for, when aligned at one.
    pub fn step(&self) -> Option<u64> {
        match self.align {
            Some(Align::Step(n)) => Some(n),
            _ => None,
        }
    }

    /// Forgets everything but the size and the channels (the view ended or a new trace loads).
    pub fn clear(&mut self) {
        *self = Self {
            sized: self.sized,
            frames: self.frames,
            height: self.height,
            channel_base: self.channel_base,
            rel: Viewport::new(Viewport::default().trace_end, self.rel.width),
            ..Self::default()
        };
    }

    /// The bridge channel of panel `i`'s layout and tiles.
    pub fn channel(&self, i: usize) -> Channel {
        let i = u8::try_from(i).unwrap_or(u8::MAX - self.channel_base);
        Channel::Stack(self.channel_base.saturating_add(i))
    }

    /// Panel `i`'s timeline.
    pub fn pane(&self, i: usize) -> Option<&TimelineState> {
        self.panels.get(i).map(|p| &p.timeline)
    }

    /// Panel `i`'s timeline, mutably.
    pub fn pane_mut(&mut self, i: usize) -> Option<&mut TimelineState> {
        self.panels.get_mut(i).map(|p| &mut p.timeline)
    }

    /// The timelines, top to bottom.
    pub fn timelines(&self) -> impl Iterator<Item = &TimelineState> {
        self.panels.iter().map(|p| &p.timeline)
    }

    /// The panel awaiting query `id`.
    pub fn awaiting(&self, id: u32) -> Option<usize> {
        self.timelines().position(|t| t.awaits(id))
    }

    /// True while any panel waits for an answer.
    pub fn busy(&self) -> bool {
        self.timelines().any(TimelineState::busy)
    }

    /// Every panel's layout is in.
    pub fn ready(&self) -> bool {
        !self.panels.is_empty() && self.timelines().all(|t| t.layout.is_some())
    }

    /// Applies the answer to query `id`; once every layout is in, aligns the views.
    pub fn apply(&mut self, id: u32, answer: Answer, words: Option<Vec<u32>>) -> bool {
        let Some(i) = self.awaiting(id) else { return false };
        let layout = matches!(answer, Answer::Layout(_));
        if let Some(t) = self.pane_mut(i) {
            t.apply(id, answer, words);
        }
        if layout && self.ready() {
            self.align();
        }
        true
    }

    /// The focus step of panel `i` (the step its time 0 is), if its trace has steps.
    pub fn focus(&self, i: usize) -> Option<&StepMark> {
        self.pane(i)?.layout.as_ref()?.focus.as_ref()
    }

    /// Step numbers every panel's trace has, in the first panel's order (the step picker's
    /// options).
    pub fn common_steps(&self) -> Vec<u64> {
        let steps = |t: &TimelineState| {
            t.layout.as_ref().map(|l| l.steps.iter().map(|s| s.number).collect::<Vec<_>>()).unwrap_or_default()
        };
        let mut all = self.timelines().map(steps);
        let first = all.next().unwrap_or_default();
        let rest: Vec<Vec<u64>> = all.collect();
        first.into_iter().filter(|n| rest.iter().all(|r| r.contains(n))).collect()
    }

    /// Every layout is in: sets the origins, the relative domain and the window (the one asked
    /// for, else [`StackState::reset`]).
    fn align(&mut self) {
        for p in &mut self.panels {
            p.timeline.origin_ns = p.timeline.layout.as_ref().map_or(0.0, |l| l.origin_ns as f64);
        }
        let end = |t: &TimelineState| t.layout.as_ref().map_or(1.0, |l| l.end_ns as f64) - t.origin_ns;
        self.lo = -self.timelines().map(|t| t.origin_ns).fold(f64::MIN, f64::max);
        let hi = self.timelines().map(end).fold(1.0, f64::max);
        self.rel = Viewport::new((hi - self.lo).max(1.0), self.rel.width);
        match self.wanted.take() {
            Some(w) => self.set_window(w.0, w.1),
            None => self.reset(),
        }
    }

    /// The relative window shown, ns from time 0.
    pub fn window(&self) -> (f64, f64) {
        (self.rel.start + self.lo, self.rel.end + self.lo)
    }

    /// Width of the drawing area, CSS px.
    pub fn width(&self) -> f64 {
        self.rel.width
    }

    /// Aligned at a step: shows the longest focus step (each trace whole when none has one);
    /// on a run's clock: shows every trace whole.
    pub fn reset(&mut self) {
        let at_step = matches!(self.align, Some(Align::Step(_) | Align::First));
        let longest = (0..self.panels.len())
            .filter_map(|i| self.focus(i).map(|f| (f.end_ns - f.start_ns) as f64))
            .reduce(f64::max)
            .filter(|_| at_step);
        match longest {
            Some(d) => self.rel.show(-self.lo, d.max(1.0) - self.lo),
            None => self.rel.reset(),
        }
        self.sync();
    }

    /// Shows relative window `[a, b]` (a share link's); before the layouts arrive, once they do.
    pub fn set_window(&mut self, a: f64, b: f64) {
        if !self.ready() {
            self.wanted = Some((a, b));
            return;
        }
        self.rel.set(a - self.lo, b - self.lo);
        self.sync();
    }

    /// Zooms every panel by `factor` (< 1: in) around pixel `anchor`.
    pub fn zoom(&mut self, factor: f64, anchor: f64) {
        self.rel.zoom(factor, anchor);
        self.sync();
    }

    /// Pans every panel by `dx` pixels.
    pub fn pan_px(&mut self, dx: f64) {
        self.rel.pan_px(dx);
        self.sync();
    }

    /// The drawing area is `width` wide, each panel's tracks `height` high.
    pub fn resize(&mut self, width: f64, height: f64) {
        self.rel.resize(width);
        self.sized = true;
        self.height = height.max(1.0);
        for t in self.panels.iter_mut().map(|p| &mut p.timeline) {
            t.height = height.max(1.0);
            t.scroll_by(0.0);
        }
        self.sync();
    }

    /// Brings slice (`lane`, `row`, `[start_ns, start_ns + dur_ns]`) of panel `i` into view
    /// (its trace's ns): moves the shared window as the main timeline's reveal moves its view
    /// ([`Viewport::bring`]), then unfolds and scrolls the panel.
    pub fn reveal(&mut self, i: usize, lane: u32, row: u16, start_ns: f64, dur_ns: f64) {
        let Some(origin) = self.pane(i).map(|t| t.origin_ns) else { return };
        let (a, b) = (start_ns - origin, start_ns + dur_ns - origin);
        self.rel.bring(a - self.lo, b - self.lo);
        if let Some(t) = self.pane_mut(i) {
            t.reveal_row(lane, row);
        }
        self.sync();
    }

    /// Unfolds and scrolls each panel `i` to row (`lane`, `row`), keeping the shared window
    /// (every rank's own match of a search).
    pub fn reveal_rows(&mut self, rows: impl IntoIterator<Item = (usize, u32, u16)>) {
        for (i, lane, row) in rows {
            if let Some(t) = self.pane_mut(i) {
                t.reveal_row(lane, row);
            }
        }
    }

    /// Writes the panels' views from the relative window.
    fn sync(&mut self) {
        let (a, b) = self.window();
        let width = self.rel.width;
        for t in self.panels.iter_mut().map(|p| &mut p.timeline) {
            let end = t.layout.as_ref().map_or(1.0, |l| l.end_ns as f64);
            t.view = Viewport {
                start: a + t.origin_ns,
                end: b + t.origin_ns,
                width,
                trace_end: end.max(1.0),
            };
        }
    }

    /// The tile requests the panels need now, with the panel's index and trace (none before
    /// the area is measured and every layout is in: a view is not aligned before).
    pub fn tile_requests(&self) -> Vec<(usize, TraceRef, TileRequest)> {
        if !self.sized || !self.ready() {
            return Vec::new();
        }
        self.panels
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((i, p.trace, p.timeline.tile_request()?)))
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use protocol::{LaneGroup, LaneInfo, Layout, TileSet};

    /// A layout ending at `end_ns` whose time 0 is `origin_ns`, with a focus step.
    fn layout_at(end_ns: i64, origin_ns: i64, focus: Option<(u64, i64, i64)>) -> Layout {
        let focus = focus.map(|(number, start_ns, end_ns)| StepMark { number, start_ns, end_ns });
        Layout {
            end_ns,
            groups: vec![LaneGroup {
                name: "gpu".into(),
                kind: "gpu".into(),
                device: Some(0),
                lanes: vec![LaneInfo { lane: 3, name: "s".into(), rows: 2, first_row: 0, slices: 9 }],
                folded: false,
            }],
            steps: focus.iter().cloned().collect(),
            focus,
            origin_ns,
        }
    }

    /// A compare layout: the worker sets its origin at the focus step's start.
    fn layout(end_ns: i64, focus: Option<(u64, i64, i64)>) -> Layout {
        layout_at(end_ns, focus.map_or(0, |f| f.1), focus)
    }

    fn view(s: &StackState, i: usize) -> Viewport {
        s.pane(i).unwrap().view
    }

    /// A compare stack whose layout queries were sent as ids 1 and 2 and answered.
    fn opened(base: Layout, cand: Layout) -> StackState {
        let mut s = StackState::default();
        s.resize(1000.0, 200.0);
        let queries = s.open_compare(None);
        assert_eq!(queries[0].1, Query::Layout { trace: TraceRef::Baseline, align: Align::First });
        assert_eq!(queries[1].1, Query::Layout { trace: TraceRef::Current, align: Align::First });
        s.pane_mut(0).unwrap().sent(Channel::Layout, 1);
        s.pane_mut(1).unwrap().sent(Channel::Layout, 2);
        assert!(s.apply(2, Answer::Layout(cand), None));
        assert!(s.apply(1, Answer::Layout(base), None));
        s
    }

    #[test]
    fn panels_align_at_their_step_and_share_the_scale() {
        // Baseline step 10 at 118 µs lasting 14.5 ms; candidate step 10 at 147 µs lasting 9 ms.
        let mut s = opened(layout(16_000_000, Some((10, 118_000, 14_573_000))), layout(22_000_000, Some((10, 147_000, 9_147_000))));
        let (b, c) = (view(&s, 0), view(&s, 1));
        assert_eq!(s.pane(Pane::Base.index()).unwrap().origin_ns, 118_000.0);
        assert_eq!(b.start - 118_000.0, c.start - 147_000.0, "same relative window");
        assert_eq!(b.ns_per_px(), c.ns_per_px(), "same scale");
        let (a, z) = s.window();
        assert!(a < 0.0 && z > 14_455_000.0, "the longer step shows whole: {a} {z}");
        // The candidate's step end sits 38 % further left.
        let (xb, xc) = (b.x_of(14_573_000.0) - b.x_of(118_000.0), c.x_of(9_147_000.0) - c.x_of(147_000.0));
        assert!((xc / xb - 9.0 / 14.455).abs() < 1e-9);
        s.zoom(0.5, 250.0);
        s.pan_px(40.0);
        let (b, c) = (view(&s, 0), view(&s, 1));
        assert_eq!((b.start - 118_000.0, b.end - 118_000.0), (c.start - 147_000.0, c.end - 147_000.0));
        assert_eq!(s.window(), (b.start - 118_000.0, b.end - 118_000.0));
        assert_eq!(s.common_steps(), vec![10]);
        assert_eq!((s.channel(0), s.channel(1)), (Channel::Stack(0), Channel::Stack(1)));
    }

    #[test]
    fn a_linked_window_waits_for_every_layout_and_tiles_follow() {
        let mut s = StackState::default();
        s.set_window(-1000.0, 5000.0);
        s.resize(800.0, 100.0);
        s.open_compare(Some(4));
        assert_eq!(s.step(), Some(4));
        s.pane_mut(0).unwrap().sent(Channel::Layout, 1);
        s.pane_mut(1).unwrap().sent(Channel::Layout, 2);
        assert!(s.tile_requests().is_empty(), "no layout yet");
        assert!(s.apply(1, Answer::Layout(layout(50_000, Some((4, 20_000, 30_000)))), None));
        assert!(s.busy());
        assert!(s.apply(2, Answer::Layout(layout(90_000, None)), None));
        assert!(!s.busy());
        assert_eq!(s.window(), (-1000.0, 5000.0));
        assert_eq!(view(&s, 1).start, -1000.0, "no step: origin 0");
        let asks = s.tile_requests();
        assert_eq!(asks.len(), 2);
        let (pane, trace, r) = &asks[0];
        assert_eq!((*pane, *trace, r.lanes.clone()), (0, TraceRef::Baseline, vec![3]));
        assert!(r.start_ns <= 19_000 && r.end_ns >= 25_000);
        s.pane_mut(0).unwrap().sent_tiles(5, r.clone());
        let set = TileSet { start_ns: r.start_ns, end_ns: r.end_ns, resolution_ns: r.resolution_ns, ..TileSet::default() };
        assert!(s.apply(5, Answer::Tiles(set), Some(vec![])));
        assert_eq!(s.tile_requests().len(), 1, "only the candidate still lacks tiles");
        s.clear();
        assert!(!s.opened && s.sized && s.pane(0).is_none());
    }

    #[test]
    fn ranks_on_the_run_clock_share_one_window_from_their_origins() {
        // Four ranks on the run's clock: rank 0 started first (origin 0), the others later by
        // 5, 12 and 3 µs (their origins are where the run's axis starts in their own time).
        let mut s = StackState::new(RANKS_CHANNEL_BASE);
        s.resize(1000.0, 150.0);
        let origins = [0, -5_000, -12_000, -3_000];
        let panels = (0..4).map(|r| (TraceRef::Rank(r), format!("rank {r}"))).collect();
        let queries = s.open(panels, Align::Recorded);
        assert_eq!(queries.len(), 4);
        assert_eq!(queries[2].1, Query::Layout { trace: TraceRef::Rank(2), align: Align::Recorded });
        for (i, _) in &queries {
            s.pane_mut(*i).unwrap().sent(Channel::Layout, 10 + *i as u32);
        }
        assert_eq!(s.channel(3), Channel::Stack(RANKS_CHANNEL_BASE + 3));
        for (i, o) in origins.iter().enumerate() {
            // Each has a first step, which a run clock does not zoom to.
            let l = layout_at(1_000_000, *o, Some((1, 100_000, 200_000)));
            assert!(s.apply(10 + i as u32, Answer::Layout(l), None));
        }
        assert!(s.ready() && !s.busy());
        let (a, b) = s.window();
        let whole = (a, b);
        // Every trace whole, with the main timeline's small margins: from the earliest rank's
        // start (time 0) to the latest rank's end.
        assert!(a < 0.0 && a > -50_000.0, "{a}");
        assert!(b > 1_012_000.0 && b < 1_062_000.0, "{b}");
        for (i, o) in origins.iter().enumerate() {
            let v = view(&s, i);
            assert_eq!(s.pane(i).unwrap().origin_ns, *o as f64);
            assert_eq!((v.start - *o as f64, v.end - *o as f64), (a, b), "rank {i} shares the window");
            assert_eq!(v.ns_per_px(), view(&s, 0).ns_per_px(), "one scale");
        }
        // The same instant of the run's clock is at the same x on every rank.
        let x = |i: usize, run_ns: f64| view(&s, i).x_of(run_ns + origins[i] as f64);
        assert!((x(2, 400_000.0) - x(1, 400_000.0)).abs() < 1e-9);
        s.zoom(0.25, 500.0);
        s.pan_px(-30.0);
        let w = s.window();
        for (i, o) in origins.iter().enumerate() {
            assert_eq!(view(&s, i).start - *o as f64, w.0);
        }
        assert_eq!(s.common_steps(), vec![1]);
        assert_eq!(s.tile_requests().len(), 4);
        s.reset();
        assert_eq!(s.window(), whole, "reset shows every rank whole");
        // A match on rank 2 off screen: the shared window moves to it, every rank follows.
        s.zoom(0.01, 0.0);
        s.reveal(2, 3, 1, 900_000.0, 1_000.0);
        let (a, b) = s.window();
        let at = 900_500.0 - origins[2] as f64;
        assert!(a < at && at < b, "{a} {at} {b}");
        assert_eq!(view(&s, 0).start - origins[0] as f64, a);
        // Every other rank's own match scrolls its panel, the shared window stays.
        s.reveal_rows([(0, 3, 1), (9, 0, 0)]);
        assert_eq!(s.window(), (a, b));
    }
}
