//! Table view state as a plain struct: which tab is shown, the table the worker sent, the sort
//! column and direction, the name filter and the by-shape toggle.
//!
//! Inputs: [`TableState::select`] / [`TableState::set_by_shape`] (which return the query to send,
//! if any), [`TableState::sent`] with the bridge's request id, then the worker's `Table` or
//! `QueryFailed` reply for that id (older ids are ignored: latest wins). Output: the visible rows
//! (filtered, sorted) as indices into the table, and formatted cells.
//!
//! Invariants: `pending` is the id of the only reply still wanted; the previous table stays shown
//! while a new one is in flight (stale-while-revalidate); a new load drops table and pending.
//! Default sort: ops by Self CUDA desc when any device time, else Self CPU desc; kernels by Total
//! desc; steps in step order (no sort key).

use super::columns::ColumnChoice;
use super::format;
use super::flame::FlameTree;
use super::modules::ModuleTree;
use protocol::{Answer, CellValue, FromWorker, Query, TableData, Workload};
use std::cmp::Ordering;
use std::sync::Arc;

/// The tabs under the header; the strings are test ids (`tab-<as_str>`) and table kinds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tab {
    /// The trace summary (no query).
    #[default]
    Summary,
    /// The op table.
    Ops,
    /// The kernel table.
    Kernels,
    /// The step table.
    Steps,
    /// The `nn.Module` tree (its own answer, kept in [`TableState::modules`]).
    Modules,
    /// The call tree's icicle chart (its own answer, kept in [`TableState::flame`]).
    Flame,
    /// The cheatsheet's findings (no table query).
    Findings,
    /// The charts (their own queries, see `state::charts`).
    Charts,
    /// Baseline vs loaded trace (its own query, see `state::compare`).
    Compare,
    /// The open distributed run (its own query, see `state::run`); listed only while a run is
    /// open.
    Run,
}

impl Tab {
    /// All tabs in display order.
    pub const ALL: [Tab; 10] = [
        Tab::Run,
        Tab::Summary,
        Tab::Findings,
        Tab::Ops,
        Tab::Kernels,
        Tab::Steps,
        Tab::Modules,
        Tab::Flame,
        Tab::Charts,
        Tab::Compare,
    ];

    /// `summary`, `ops`, `kernels`, `steps`, `modules`, `charts`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            Tab::Summary => "summary",
            Tab::Ops => "ops",
            Tab::Kernels => "kernels",
            Tab::Steps => "steps",
            Tab::Modules => "modules",
            Tab::Flame => "flame",
            Tab::Findings => "findings",
            Tab::Charts => "charts",
            Tab::Compare => "compare",
            Tab::Run => "run",
        }
    }

    /// The tab's label.
    pub fn label(self) -> &'static str {
        match self {
            Tab::Summary => "Summary",
            Tab::Ops => "Ops",
            Tab::Kernels => "Kernels",
            Tab::Steps => "Steps",
            Tab::Modules => "Modules",
            Tab::Flame => "Flame",
            Tab::Findings => "Findings",
            Tab::Charts => "Charts",
            Tab::Compare => "Compare",
            Tab::Run => "Run",
        }
    }
}

impl Tab {
    /// Whether the scope select (whole trace, a step, the range) applies to the tab.
    pub fn scoped(self) -> bool {
        matches!(self, Tab::Ops | Tab::Kernels | Tab::Modules | Tab::Flame)
    }
}

/// A sort column and direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sort {
    /// Column key.
    pub key: String,
    /// Descending.
    pub desc: bool,
}

/// What the op and kernel tables and the module tree cover.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// The whole trace.
    #[default]
    Trace,
    /// `ProfilerStep#n` over `[start, end)` ns.
    Step(u64, i64, i64),
    /// The range selected on the timeline, ns.
    Range(i64, i64),
}

impl Scope {
    /// The time range, if any.
    pub fn range_ns(&self) -> Option<(i64, i64)> {
        match *self {
            Scope::Trace => None,
            Scope::Step(_, a, b) | Scope::Range(a, b) => Some((a, b)),
        }
    }

    /// `trace`, `step` or `range` (the scope select's value and a test contract).
    pub fn kind(&self) -> &'static str {
        match self {
            Scope::Trace => "trace",
            Scope::Step(..) => "step",
            Scope::Range(..) => "range",
        }
    }
}

/// Everything the table panel shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableState {
    /// The tab shown.
    pub tab: Tab,
    /// Group ops by input shape.
    pub by_shape: bool,
    /// What the op and kernel tables cover.
    pub scope: Scope,
    /// The table for `tab` (possibly stale while `pending`).
    pub data: Option<Arc<TableData>>,
    /// The module tree, on the Modules tab (possibly stale while `pending`).
    pub modules: Option<ModuleTree>,
    /// The call tree, on the Flame tab (possibly stale while `pending`).
    pub flame: Option<FlameTree>,
    /// The Flame tab colors boxes by their change against the kept baseline, not by kind.
    pub flame_growth: bool,
    /// Why the last query failed.
    pub error: Option<String>,
    /// Sort column; `None`: the worker's order.
    pub sort: Option<Sort>,
    /// Case-insensitive substring filter on the `name` column.
    pub filter: String,
    /// Id of the query whose reply is awaited.
    pub pending: Option<u32>,
    /// The columns shown per table kind.
    pub columns: ColumnChoice,
    /// The work one step does (the Steps tab's batch size and tokens per step): adds samples/s
    /// and tokens/s to the Steps table.
    pub workload: Workload,
}

impl TableState {
    /// The query for the current tab and toggle; `None` on the summary and charts tabs.
    pub fn query(&self) -> Option<Query> {
        match self.tab {
            Tab::Summary | Tab::Findings | Tab::Charts | Tab::Compare | Tab::Run => None,
            Tab::Ops => Some(Query::Ops {
                by_shape: self.by_shape,
                range_ns: self.scope.range_ns(),
            }),
            Tab::Kernels => Some(Query::Kernels {
                range_ns: self.scope.range_ns(),
            }),
            Tab::Steps => Some(Query::Steps { workload: self.workload }),
            Tab::Modules => Some(Query::Modules { range_ns: self.scope.range_ns() }),
            Tab::Flame => Some(Query::CallTree { range_ns: self.scope.range_ns(), baseline: self.flame_growth }),
        }
    }

    /// Switches to `tab`; returns the query to send (none for the summary, findings and charts
    /// tabs).
    pub fn select(&mut self, tab: Tab) -> Option<Query> {
        if tab != self.tab {
            self.tab = tab;
            self.data = None;
            self.modules = None;
            self.flame = None;
            self.error = None;
            self.sort = None;
            self.filter.clear();
            self.pending = None;
        }
        self.query()
    }

    /// Sets the by-shape toggle; returns the query to send when on the ops tab.
    pub fn set_by_shape(&mut self, on: bool) -> Option<Query> {
        self.by_shape = on;
        self.query().filter(|_| self.tab == Tab::Ops)
    }

    /// Sets the work per step; returns the query to send when on the Steps tab.
    pub fn set_workload(&mut self, workload: Workload) -> Option<Query> {
        if workload == self.workload {
            return None;
        }
        self.workload = workload;
        self.query().filter(|_| self.tab == Tab::Steps)
    }

    /// Sets the scope; returns the query to send when the tab shown depends on it.
    pub fn set_scope(&mut self, scope: Scope) -> Option<Query> {
        if scope == self.scope {
            return None;
        }
        self.scope = scope;
        self.query().filter(|_| self.tab.scoped())
    }

    /// Records that query `id` was sent; its reply is the only one wanted.
    pub fn sent(&mut self, id: u32) {
        self.pending = Some(id);
    }

    /// A new load started: drops the table, any awaited reply and the scope (the tab stays).
    pub fn reset(&mut self) {
        self.data = None;
        self.modules = None;
        self.flame = None;
        self.error = None;
        self.pending = None;
        self.scope = Scope::Trace;
    }

    /// Applies a `Table` or `QueryFailed` reply; others and stale ids are ignored.
    pub fn apply(&mut self, msg: FromWorker) {
        match msg {
            FromWorker::Answer { id, answer } if self.pending == Some(id) => {
                let table = match *answer {
                    Answer::Table(table) => table,
                    Answer::Modules(tree) => {
                        self.pending = None;
                        self.error = None;
                        self.modules = Some(ModuleTree::new(*tree));
                        return;
                    }
                    Answer::CallTree(tree) => {
                        self.pending = None;
                        self.error = None;
                        // A new scope keeps the time the boxes are sized by, and zooms out.
                        let metric = self.flame.as_ref().map(|f| f.metric).unwrap_or_default();
                        self.flame = Some(FlameTree::new(*tree, metric));
                        return;
                    }
                    _ => return,
                };
                self.pending = None;
                self.error = None;
                let keep = self
                    .sort
                    .as_ref()
                    .is_some_and(|s| table.columns.iter().any(|c| c.key == s.key));
                if !keep {
                    self.sort = default_sort(&table);
                }
                self.data = Some(Arc::from(table));
            }
            FromWorker::QueryFailed { id, message } if self.pending == Some(id) => {
                self.pending = None;
                self.error = Some(message);
            }
            _ => {}
        }
    }

    /// Header click: the same column flips direction, another starts descending (text ascending).
    pub fn toggle_sort(&mut self, key: &str) {
        match &mut self.sort {
            Some(s) if s.key == key => s.desc = !s.desc,
            _ => {
                let text = match &self.data {
                    Some(d) => d.columns.iter().find(|c| c.key == key).is_some_and(|c| c.unit == "text"),
                    // The module tree's one text column.
                    None => self.tab == Tab::Modules && key == "name",
                };
                self.sort = Some(Sort {
                    key: key.to_owned(),
                    desc: !text,
                });
            }
        }
    }

    /// The module tree's rows to show, in order ([`ModuleTree::visible`] with this sort and filter).
    pub fn module_rows(&self) -> Vec<usize> {
        let sort = self.sort.as_ref().map(|s| (s.key.as_str(), s.desc));
        self.modules.as_ref().map_or_else(Vec::new, |m| m.visible(sort, &self.filter))
    }

    /// Indices of the rows to show: filtered by name, then sorted (stable).
    pub fn visible_rows(&self) -> Vec<usize> {
        let Some(data) = &self.data else {
            return Vec::new();
        };
        let needle = self.filter.trim().to_lowercase();
        let name = data.columns.iter().position(|c| c.key == "name");
        let mut rows: Vec<usize> = (0..data.rows.len())
            .filter(|&i| match (name, needle.is_empty()) {
                (_, true) => true,
                (Some(col), false) => match data.rows[i].get(col) {
                    Some(CellValue::Text(t)) => t.to_lowercase().contains(&needle),
                    _ => false,
                },
                (None, false) => true,
            })
            .collect();
        if let Some(sort) = &self.sort {
            if let Some(col) = data.columns.iter().position(|c| c.key == sort.key) {
                rows.sort_by(|&a, &b| {
                    let ord = compare(data.rows[a].get(col), data.rows[b].get(col));
                    if sort.desc {
                        ord.reverse()
                    } else {
                        ord
                    }
                });
            }
        }
        rows
    }
}

/// Ops: Self CUDA desc when any device time, else Self CPU desc; kernels: Total desc; steps:
/// none (step order).
pub fn default_sort(table: &TableData) -> Option<Sort> {
    let key = match table.kind.as_str() {
        "ops" => {
            let device = table
                .totals
                .get("self_device_total_ns")
                .copied()
                .unwrap_or(0.0);
            if device > 0.0 {
                "self_cuda"
            } else {
                "self_cpu"
            }
        }
        "kernels" => "total",
        _ => return None,
    };
    Some(Sort {
        key: key.to_owned(),
        desc: true,
    })
}

/// Numbers before text before empty cells (ascending); numbers by value, text by code point.
fn compare(a: Option<&CellValue>, b: Option<&CellValue>) -> Ordering {
    fn rank(c: Option<&CellValue>) -> (u8, f64, &str) {
        match c {
            Some(CellValue::Int(n)) => (0, *n as f64, ""),
            Some(CellValue::Float(x)) => (0, *x, ""),
            Some(CellValue::Text(t)) => (1, 0.0, t.as_str()),
            Some(CellValue::Empty) | None => (2, 0.0, ""),
        }
    }
    let (ra, xa, ta) = rank(a);
    let (rb, xb, tb) = rank(b);
    ra.cmp(&rb).then(xa.total_cmp(&xb)).then_with(|| ta.cmp(tb))
}

/// A cell as display text for a column of `unit`.
pub fn cell_text(cell: &CellValue, unit: &str) -> String {
    let x = match cell {
        CellValue::Text(t) => return t.clone(),
        CellValue::Empty => return "—".to_owned(),
        CellValue::Int(n) => *n as f64,
        CellValue::Float(x) => *x,
    };
    match unit {
        "ns" => format::span_us(x / 1e3),
        "pct" => format!("{x:.2}%"),
        "bytes" => format::bytes(x.max(0.0) as u64),
        // Signed: a Self Mem is negative when the op's children allocated more than it kept.
        "mem" if x < 0.0 => format!("-{}", format::bytes((-x) as u64)),
        "mem" => format::bytes(x as u64),
        "flops" => format::flops(x),
        "rate" => format::rate(x),
        _ if matches!(cell, CellValue::Int(_)) || x.fract() == 0.0 => match cell {
            CellValue::Int(n) if *n < 0 => format!("-{}", format::count(n.unsigned_abs())),
            _ => format::count(x.max(0.0) as u64),
        },
        _ => format!("{x:.2}"),
    }
}

/// A cell's raw value for `data-value` (empty for text and empty cells).
pub fn cell_value(cell: &CellValue) -> String {
    match cell {
        CellValue::Int(n) => n.to_string(),
        CellValue::Float(x) => x.to_string(),
        CellValue::Text(_) | CellValue::Empty => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::Column;
    use std::collections::BTreeMap;

    fn table(kind: &str, device_ns: f64) -> TableData {
        let columns = [
            ("name", "text"),
            ("self_cpu", "ns"),
            ("self_cuda", "ns"),
            ("calls", "count"),
        ]
        .map(|(k, u)| Column {
            key: k.into(),
            label: k.into(),
            unit: u.into(),
            note: None,
        })
        .to_vec();
        let row = |name: &str, cpu: i64, calls: i64| {
            vec![
                CellValue::Text(name.into()),
                CellValue::Int(cpu),
                CellValue::Int(0),
                CellValue::Int(calls),
            ]
        };
        TableData {
            kind: kind.into(),
            columns,
            rows: vec![
                row("aten::add", 5, 30),
                row("aten::mm", 50, 10),
                row("aten::addmm", 1, 20),
            ],
            totals: BTreeMap::from([("self_device_total_ns".to_owned(), device_ns)]),
        }
    }

    fn loaded(kind: &str, device_ns: f64) -> TableState {
        let mut s = TableState::default();
        assert!(s.select(Tab::Ops).is_some());
        s.sent(4);
        s.apply(FromWorker::Answer {
            id: 4,
            answer: Box::new(Answer::Table(table(kind, device_ns))),
        });
        s
    }

    #[test]
    fn default_sort_and_header_toggle() {
        let mut s = loaded("ops", 0.0);
        assert_eq!(
            s.sort,
            Some(Sort {
                key: "self_cpu".into(),
                desc: true
            })
        );
        assert_eq!(s.visible_rows(), vec![1, 0, 2]);
        s.toggle_sort("calls");
        assert_eq!(s.visible_rows(), vec![0, 2, 1]);
        s.toggle_sort("calls");
        assert_eq!(s.visible_rows(), vec![1, 2, 0]);
        s.toggle_sort("name");
        assert_eq!(
            s.sort.as_ref().map(|s| s.desc),
            Some(false),
            "text starts ascending"
        );
        assert_eq!(s.visible_rows(), vec![0, 2, 1]);
        assert_eq!(
            loaded("ops", 7.0).sort.map(|s| s.key).as_deref(),
            Some("self_cuda")
        );
        assert_eq!(
            loaded("kernels", 0.0).sort.map(|s| s.key).as_deref(),
            Some("total")
        );
        assert_eq!(loaded("steps", 0.0).sort, None);
    }

    #[test]
    fn filter_is_a_case_insensitive_name_substring() {
        let mut s = loaded("ops", 0.0);
        s.filter = "ADD".into();
        assert_eq!(s.visible_rows(), vec![0, 2]);
        s.filter = "zzz".into();
        assert!(s.visible_rows().is_empty());
    }

    #[test]
    fn latest_reply_wins_and_tabs_reset() {
        let mut s = loaded("ops", 0.0);
        assert!(s.set_by_shape(true).is_some());
        s.sent(5);
        s.apply(FromWorker::Answer {
            id: 4,
            answer: Box::new(Answer::Table(table("ops", 1.0))),
        });
        assert_eq!(s.pending, Some(5), "a stale reply is ignored");
        s.apply(FromWorker::QueryFailed {
            id: 5,
            message: "no trace".into(),
        });
        assert_eq!((s.pending, s.error.as_deref()), (None, Some("no trace")));
        assert!(s.data.is_some(), "the previous table stays");
        assert_eq!(s.select(Tab::Summary), None);
        assert!(s.data.is_none());
        assert_eq!(s.set_by_shape(false), None, "no ops query off the ops tab");
    }

    #[test]
    fn cells_format_by_unit() {
        assert_eq!(cell_text(&CellValue::Int(1_500_000), "ns"), "1.50 ms");
        assert_eq!(cell_text(&CellValue::Float(85.333), "pct"), "85.33%");
        assert_eq!(cell_text(&CellValue::Int(12_345), "count"), "12,345");
        assert_eq!(cell_text(&CellValue::Float(2.5), "count"), "2.50");
        assert_eq!(cell_text(&CellValue::Text("x".into()), "text"), "x");
        assert_eq!(cell_text(&CellValue::Empty, "ns"), "—");
        assert_eq!(cell_text(&CellValue::Int(-12_345), "mem"), "-12.3 KB");
        assert_eq!(cell_text(&CellValue::Int(812), "mem"), "812 B");
        assert_eq!(cell_value(&CellValue::Int(3)), "3");
    }
}
