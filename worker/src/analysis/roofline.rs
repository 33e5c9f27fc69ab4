//! Which kernel names the roofline draws and which it leaves off, and why. A kernel-table row
//! is a point when its calls with known work have FLOPs above 0 (the axes are logarithmic),
//! bytes above 0 and a measured time; every other row is listed with its [`Reason`], so the largest
//! kernel of a trace is never missing from the chart without a word.
//!
//! The reason of a row without known work comes from its top launching op
//! ([`crate::analysis::kernels::TopOp`]): none (launched outside any op: no launch link, a
//! graph replay, a custom runtime), an op with an estimate rule whose recorded shapes it cannot
//! read (`record_shapes=False`, or shapes the rule does not handle), or an op without a rule
//! (nor any op around it: the work walk goes up the ancestors, `analysis::work`).
//!
//! Cost: one pass over the kernel table's rows.

use crate::analysis::kernels::{KernelRow, KernelTable};
use crate::analysis::work::estimate::may_estimate;
use crate::analysis::work::Achieved;

/// Why a kernel name is not on the roofline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// No call is launched from inside an op.
    NoOp,
    /// Its op (named) has an estimate rule but no shapes it can read.
    NoShapes(String),
    /// Neither its op (named) nor the ops around it have an estimate rule.
    NoRule(String),
    /// Bytes-only work (elementwise, copies, reductions): no FLOPs to plot.
    NoFlops,
    /// FLOPs without bytes.
    NoBytes,
    /// Its calls with known work last 0 ns: no rate.
    NoTime,
}

impl Reason {
    /// Stable id for JSON: `no_op`, `no_shapes`, `no_rule`, `no_flops`, `no_bytes`, `no_time`.
    pub fn key(&self) -> &'static str {
        match self {
            Self::NoOp => "no_op",
            Self::NoShapes(_) => "no_shapes",
            Self::NoRule(_) => "no_rule",
            Self::NoFlops => "no_flops",
            Self::NoBytes => "no_bytes",
            Self::NoTime => "no_time",
        }
    }

    /// The reason in words, naming the op where there is one.
    pub fn text(&self) -> String {
        match self {
            Self::NoOp => "launched outside any op: no work to attribute".to_owned(),
            Self::NoShapes(op) => format!("{op:?} recorded no shapes its estimate reads (record_shapes=True?)"),
            Self::NoRule(op) => format!("no FLOP estimate for {op:?} or the ops around it"),
            Self::NoFlops => "bytes only (elementwise, copy or reduction): no FLOPs".to_owned(),
            Self::NoBytes => "FLOPs without bytes".to_owned(),
            Self::NoTime => "its calls with known work last 0 ns".to_owned(),
        }
    }
}

/// A row's place on the chart: its calls' rates and work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point<'r> {
    /// The row's achieved rates (peak class, bound, % of peak).
    pub achieved: &'r Achieved,
    /// FLOPs of the calls with known work (> 0).
    pub flops: f64,
    /// Bytes of the same calls (> 0).
    pub bytes: f64,
    /// Achieved TFLOP/s.
    pub tflops: f64,
    /// Achieved GB/s.
    pub gbps: f64,
}

/// `row` as a point of the roofline, or why it is left off (module rules).
pub fn point(row: &KernelRow) -> Result<Point<'_>, Reason> {
    let Some(a) = row.achieved.as_ref() else {
        return Err(match &row.top_op {
            None => Reason::NoOp,
            Some(op) if may_estimate(op.name.strip_prefix("aten::").unwrap_or(&op.name)) => Reason::NoShapes(op.name.clone()),
            Some(op) => Reason::NoRule(op.name.clone()),
        });
    };
    if !(a.has_flops && a.flops > 0.0) {
        return Err(Reason::NoFlops);
    }
    let bytes = a.bytes.filter(|&b| b > 0.0).ok_or(Reason::NoBytes)?;
    let (Some(tflops), Some(gbps)) = (a.tflops, a.gbps) else { return Err(Reason::NoTime) };
    Ok(Point { achieved: a, flops: a.flops, bytes, tflops, gbps })
}

/// A kernel name the roofline leaves off.
#[derive(Clone, Debug, PartialEq)]
pub struct LeftOff<'r> {
    /// Its kernel-table row.
    pub row: &'r KernelRow,
    /// Why.
    pub reason: Reason,
}

/// The rows of `table` the roofline leaves off, in the table's order (longest first).
pub fn left_off(table: &KernelTable) -> Vec<LeftOff<'_>> {
    table.rows.iter().filter_map(|row| point(row).err().map(|reason| LeftOff { row, reason })).collect()
}
