//! Charts tab state as a plain struct: the step breakdown, the top kernels, the whole-trace
//! counters, the roofline and the selected kernel's duration histogram, each as the worker
//! computed it.
//!
//! Inputs: [`ChartState::loaded`] with the trace span, then [`ChartState::next_query`] /
//! [`ChartState::sent`] / [`ChartState::apply`] / [`ChartState::failed`] in a loop driven by the
//! controller; [`ChartState::select_kernel`] when the user picks another kernel. Output: the
//! chart data ([`StepChart`], [`KernelPick`]s, [`CounterSet`], the memory chart's
//! [`MemoryView`], [`Histogram`]).
//!
//! Invariants: at most one query in flight (`pending`): the charts have their own channel and
//! ask for one thing at a time, steps, kernels, counters, the memory chart, the roofline, then the histogram, so no answer
//! supersedes another. A failed query leaves an empty value and an error, never a retry loop.
//! A new load clears everything.
//!
//! Why: the worker does all aggregation (the steps and kernels tables, counter buckets,
//! histogram bins); this struct only picks columns and remembers what is missing, so the rules
//! are tested natively (docs/contributing.md). The charts: docs/viewer.md#charts.

use super::memory::{MemoryView, LIVE_ROWS};
use protocol::{Answer, CellValue, CounterSeries, CounterSet, Histogram, MemoryData, Query, RooflineData, TableData, Workload};

/// Buckets of the whole-trace GPU and memory curves (about one per 3 px of a wide chart).
pub const COUNTER_BUCKETS: u32 = 300;
/// Bins of the kernel duration histogram.
pub const HISTOGRAM_BINS: u32 = 40;
/// Kernels offered by the histogram's select, by total time.
pub const TOP_KERNELS: usize = 20;
/// Step table columns stacked in the step chart, bottom first (the steps table's keys).
pub const STEP_PARTS: [&str; 8] = [
    "kernel",
    "memcpy",
    "memset",
    "communication",
    "runtime",
    "dataloader",
    "cpu_exec",
    "other",
];

/// What the step bars stack: the time breakdown, or the phases' CPU or GPU time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepStack {
    /// The steps table's breakdown ([`STEP_PARTS`]): the parts add up to the step's span.
    #[default]
    Category,
    /// Data loading, forward, backward and optimizer CPU time (docs/definitions.md "Phases").
    PhaseCpu,
    /// The GPU time each phase launched, then the communication no other work hid.
    PhaseGpu,
}

impl StepStack {
    /// Every mode, in the select's order.
    pub const ALL: [StepStack; 3] = [StepStack::Category, StepStack::PhaseCpu, StepStack::PhaseGpu];

    /// The steps-table columns stacked, bottom first.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            StepStack::Category => &STEP_PARTS,
            StepStack::PhaseCpu => &[
                "phase_data_loading_cpu",
                "phase_forward_cpu",
                "phase_backward_cpu",
                "phase_optimizer_cpu",
            ],
            StepStack::PhaseGpu => &[
                "phase_data_loading_gpu",
                "phase_forward_gpu",
                "phase_backward_gpu",
                "phase_optimizer_gpu",
                "comm_exposed",
            ],
        }
    }

    /// The select's value and the test hook's name.
    pub fn key(self) -> &'static str {
        match self {
            StepStack::Category => "category",
            StepStack::PhaseCpu => "phase_cpu",
            StepStack::PhaseGpu => "phase_gpu",
        }
    }

    /// The select's text.
    pub fn label(self) -> &'static str {
        match self {
            StepStack::Category => "by category",
            StepStack::PhaseCpu => "by phase, CPU time",
            StepStack::PhaseGpu => "by phase, GPU time",
        }
    }

    /// The mode whose [`StepStack::key`] is `key`.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.key() == key)
    }
}

/// The step chart: one bar per profiler step, stacked by breakdown part or phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepChart {
    /// Labels of the parts present in the table, in [`STEP_PARTS`] order.
    pub parts: Vec<String>,
    /// Their steps-table keys (`kernel`, `memcpy`, ...), parallel to `parts`.
    pub keys: Vec<String>,
    /// One bar per step, in step order.
    pub bars: Vec<StepBar>,
    /// Why some stacked columns are empty (a phase the trace cannot tell apart), one per column.
    pub notes: Vec<String>,
}

/// One step's bar.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepBar {
    /// The N of `ProfilerStep#N`.
    pub number: i64,
    /// Time per part, ns, parallel to [`StepChart::parts`].
    pub parts_ns: Vec<i64>,
}

impl StepChart {
    /// Picks the step number and `stack`'s columns of a `steps` table; missing cells are 0.
    pub fn from_table(table: &TableData, stack: StepStack) -> Self {
        let column = |key: &str| table.columns.iter().position(|c| c.key == key);
        let present: Vec<(usize, &str, String)> = stack
            .keys()
            .iter()
            .filter_map(|&key| {
                let i = column(key)?;
                Some((i, key, table.columns[i].label.clone()))
            })
            .collect();
        let step = column("step");
        let bars = table
            .rows
            .iter()
            .enumerate()
            .map(|(k, row)| StepBar {
                number: step
                    .and_then(|i| row.get(i))
                    .and_then(int)
                    .unwrap_or(k as i64),
                parts_ns: present
                    .iter()
                    .map(|&(i, _, _)| row.get(i).and_then(int).unwrap_or(0))
                    .collect(),
            })
            .collect();
        let mut notes: Vec<String> = present
            .iter()
            .filter_map(|&(i, _, _)| table.columns[i].note.clone())
            .collect();
        notes.dedup();
        StepChart {
            notes,
            keys: present.iter().map(|&(_, key, _)| key.to_owned()).collect(),
            parts: present.into_iter().map(|(_, _, label)| label).collect(),
            bars,
        }
    }

    /// The bars drawn in `width_px` pixels: with more steps than pairs of pixels, each drawn bar
    /// stands for a group of consecutive steps and shows the slowest of them (largest sum of
    /// parts, the first on a tie), so an outlier stays visible. Each item is (index of the
    /// group's first step, steps in the group, the bar shown).
    pub fn slowest_per_group(&self, width_px: u32) -> Vec<(usize, usize, &StepBar)> {
        let per_group = self
            .bars
            .len()
            .div_ceil((width_px.max(2) / 2) as usize)
            .max(1);
        self.bars
            .chunks(per_group)
            .enumerate()
            .filter_map(|(c, group)| {
                let total = |b: &StepBar| b.parts_ns.iter().sum::<i64>();
                let bar = group
                    .iter()
                    .reduce(|best, b| if total(b) > total(best) { b } else { best })?;
                Some((c * per_group, group.len(), bar))
            })
            .collect()
    }

    /// The tallest bar, ns (0 without bars).
    pub fn max_ns(&self) -> i64 {
        self.bars
            .iter()
            .map(|b| b.parts_ns.iter().sum::<i64>())
            .max()
            .unwrap_or(0)
    }
}

/// A kernel the histogram can show.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelPick {
    /// Kernel name.
    pub name: String,
    /// Total time, ns.
    pub total_ns: i64,
    /// Launches.
    pub calls: i64,
}

/// The top [`TOP_KERNELS`] rows of a `kernels` table by total time, longest first.
pub fn top_kernels(table: &TableData) -> Vec<KernelPick> {
    let column = |key: &str| table.columns.iter().position(|c| c.key == key);
    let (Some(name), Some(total), Some(calls)) = (column("name"), column("total"), column("calls"))
    else {
        return Vec::new();
    };
    let mut picks: Vec<KernelPick> = table
        .rows
        .iter()
        .filter_map(|row| {
            let CellValue::Text(n) = row.get(name)? else {
                return None;
            };
            Some(KernelPick {
                name: n.clone(),
                total_ns: row.get(total).and_then(int).unwrap_or(0),
                calls: row.get(calls).and_then(int).unwrap_or(0),
            })
        })
        .collect();
    picks.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    picks.truncate(TOP_KERNELS);
    picks
}

/// An integer cell (floats truncated: the step and kernel tables send integers here).
fn int(cell: &CellValue) -> Option<i64> {
    match *cell {
        CellValue::Int(v) => Some(v),
        CellValue::Float(v) if v.is_finite() => Some(v as i64),
        _ => None,
    }
}

/// What the pending query asks for.
#[derive(Clone, Debug, PartialEq)]
enum Need {
    Steps,
    Kernels,
    Counters,
    Memory,
    Roofline,
    Histogram(String),
}

/// Everything the charts tab draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChartState {
    /// Trace span, ns from the origin (0: nothing loaded).
    pub span_ns: i64,
    /// Step bars, once the steps table arrived.
    pub steps: Option<StepChart>,
    /// What the step bars stack.
    pub step_stack: StepStack,
    /// The steps table the bars come from, kept to restack them.
    step_table: Option<TableData>,
    /// Kernels for the select, once the kernels table arrived.
    pub kernels: Option<Vec<KernelPick>>,
    /// GPU utilization, SM efficiency and memory over the whole trace.
    pub counters: Option<CounterSet>,
    /// The memory chart: one device's curves and categories, the live allocations listed.
    pub memory: MemoryView,
    /// Kernels on the roofline and the GPU's peaks.
    pub roofline: Option<RooflineData>,
    /// The kernel whose histogram is shown.
    pub kernel: Option<String>,
    /// That kernel's histogram, once it arrived.
    pub histogram: Option<Histogram>,
    /// Why the last query failed.
    pub error: Option<String>,
    pending: Option<(u32, Need)>,
}

impl ChartState {
    /// A new load started or finished: drops all chart data; `span_ns` bounds the counters.
    pub fn loaded(&mut self, span_ns: i64) {
        *self = ChartState {
            span_ns,
            step_stack: self.step_stack,
            ..ChartState::default()
        };
    }

    /// True while a chart query (or the memory chart's live query) is in flight.
    pub fn busy(&self) -> bool {
        self.pending.is_some() || self.memory.live_pending.is_some()
    }

    /// True when `id` is the chart query in flight.
    pub fn awaits(&self, id: u32) -> bool {
        self.pending.as_ref().is_some_and(|(p, _)| *p == id)
    }

    /// The next query to send: none while one is in flight, nothing is loaded, or all is here.
    pub fn next_query(&self) -> Option<Query> {
        if self.pending.is_some() || self.span_ns <= 0 {
            return None;
        }
        Some(match self.need()? {
            Need::Steps => Query::Steps { workload: Workload::default() },
            Need::Kernels => Query::Kernels { range_ns: None },
            Need::Counters => Query::Counters {
                start_ns: 0,
                end_ns: self.span_ns,
                buckets: COUNTER_BUCKETS,
            },
            Need::Memory => Query::Memory {
                device: self.memory.device.clone(),
                buckets: COUNTER_BUCKETS,
                top: LIVE_ROWS,
            },
            Need::Roofline => Query::Roofline,
            Need::Histogram(name) => Query::Histogram {
                name,
                bins: HISTOGRAM_BINS,
            },
        })
    }

    fn need(&self) -> Option<Need> {
        if self.steps.is_none() {
            Some(Need::Steps)
        } else if self.kernels.is_none() {
            Some(Need::Kernels)
        } else if self.counters.is_none() {
            Some(Need::Counters)
        } else if self.memory.data.is_none() {
            Some(Need::Memory)
        } else if self.roofline.is_none() {
            Some(Need::Roofline)
        } else {
            let name = self.kernel.as_ref()?;
            let shown = self.histogram.as_ref().is_some_and(|h| &h.name == name);
            (!shown).then(|| Need::Histogram(name.clone()))
        }
    }

    /// Records that the query [`ChartState::next_query`] returned was sent as `id`.
    pub fn sent(&mut self, id: u32) {
        if let Some(need) = self.need() {
            self.pending = Some((id, need));
        }
    }

    /// Applies the answer to `id`; others are ignored. An answer of an unexpected kind counts
    /// as an empty one, so the loop moves on.
    pub fn apply(&mut self, id: u32, answer: Answer) {
        if !self.awaits(id) {
            return;
        }
        let Some((_, need)) = self.pending.take() else {
            return;
        };
        self.error = None;
        match (need, answer) {
            (Need::Steps, Answer::Table(t)) => {
                self.steps = Some(StepChart::from_table(&t, self.step_stack));
                self.step_table = Some(t);
            }
            (Need::Kernels, Answer::Table(t)) => self.set_kernels(top_kernels(&t)),
            (Need::Counters, Answer::Counters(set)) => self.counters = Some(set),
            (Need::Memory, Answer::Memory(m)) => self.memory.chart(*m),
            (Need::Roofline, Answer::Roofline(r)) => self.roofline = Some(*r),
            (Need::Histogram(_), Answer::Histogram(h)) => self.histogram = Some(h),
            (need, _) => self.give_up(need),
        }
    }

    /// Query `id` failed: its chart stays empty and shows `message`.
    pub fn failed(&mut self, id: u32, message: String) {
        if !self.awaits(id) {
            return;
        }
        if let Some((_, need)) = self.pending.take() {
            self.give_up(need);
        }
        self.error = Some(message);
    }

    /// Stacks the step bars by `stack` (from the table already here; no query).
    pub fn stack_steps(&mut self, stack: StepStack) {
        self.step_stack = stack;
        if let Some(t) = &self.step_table {
            self.steps = Some(StepChart::from_table(t, stack));
        }
    }

    /// Shows kernel `name`'s histogram (asked for by the next query).
    pub fn select_kernel(&mut self, name: String) {
        self.kernel = Some(name);
    }

    fn set_kernels(&mut self, picks: Vec<KernelPick>) {
        let keep = self
            .kernel
            .as_ref()
            .is_some_and(|k| picks.iter().any(|p| &p.name == k));
        if !keep {
            self.kernel = picks.first().map(|p| p.name.clone());
        }
        self.kernels = Some(picks);
    }

    /// Fills what `need` asked for with an empty value, so it is not asked again.
    fn give_up(&mut self, need: Need) {
        match need {
            Need::Steps => self.steps = Some(StepChart::default()),
            Need::Kernels => self.kernels = Some(Vec::new()),
            Need::Counters => self.counters = Some(CounterSet::default()),
            Need::Memory => self.memory.chart(MemoryData::default()),
            Need::Roofline => self.roofline = Some(RooflineData::default()),
            Need::Histogram(name) => {
                self.histogram = Some(Histogram {
                    name,
                    ..Histogram::default()
                });
            }
        }
    }
}

/// The GPU chart's legend entry of `s`: its label and what it measures (docs/definitions.md:
/// utilization is the share of time a kernel runs, SM efficiency an estimate weighted by the
/// kernels' blocks per SM).
pub fn gpu_legend(s: &CounterSeries) -> (String, &'static str) {
    let note = match s.metric.as_str() {
        "utilization" => "% of time a kernel runs",
        "sm_efficiency" => "est. % of SMs busy",
        _ => "",
    };
    (s.label.clone(), note)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use protocol::{Column, CounterSeries};

    fn col(key: &str, label: &str) -> Column {
        Column {
            key: key.into(),
            label: label.into(),
            unit: "ns".into(),
            note: None,
        }
    }

    fn steps_table() -> TableData {
        TableData {
            kind: "steps".into(),
            columns: vec![
                col("step", "Step"),
                col("step_dur", "Step dur"),
                col("kernel", "Kernel"),
                col("other", "Other"),
            ],
            rows: vec![
                vec![
                    CellValue::Int(3),
                    CellValue::Int(10),
                    CellValue::Int(6),
                    CellValue::Int(4),
                ],
                vec![
                    CellValue::Int(4),
                    CellValue::Int(9),
                    CellValue::Empty,
                    CellValue::Int(9),
                ],
            ],
            ..TableData::default()
        }
    }

    /// A steps table with the phase columns; optimizer not told apart.
    fn phases_table() -> TableData {
        let note = "No Optimizer.step# spans".to_owned();
        let mut t = steps_table();
        for key in StepStack::PhaseCpu.keys().iter().chain(StepStack::PhaseGpu.keys()) {
            let optimizer = key.starts_with("phase_optimizer");
            t.columns.push(Column {
                note: optimizer.then(|| note.clone()),
                ..col(key, key)
            });
            for (r, row) in t.rows.iter_mut().enumerate() {
                row.push(if optimizer {
                    CellValue::Empty
                } else {
                    CellValue::Int(r as i64 + 1)
                });
            }
        }
        t
    }

    fn kernels_table(rows: &[(&str, i64, i64)]) -> TableData {
        TableData {
            kind: "kernels".into(),
            columns: vec![
                col("name", "Name"),
                col("calls", "Calls"),
                col("total", "Total"),
            ],
            rows: rows
                .iter()
                .map(|&(n, calls, total)| {
                    vec![
                        CellValue::Text(n.into()),
                        CellValue::Int(calls),
                        CellValue::Int(total),
                    ]
                })
                .collect(),
            ..TableData::default()
        }
    }

    /// Sends the next query as `id` and returns it.
    fn send(c: &mut ChartState, id: u32) -> Query {
        let q = c.next_query().unwrap();
        c.sent(id);
        assert!(c.next_query().is_none(), "one query at a time");
        q
    }

    #[test]
    fn phase_stacks_pick_phase_columns_and_restack_without_a_query() {
        let cpu = StepChart::from_table(&phases_table(), StepStack::PhaseCpu);
        assert_eq!(cpu.keys, StepStack::PhaseCpu.keys());
        assert_eq!(cpu.bars[1].parts_ns, [2, 2, 2, 0]);
        assert_eq!(cpu.notes, ["No Optimizer.step# spans"]);
        let gpu = StepChart::from_table(&phases_table(), StepStack::PhaseGpu);
        assert_eq!(gpu.keys.last().map(String::as_str), Some("comm_exposed"));
        assert_eq!(gpu.bars[0].parts_ns, [1, 1, 1, 0, 1]);

        let mut c = ChartState::default();
        c.loaded(100);
        let id = 1;
        send(&mut c, id);
        c.apply(id, Answer::Table(phases_table()));
        assert_eq!(c.steps.as_ref().map(|s| s.keys.len()), Some(2));
        c.stack_steps(StepStack::PhaseGpu);
        assert_eq!(c.steps, Some(gpu));
        assert_eq!(c.next_query(), Some(Query::Kernels { range_ns: None }));
        c.loaded(100);
        assert_eq!(c.step_stack, StepStack::PhaseGpu, "the mode outlives a new load");
        assert_eq!(c.steps, None);
    }

    #[test]
    fn step_chart_picks_breakdown_columns_in_stack_order() {
        let chart = StepChart::from_table(&steps_table(), StepStack::Category);
        assert_eq!(chart.parts, ["Kernel", "Other"]);
        assert_eq!(chart.keys, ["kernel", "other"]);
        assert_eq!(
            chart.bars[0],
            StepBar {
                number: 3,
                parts_ns: vec![6, 4]
            }
        );
        assert_eq!(
            chart.bars[1],
            StepBar {
                number: 4,
                parts_ns: vec![0, 9]
            }
        );
        assert_eq!(chart.max_ns(), 10);
    }

    #[test]
    fn top_kernels_by_total_then_name() {
        let picks = top_kernels(&kernels_table(&[("b", 1, 5), ("a", 2, 5), ("c", 7, 9)]));
        let names: Vec<&str> = picks.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(picks[0].calls, 7);
    }

    #[test]
    fn queries_one_at_a_time_in_order() {
        let mut c = ChartState::default();
        assert!(c.next_query().is_none(), "nothing loaded");
        c.loaded(1_000);
        assert_eq!(send(&mut c, 1), Query::Steps { workload: Workload::default() });
        c.apply(1, Answer::Table(steps_table()));
        assert_eq!(send(&mut c, 2), Query::Kernels { range_ns: None });
        c.apply(
            2,
            Answer::Table(kernels_table(&[("k1", 3, 10), ("k2", 1, 50)])),
        );
        assert_eq!(c.kernel.as_deref(), Some("k2"), "top kernel by default");
        assert_eq!(
            send(&mut c, 3),
            Query::Counters {
                start_ns: 0,
                end_ns: 1_000,
                buckets: COUNTER_BUCKETS
            }
        );
        let series = CounterSeries {
            metric: "utilization".into(),
            ..CounterSeries::default()
        };
        c.apply(
            3,
            Answer::Counters(CounterSet {
                series: vec![series],
                ..CounterSet::default()
            }),
        );
        assert_eq!(
            send(&mut c, 4),
            Query::Memory { device: None, buckets: COUNTER_BUCKETS, top: LIVE_ROWS }
        );
        c.apply(4, Answer::Memory(Box::new(MemoryData { device: "cpu".into(), ..MemoryData::default() })));
        assert_eq!(c.memory.data.as_ref().map(|m| m.device.as_str()), Some("cpu"));
        assert_eq!(send(&mut c, 5), Query::Roofline);
        c.apply(5, Answer::Roofline(Box::default()));
        assert_eq!(c.roofline, Some(RooflineData::default()));
        assert_eq!(
            send(&mut c, 6),
            Query::Histogram {
                name: "k2".into(),
                bins: HISTOGRAM_BINS
            }
        );
        c.apply(
            6,
            Answer::Histogram(Histogram {
                name: "k2".into(),
                total: 1,
                ..Histogram::default()
            }),
        );
        assert!(c.next_query().is_none(), "all here");
        assert!(!c.busy());
    }

    #[test]
    fn selecting_a_kernel_asks_for_its_histogram_and_drops_a_stale_one() {
        let mut c = ChartState::default();
        c.loaded(1_000);
        c.steps = Some(StepChart::default());
        c.kernels = Some(Vec::new());
        c.counters = Some(CounterSet::default());
        c.memory.chart(MemoryData::default());
        c.roofline = Some(RooflineData::default());
        c.select_kernel("a".into());
        send(&mut c, 7);
        c.select_kernel("b".into());
        c.apply(
            7,
            Answer::Histogram(Histogram {
                name: "a".into(),
                ..Histogram::default()
            }),
        );
        assert_eq!(
            c.next_query(),
            Some(Query::Histogram {
                name: "b".into(),
                bins: HISTOGRAM_BINS
            })
        );
    }

    #[test]
    fn failures_and_stale_ids_never_loop() {
        let mut c = ChartState::default();
        c.loaded(1_000);
        send(&mut c, 1);
        c.apply(99, Answer::Table(steps_table()));
        assert!(c.busy(), "stale id ignored");
        c.failed(1, "no trace".into());
        assert_eq!(c.steps, Some(StepChart::default()));
        assert_eq!(c.error.as_deref(), Some("no trace"));
        assert_eq!(send(&mut c, 2), Query::Kernels { range_ns: None });
        c.apply(2, Answer::Findings(Vec::new()));
        assert_eq!(
            c.kernels,
            Some(Vec::new()),
            "wrong answer kind counts as empty"
        );
        c.loaded(5);
        assert_eq!(c.steps, None, "a new load clears the charts");
    }

    /// A chart of `totals.len()` one-part bars numbered from 1.
    fn chart_of(totals: &[i64]) -> StepChart {
        StepChart {
            parts: vec!["Kernel".into()],
            keys: vec!["kernel".into()],
            bars: totals
                .iter()
                .zip(1..)
                .map(|(&t, number)| StepBar {
                    number,
                    parts_ns: vec![t],
                })
                .collect(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn room_for_every_bar_draws_each_step() {
        let chart = chart_of(&[5, 9, 1]);
        let drawn = chart.slowest_per_group(6);
        let shown: Vec<(usize, usize, i64)> =
            drawn.iter().map(|&(i, n, b)| (i, n, b.number)).collect();
        assert_eq!(shown, vec![(0, 1, 1), (1, 1, 2), (2, 1, 3)]);
        assert_eq!(
            chart.slowest_per_group(0).len(),
            1,
            "a zero width still draws one bar"
        );
    }

    #[test]
    fn each_group_shows_its_slowest_step() {
        // 10 steps in 8 px: room for 4 bars, so groups of 3 (the last holds 1). Totals sum the
        // parts, so step 5 (2 + 7 = 9) beats step 4 (8 in one part).
        let mut chart = chart_of(&[3, 1, 2, 8, 0, 4, 6, 6, 5, 7]);
        chart.parts.push("Other".into());
        for b in &mut chart.bars {
            b.parts_ns.push(0);
        }
        chart.bars[4].parts_ns = vec![2, 7];
        let drawn = chart.slowest_per_group(8);
        let shown: Vec<(usize, usize, i64)> =
            drawn.iter().map(|&(i, n, b)| (i, n, b.number)).collect();
        // Groups [1..3] -> step 1 (3); [4..6] -> step 5 (9); [7..9] -> step 7 (6, first of the
        // tie with step 8); [10] -> step 10.
        assert_eq!(shown, vec![(0, 3, 1), (3, 3, 5), (6, 3, 7), (9, 1, 10)]);
        // Brute force over every width: each group is consecutive, covers every step once, and
        // no step in it is slower than the one shown.
        for width in 0..30 {
            let drawn = chart.slowest_per_group(width);
            let mut next = 0;
            for &(first, len, bar) in &drawn {
                assert_eq!(first, next, "width {width}: groups are consecutive");
                let group = &chart.bars[first..first + len];
                let total = |b: &StepBar| b.parts_ns.iter().sum::<i64>();
                assert!(group.contains(bar));
                assert!(
                    group.iter().all(|b| total(b) <= total(bar)),
                    "width {width}"
                );
                next += len;
            }
            assert_eq!(
                next,
                chart.bars.len(),
                "width {width}: every step in one group"
            );
            assert!(
                drawn.len() as u32 <= (width.max(2) / 2).max(1),
                "width {width}: at most one bar per 2 px"
            );
        }
    }

    #[test]
    fn gpu_legend_says_what_each_series_measures() {
        let series = |metric: &str| CounterSeries {
            metric: metric.into(),
            label: format!("GPU 0 {metric}"),
            ..CounterSeries::default()
        };
        assert_eq!(
            gpu_legend(&series("utilization")),
            ("GPU 0 utilization".into(), "% of time a kernel runs")
        );
        assert_eq!(gpu_legend(&series("sm_efficiency")).1, "est. % of SMs busy");
    }
}
