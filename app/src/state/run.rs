//! The open distributed run as a plain struct: per-file progress while its ranks arrive, the
//! run analysis (`Query::Run`) once they are in, the heatmap's cell geometry, and the rank the
//! user asked to open (at which step).
//!
//! Inputs: [`RunState::begin`] when several files or a `?run=` manifest are opened, then the
//! worker's `RunStarted` / `RankProgress` / `RankLoaded` for that load, the `Answer::Run`, and
//! heatmap draws ([`layout_heatmap`]). Output: what the Run tab shows and
//! `window.kinetoscope.run` reports.
//!
//! Invariants: `open` is false after a single-trace load ([`RunState::clear`]); `data` belongs
//! to the files listed; heatmap cells are in CSS px from the canvas' top-left corner, the same
//! rects the canvas draws and clicks hit.

use protocol::{Phase, RankInfo, RunData};
use std::sync::Arc;

/// Heatmap geometry, CSS px: rank label column (room for "rank 63 ★"), step label row, row
/// height, right margin.
pub const HEAT_LEFT: f64 = 84.0;
/// Step label row height.
pub const HEAT_TOP: f64 = 22.0;
/// Height of one rank's row.
pub const HEAT_ROW: f64 = 24.0;
/// Right and bottom margin.
pub const HEAT_MARGIN: f64 = 8.0;

/// One file's progress row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileRow {
    /// File name.
    pub name: String,
    /// Its rank, once loaded.
    pub rank: Option<u32>,
    /// Current phase while loading.
    pub phase: Option<Phase>,
    /// Bytes done / total in that phase.
    pub done_bytes: u64,
    /// Total bytes of that phase, when known.
    pub total_bytes: Option<u64>,
    /// Loaded (its summary kept) or failed.
    pub loaded: bool,
    /// Steps found.
    pub steps: u64,
    /// Why it failed.
    pub error: Option<String>,
    /// The load worker's wasm memory after it, bytes.
    pub memory_bytes: Option<u64>,
    /// The parse worker that loaded it whole, if one did.
    pub parse_worker: Option<u32>,
}

/// One drawn heatmap cell.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatCell {
    /// Rank.
    pub rank: u32,
    /// Step number.
    pub step: u64,
    /// Step duration, µs.
    pub dur_us: f64,
    /// Marked as an outlier.
    pub outlier: bool,
    /// Time waited in collectives during the step, µs.
    pub wait_us: f64,
    /// What the cell shows in the current [`HeatMode`], µs.
    pub value_us: f64,
    /// Left, CSS px.
    pub x: f64,
    /// Top, CSS px.
    pub y: f64,
    /// Width, CSS px.
    pub w: f64,
    /// Height, CSS px.
    pub h: f64,
}

/// What the heatmap's cells show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeatMode {
    /// Step time.
    #[default]
    Step,
    /// Step time minus the rank's waits in collectives: a rank that waited for the straggler
    /// no longer looks slowest.
    NotWaiting,
}

impl HeatMode {
    /// `step` or `not-waiting` (test hook, `data-mode`).
    pub fn key(self) -> &'static str {
        match self {
            Self::Step => "step",
            Self::NotWaiting => "not-waiting",
        }
    }

    /// The value a cell of `step` shows, µs.
    pub fn value(self, dur_us: f64, wait_us: f64) -> f64 {
        match self {
            Self::Step => dur_us,
            Self::NotWaiting => (dur_us - wait_us).max(0.0),
        }
    }
}

/// Everything the page knows about the open run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunState {
    /// A run is open (loading or loaded).
    pub open: bool,
    /// Files, in load order.
    pub files: Vec<FileRow>,
    /// The run analysis.
    pub data: Option<Arc<RunData>>,
    /// Why the run analysis could not be had.
    pub error: Option<String>,
    /// The `Query::Run` awaited.
    pub pending: Option<u32>,
    /// The rank (and step) being opened or shown on the timeline.
    pub focus: Option<(u32, Option<u64>)>,
    /// The step window still to apply once the opened rank's layout is in.
    pub zoom_pending: bool,
    /// Heatmap cells as last drawn.
    pub heatmap: Vec<HeatCell>,
    /// What the heatmap shows.
    pub heat_mode: HeatMode,
    /// Stacking two ranks: the rank to open once the first is loaded and kept as the baseline.
    pub stack_next: Option<u32>,
}

impl RunState {
    /// A run of not yet named files starts.
    pub fn begin(&mut self) {
        *self = RunState { open: true, ..RunState::default() };
    }

    /// Back to no run (a single trace was opened).
    pub fn clear(&mut self) {
        *self = RunState::default();
    }

    /// The worker named the files it will load.
    pub fn started(&mut self, names: Vec<String>) {
        self.files = names.into_iter().map(|name| FileRow { name, ..FileRow::default() }).collect();
    }

    /// Progress of file `index`.
    pub fn progress(&mut self, index: u32, phase: Phase, done_bytes: u64, total_bytes: Option<u64>) {
        if let Some(f) = self.files.get_mut(index as usize) {
            f.phase = Some(phase);
            f.done_bytes = done_bytes;
            f.total_bytes = total_bytes;
        }
    }

    /// File `info.index` is in (or failed).
    pub fn rank_loaded(&mut self, total: u32, info: RankInfo) {
        let i = info.index as usize;
        if self.files.len() < total as usize {
            self.files.resize(total as usize, FileRow::default());
        }
        if let Some(f) = self.files.get_mut(i) {
            if !info.name.is_empty() {
                f.name = info.name;
            }
            f.rank = info.rank;
            f.steps = info.steps;
            f.error = info.error;
            f.memory_bytes = info.memory_bytes;
            f.parse_worker = info.parse_worker;
            f.loaded = true;
            f.phase = None;
        }
    }

    /// Files in (loaded or failed).
    pub fn loaded(&self) -> usize {
        self.files.iter().filter(|f| f.loaded).count()
    }

    /// `Query::Run` `id` was sent.
    pub fn sent(&mut self, id: u32) {
        self.pending = Some(id);
    }

    /// True when `id` is the awaited run query.
    pub fn awaits(&self, id: u32) -> bool {
        self.pending == Some(id)
    }

    /// The run analysis arrived.
    pub fn apply(&mut self, id: u32, data: RunData) {
        if self.awaits(id) {
            self.pending = None;
            self.error = None;
            self.data = Some(Arc::new(data));
        }
    }

    /// The run query failed.
    pub fn failed(&mut self, id: u32, message: String) {
        if self.awaits(id) {
            self.pending = None;
            self.error = Some(message);
        }
    }

    /// A run query is awaited.
    pub fn busy(&self) -> bool {
        self.pending.is_some()
    }
}

/// The heatmap's rows (ranks, ascending as in the rank table) and columns (step numbers,
/// ascending) for `data`.
pub fn heatmap_axes(data: &RunData) -> (Vec<u32>, Vec<u64>) {
    let ranks: Vec<u32> = data.ranks.iter().filter_map(|r| r.rank).collect();
    let mut steps: Vec<u64> = data.steps.iter().map(|s| s.step).collect();
    steps.sort_unstable();
    steps.dedup();
    (ranks, steps)
}

/// Height of the heatmap canvas for `rows` ranks, CSS px.
pub fn heatmap_height(rows: usize) -> f64 {
    HEAT_TOP + rows.max(1) as f64 * HEAT_ROW + HEAT_MARGIN
}

/// The cells of `data`'s heatmap on a canvas `width` CSS px wide: one row per rank, one column
/// per step, a cell per (rank, step) the analysis has, showing `mode`'s value.
pub fn layout_heatmap(data: &RunData, width: f64, mode: HeatMode) -> Vec<HeatCell> {
    let (ranks, steps) = heatmap_axes(data);
    if ranks.is_empty() || steps.is_empty() {
        return Vec::new();
    }
    let w = ((width - HEAT_LEFT - HEAT_MARGIN) / steps.len() as f64).max(2.0);
    data.steps
        .iter()
        .filter_map(|s| {
            let rank = s.rank?;
            let row = ranks.iter().position(|&r| r == rank)?;
            let col = steps.binary_search(&s.step).ok()?;
            Some(HeatCell {
                rank,
                step: s.step,
                dur_us: s.dur_us,
                outlier: s.outlier,
                wait_us: s.wait_us,
                value_us: mode.value(s.dur_us, s.wait_us),
                x: HEAT_LEFT + col as f64 * w,
                y: HEAT_TOP + row as f64 * HEAT_ROW,
                w,
                h: HEAT_ROW,
            })
        })
        .collect()
}

/// The cell under (`x`, `y`) CSS px, if any.
pub fn cell_at(cells: &[HeatCell], x: f64, y: f64) -> Option<&HeatCell> {
    cells.iter().find(|c| x >= c.x && x < c.x + c.w && y >= c.y && y < c.y + c.h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{RunRank, RunStep};

    fn data() -> RunData {
        let rank = |r: u32| RunRank { rank: Some(r), file: format!("w{r}.json"), ..RunRank::default() };
        let step = |r: u32, step: u64, dur_us: f64| RunStep { rank: Some(r), step, dur_us, outlier: dur_us > 100.0, wait_us: dur_us / 4.0 };
        RunData {
            ranks: vec![rank(0), rank(1), rank(3)],
            steps: vec![step(0, 12, 10.0), step(1, 12, 11.0), step(3, 12, 200.0), step(0, 13, 9.0), step(3, 13, 9.5)],
            ..RunData::default()
        }
    }

    #[test]
    fn cells_one_row_per_rank_one_column_per_step() {
        let d = data();
        assert_eq!(heatmap_axes(&d), (vec![0, 1, 3], vec![12, 13]));
        let cells = layout_heatmap(&d, HEAT_LEFT + HEAT_MARGIN + 200.0, HeatMode::Step);
        assert_eq!(cells.len(), 5);
        let c = cells.iter().find(|c| c.rank == 3 && c.step == 13).unwrap_or_else(|| panic!("cell"));
        assert_eq!((c.x, c.y, c.w, c.h), (HEAT_LEFT + 100.0, HEAT_TOP + 2.0 * HEAT_ROW, 100.0, HEAT_ROW));
        assert!(cells.iter().any(|c| c.outlier && c.rank == 3 && c.step == 12));
        let hit = cell_at(&cells, c.x + 1.0, c.y + c.h - 1.0).map(|c| (c.rank, c.step));
        assert_eq!(hit, Some((3, 13)));
        assert_eq!(cell_at(&cells, 1.0, 1.0), None);
        assert_eq!(heatmap_height(3), HEAT_TOP + 3.0 * HEAT_ROW + HEAT_MARGIN);
    }

    #[test]
    fn not_waiting_mode_takes_the_waits_off() {
        let d = data();
        let step = layout_heatmap(&d, 400.0, HeatMode::Step);
        let busy = layout_heatmap(&d, 400.0, HeatMode::NotWaiting);
        let values = |cells: &[HeatCell]| cells.iter().map(|c| c.value_us).collect::<Vec<_>>();
        assert_eq!(values(&step), [10.0, 11.0, 200.0, 9.0, 9.5]);
        assert_eq!(values(&busy), [7.5, 8.25, 150.0, 6.75, 7.125]);
        assert_eq!(HeatMode::NotWaiting.value(1.0, 3.0), 0.0, "a wait longer than its step reads 0");
    }

    #[test]
    fn progress_rows_follow_the_worker() {
        let mut s = RunState::default();
        s.begin();
        s.started(vec!["a.json".into(), "b.json".into()]);
        s.progress(1, Phase::Parsing, 5, Some(10));
        assert_eq!(s.files[1].done_bytes, 5);
        s.rank_loaded(2, RankInfo { index: 0, name: "a.json".into(), rank: Some(4), steps: 2, error: None, memory_bytes: None, parse_worker: Some(1) });
        assert_eq!(s.loaded(), 1);
        assert_eq!(s.files[0].rank, Some(4));
        s.sent(7);
        assert!(s.busy());
        s.apply(6, RunData::default());
        assert!(s.data.is_none(), "another query's answer is ignored");
        s.apply(7, data());
        assert!(!s.busy());
        assert_eq!(s.data.as_ref().map(|d| d.ranks.len()), Some(3));
        s.clear();
        assert!(!s.open && s.files.is_empty());
    }
}
