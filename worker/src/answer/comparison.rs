//! A [`Comparison`] and both sides' findings as the protocol's [`ComparisonData`], for the
//! Compare tab.
//!
//! **What.** Copies the comparison's summary rows, verdict text, op, kernel and module diff rows into
//! wire types (statuses as their `appeared` / `disappeared` / `changed` / `same` keys), and
//! diffs the two sides' cheatsheet findings by rule id: `new` (candidate only), `gone`
//! (baseline only), `kept` (both).
//!
//! **Units.** Times stay ns (the CLI's JSON divides by 1000, the app formats ns itself),
//! rates percent 0–100, memory bytes; op / kernel values are per step when `per_step`.
//!
//! **Order.** Rows keep the comparison's order; findings lists are in rule id order. A rule
//! that fires several times counts once; its title is the first finding's on each side.
//!
//! **Cost.** O(rows + findings); the comparison itself is [`crate::compare`]'s.

use crate::compare::{Comparison, Pair, Unit};
use crate::finding::{Finding, Severity};
use protocol::{
    ComparisonData, DeltaPair, FindingChange, FindingsDiff, KernelDelta, ModuleDelta, OpDelta, SummaryDelta,
};
use std::collections::BTreeMap;

/// File names of the two sides.
#[derive(Clone, Copy, Debug)]
pub struct Names<'a> {
    /// Baseline file name.
    pub base: &'a str,
    /// Candidate file name.
    pub cand: &'a str,
}

/// The wire form of `c`, with the findings diff of `base_findings` / `cand_findings`.
pub fn comparison_data(
    c: &Comparison,
    names: Names<'_>,
    base_findings: &[Finding],
    cand_findings: &[Finding],
) -> ComparisonData {
    ComparisonData {
        base: names.base.to_owned(),
        cand: names.cand.to_owned(),
        base_steps: c.base_steps as u64,
        cand_steps: c.cand_steps as u64,
        per_step: c.per_step,
        by_shape: c.by_shape,
        verdict: c.verdict.text.clone(),
        summary: c
            .summary
            .iter()
            .map(|r| SummaryDelta {
                key: r.metric.key().to_owned(),
                label: r.metric.label().to_owned(),
                unit: unit_key(r.metric.unit()).to_owned(),
                base: r.base,
                cand: r.cand,
                delta: r.delta,
                rel_delta: r.rel_delta,
            })
            .collect(),
        ops: c
            .ops
            .iter()
            .map(|r| OpDelta {
                name: r.name.clone(),
                input_shapes: r.input_shapes.clone(),
                is_annotation: r.is_annotation,
                status: r.status.key().to_owned(),
                calls: pair(r.calls),
                self_cpu_ns: pair(r.self_cpu_ns),
                self_device_ns: pair(r.self_device_ns),
                device_total_ns: pair(r.device_total_ns),
            })
            .collect(),
        kernels: c
            .kernels
            .iter()
            .map(|r| KernelDelta {
                name: r.name.clone(),
                status: r.status.key().to_owned(),
                tensor_cores: r.tensor_cores,
                calls: pair(r.calls),
                total_ns: pair(r.total_ns),
                mean_ns: pair(r.mean_ns),
            })
            .collect(),
        modules: c
            .modules
            .iter()
            .map(|r| ModuleDelta {
                path: r.path.clone(),
                depth: r.depth,
                status: r.status.key().to_owned(),
                calls: pair(r.calls),
                host_ns: pair(r.host_ns),
                device_ns: pair(r.device_ns),
                backward_device_ns: pair(r.backward_device_ns),
            })
            .collect(),
        findings: findings_diff(base_findings, cand_findings),
    }
}

/// `ns`, `pct`, `bytes`, `count`.
fn unit_key(u: Unit) -> &'static str {
    match u {
        Unit::Ns => "ns",
        Unit::Pct => "pct",
        Unit::Bytes => "bytes",
        Unit::Count => "count",
    }
}

fn pair(p: Pair) -> DeltaPair {
    DeltaPair {
        base: p.base,
        cand: p.cand,
    }
}

/// Findings of both sides by rule id: candidate only, baseline only, both.
pub fn findings_diff(base: &[Finding], cand: &[Finding]) -> FindingsDiff {
    /// Highest severity, first base title, first candidate title.
    type Seen = (Severity, Option<String>, Option<String>);
    let mut rules: BTreeMap<&str, Seen> = BTreeMap::new();
    let sides = base
        .iter()
        .map(|f| (f, true))
        .chain(cand.iter().map(|f| (f, false)));
    for (f, is_base) in sides {
        let e = rules.entry(f.rule).or_insert((f.severity, None, None));
        e.0 = e.0.max(f.severity);
        let title = if is_base { &mut e.1 } else { &mut e.2 };
        title.get_or_insert_with(|| f.title.clone());
    }
    let mut diff = FindingsDiff::default();
    for (rule, (severity, base_title, cand_title)) in rules {
        let list = match (base_title.is_some(), cand_title.is_some()) {
            (true, true) => &mut diff.kept,
            (true, false) => &mut diff.gone,
            _ => &mut diff.new,
        };
        list.push(FindingChange {
            rule: rule.to_owned(),
            severity: severity.as_str().to_owned(),
            base_title,
            cand_title,
        });
    }
    diff
}
