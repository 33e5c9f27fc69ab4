//! The memory chart on the wire: one device's allocated and reserved bytes, the bytes live by
//! category over time, each step's peak, and the allocations live at one moment.

use crate::SliceRef;
use serde::{Deserialize, Serialize};

/// Everything the memory chart draws for one device ([`crate::Query::Memory`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MemoryData {
    /// Every device with `[memory]` events, ordered by (device type, id).
    pub devices: Vec<MemoryDevice>,
    /// The device drawn (a label of `devices`; "" when there is none).
    pub device: String,
    /// Start of the first bucket, ns from the trace origin.
    pub start_ns: i64,
    /// Bucket width, ns.
    pub bucket_ns: i64,
    /// Allocated bytes per bucket, each bucket's peak (`None`: before the first event).
    pub allocated: Vec<Option<f64>>,
    /// Reserved bytes per bucket, the same way.
    pub reserved: Vec<Option<f64>>,
    /// Bytes live by category per bucket, at the moment of the bucket's highest total, one
    /// series per category in PyTorch's order (allocations made before the capture are in no
    /// category).
    pub categories: Vec<CategorySeries>,
    /// Each profiler step's peak on this device.
    pub steps: Vec<StepPeak>,
    /// The allocations live at the highest step peak (the device's peak without steps).
    pub live: LiveMemory,
}

/// A device of [`MemoryData::devices`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MemoryDevice {
    /// `cpu`, `cuda:0`, ...
    pub label: String,
    /// Peak allocated bytes.
    pub peak_allocated: i64,
    /// Peak reserved bytes.
    pub peak_reserved: i64,
}

/// One category's bytes per bucket.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CategorySeries {
    /// `parameter`, `optimizer_state`, `gradient`, `activation`, `temporary`, `input`,
    /// `autograd_detail`, `unknown`.
    pub name: String,
    /// Bytes per bucket.
    pub values: Vec<i64>,
}

/// One profiler step's peak.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StepPeak {
    /// N of `ProfilerStep#N`.
    pub step: u64,
    /// When the peak was first reached, ns from the trace origin.
    pub peak_ns: i64,
    /// Allocated bytes at the peak.
    pub peak_bytes: i64,
}

/// The allocations of one device live right after the events at one moment
/// ([`crate::Query::MemoryLive`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LiveMemory {
    /// The device's label.
    pub device: String,
    /// The moment, ns from the trace origin.
    pub at_ns: i64,
    /// Allocations live then.
    pub count: u64,
    /// Their bytes.
    pub bytes: i64,
    /// The largest of them, largest first (ties: earlier first), at most the `top` asked for.
    pub rows: Vec<LiveAllocation>,
}

/// One live allocation.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LiveAllocation {
    /// Size, bytes.
    pub bytes: i64,
    /// When it was made, ns from the trace origin.
    pub at_ns: i64,
    /// When it was freed (`None`: not in the trace).
    pub freed_ns: Option<i64>,
    /// Its category (as in [`CategorySeries::name`]).
    pub category: String,
    /// The innermost op that made it, if any.
    pub op: Option<SliceRef>,
    /// `forward`, `backward` or `optimizer`, when known.
    pub phase: Option<String>,
    /// The innermost `nn.Module` around the op (without the `nn.Module: ` prefix), when known.
    pub module: Option<String>,
}
