//! Findings on the wire: each finding's text and its evidence as slice references, so the
//! cheatsheet panel can zoom to and outline the evidence without another query.

use super::slice_ref;
use crate::finding::Finding;
use crate::model::Trace;
use protocol::FindingData;

/// The wire form of `findings`, in the order given (severity, then impact, then rule).
pub fn wire(trace: &Trace, findings: &[Finding]) -> Vec<FindingData> {
    findings
        .iter()
        .map(|f| FindingData {
            rule: f.rule.to_owned(),
            severity: f.severity.as_str().to_owned(),
            title: f.title.clone(),
            why: f.why.clone(),
            meaning: f.meaning.clone(),
            try_this: f.try_this.clone(),
            slices: f.evidence.slices.iter().filter_map(|&id| slice_ref(trace, id)).collect(),
            total: f.evidence.total,
            range_ns: f.evidence.range_ns,
            impact_us: f.impact.map(|i| i.per_step_ns as f64 / 1000.0),
            impact_pct: f.impact.map(|i| i.pct),
            remedy: f.remedy.as_ref().map(|r| (r.per_step_ns as f64 / 1000.0, r.pct, r.what.to_owned())),
        })
        .collect()
}
