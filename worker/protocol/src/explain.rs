//! "Why is this step slow?" on the wire: one step against the median step, the difference by
//! breakdown category, kernel and op, each kernel and op with its evidence slice.

use crate::SliceRef;
use serde::{Deserialize, Serialize};

/// Why one step took the time it took ([`crate::Query::ExplainStep`]); the numbers of
/// `kinetoscope report --explain-step N --json`'s `explanation` (there in µs, here in ns).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ExplanationData {
    /// `ProfilerStep#N`.
    pub step: u64,
    /// How the step is named: `ProfilerStep#N`, or `step N` under a step marker.
    #[serde(default)]
    pub name: String,
    /// The step's host annotation slice.
    pub slice: Option<SliceRef>,
    /// Step span, ns.
    pub dur_ns: i64,
    /// Median step span of the complete steps, ns.
    pub median_ns: f64,
    /// Complete steps the medians are over.
    pub steps: u32,
    /// A few sentences with the numbers (the CLI prints the same).
    pub sentences: Vec<String>,
    /// The slice each sentence cites, one per sentence (`None`: the categories' sentence).
    pub sentence_slices: Vec<Option<SliceRef>>,
    /// Breakdown categories, most different first.
    pub categories: Vec<CategoryDeltaData>,
    /// Kernels (device time launched in the step), most different first.
    pub kernels: Vec<ItemDeltaData>,
    /// Host ops (self time), most different first.
    pub ops: Vec<ItemDeltaData>,
}

/// One breakdown category of an [`ExplanationData`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CategoryDeltaData {
    /// The Steps table's column key (`kernel`, `dataloader`, `other`, …).
    pub key: String,
    /// Display label (`Kernel`, `DataLoader`, …).
    pub label: String,
    /// In the step, ns.
    pub step_ns: i64,
    /// Median over the complete steps, ns.
    pub median_ns: f64,
}

/// One kernel or op name of an [`ExplanationData`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ItemDeltaData {
    /// Kernel or op name.
    pub name: String,
    /// Time in the step, ns.
    pub step_ns: i64,
    /// Median per complete step, ns.
    pub median_ns: f64,
    /// Calls in the step.
    pub step_calls: u32,
    /// Median calls per complete step.
    pub median_calls: f64,
    /// The longest slice of this name in the step; `None` when it did not run in the step.
    pub slice: Option<SliceRef>,
}
