//! The Steps tab's "why is this step slow?" as a plain struct: which step was asked for (the
//! slowest until a row is clicked), the engine's [`ExplanationData`] for it, and its rows as
//! the explanation panel lists them (categories, then kernels, then ops, each with its
//! difference from the median step and, for kernels and ops, the evidence slice).
//!
//! Inputs: [`ExplainState::ask`] when the Steps tab opens or a step row is clicked, then the
//! worker's answer or failure for the query id recorded by [`ExplainState::sent`] (latest wins:
//! any other id is ignored). The numbers are the engine's, unchanged; this module only orders
//! and formats them.

use super::format;
use protocol::{Answer, ExplanationData, ItemDeltaData, Query, SliceRef};
use std::sync::Arc;

/// The explanation panel's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExplainState {
    /// The step asked for last (`Some(None)`: the slowest); `None` before any ask.
    pub asked: Option<Option<u64>>,
    /// The explanation shown.
    pub data: Option<Arc<ExplanationData>>,
    /// Why the last ask failed (a trace without complete steps, an unknown step).
    pub error: Option<String>,
    /// Id of the query awaited.
    pub pending: Option<u32>,
}

/// One row of the explanation's table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `category`, `kernel` or `op`.
    pub kind: &'static str,
    /// Category label, kernel or op name.
    pub name: String,
    /// In the step, ns.
    pub step_ns: i64,
    /// Median over the complete steps, ns.
    pub median_ns: f64,
    /// Calls in the step and median calls (kernels and ops).
    pub calls: Option<(u32, f64)>,
    /// The evidence to select (kernels and ops that ran in the step).
    pub slice: Option<SliceRef>,
}

impl Row {
    /// Step minus median, ns.
    pub fn delta_ns(&self) -> f64 {
        self.step_ns as f64 - self.median_ns
    }

    /// The difference as display text with its sign: `+3.00 ms`, `-325 µs`.
    pub fn delta_text(&self) -> String {
        signed_ns(self.delta_ns())
    }

    /// The step's calls alone (`998`), empty for categories: a trace's only step.
    pub fn step_calls_text(&self) -> String {
        self.calls.map_or_else(String::new, |(step, _)| format::count(u64::from(step)))
    }

    /// Calls as `998 / 998` (step / median), empty for categories.
    pub fn calls_text(&self) -> String {
        self.calls.map_or_else(String::new, |(step, median)| {
            format!("{} / {}", format::count(u64::from(step)), trim(median))
        })
    }
}

impl ExplainState {
    /// Forgets everything (a new load).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Asks for `step` (`None`: the slowest); returns the query to send, or `None` when that
    /// step is already shown or awaited.
    pub fn ask(&mut self, step: Option<u64>) -> Option<Query> {
        let awaited = self.pending.is_some() && self.asked == Some(step);
        let shown = self.pending.is_none()
            && self.data.is_some()
            && (self.asked == Some(step) || (step.is_some() && step == self.step()));
        if awaited || shown {
            return None;
        }
        self.asked = Some(step);
        Some(Query::ExplainStep { step })
    }

    /// Records that query `id` was sent; its reply is the only one wanted.
    pub fn sent(&mut self, id: u32) {
        self.pending = Some(id);
    }

    /// Whether the reply to `id` is awaited.
    pub fn awaits(&self, id: u32) -> bool {
        self.pending == Some(id)
    }

    /// Applies the answer to query `id`; false when it is not awaited.
    pub fn apply(&mut self, id: u32, answer: Answer) -> bool {
        if !self.awaits(id) {
            return false;
        }
        self.pending = None;
        if let Answer::Explanation(data) = answer {
            self.data = Some(Arc::from(data));
            self.error = None;
        }
        true
    }

    /// Query `id` failed with `message`; false when it is not awaited.
    pub fn failed(&mut self, id: u32, message: String) -> bool {
        if !self.awaits(id) {
            return false;
        }
        self.pending = None;
        self.data = None;
        self.error = Some(message);
        true
    }

    /// The step number explained.
    pub fn step(&self) -> Option<u64> {
        self.data.as_ref().map(|d| d.step)
    }
}

/// The rows of `e`: its categories, kernels and ops, each kind most different first (the
/// engine's order).
pub fn rows(e: &ExplanationData) -> Vec<Row> {
    let categories = e.categories.iter().map(|c| Row {
        kind: "category",
        name: c.label.clone(),
        step_ns: c.step_ns,
        median_ns: c.median_ns,
        calls: None,
        slice: None,
    });
    let item = |kind: &'static str| {
        move |i: &ItemDeltaData| Row {
            kind,
            name: i.name.clone(),
            step_ns: i.step_ns,
            median_ns: i.median_ns,
            calls: Some((i.step_calls, i.median_calls)),
            slice: i.slice.clone(),
        }
    };
    categories
        .chain(e.kernels.iter().map(item("kernel")))
        .chain(e.ops.iter().map(item("op")))
        .collect()
}

/// A signed duration in ns: `+3.00 ms`, `-325 µs`, `0 ns`.
pub fn signed_ns(ns: f64) -> String {
    let sign = if ns > 0.0 {
        "+"
    } else if ns < 0.0 {
        "-"
    } else {
        ""
    };
    format!("{sign}{}", format::span_us(ns.abs() / 1e3))
}

/// A median count: `106`, `52.5`.
fn trim(x: f64) -> String {
    if x.fract() == 0.0 {
        format::count(x.max(0.0) as u64)
    } else {
        format!("{x:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::CategoryDeltaData;

    fn data(step: u64) -> ExplanationData {
        ExplanationData {
            step,
            categories: vec![CategoryDeltaData {
                key: "kernel".into(),
                label: "Kernel".into(),
                step_ns: 5_000_000,
                median_ns: 2_000_000.0,
            }],
            kernels: vec![ItemDeltaData {
                name: "gemm".into(),
                step_ns: 4_000_000,
                median_ns: 1_000_000.0,
                step_calls: 3,
                median_calls: 2.5,
                slice: Some(SliceRef {
                    id: 7,
                    name: "gemm".into(),
                    ..SliceRef::default()
                }),
            }],
            ops: vec![ItemDeltaData {
                name: "aten::zero_".into(),
                step_ns: 1_000,
                median_ns: 326_000.0,
                step_calls: 1_000,
                median_calls: 1_000.0,
                slice: None,
            }],
            ..ExplanationData::default()
        }
    }

    #[test]
    fn asks_once_per_step_and_keeps_only_the_awaited_answer() {
        let mut s = ExplainState::default();
        assert_eq!(s.ask(None), Some(Query::ExplainStep { step: None }));
        s.sent(1);
        assert_eq!(s.ask(None), None, "the slowest is already awaited");
        assert_eq!(s.ask(Some(4)), Some(Query::ExplainStep { step: Some(4) }));
        s.sent(2);
        assert!(
            !s.apply(1, Answer::Explanation(Box::new(data(9)))),
            "superseded"
        );
        assert!(s.apply(2, Answer::Explanation(Box::new(data(4)))));
        assert_eq!((s.step(), s.pending), (Some(4), None));
        assert_eq!(s.ask(Some(4)), None, "shown");
        assert!(s.ask(Some(5)).is_some());
        s.sent(3);
        assert!(s.failed(3, "no ProfilerStep#5".into()));
        assert_eq!(
            (s.step(), s.error.as_deref()),
            (None, Some("no ProfilerStep#5"))
        );
        assert!(s.ask(Some(5)).is_some(), "a failed ask may be repeated");
    }

    #[test]
    fn rows_list_categories_then_kernels_then_ops_with_signed_deltas() {
        let rows = rows(&data(4));
        let kinds: Vec<_> = rows.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, ["category", "kernel", "op"]);
        assert_eq!(rows[0].delta_text(), "+3.00 ms");
        assert_eq!(rows[0].calls_text(), "");
        assert_eq!(rows[1].calls_text(), "3 / 2.5");
        assert_eq!(rows[1].slice.as_ref().map(|s| s.id), Some(7));
        assert_eq!(rows[2].delta_text(), "-325 µs");
        assert_eq!(rows[2].calls_text(), "1,000 / 1,000");
        assert_eq!(signed_ns(0.0), "0 ns");
    }
}
