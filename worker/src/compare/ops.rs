//! Op table diff: rows of the two op tables matched by (name, is annotation, input shapes).
//!
//! Values are the op table's (`key_averages()` semantics, [`crate::analysis::ops`]) divided by
//! each trace's divisor (its step count when per step, else 1). A row missing on one side has
//! 0 there and the status says which side.

use super::sort::DiffRow;
use super::{Pair, Status};
use crate::analysis::ops::{OpRow, OpTable};
use std::collections::HashMap;

/// A compared column of the op table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpColumn {
    /// # of Calls.
    Calls,
    /// Self CPU, ns.
    SelfCpu,
    /// Self CUDA, ns.
    SelfDevice,
    /// CUDA total, ns.
    DeviceTotal,
}

impl OpColumn {
    /// Every column, in display order.
    pub const ALL: [Self; 4] = [
        Self::Calls,
        Self::SelfCpu,
        Self::SelfDevice,
        Self::DeviceTotal,
    ];

    /// Parses `calls`, `self_cpu`, `self_cuda` (`self_device`), `cuda_total` (`device_total`).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "calls" => Self::Calls,
            "self_cpu" => Self::SelfCpu,
            "self_cuda" | "self_device" => Self::SelfDevice,
            "cuda_total" | "device_total" => Self::DeviceTotal,
            _ => return None,
        })
    }

    /// Label (text report).
    pub fn label(self) -> &'static str {
        match self {
            Self::Calls => "Calls",
            Self::SelfCpu => "Self CPU",
            Self::SelfDevice => "Self CUDA",
            Self::DeviceTotal => "CUDA total",
        }
    }
}

/// One row of the op diff.
#[derive(Clone, Debug, PartialEq)]
pub struct OpDiffRow {
    /// Op name (`ProfilerStep*` for all steps).
    pub name: String,
    /// `str(input_shapes)` when matched by shape; empty otherwise.
    pub input_shapes: String,
    /// A record_function / annotation row (part of the key, as in the op table).
    pub is_annotation: bool,
    /// Appeared, disappeared, changed or same.
    pub status: Status,
    /// # of Calls (per step when per step).
    pub calls: Pair,
    /// Self CPU, ns.
    pub self_cpu_ns: Pair,
    /// Self CUDA, ns.
    pub self_device_ns: Pair,
    /// CUDA total, ns.
    pub device_total_ns: Pair,
}

impl DiffRow for OpDiffRow {
    type Column = OpColumn;

    fn pair(&self, column: OpColumn) -> Pair {
        match column {
            OpColumn::Calls => self.calls,
            OpColumn::SelfCpu => self.self_cpu_ns,
            OpColumn::SelfDevice => self.self_device_ns,
            OpColumn::DeviceTotal => self.device_total_ns,
        }
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn detail(&self) -> &str {
        &self.input_shapes
    }
}

/// Values of one op row divided by `d`, in [`OpColumn::ALL`] order.
fn values(r: &OpRow, d: f64) -> [f64; 4] {
    [
        r.calls as f64 / d,
        r.self_cpu_ns as f64 / d,
        r.self_device_ns as f64 / d,
        r.device_total_ns as f64 / d,
    ]
}

/// The row key: name, annotation flag, input shapes.
type Key<'a> = (&'a str, bool, &'a str);

fn key(r: &OpRow) -> Key<'_> {
    (&r.name, r.is_annotation, &r.input_shapes)
}

/// The diff of two op tables; `base_div` / `cand_div` divide each side's values.
pub fn diff(base: &OpTable, cand: &OpTable, base_div: f64, cand_div: f64) -> Vec<OpDiffRow> {
    let in_cand: HashMap<Key<'_>, &OpRow> = cand.rows.iter().map(|r| (key(r), r)).collect();
    let in_base: HashMap<Key<'_>, &OpRow> = base.rows.iter().map(|r| (key(r), r)).collect();
    let mut out = Vec::with_capacity(base.rows.len().max(cand.rows.len()));
    for b in &base.rows {
        let c = in_cand.get(&key(b)).copied();
        out.push(row(Some(b), c, base_div, cand_div));
    }
    for c in cand.rows.iter().filter(|c| !in_base.contains_key(&key(c))) {
        out.push(row(None, Some(c), base_div, cand_div));
    }
    out.into_iter().flatten().collect()
}

/// The row of an op key on either or both sides; `None` when on neither.
fn row(
    base: Option<&OpRow>,
    cand: Option<&OpRow>,
    base_div: f64,
    cand_div: f64,
) -> Option<OpDiffRow> {
    let any = base.or(cand)?;
    let b = base.map_or([0.0; 4], |r| values(r, base_div));
    let c = cand.map_or([0.0; 4], |r| values(r, cand_div));
    let pairs: [Pair; 4] = std::array::from_fn(|i| Pair {
        base: b[i],
        cand: c[i],
    });
    Some(OpDiffRow {
        name: any.name.clone(),
        input_shapes: any.input_shapes.clone(),
        is_annotation: any.is_annotation,
        status: Status::of(base.is_some(), cand.is_some(), &pairs),
        calls: pairs[0],
        self_cpu_ns: pairs[1],
        self_device_ns: pairs[2],
        device_total_ns: pairs[3],
    })
}
