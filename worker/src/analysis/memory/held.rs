//! What holds memory: every allocation's lifetime and category, each step's peak by category,
//! the live allocations at a peak, and leaks across steps; the one value the report, the
//! findings and the page read (built once per trace by the session).
//!
//! **Inputs.** A [`Trace`] and its steps as `(N, start ns, end ns)`.
//!
//! **Cost.** [`Held::new`]: one args scan of the `[memory]` instants ([`lifetimes`]), one
//! context walk per allocation ([`categorize`]), O(allocations) per step peak.

use super::category::{categorize, Category};
use super::lifetime::{lifetimes, Lifetimes};
use super::steps::{leaks, step_memory, Leak, StepMemory};
use super::enclosing_op_at;
use crate::model::{LaneId, Trace};

/// Allocations with their categories, per-step peaks and leaks of one trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Held {
    /// Every allocation, columnar.
    pub lifetimes: Lifetimes,
    /// Category of each allocation (same index).
    pub category: Vec<Category>,
    /// Per (device, step) memory.
    pub steps: Vec<StepMemory>,
    /// Devices whose allocated bytes at step start grow at every step.
    pub leaks: Vec<Leak>,
}

impl Held {
    /// Builds everything from `trace`'s `[memory]` instants and `steps` (`(N, start, end)` ns).
    pub fn new(trace: &Trace, steps: &[(u64, i64, i64)]) -> Self {
        let (lifetimes, curves) = lifetimes(trace);
        let category = categorize(trace, &lifetimes);
        let steps = step_memory(&lifetimes, &curves, &category, steps);
        let leaks = leaks(&lifetimes, &steps);
        Self { lifetimes, category, steps, leaks }
    }

    /// Allocations of `device` live right after the events at `t_ns`, largest first (ties:
    /// earlier first), at most `top`.
    pub fn live_at(&self, device: u16, t_ns: i64, top: usize) -> Vec<u32> {
        let lt = &self.lifetimes;
        let mut live: Vec<u32> = (0..lt.len())
            .filter(|&i| lt.device[i] == device && lt.live_at(i, t_ns))
            .map(|i| i as u32)
            .collect();
        live.sort_by_key(|&i| (std::cmp::Reverse(lt.bytes[i as usize]), i));
        live.truncate(top);
        live
    }

    /// The thread (lane) allocation `a` was made on.
    pub fn lane(&self, trace: &Trace, a: usize) -> Option<LaneId> {
        let i = *self.lifetimes.instant.get(a)?;
        trace.instants.lane.get(i as usize).copied()
    }

    /// The innermost op that made allocation `a`, if any.
    pub fn maker(&self, trace: &Trace, a: usize) -> Option<u32> {
        enclosing_op_at(trace, self.lane(trace, a)?, *self.lifetimes.ts_ns.get(a)?)
    }

    /// The step whose peak is highest on `device` (first on ties).
    pub fn peak_step(&self, device: u16) -> Option<&StepMemory> {
        self.steps
            .iter()
            .filter(|s| s.device == device)
            .reduce(|best, s| if s.peak_allocated > best.peak_allocated { s } else { best })
    }
}
