//! The memory chart's answers: one device's allocated and reserved curves and its bytes by
//! category over time (bucketed, each bucket's peak), each step's peak, and the allocations
//! live at a moment with the op, category, phase and module of each.
//!
//! Reads the session's [`Memory`] (the `[memory]` series) and [`Held`] (lifetimes, categories,
//! step peaks): the same values `report --memory` prints, so the page and the CLI agree.

use super::counters::{bucket_peaks, MAX_BUCKETS};
use super::slice_ref;
use crate::analysis::memory::category::{phase_at, Category};
use crate::analysis::memory::held::Held;
use crate::analysis::memory::lifetime::NEVER;
use crate::analysis::memory::{stacked, DeviceMemory, Memory};
use crate::model::Trace;
use protocol::{CategorySeries, LiveAllocation, LiveMemory, MemoryData, MemoryDevice, StepPeak};

/// Most live allocations listed (the page asks for 20, as `report` lists by default).
pub const MAX_LIVE_ROWS: usize = 1000;

/// The memory chart of `device` (`None`: the device with the highest allocated peak) over the
/// trace's span `[0, span_ns)` in at most `buckets` buckets, with the `top` allocations live
/// at the highest step peak.
pub fn chart(trace: &Trace, memory: &Memory, held: &Held, device: Option<&str>, span_ns: i64, buckets: u32, top: usize) -> MemoryData {
    let devices: Vec<MemoryDevice> = memory
        .devices
        .iter()
        .map(|d| MemoryDevice { label: d.label.clone(), peak_allocated: d.peak_allocated, peak_reserved: d.peak_reserved })
        .collect();
    let chosen = match device {
        Some(label) => memory.devices.iter().find(|d| d.label == label),
        // The first of the highest peaks, so the choice is stable.
        None => memory.devices.iter().reduce(|best, d| if d.peak_allocated > best.peak_allocated { d } else { best }),
    };
    let Some(dev) = chosen else {
        return MemoryData { devices, ..MemoryData::default() };
    };
    let n = i64::from(buckets.clamp(1, MAX_BUCKETS));
    let window = (0, span_ns.max(1));
    // Rounded up, so the window takes at most `n` buckets.
    let bucket_ns = ((window.1 + n - 1) / n).max(1);
    let index = held_index(held, dev);
    let stacked = index.map(|d| stacked::by_category(held, d, window, bucket_ns)).unwrap_or_default();
    let categories = Category::ALL
        .iter()
        .map(|c| CategorySeries { name: c.name().to_owned(), values: stacked.iter().map(|b| b[c.index()]).collect() })
        .collect();
    let steps = index
        .map(|d| {
            held.steps
                .iter()
                .filter(|s| s.device == d)
                .map(|s| StepPeak { step: s.step, peak_ns: s.peak_ns, peak_bytes: s.peak_allocated })
                .collect()
        })
        .unwrap_or_default();
    let at_ns = index.and_then(|d| held.peak_step(d)).map_or(dev.peak_allocated_ns, |s| s.peak_ns);
    MemoryData {
        devices,
        device: dev.label.clone(),
        start_ns: window.0,
        bucket_ns,
        allocated: bucket_peaks(&dev.series, |s| s.allocated, window, bucket_ns),
        reserved: bucket_peaks(&dev.series, |s| s.reserved, window, bucket_ns),
        categories,
        steps,
        live: live(trace, held, dev, index, at_ns, top),
    }
}

/// The `top` allocations of `device` live right after the events at `at_ns` (an unknown
/// device: none).
pub fn live_at(trace: &Trace, memory: &Memory, held: &Held, device: &str, at_ns: i64, top: usize) -> LiveMemory {
    match memory.devices.iter().find(|d| d.label == device) {
        Some(dev) => live(trace, held, dev, held_index(held, dev), at_ns, top),
        None => LiveMemory { device: device.to_owned(), at_ns, ..LiveMemory::default() },
    }
}

/// The index of `dev` in [`Held`]'s devices (ordered by first event, not by label).
fn held_index(held: &Held, dev: &DeviceMemory) -> Option<u16> {
    let found = held.lifetimes.devices.iter().position(|&k| k == (dev.device_type, dev.device_id))?;
    u16::try_from(found).ok()
}

fn live(trace: &Trace, held: &Held, dev: &DeviceMemory, index: Option<u16>, at_ns: i64, top: usize) -> LiveMemory {
    let mut out = LiveMemory { device: dev.label.clone(), at_ns, ..LiveMemory::default() };
    let top = top.min(MAX_LIVE_ROWS);
    let Some(d) = index else { return out };
    let lt = &held.lifetimes;
    for i in (0..lt.len()).filter(|&i| lt.device[i] == d && lt.live_at(i, at_ns)) {
        out.count += 1;
        out.bytes += lt.bytes[i];
    }
    out.rows = held
        .live_at(d, at_ns, top)
        .into_iter()
        .map(|a| row(trace, held, a as usize))
        .collect();
    out
}

fn row(trace: &Trace, held: &Held, a: usize) -> LiveAllocation {
    let lt = &held.lifetimes;
    let op = held.maker(trace, a);
    let phase = held.lane(trace, a).and_then(|lane| phase_at(trace, lane, lt.ts_ns[a]));
    LiveAllocation {
        bytes: lt.bytes[a],
        at_ns: lt.ts_ns[a],
        freed_ns: (lt.freed_ns[a] != NEVER).then_some(lt.freed_ns[a]),
        category: held.category.get(a).map_or(Category::Unknown, |c| *c).name().to_owned(),
        op: op.and_then(|o| slice_ref(trace, o)),
        phase: phase.map(str::to_owned),
        module: op.and_then(|o| module_of(trace, o)),
    }
}

/// The innermost `nn.Module: X` frame around slice `op` (recorded with `with_stack=True`), as `X`.
fn module_of(trace: &Trace, op: u32) -> Option<String> {
    trace.ancestors(op).find_map(|a| {
        let name = trace.strings.get(*trace.slices.name.get(a as usize)?);
        name.strip_prefix("nn.Module: ").map(str::to_owned)
    })
}
