//! Kernel table diff: rows of the two kernel tables matched by kernel name.
//!
//! Calls and total time are divided by each trace's divisor (its step count when per step);
//! the mean is per call and is not. A kernel replaced by another (fp32 `sgemm` -> bf16
//! tensor-core GEMM) shows as two rows: one disappeared, one appeared.

use super::sort::DiffRow;
use super::{Pair, Status};
use crate::analysis::kernels::{KernelRow, KernelTable};
use std::collections::HashMap;

/// A compared column of the kernel table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelColumn {
    /// Calls.
    Calls,
    /// Total duration, ns.
    Total,
    /// Mean duration per call, ns.
    Mean,
}

impl KernelColumn {
    /// Every column, in display order.
    pub const ALL: [Self; 3] = [Self::Calls, Self::Total, Self::Mean];

    /// Parses `calls`, `total`, `mean`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "calls" => Self::Calls,
            "total" => Self::Total,
            "mean" => Self::Mean,
            _ => return None,
        })
    }

    /// Label (text report).
    pub fn label(self) -> &'static str {
        match self {
            Self::Calls => "Calls",
            Self::Total => "Total",
            Self::Mean => "Mean",
        }
    }
}

/// One row of the kernel diff.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelDiffRow {
    /// Kernel name.
    pub name: String,
    /// Appeared, disappeared, changed or same.
    pub status: Status,
    /// Runs on tensor cores (by name; either side's row, they share the name).
    pub tensor_cores: bool,
    /// Calls (per step when per step).
    pub calls: Pair,
    /// Total duration, ns (per step when per step).
    pub total_ns: Pair,
    /// Mean duration per call, ns (0 on a side without the kernel).
    pub mean_ns: Pair,
}

impl DiffRow for KernelDiffRow {
    type Column = KernelColumn;

    fn pair(&self, column: KernelColumn) -> Pair {
        match column {
            KernelColumn::Calls => self.calls,
            KernelColumn::Total => self.total_ns,
            KernelColumn::Mean => self.mean_ns,
        }
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn detail(&self) -> &str {
        ""
    }
}

/// (calls / d, total / d, mean) of one kernel row.
fn values(r: &KernelRow, d: f64) -> [f64; 3] {
    [r.calls() as f64 / d, r.total_ns as f64 / d, r.stats.mean]
}

/// The diff of two kernel tables; `base_div` / `cand_div` divide each side's calls and total.
pub fn diff(
    base: &KernelTable,
    cand: &KernelTable,
    base_div: f64,
    cand_div: f64,
) -> Vec<KernelDiffRow> {
    let in_cand: HashMap<&str, &KernelRow> =
        cand.rows.iter().map(|r| (r.name.as_str(), r)).collect();
    let in_base: HashMap<&str, &KernelRow> =
        base.rows.iter().map(|r| (r.name.as_str(), r)).collect();
    let mut out = Vec::with_capacity(base.rows.len().max(cand.rows.len()));
    for b in &base.rows {
        let c = in_cand.get(b.name.as_str()).copied();
        out.push(row(Some(b), c, base_div, cand_div));
    }
    for c in cand
        .rows
        .iter()
        .filter(|c| !in_base.contains_key(c.name.as_str()))
    {
        out.push(row(None, Some(c), base_div, cand_div));
    }
    out.into_iter().flatten().collect()
}

/// The row of a kernel on either or both sides; `None` when on neither.
fn row(
    base: Option<&KernelRow>,
    cand: Option<&KernelRow>,
    base_div: f64,
    cand_div: f64,
) -> Option<KernelDiffRow> {
    let any = base.or(cand)?;
    let b = base.map_or([0.0; 3], |r| values(r, base_div));
    let c = cand.map_or([0.0; 3], |r| values(r, cand_div));
    let pairs: [Pair; 3] = std::array::from_fn(|i| Pair {
        base: b[i],
        cand: c[i],
    });
    Some(KernelDiffRow {
        name: any.name.clone(),
        status: Status::of(base.is_some(), cand.is_some(), &pairs),
        tensor_cores: any.tensor_cores,
        calls: pairs[0],
        total_ns: pairs[1],
        mean_ns: pairs[2],
    })
}
