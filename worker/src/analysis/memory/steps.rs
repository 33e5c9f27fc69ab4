//! Memory per step: what was allocated at each step's start, its peak and what held it (bytes
//! by [`Category`] of the allocations live at the peak), and the leak across steps.
//!
//! **Inputs.** [`Lifetimes`], their categories, and the steps as `(N, start ns, end ns)`
//! (the `ProfilerStep#N` spans).
//!
//! **Outputs.** [`StepMemory`] per (device, step), devices in [`Lifetimes::devices`] order
//! then steps in the given order; [`Leak`] per device whose allocated bytes at step start
//! grow at every step.
//!
//! **Rules.** Start = allocated after every event before the step's start (0 before the
//! first event). Peak = the largest allocated over the start and every event in
//! `[start, end]`, first time reached; live at the peak = allocated at or before it and
//! freed after it. A leak needs [`LEAK_MIN_STEPS`] steps whose start grows at every step;
//! its slope is the least-squares bytes per step over the step starts.
//!
//! **Cost.** O(events + steps · log events) for the peaks, O(live allocations) per peak.

use super::category::Category;
use super::lifetime::{Curves, Lifetimes, NEVER};

/// Fewest steps a leak is judged on (ours: two growths could be warm-up, three are a trend).
pub const LEAK_MIN_STEPS: usize = 4;

/// Memory of one step on one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepMemory {
    /// N of `ProfilerStep#N`.
    pub step: u64,
    /// Index into [`Lifetimes::devices`].
    pub device: u16,
    /// Step start, ns from origin.
    pub start_ns: i64,
    /// Step end, ns from origin.
    pub end_ns: i64,
    /// Allocated bytes at the step's start.
    pub start_allocated: i64,
    /// Allocated bytes at the step's end.
    pub end_allocated: i64,
    /// Peak allocated bytes in the step.
    pub peak_allocated: i64,
    /// First time the peak was reached, ns from origin.
    pub peak_ns: i64,
    /// Bytes live at the peak by category ([`Category::index`]); allocations made before the
    /// capture are not in the trace and not here.
    pub by_category: [i64; 8],
}

/// Allocated bytes at step start growing at every step.
#[derive(Clone, Debug, PartialEq)]
pub struct Leak {
    /// Index into [`Lifetimes::devices`].
    pub device: u16,
    /// Least-squares growth of allocated bytes at step start, bytes per step.
    pub slope_bytes_per_step: f64,
    /// Growth from each step's start to the next's, bytes.
    pub growth: Vec<i64>,
    /// Allocations made in the steps before the last and never freed, largest first.
    pub never_freed: Vec<u32>,
    /// Their bytes.
    pub never_freed_bytes: i64,
}

/// Memory of every step on every device.
pub fn step_memory(lt: &Lifetimes, curves: &Curves, categories: &[Category], steps: &[(u64, i64, i64)]) -> Vec<StepMemory> {
    let mut out = Vec::new();
    for (d, curve) in curves.iter().enumerate() {
        let Ok(device) = u16::try_from(d) else { break };
        for &(step, start, end) in steps {
            let before = curve.partition_point(|&(t, _)| t < start);
            let last = curve.partition_point(|&(t, _)| t <= end);
            let start_allocated = before.checked_sub(1).and_then(|k| curve.get(k)).map_or(0, |&(_, a)| a);
            let end_allocated = last.checked_sub(1).and_then(|k| curve.get(k)).map_or(0, |&(_, a)| a);
            let (mut peak_allocated, mut peak_ns) = (start_allocated, start);
            for &(t, a) in curve.get(before..last).unwrap_or(&[]) {
                if a > peak_allocated {
                    (peak_allocated, peak_ns) = (a, t);
                }
            }
            let mut by_category = [0i64; 8];
            for i in (0..lt.len()).filter(|&i| lt.device[i] == device && lt.live_at(i, peak_ns)) {
                if let Some(c) = categories.get(i) {
                    by_category[c.index()] += lt.bytes[i];
                }
            }
            out.push(StepMemory { step, device, start_ns: start, end_ns: end, start_allocated, end_allocated, peak_allocated, peak_ns, by_category });
        }
    }
    out
}

/// The leak on each device whose allocated bytes at step start grow at every one of at least
/// [`LEAK_MIN_STEPS`] steps; `steps` as [`step_memory`] returns them.
pub fn leaks(lt: &Lifetimes, steps: &[StepMemory]) -> Vec<Leak> {
    let mut out = Vec::new();
    for d in 0..lt.devices.len() {
        let Ok(device) = u16::try_from(d) else { break };
        let own: Vec<&StepMemory> = steps.iter().filter(|s| s.device == device).collect();
        if own.len() < LEAK_MIN_STEPS {
            continue;
        }
        let growth: Vec<i64> = own.windows(2).map(|w| w[1].start_allocated - w[0].start_allocated).collect();
        if growth.iter().any(|&g| g <= 0) {
            continue;
        }
        let (Some(first), Some(last)) = (own.first(), own.last()) else { continue };
        let mut never_freed: Vec<u32> = (0..lt.len())
            .filter(|&i| lt.device[i] == device && lt.freed_ns[i] == NEVER)
            .filter(|&i| lt.ts_ns[i] >= first.start_ns && lt.ts_ns[i] < last.start_ns)
            .map(|i| i as u32)
            .collect();
        never_freed.sort_by_key(|&i| (std::cmp::Reverse(lt.bytes[i as usize]), i));
        let never_freed_bytes = never_freed.iter().map(|&i| lt.bytes[i as usize]).sum();
        out.push(Leak { device, slope_bytes_per_step: slope(&own), growth, never_freed, never_freed_bytes });
    }
    out
}

/// Least-squares slope of start allocated over the step index.
fn slope(steps: &[&StepMemory]) -> f64 {
    let n = steps.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = steps.iter().map(|s| s.start_allocated as f64).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (x, s) in steps.iter().enumerate() {
        let dx = x as f64 - mean_x;
        num += dx * (s.start_allocated as f64 - mean_y);
        den += dx * dx;
    }
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}
