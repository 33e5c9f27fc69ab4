//! The Compare tab's stacked timelines as a plain struct (the compare view): the baseline panel
//! above the candidate panel, each aligned at the start of a chosen step, one shared time scale.
//!
//! Each panel is a [`TimelineState`] (layout, tracks, tile cache and request policy, hover):
//! the painter, the lane labels and the tile fetching of the main timeline serve it unchanged.
//! Its view is in its own trace's ns; both views derive from one *relative* window, ns from
//! the chosen step's start:
//!
//! ```text
//! panel view   = [rel.0 + origin, rel.1 + origin]   origin = the panel's focus step start (0
//!                                                   when its trace has no step)
//! rel window   kept as a Viewport over u = r - lo,  lo = -max(origin), hi = max(end - origin),
//!              so zoom / pan / clamping are the main timeline's (`viewport`), over both traces
//! ```
//!
//! Same width, same ns per pixel, same relative window: a step that took 38 % less ends 38 %
//! further left. Inputs: [`StackState::open`] (the layout queries to send), the worker's
//! answers per panel, view changes (zoom, pan, resize, a window from a share link). Outputs:
//! the panel states to draw, the tile queries to send ([`StackState::tile_requests`]).
//!
//! Invariants: the panels' `view`s are written only by [`StackState::sync`], after every change
//! of the relative window or the width; a panel's pending ids are its own (the controller sends
//! layout and tiles on one bridge channel per panel, so a new layout resets the panel first).

use super::tiles::TileRequest;
use super::timeline::TimelineState;
use super::viewport::Viewport;
use protocol::{Align, Answer, Query, StepMark, TraceRef};

/// Which panel.
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
}

/// Both panels and the shared relative window.
#[derive(Clone, Debug, Default)]
pub struct StackState {
    /// Baseline and candidate panels (index: [`Pane`]).
    pub panes: [TimelineState; 2],
    /// The step number asked for; `None`: the first common one ([`Align::First`]).
    pub step: Option<u64>,
    /// The relative window, over `u = r - lo` (see the module docs).
    rel: Viewport,
    /// `-max(origin)`: the earliest relative time of either trace.
    lo: f64,
    /// A relative window to show once both layouts arrived (share links).
    wanted: Option<(f64, f64)>,
    /// The layouts were asked for (a comparison is on).
    pub opened: bool,
    /// The drawing area has been measured (tiles are asked only then).
    pub sized: bool,
    /// Keys and the wheel act on the stack (the pointer went over it last).
    pub active: bool,
    /// Pointer x over a panel's drawing area (zoom anchor).
    pub anchor: Option<f64>,
    /// Panel paints since the page started (tests wait for a frame before a screenshot).
    pub frames: u64,
}

impl StackState {
    /// Starts (again) at step `step` (`None`: the first common step), keeping the size and the
    /// window asked for; returns the layout queries to send, one per panel.
    pub fn open(&mut self, step: Option<u64>) -> [(Pane, Query); 2] {
        for p in &mut self.panes {
            p.reset();
        }
        self.step = step;
        self.opened = true;
        let align = step.map_or(Align::First, Align::Step);
        Pane::BOTH.map(|pane| (pane, Query::Layout { trace: pane.trace(), align }))
    }

    /// Forgets everything but the size (the comparison ended or a new candidate loads).
    pub fn clear(&mut self) {
        let panes = self.panes.clone().map(|mut p| {
            p.reset();
            p
        });
        *self = Self {
            panes,
            sized: self.sized,
            frames: self.frames,
            rel: Viewport::new(Viewport::default().trace_end, self.rel.width),
            ..Self::default()
        };
    }

    /// Panel `p`.
    pub fn pane(&self, p: Pane) -> &TimelineState {
        &self.panes[p as usize]
    }

    /// Panel `p`, mutably.
    pub fn pane_mut(&mut self, p: Pane) -> &mut TimelineState {
        &mut self.panes[p as usize]
    }

    /// The panel awaiting query `id`.
    pub fn awaiting(&self, id: u32) -> Option<Pane> {
        Pane::BOTH.into_iter().find(|&p| self.pane(p).awaits(id))
    }

    /// True while either panel waits for an answer.
    pub fn busy(&self) -> bool {
        self.panes.iter().any(TimelineState::busy)
    }

    /// Applies the answer to query `id`; once both layouts are in, aligns the views.
    pub fn apply(&mut self, id: u32, answer: Answer, words: Option<Vec<u32>>) -> bool {
        let Some(p) = self.awaiting(id) else { return false };
        let layout = matches!(answer, Answer::Layout(_));
        self.pane_mut(p).apply(id, answer, words);
        if layout && self.panes.iter().all(|t| t.layout.is_some()) {
            self.align();
        }
        true
    }

    /// The focus step of panel `p` (the step its time 0 is), if its trace has steps.
    pub fn focus(&self, p: Pane) -> Option<&StepMark> {
        self.pane(p).layout.as_ref()?.focus.as_ref()
    }

    /// Step numbers both traces have, in the baseline's order (the step picker's options).
    pub fn common_steps(&self) -> Vec<u64> {
        let steps = |p: Pane| {
            self.pane(p)
                .layout
                .as_ref()
                .map(|l| l.steps.iter().map(|s| s.number).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        let cand = steps(Pane::Cand);
        steps(Pane::Base).into_iter().filter(|n| cand.contains(n)).collect()
    }

    /// Both layouts are in: sets the origins, the relative domain and the window (the one asked
    /// for, else the longer focus step with margins).
    fn align(&mut self) {
        let origin = |t: &TimelineState| t.layout.as_ref().and_then(|l| l.focus.as_ref()).map_or(0.0, |f| f.start_ns as f64);
        for p in &mut self.panes {
            p.origin_ns = origin(p);
        }
        let end = |t: &TimelineState| t.layout.as_ref().map_or(1.0, |l| l.end_ns as f64) - t.origin_ns;
        self.lo = -self.panes.iter().map(|p| p.origin_ns).fold(0.0, f64::max);
        let hi = self.panes.iter().map(end).fold(1.0, f64::max);
        self.rel = Viewport::new(hi - self.lo, self.rel.width);
        match self.wanted.take() {
            Some(w) => self.set_window(w.0, w.1),
            None => self.reset(),
        }
    }

    /// The relative window shown, ns from the step start.
    pub fn window(&self) -> (f64, f64) {
        (self.rel.start + self.lo, self.rel.end + self.lo)
    }

    /// Width of the drawing area, CSS px.
    pub fn width(&self) -> f64 {
        self.rel.width
    }

    /// Shows the longer of the two focus steps (each trace whole when it has none).
    pub fn reset(&mut self) {
        let dur = |p: Pane| self.focus(p).map(|f| (f.end_ns - f.start_ns) as f64);
        match dur(Pane::Base).into_iter().chain(dur(Pane::Cand)).reduce(f64::max) {
            Some(d) => self.rel.show(-self.lo, d.max(1.0) - self.lo),
            None => self.rel.reset(),
        }
        self.sync();
    }

    /// Shows relative window `[a, b]` (a share link's); before the layouts arrive, once they do.
    pub fn set_window(&mut self, a: f64, b: f64) {
        if self.panes.iter().any(|p| p.layout.is_none()) {
            self.wanted = Some((a, b));
            return;
        }
        self.rel.set(a - self.lo, b - self.lo);
        self.sync();
    }

    /// Zooms both panels by `factor` (< 1: in) around pixel `anchor`.
    pub fn zoom(&mut self, factor: f64, anchor: f64) {
        self.rel.zoom(factor, anchor);
        self.sync();
    }

    /// Pans both panels by `dx` pixels.
    pub fn pan_px(&mut self, dx: f64) {
        self.rel.pan_px(dx);
        self.sync();
    }

    /// The drawing area is `width` wide, each panel's tracks `height` high.
    pub fn resize(&mut self, width: f64, height: f64) {
        self.rel.resize(width);
        self.sized = true;
        for p in &mut self.panes {
            p.height = height.max(1.0);
            p.scroll_by(0.0);
        }
        self.sync();
    }

    /// Writes the panels' views from the relative window.
    fn sync(&mut self) {
        let (a, b) = self.window();
        let width = self.rel.width;
        for p in &mut self.panes {
            let end = p.layout.as_ref().map_or(1.0, |l| l.end_ns as f64);
            p.view = Viewport {
                start: a + p.origin_ns,
                end: b + p.origin_ns,
                width,
                trace_end: end.max(1.0),
            };
        }
    }

    /// The tile requests the panels need now (none before the area is measured).
    pub fn tile_requests(&self) -> Vec<(Pane, TileRequest)> {
        if !self.sized {
            return Vec::new();
        }
        Pane::BOTH
            .into_iter()
            .filter_map(|p| Some((p, self.pane(p).tile_request()?)))
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use protocol::{Channel, LaneGroup, LaneInfo, Layout, TileSet};

    fn layout(end_ns: i64, focus: Option<(u64, i64, i64)>) -> Layout {
        let focus = focus.map(|(number, start_ns, end_ns)| StepMark { number, start_ns, end_ns });
        Layout {
            end_ns,
            groups: vec![LaneGroup {
                name: "gpu".into(),
                kind: "gpu".into(),
                device: Some(0),
                folded: false,
                lanes: vec![LaneInfo { lane: 3, name: "s".into(), rows: 2, slices: 9 }],
            }],
            steps: focus.iter().cloned().collect(),
            focus,
            origin_ns: 0,
        }
    }

    /// A stack whose layout queries were sent as ids 1 and 2 and answered.
    fn opened(base: Layout, cand: Layout) -> StackState {
        let mut s = StackState::default();
        s.resize(1000.0, 200.0);
        let queries = s.open(None);
        assert_eq!(queries[0].1, Query::Layout { trace: TraceRef::Baseline, align: Align::First });
        assert_eq!(queries[1].1, Query::Layout { trace: TraceRef::Current, align: Align::First });
        s.pane_mut(Pane::Base).sent(Channel::Layout, 1);
        s.pane_mut(Pane::Cand).sent(Channel::Layout, 2);
        assert!(s.apply(2, Answer::Layout(cand), None));
        assert!(s.apply(1, Answer::Layout(base), None));
        s
    }

    #[test]
    fn panels_align_at_their_step_and_share_the_scale() {
        // Baseline step 10 at 118 µs lasting 14.5 ms; candidate step 10 at 147 µs lasting 9 ms.
        let mut s = opened(layout(16_000_000, Some((10, 118_000, 14_573_000))), layout(22_000_000, Some((10, 147_000, 9_147_000))));
        let (b, c) = (s.pane(Pane::Base).view, s.pane(Pane::Cand).view);
        assert_eq!(s.pane(Pane::Base).origin_ns, 118_000.0);
        assert_eq!(b.start - 118_000.0, c.start - 147_000.0, "same relative window");
        assert_eq!(b.ns_per_px(), c.ns_per_px(), "same scale");
        let (a, z) = s.window();
        assert!(a < 0.0 && z > 14_455_000.0, "the longer step shows whole: {a} {z}");
        // The candidate's step end sits 38 % further left.
        let (xb, xc) = (b.x_of(14_573_000.0) - b.x_of(118_000.0), c.x_of(9_147_000.0) - c.x_of(147_000.0));
        assert!((xc / xb - 9.0 / 14.455).abs() < 1e-9);
        s.zoom(0.5, 250.0);
        s.pan_px(40.0);
        let (b, c) = (s.pane(Pane::Base).view, s.pane(Pane::Cand).view);
        assert_eq!((b.start - 118_000.0, b.end - 118_000.0), (c.start - 147_000.0, c.end - 147_000.0));
        assert_eq!(s.window(), (b.start - 118_000.0, b.end - 118_000.0));
        assert_eq!(s.common_steps(), vec![10]);
    }

    #[test]
    fn a_linked_window_waits_for_both_layouts_and_tiles_follow() {
        let mut s = StackState::default();
        s.set_window(-1000.0, 5000.0);
        s.resize(800.0, 100.0);
        s.open(Some(4));
        s.pane_mut(Pane::Base).sent(Channel::Layout, 1);
        s.pane_mut(Pane::Cand).sent(Channel::Layout, 2);
        assert!(s.tile_requests().is_empty(), "no layout yet");
        assert!(s.apply(1, Answer::Layout(layout(50_000, Some((4, 20_000, 30_000)))), None));
        assert!(s.busy());
        assert!(s.apply(2, Answer::Layout(layout(90_000, None)), None));
        assert!(!s.busy());
        assert_eq!(s.window(), (-1000.0, 5000.0));
        assert_eq!(s.pane(Pane::Cand).view.start, -1000.0, "no step: origin 0");
        let asks = s.tile_requests();
        assert_eq!(asks.len(), 2);
        let (pane, r) = &asks[0];
        assert_eq!((*pane, r.lanes.clone()), (Pane::Base, vec![3]));
        assert!(r.start_ns <= 19_000 && r.end_ns >= 25_000);
        s.pane_mut(Pane::Base).sent_tiles(5, r.clone());
        let set = TileSet { start_ns: r.start_ns, end_ns: r.end_ns, resolution_ns: r.resolution_ns, ..TileSet::default() };
        assert!(s.apply(5, Answer::Tiles(set), Some(vec![])));
        assert_eq!(s.tile_requests().len(), 1, "only the candidate still lacks tiles");
        s.clear();
        assert!(!s.opened && s.sized && s.pane(Pane::Base).layout.is_none());
    }
}
