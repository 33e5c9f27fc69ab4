//! A step's explanation ([`crate::analysis::explain`]) as [`ExplanationData`]: the same numbers
//! in ns, the sentences the CLI prints, evidence slice ids resolved to [`protocol::SliceRef`]s
//! so the page can select them without another round trip.

use super::slice_ref;
use crate::analysis::explain::{sentence_slices, sentences, Explanation, ItemDelta};
use crate::model::Trace;
use protocol::{CategoryDeltaData, ExplanationData, ItemDeltaData};

/// The wire form of `e`, a step of `trace`.
pub fn wire(trace: &Trace, e: &Explanation) -> ExplanationData {
    let items = |items: &[ItemDelta]| -> Vec<ItemDeltaData> {
        items
            .iter()
            .map(|i| ItemDeltaData {
                name: i.name.clone(),
                step_ns: i.step_ns,
                median_ns: i.median_ns,
                step_calls: i.step_calls,
                median_calls: i.median_calls,
                slice: i.slice.and_then(|id| slice_ref(trace, id)),
            })
            .collect()
    };
    ExplanationData {
        step: e.step,
        name: e.name.clone(),
        slice: slice_ref(trace, e.slice),
        dur_ns: e.dur_ns,
        median_ns: e.median_ns,
        steps: u32::try_from(e.steps).unwrap_or(u32::MAX),
        sentences: sentences(e),
        sentence_slices: sentence_slices(e)
            .into_iter()
            .map(|id| id.and_then(|id| slice_ref(trace, id)))
            .collect(),
        categories: e
            .categories
            .iter()
            .map(|c| CategoryDeltaData {
                key: c.category.key().to_owned(),
                label: c.category.label().to_owned(),
                step_ns: c.step_ns,
                median_ns: c.median_ns,
            })
            .collect(),
        kernels: items(&e.kernels),
        ops: items(&e.ops),
    }
}
