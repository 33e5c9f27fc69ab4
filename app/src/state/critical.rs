//! What bounds each step, as plain structs: the worker's critical paths (the Steps tab's
//! bound-by bars, the timeline's "Critical path" overlay) and the What if panel's edits and
//! answer. The numbers are the engine's (`report --critical-path`, `--what-if`); this module
//! only picks what to show.
//!
//! Inputs: [`CriticalState::sent`] / [`CriticalState::apply`] for the path query (shares of
//! every step: the bars), [`CriticalState::segments_query`] for the path's slices the overlay
//! needs (the picked step's, or every step's around the view, asked again only when the view
//! leaves what was sent), and the same on [`WhatIf`] for what-if queries (latest wins: any other
//! id is ignored). Output: the [`Overlay`] the timeline draws, rebuilt only when the toggle, the
//! step or the data change.
//! Presets are edits in the `--what-if` grammar (docs/definitions.md "Critical path").

use protocol::{Answer, CriticalPathData, PathSegmentData, PathSegmentsData, Query, WhatIfData};
use std::sync::Arc;

/// A color per class, in the classes' order (`cpu_op`, `cpu_overhead`, `data_loading`,
/// `launch_delay`, `gpu_compute`, `gpu_communication`, `memcpy_memset`, `kernel_gap`,
/// `sync_wait`): the bound-by bars, their legend and the What if panel use the same.
pub const CLASS_COLORS: [&str; 9] =
    ["#4c78a8", "#9ecae9", "#b279a2", "#f58518", "#54a24b", "#e45756", "#eeca3b", "#bab0ac", "#72b7b2"];

/// The What if panel's presets: label and edit.
pub const PRESETS: [(&str, &str); 6] = [
    ("GEMM kernels ×0.5", "gemm*0.5"),
    ("launch delays → 0", "launch=0"),
    ("communication removed", "comm=0"),
    ("syncs removed", "sync=0"),
    ("DataLoader → 0", "dataloader=0"),
    ("Python ×0.5", "python*0.5"),
];

/// The critical path query, the timeline toggle and the What if panel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CriticalState {
    /// Every step's path, once it arrived.
    pub data: Option<Arc<CriticalPathData>>,
    /// Why the path query failed.
    pub error: Option<String>,
    /// Id of the path query awaited.
    pub pending: Option<u32>,
    /// The timeline's "Critical path" toggle.
    pub shown: bool,
    /// The step whose path the timeline shows (`None`: every step).
    pub step: Option<u64>,
    /// The path's slices the overlay draws, once they arrived.
    pub segments: Option<Arc<PathSegmentsData>>,
    /// The segments query awaited or answered last: step and window.
    pub segments_asked: Option<SegmentsKey>,
    /// Id of the segments query awaited.
    pub segments_pending: Option<u32>,
    /// The What if panel.
    pub what_if: WhatIf,
}

/// A segments query: the step (`None`: every step) and the window, ns.
pub type SegmentsKey = (Option<u64>, i64, i64);

/// The What if panel's edits and the worker's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WhatIf {
    /// Edits applied together, in order (the `--what-if` grammar).
    pub edits: Vec<String>,
    /// The answer to the latest edits.
    pub data: Option<Arc<WhatIfData>>,
    /// Why the query failed (an unparsable edit comes back in `data.error`).
    pub error: Option<String>,
    /// Id of the what-if query awaited.
    pub pending: Option<u32>,
    /// Page clock (ms) when the pending query was sent.
    pub sent_at_ms: Option<f64>,
    /// Send to answer of the latest answer, ms.
    pub latency_ms: Option<f64>,
}

impl CriticalState {
    /// Forgets the trace's paths and answers (a new load); keeps the toggle, which is view state.
    pub fn reset(&mut self) {
        *self = Self { shown: self.shown, ..Self::default() };
    }

    /// The path query to send, unless it arrived or is awaited.
    pub fn ask(&self) -> Option<Query> {
        (self.data.is_none() && self.pending.is_none() && self.error.is_none()).then_some(Query::CriticalPath)
    }

    /// Records that the path query `id` was sent.
    pub fn sent(&mut self, id: u32) {
        self.pending = Some(id);
    }

    /// The segments query the overlay needs for the view `view_ns` (start, end), unless what
    /// was asked already covers it: the picked step's whole span, or every step's over three
    /// view widths, asked again when the view leaves that window or zooms well into an answer
    /// the cap thinned.
    pub fn segments_query(&self, view_ns: (f64, f64)) -> Option<Query> {
        let data = self.data.as_ref().filter(|_| self.shown)?;
        let key = match self.step {
            Some(n) => {
                let p = data.steps.iter().find(|p| p.step == Some(n))?;
                (Some(n), p.start_ns, p.end_ns)
            }
            None => {
                let (a, b) = (view_ns.0 as i64, view_ns.1.ceil() as i64);
                if let Some((None, x, y)) = self.segments_asked {
                    let thinned = self.segments.as_ref().is_some_and(|s| s.dropped > 0 && s.start_ns == x && s.end_ns == y);
                    if x <= a && b <= y && !(thinned && (y - x) > 6 * (b - a).max(1)) {
                        return None;
                    }
                }
                let w = (b - a).max(1);
                (None, a.saturating_sub(w), b.saturating_add(w))
            }
        };
        if self.segments_asked == Some(key) {
            return None;
        }
        Some(Query::PathSegments { step: key.0, start_ns: key.1, end_ns: key.2 })
    }

    /// Records that segments query `id` for `key` was sent.
    pub fn segments_sent(&mut self, id: u32, key: SegmentsKey) {
        self.segments_pending = Some(id);
        self.segments_asked = Some(key);
    }

    /// Whether the reply to `id` (path, segments or what-if) is awaited.
    pub fn awaits(&self, id: u32) -> bool {
        self.pending == Some(id) || self.segments_pending == Some(id) || self.what_if.pending == Some(id)
    }

    /// Applies the answer to query `id` at page time `now_ms`; false when it is not awaited.
    pub fn apply(&mut self, id: u32, answer: Answer, now_ms: f64) -> bool {
        if self.pending == Some(id) {
            self.pending = None;
            if let Answer::CriticalPath(data) = answer {
                self.data = Some(Arc::from(data));
                self.error = None;
            }
            return true;
        }
        if self.segments_pending == Some(id) {
            self.segments_pending = None;
            if let Answer::PathSegments(data) = answer {
                self.segments = Some(Arc::from(data));
            }
            return true;
        }
        let w = &mut self.what_if;
        if w.pending != Some(id) {
            return false;
        }
        w.pending = None;
        w.latency_ms = w.sent_at_ms.take().map(|t| now_ms - t);
        if let Answer::WhatIf(data) = answer {
            w.data = Some(Arc::from(data));
            w.error = None;
        }
        true
    }

    /// Query `id` failed with `message`; false when it is not awaited.
    pub fn failed(&mut self, id: u32, message: String) -> bool {
        if self.pending == Some(id) {
            self.pending = None;
            self.error = Some(message);
            return true;
        }
        if self.segments_pending == Some(id) {
            self.segments_pending = None;
            self.error = Some(message);
            return true;
        }
        if self.what_if.pending != Some(id) {
            return false;
        }
        self.what_if.pending = None;
        self.what_if.sent_at_ms = None;
        self.what_if.error = Some(message);
        true
    }

    /// The overlay the timeline draws: `None` while the toggle is off or the path's slices
    /// are not in.
    pub fn overlay(&self) -> Option<Arc<Overlay>> {
        // Only an answer for the step shown: another step's (or every step's) slices would
        // flash until the one asked for arrives.
        let data = self.segments.as_ref().filter(|d| self.shown && d.step == self.step)?;
        Some(Arc::new(Overlay::new(data, self.step)))
    }
}

impl WhatIf {
    /// Adds `edit` (trimmed; empty or repeated ones are ignored); returns the query to send.
    pub fn add(&mut self, edit: &str) -> Option<Query> {
        let edit = edit.trim();
        if edit.is_empty() || self.edits.iter().any(|e| e == edit) {
            return None;
        }
        self.edits.push(edit.to_owned());
        Some(self.query())
    }

    /// Removes edit `k`; returns the query to send (`None` when no edit is left: nothing to ask).
    pub fn remove(&mut self, k: usize) -> Option<Query> {
        if k < self.edits.len() {
            self.edits.remove(k);
        }
        if self.edits.is_empty() {
            self.data = None;
            self.error = None;
            return None;
        }
        Some(self.query())
    }

    /// Records that query `id` was sent at page time `now_ms`.
    pub fn sent(&mut self, id: u32, now_ms: f64) {
        self.pending = Some(id);
        self.sent_at_ms = Some(now_ms);
    }

    fn query(&self) -> Query {
        Query::WhatIf { edits: self.edits.clone() }
    }
}

/// A path slice as the timeline outlines it.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSlice {
    /// Slice id.
    pub id: u32,
    /// Lane and row.
    pub lane: u32,
    /// Row on the lane.
    pub row: u16,
    /// Slice start, ns.
    pub start_ns: i64,
    /// Slice duration, ns.
    pub dur_ns: i64,
    /// Its name (for its color).
    pub name: String,
}

/// An arrow where the path moves to another lane: from the end of one stretch to the start
/// of the next, (lane, row, ns) each.
pub type PathArrow = ((u32, u16, i64), (u32, u16, i64));

/// What the timeline draws for the critical path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overlay {
    /// The path's slices, each once, in time order of their first stretch.
    pub slices: Vec<PathSlice>,
    /// Arrows between consecutive stretches on different lanes.
    pub arrows: Vec<PathArrow>,
    /// The step shown (`None`: every step).
    pub step: Option<u64>,
}

impl Overlay {
    /// The overlay of step `step` of `data` (`None`: every step it holds).
    pub fn new(data: &PathSegmentsData, step: Option<u64>) -> Self {
        let mut out = Overlay { step, ..Overlay::default() };
        let mut seen = std::collections::HashSet::new();
        for p in data.steps.iter().filter(|p| step.is_none() || p.step == step) {
            let mut prev: Option<&PathSegmentData> = None;
            for s in &p.segments {
                if seen.insert(s.slice) {
                    out.slices.push(PathSlice {
                        id: s.slice,
                        lane: s.lane,
                        row: s.row,
                        start_ns: s.slice_start_ns,
                        dur_ns: s.slice_dur_ns,
                        name: data.names.get(s.name as usize).cloned().unwrap_or_default(),
                    });
                }
                if let Some(a) = prev.filter(|a| a.lane != s.lane) {
                    out.arrows.push(((a.lane, a.row, a.end_ns), (s.lane, s.row, s.start_ns)));
                }
                prev = Some(s);
            }
        }
        out
    }
}

/// `window.kinetoscope.critical` (docs/testing.md): the paths, the timeline's overlay (`overlay`)
/// and the ids of the slices it outlines in the view (`outlined`), and the what-if answer.
pub fn hook_json(c: &CriticalState, overlay: Option<&Overlay>, outlined: &[u32]) -> serde_json::Value {
    use serde_json::json;
    // Only the picked step's slices: every step's are thousands of objects, and the snapshot
    // is rebuilt on the main thread whenever a test reads it.
    let picked: Vec<serde_json::Value> = c
        .segments
        .as_ref()
        .filter(|d| c.step.is_some() && d.step == c.step)
        .map(|d| {
            let mut seen = std::collections::HashSet::new();
            d.steps
                .iter()
                .filter(|p| p.step == c.step)
                .flat_map(|p| &p.segments)
                .filter(|s| seen.insert(s.slice))
                .map(|s| json!({ "id": s.slice, "lane": s.lane, "row": s.row, "startNs": s.slice_start_ns, "durNs": s.slice_dur_ns }))
                .collect()
        })
        .unwrap_or_default();
    let steps = c.data.as_ref().map(|d| {
        d.steps
            .iter()
            .map(|p| {
                let slices = if c.step.is_some() && p.step == c.step { picked.clone() } else { Vec::new() };
                json!({
                    "step": p.step, "startNs": p.start_ns, "endNs": p.end_ns, "boundBy": p.bound_by,
                    "sharesNs": p.shares_ns, "slices": slices,
                })
            })
            .collect::<Vec<_>>()
    });
    let w = &c.what_if;
    let what_if_steps = w.data.as_ref().map(|d| {
        d.steps
            .iter()
            .map(|s| {
                json!({
                    "step": s.step, "beforeNs": s.before_ns, "afterNs": s.after_ns,
                    "boundByBefore": s.bound_by_before, "boundByAfter": s.bound_by_after,
                    "sharesAfterNs": s.shares_after_ns,
                })
            })
            .collect::<Vec<_>>()
    });
    json!({
        "shown": c.shown, "step": c.step, "pending": c.pending.is_some() || c.segments_pending.is_some(), "error": c.error,
        "segments": c.segments.as_ref().map(|d| json!({
            "step": d.step, "startNs": d.start_ns, "endNs": d.end_ns, "dropped": d.dropped,
            "count": d.steps.iter().map(|p| p.segments.len()).sum::<usize>(),
        })),
        "classes": c.data.as_ref().map(|d| d.classes.clone()), "steps": steps, "outlined": outlined,
        "arrows": overlay.map_or(0, |o| o.arrows.len()),
        "whatIf": {
            "edits": w.edits, "pending": w.pending.is_some(), "error": w.error,
            "editError": w.data.as_ref().and_then(|d| d.error.clone()), "latencyMs": w.latency_ms,
            "steps": what_if_steps,
        },
    })
}

/// Share of each class in `shares_ns` as a fraction of their sum (0 when empty).
pub fn fractions(shares_ns: &[i64]) -> Vec<f64> {
    let total: i64 = shares_ns.iter().sum();
    shares_ns.iter().map(|&s| if total > 0 { s as f64 / total as f64 } else { 0.0 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{StepPathData, StepSegmentsData};

    fn seg(slice: u32, lane: u32, start_ns: i64, end_ns: i64) -> PathSegmentData {
        PathSegmentData { slice, lane, start_ns, end_ns, slice_start_ns: start_ns, slice_dur_ns: end_ns - start_ns, ..PathSegmentData::default() }
    }

    #[test]
    fn overlay_lists_each_slice_once_and_arrows_across_lanes() {
        let data = PathSegmentsData {
            steps: vec![
                StepSegmentsData { step: Some(1), segments: vec![seg(1, 0, 0, 5), seg(2, 0, 5, 8), seg(3, 4, 9, 20), seg(1, 0, 20, 21)] },
                StepSegmentsData { step: Some(2), segments: vec![seg(7, 0, 30, 40)] },
            ],
            ..PathSegmentsData::default()
        };
        let all = Overlay::new(&data, None);
        assert_eq!(all.slices.iter().map(|s| s.id).collect::<Vec<_>>(), [1, 2, 3, 7]);
        assert_eq!(all.arrows, [((0, 0, 8), (4, 0, 9)), ((4, 0, 20), (0, 0, 20))]);
        let one = Overlay::new(&data, Some(2));
        assert_eq!(one.slices.len(), 1);
        assert!(one.arrows.is_empty());
    }

    #[test]
    fn segments_are_asked_for_the_picked_step_or_around_the_view() {
        let mut s = CriticalState::default();
        assert_eq!(s.segments_query((0.0, 100.0)), None, "toggle off, no paths");
        s.shown = true;
        s.data = Some(Arc::new(CriticalPathData {
            steps: vec![StepPathData { step: Some(4), start_ns: 1000, end_ns: 5000, ..StepPathData::default() }],
            ..CriticalPathData::default()
        }));
        let around = s.segments_query((100.0, 200.0));
        assert_eq!(around, Some(Query::PathSegments { step: None, start_ns: 0, end_ns: 300 }));
        s.segments_sent(7, (None, 0, 300));
        assert_eq!(s.segments_query((150.0, 250.0)), None, "inside what was asked");
        assert!(s.segments_query((250.0, 350.0)).is_some(), "the view left it");
        s.segments = Some(Arc::new(PathSegmentsData { start_ns: 0, end_ns: 300, dropped: 9, ..PathSegmentsData::default() }));
        assert_eq!(s.segments_query((100.0, 200.0)), None);
        assert!(s.segments_query((100.0, 110.0)).is_some(), "zoomed well into a thinned answer");
        s.step = Some(4);
        assert_eq!(s.segments_query((0.0, 1.0)), Some(Query::PathSegments { step: Some(4), start_ns: 1000, end_ns: 5000 }));
        s.segments_sent(8, (Some(4), 1000, 5000));
        assert_eq!(s.segments_query((0.0, 1.0)), None);
        assert!(s.awaits(8) && !s.awaits(7));
    }

    #[test]
    fn what_if_edits_combine_and_only_the_latest_answer_counts() {
        let mut s = CriticalState::default();
        assert_eq!(s.what_if.add(" gemm*0.5 "), Some(Query::WhatIf { edits: vec!["gemm*0.5".into()] }));
        assert_eq!(s.what_if.add("gemm*0.5"), None, "repeated");
        assert_eq!(s.what_if.add("launch=0"), Some(Query::WhatIf { edits: vec!["gemm*0.5".into(), "launch=0".into()] }));
        s.what_if.sent(4, 100.0);
        assert!(!s.apply(3, Answer::WhatIf(Box::default()), 150.0));
        assert!(s.apply(4, Answer::WhatIf(Box::default()), 150.0));
        assert_eq!(s.what_if.latency_ms, Some(50.0));
        assert_eq!(s.what_if.remove(0), Some(Query::WhatIf { edits: vec!["launch=0".into()] }));
        assert_eq!(s.what_if.remove(0), None);
        assert!(s.what_if.data.is_none());
    }

    #[test]
    fn fractions_of_shares() {
        assert_eq!(fractions(&[1, 3, 0]), [0.25, 0.75, 0.0]);
        assert_eq!(fractions(&[0, 0]), [0.0, 0.0]);
    }
}
