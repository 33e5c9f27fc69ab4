//! Compare tab state as a plain struct: the baseline kept in the worker, the comparison it sent,
//! the ops' by-shape toggle and the sort of the op, kernel and module diff tables (the comparison view).
//!
//! Inputs: [`CompareState::keep`] when the app keeps the loaded trace as the baseline, then
//! [`CompareState::query`] after each candidate load, [`CompareState::sent`] with the bridge's
//! id and [`CompareState::apply`] / [`CompareState::failed`] for the reply (older ids are
//! ignored: latest wins). Output: the diff rows to show (indices, sorted) and cell values.
//!
//! Column keys (`col-<key>` test ids): `name`, `status`, then per compared column `<c>_base`,
//! `<c>_cand`, `<c>_delta` with ops' `c` in [`OP_COLUMNS`], kernels' in [`KERNEL_COLUMNS`] and
//! modules' in [`MODULE_COLUMNS`].
//! Default order: the worker's, `kinetoscope diff`'s (largest |Δ| first, unchanged rows last):
//! ops by |Δ Self CUDA| (Self CPU when neither trace has device time), kernels by |Δ Total|;
//! modules keep the tree's order (a parent before its children); [`CompareState::order`] names it.
//!
//! Invariants: `pending` is the id of the only reply wanted; the previous comparison stays shown
//! while a new one is in flight; a comparison is only asked for while `base` is set.

use super::table::Sort;
use protocol::{Answer, ComparisonData, DeltaPair, KernelDelta, ModuleDelta, OpDelta, Query};
use std::cmp::Ordering;
use std::sync::Arc;

/// Compared op columns: (key, header label, unit).
pub const OP_COLUMNS: [(&str, &str, &str); 4] = [
    ("calls", "Calls", "count"),
    ("self_cpu", "Self CPU", "ns"),
    ("self_cuda", "Self CUDA", "ns"),
    ("cuda_total", "CUDA total", "ns"),
];

/// Compared kernel columns: (key, header label, unit).
pub const KERNEL_COLUMNS: [(&str, &str, &str); 3] = [
    ("calls", "Calls", "count"),
    ("total", "Total", "ns"),
    ("mean", "Mean", "ns"),
];

/// Compared module columns: (key, header label, unit).
pub const MODULE_COLUMNS: [(&str, &str, &str); 4] = [
    ("calls", "Calls", "count"),
    ("host", "Host", "ns"),
    ("device", "Device", "ns"),
    ("backward", "Backward device", "ns"),
];

/// Which diff table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffTable {
    /// The op diff.
    Ops,
    /// The kernel diff.
    Kernels,
    /// The `nn.Module` diff.
    Modules,
}

/// Everything the compare panel shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompareState {
    /// File name of the baseline kept in the worker.
    pub base: Option<String>,
    /// The comparison (possibly stale while `pending`).
    pub data: Option<Arc<ComparisonData>>,
    /// Id of the query whose reply is awaited.
    pub pending: Option<u32>,
    /// Why the last comparison failed.
    pub error: Option<String>,
    /// Match ops by name + input shapes.
    pub by_shape: bool,
    /// Sort of the op diff; `None`: the worker's order.
    pub op_sort: Option<Sort>,
    /// Sort of the kernel diff.
    pub kernel_sort: Option<Sort>,
    /// Sort of the module diff; `None`: tree order.
    pub module_sort: Option<Sort>,
    /// A candidate URL to load once the baseline URL has loaded (`?url=&base=`).
    pub next_url: Option<String>,
}

impl CompareState {
    /// The loaded trace `name` is kept as the baseline: drops the previous comparison.
    pub fn keep(&mut self, name: &str) {
        *self = Self {
            base: Some(name.to_owned()),
            by_shape: self.by_shape,
            next_url: self.next_url.take(),
            ..Self::default()
        };
    }

    /// Forgets the baseline and the comparison.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// The comparison query, when a baseline is kept.
    pub fn query(&self) -> Option<Query> {
        self.base.as_ref().map(|_| Query::Compare {
            by_shape: self.by_shape,
        })
    }

    /// Sets the by-shape toggle; returns the query to send.
    pub fn set_by_shape(&mut self, on: bool) -> Option<Query> {
        self.by_shape = on;
        self.query()
    }

    /// Records that query `id` was sent; its reply is the only one wanted.
    pub fn sent(&mut self, id: u32) {
        self.pending = Some(id);
    }

    /// True when the reply to `id` is awaited.
    pub fn awaits(&self, id: u32) -> bool {
        self.pending == Some(id)
    }

    /// Applies the answer to query `id`; false when it is not awaited.
    pub fn apply(&mut self, id: u32, answer: Answer) -> bool {
        if !self.awaits(id) {
            return false;
        }
        self.pending = None;
        if let Answer::Comparison(data) = answer {
            self.error = None;
            self.data = Some(Arc::new(*data));
        }
        true
    }

    /// Query `id` failed with `message`; false when it is not awaited.
    pub fn failed(&mut self, id: u32, message: String) -> bool {
        if !self.awaits(id) {
            return false;
        }
        self.pending = None;
        self.error = Some(message);
        true
    }

    /// The sort of `table`.
    pub fn sort(&self, table: DiffTable) -> Option<&Sort> {
        match table {
            DiffTable::Ops => self.op_sort.as_ref(),
            DiffTable::Kernels => self.kernel_sort.as_ref(),
            DiffTable::Modules => self.module_sort.as_ref(),
        }
    }

    /// The order `table`'s rows are shown in: the sort clicked, or the worker's default (see the
    /// module docs); `None` before a comparison arrived, and for modules in tree order.
    pub fn order(&self, table: DiffTable) -> Option<Order> {
        if let Some(s) = self.sort(table) {
            return Some(Order {
                sort: s.clone(),
                abs: false,
            });
        }
        let d = self.data.as_ref()?;
        let key = match table {
            DiffTable::Ops => {
                let device = d
                    .ops
                    .iter()
                    .any(|r| r.self_device_ns.base != 0.0 || r.self_device_ns.cand != 0.0);
                if device {
                    "self_cuda_delta"
                } else {
                    "self_cpu_delta"
                }
            }
            DiffTable::Kernels => "total_delta",
            DiffTable::Modules => return None,
        };
        Some(Order {
            sort: Sort {
                key: key.to_owned(),
                desc: true,
            },
            abs: true,
        })
    }

    /// Header click: the same column flips direction, another starts descending (text ascending).
    pub fn toggle_sort(&mut self, table: DiffTable, key: &str) {
        let sort = match table {
            DiffTable::Ops => &mut self.op_sort,
            DiffTable::Kernels => &mut self.kernel_sort,
            DiffTable::Modules => &mut self.module_sort,
        };
        match sort {
            Some(s) if s.key == key => s.desc = !s.desc,
            _ => {
                *sort = Some(Sort {
                    key: key.to_owned(),
                    desc: !matches!(key, "name" | "status"),
                });
            }
        }
    }

    /// Indices of the op rows in display order.
    pub fn op_rows(&self) -> Vec<usize> {
        let rows = self.data.as_ref().map_or(&[][..], |d| &d.ops[..]);
        sorted(
            rows,
            self.op_sort.as_ref(),
            |r: &OpDelta, key| op_value(r, key),
            |r| &r.name,
        )
    }

    /// Indices of the kernel rows in display order.
    pub fn kernel_rows(&self) -> Vec<usize> {
        let rows = self.data.as_ref().map_or(&[][..], |d| &d.kernels[..]);
        sorted(
            rows,
            self.kernel_sort.as_ref(),
            |r: &KernelDelta, key| kernel_value(r, key),
            |r| &r.name,
        )
    }

    /// Indices of the module rows in display order (tree order until a header is clicked).
    pub fn module_rows(&self) -> Vec<usize> {
        let rows = self.data.as_ref().map_or(&[][..], |d| &d.modules[..]);
        sorted(
            rows,
            self.module_sort.as_ref(),
            |r: &ModuleDelta, key| module_value(r, key),
            |r| &r.path,
        )
    }
}

/// The order a diff table shows its rows in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    /// The column and direction.
    pub sort: Sort,
    /// By the absolute value of the delta (the worker's default order), not the signed one.
    pub abs: bool,
}

/// A sortable value: a number or text.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    /// A number.
    Num(f64),
    /// Text.
    Text(&'a str),
}

/// Both sides of op column `c` (a key of [`OP_COLUMNS`]).
pub fn op_pair(r: &OpDelta, c: &str) -> Option<DeltaPair> {
    Some(match c {
        "calls" => r.calls,
        "self_cpu" => r.self_cpu_ns,
        "self_cuda" => r.self_device_ns,
        "cuda_total" => r.device_total_ns,
        _ => return None,
    })
}

/// Both sides of kernel column `c` (a key of [`KERNEL_COLUMNS`]).
pub fn kernel_pair(r: &KernelDelta, c: &str) -> Option<DeltaPair> {
    Some(match c {
        "calls" => r.calls,
        "total" => r.total_ns,
        "mean" => r.mean_ns,
        _ => return None,
    })
}

/// Both sides of module column `c` (a key of [`MODULE_COLUMNS`]).
pub fn module_pair(r: &ModuleDelta, c: &str) -> Option<DeltaPair> {
    Some(match c {
        "calls" => r.calls,
        "host" => r.host_ns,
        "device" => r.device_ns,
        "backward" => r.backward_device_ns,
        _ => return None,
    })
}

/// The value of `<c>_base`, `<c>_cand` or `<c>_delta` of a pair column.
fn pair_value(key: &str, pair: impl Fn(&str) -> Option<DeltaPair>) -> Option<f64> {
    let (c, side) = key.rsplit_once('_')?;
    let p = pair(c)?;
    match side {
        "base" => Some(p.base),
        "cand" => Some(p.cand),
        "delta" => Some(p.cand - p.base),
        _ => None,
    }
}

/// The value of op column `key` (see the module docs).
pub fn op_value<'a>(r: &'a OpDelta, key: &str) -> Option<Value<'a>> {
    match key {
        "name" => Some(Value::Text(&r.name)),
        "status" => Some(Value::Text(&r.status)),
        _ => pair_value(key, |c| op_pair(r, c)).map(Value::Num),
    }
}

/// The value of kernel column `key` (see the module docs).
pub fn kernel_value<'a>(r: &'a KernelDelta, key: &str) -> Option<Value<'a>> {
    match key {
        "name" => Some(Value::Text(&r.name)),
        "status" => Some(Value::Text(&r.status)),
        _ => pair_value(key, |c| kernel_pair(r, c)).map(Value::Num),
    }
}

/// The value of module column `key` (`name` sorts by path).
pub fn module_value<'a>(r: &'a ModuleDelta, key: &str) -> Option<Value<'a>> {
    match key {
        "name" => Some(Value::Text(&r.path)),
        "status" => Some(Value::Text(&r.status)),
        _ => pair_value(key, |c| module_pair(r, c)).map(Value::Num),
    }
}

/// Row indices ordered by `sort` (ties: name ascending, then the worker's order).
fn sorted<R>(
    rows: &[R],
    sort: Option<&Sort>,
    value: impl for<'a> Fn(&'a R, &str) -> Option<Value<'a>>,
    name: impl Fn(&R) -> &str,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    let Some(sort) = sort else {
        return order;
    };
    // Each row's value once, not once per comparison: reading it parses the column key.
    let values: Vec<Option<Value>> = rows.iter().map(|r| value(r, &sort.key)).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (&rows[a], &rows[b]);
        let primary = match (&values[a], &values[b]) {
            (Some(Value::Num(x)), Some(Value::Num(y))) => x.total_cmp(y),
            (Some(Value::Text(x)), Some(Value::Text(y))) => x.cmp(y),
            _ => Ordering::Equal,
        };
        let primary = if sort.desc {
            primary.reverse()
        } else {
            primary
        };
        primary.then_with(|| name(ra).cmp(name(rb)))
    });
    order
}

/// Relative change `(cand - base) / base` as `+12.3%`; empty when the base is 0.
pub fn rel_text(p: DeltaPair) -> String {
    if p.base == 0.0 {
        return String::new();
    }
    format!("{:+.1}%", (p.cand - p.base) / p.base * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, status: &str, cpu: (f64, f64)) -> OpDelta {
        OpDelta {
            name: name.into(),
            status: status.into(),
            self_cpu_ns: DeltaPair {
                base: cpu.0,
                cand: cpu.1,
            },
            ..OpDelta::default()
        }
    }

    fn with_ops(ops: Vec<OpDelta>) -> CompareState {
        let mut s = CompareState::default();
        s.keep("a.json");
        s.sent(4);
        let data = ComparisonData {
            ops,
            ..ComparisonData::default()
        };
        assert!(s.apply(4, Answer::Comparison(Box::new(data))));
        s
    }

    #[test]
    fn keeps_baseline_and_applies_only_the_awaited_answer() {
        let mut s = CompareState::default();
        assert_eq!(s.query(), None, "no baseline, no comparison");
        s.keep("base.json");
        assert_eq!(s.query(), Some(Query::Compare { by_shape: false }));
        assert_eq!(
            s.set_by_shape(true),
            Some(Query::Compare { by_shape: true })
        );
        s.sent(7);
        assert!(!s.apply(6, Answer::Comparison(Box::default())), "stale id");
        assert!(s.failed(7, "no baseline is kept".into()));
        assert_eq!(s.error.as_deref(), Some("no baseline is kept"));
        s.keep("other.json");
        assert!(
            s.by_shape && s.error.is_none(),
            "keeping keeps the toggle, drops the error"
        );
        s.clear();
        assert_eq!(s, CompareState::default());
    }

    #[test]
    fn modules_keep_tree_order_until_a_header_is_clicked() {
        let module = |path: &str, host: (f64, f64)| ModuleDelta {
            path: path.into(),
            depth: path.matches('/').count() as u16,
            status: "changed".into(),
            host_ns: DeltaPair { base: host.0, cand: host.1 },
            ..ModuleDelta::default()
        };
        let mut s = with_ops(Vec::new());
        if let Some(d) = s.data.as_mut() {
            Arc::make_mut(d).modules = vec![module("M", (10.0, 40.0)), module("M/A", (5.0, 4.0)), module("M/B", (5.0, 30.0))];
        }
        assert_eq!(s.module_rows(), [0, 1, 2], "tree order");
        assert_eq!(s.order(DiffTable::Modules), None, "no |Δ| default: the tree's order");
        s.toggle_sort(DiffTable::Modules, "host_delta");
        assert_eq!(s.module_rows(), [0, 2, 1]);
        s.toggle_sort(DiffTable::Modules, "host_delta");
        assert_eq!(s.module_rows(), [1, 2, 0]);
        assert_eq!((s.op_sort.clone(), s.kernel_sort.clone()), (None, None), "tables sort independently");
    }

    #[test]
    fn sorts_by_delta_both_ways_ties_by_name() {
        let mut s = with_ops(vec![
            op("b", "changed", (10.0, 30.0)),
            op("a", "same", (5.0, 5.0)),
            op("c", "appeared", (0.0, 40.0)),
            op("d", "disappeared", (20.0, 0.0)),
            op("e", "same", (1.0, 1.0)),
        ]);
        assert_eq!(s.op_rows(), vec![0, 1, 2, 3, 4], "worker order by default");
        s.toggle_sort(DiffTable::Ops, "self_cpu_delta");
        assert_eq!(
            s.op_sort,
            Some(Sort {
                key: "self_cpu_delta".into(),
                desc: true
            })
        );
        assert_eq!(s.op_rows(), vec![2, 0, 1, 4, 3]);
        s.toggle_sort(DiffTable::Ops, "self_cpu_delta");
        assert_eq!(s.op_rows(), vec![3, 1, 4, 0, 2]);
        s.toggle_sort(DiffTable::Ops, "name");
        assert_eq!(
            s.op_sort.as_ref().map(|x| x.desc),
            Some(false),
            "text starts ascending"
        );
        assert_eq!(s.op_rows(), vec![1, 0, 2, 3, 4]);
        assert_eq!(s.kernel_sort, None, "tables sort independently");
    }

    #[test]
    fn default_order_is_the_workers_abs_delta() {
        let mut s = CompareState::default();
        assert_eq!(s.order(DiffTable::Ops), None, "no comparison yet");
        s = with_ops(vec![op("a", "same", (1.0, 1.0))]);
        let order = |key: &str, desc, abs| Order {
            sort: Sort {
                key: key.into(),
                desc,
            },
            abs,
        };
        assert_eq!(
            s.order(DiffTable::Ops),
            Some(order("self_cpu_delta", true, true)),
            "no device time: Self CPU"
        );
        assert_eq!(s.order(DiffTable::Kernels), Some(order("total_delta", true, true)));
        let mut gpu = op("g", "changed", (0.0, 0.0));
        gpu.self_device_ns.cand = 5.0;
        s = with_ops(vec![gpu]);
        assert_eq!(
            s.order(DiffTable::Ops),
            Some(order("self_cuda_delta", true, true))
        );
        s.toggle_sort(DiffTable::Ops, "calls_delta");
        assert_eq!(s.order(DiffTable::Ops), Some(order("calls_delta", true, false)));
    }

    #[test]
    fn values_and_relative_text() {
        let r = op("x", "changed", (200.0, 150.0));
        assert_eq!(op_value(&r, "self_cpu_delta"), Some(Value::Num(-50.0)));
        assert_eq!(op_value(&r, "self_cpu_base"), Some(Value::Num(200.0)));
        assert_eq!(op_value(&r, "status"), Some(Value::Text("changed")));
        assert_eq!(op_value(&r, "bogus_delta"), None);
        assert_eq!(rel_text(r.self_cpu_ns), "-25.0%");
        assert_eq!(
            rel_text(DeltaPair {
                base: 0.0,
                cand: 3.0
            }),
            ""
        );
    }
}
