//! "Why is this step slow?": one step against the median step, the difference broken down into
//! where it went (docs/definitions.md, "Explaining a step").
//!
//! **Inputs**: the trace and its [`Steps`]; the step to explain (a number, or the slowest
//! complete one). **Output**: an [`Explanation`]: the step's duration against the median of
//! the complete steps, then
//! - the step breakdown's categories (kernel, memcpy, memset, communication, runtime,
//!   DataLoader, CPU exec, idle) against each category's median over the complete steps;
//! - kernels by name: device time launched from within the step ([`launching_step`]: GPU work
//!   belongs to the step that launched it) against the median over complete steps, with calls;
//! - host ops by name: self time of the CPU ops starting in the step's CPU span, likewise;
//! each item with the slice that shows it best (the longest of its name in the step).
//!
//! Medians include steps where a name is absent (counted as 0), so a kernel that ran in only
//! the slow step shows its whole time. Items are kept when their difference is at least
//! [`MIN_SHARE`] of the step's difference and at least [`MIN_ITEM_NS`]; most different first.
//!
//! Cost: O(n) over slices (self times, launch step lookups by binary search) plus sorting the
//! per-name medians.

use super::breakdown::{Category, CATEGORIES};
use super::stats::median;
use super::steps::{launching_step, StepSpan, Steps};
use crate::model::{CatClass, StrId, Trace, NONE};
use crate::text::{cut, duration, percent};
use std::collections::HashMap;

/// Items smaller than this share of the step's difference are left out.
pub const MIN_SHARE: f64 = 0.02;
/// Items below this difference are left out, ns (timer noise on a µs-resolution trace).
pub const MIN_ITEM_NS: i64 = 10_000;
/// Items listed per kind, at most.
pub const TOP: usize = 5;

/// Which step to explain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The complete step with the longest span.
    Slowest,
    /// `ProfilerStep#N`.
    Number(u64),
}

/// One category of the step breakdown, the step against the median step.
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryDelta {
    /// The category.
    pub category: Category,
    /// In the step, ns.
    pub step_ns: i64,
    /// Median over the complete steps, ns.
    pub median_ns: f64,
}

/// A kernel or op name, the step against the median step.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemDelta {
    /// Kernel or op name.
    pub name: String,
    /// Time in the step, ns (device time for kernels, self time for ops).
    pub step_ns: i64,
    /// Median per complete step, ns.
    pub median_ns: f64,
    /// Calls in the step.
    pub step_calls: u32,
    /// Median calls per complete step.
    pub median_calls: f64,
    /// The longest slice of this name in the step (the evidence); `None` when it did not run
    /// in the step.
    pub slice: Option<u32>,
}

impl ItemDelta {
    /// Step minus median, ns.
    pub fn delta_ns(&self) -> f64 {
        self.step_ns as f64 - self.median_ns
    }
}

/// Why one step took the time it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// `ProfilerStep#N`.
    pub step: u64,
    /// The step's host annotation slice.
    pub slice: u32,
    /// Step span, ns.
    pub dur_ns: i64,
    /// Median step span of the complete steps, ns.
    pub median_ns: f64,
    /// Complete steps the medians are over.
    pub steps: usize,
    /// Breakdown categories, most different first.
    pub categories: Vec<CategoryDelta>,
    /// Kernels, most different first.
    pub kernels: Vec<ItemDelta>,
    /// Host ops (self time), most different first.
    pub ops: Vec<ItemDelta>,
}

impl CategoryDelta {
    /// Step minus median, ns.
    pub fn delta_ns(&self) -> f64 {
        self.step_ns as f64 - self.median_ns
    }
}

impl Explanation {
    /// Step minus median, ns.
    pub fn delta_ns(&self) -> f64 {
        self.dur_ns as f64 - self.median_ns
    }
}

/// Per name, per step: time, calls and the longest slice.
#[derive(Clone, Copy, Default)]
struct Cell {
    ns: i64,
    calls: u32,
    longest: Option<(i64, u32)>,
}

/// Explains step `which` of `steps`.
///
/// # Errors
/// No complete step, or no step of that number.
pub fn explain(trace: &Trace, steps: &Steps, which: Which) -> Result<Explanation, String> {
    let complete: Vec<&StepSpan> = steps.steps.iter().filter(|s| !s.incomplete).collect();
    if complete.is_empty() {
        return Err("the trace has no complete ProfilerStep#N to explain".into());
    }
    let target = match which {
        Which::Slowest => complete.iter().copied().max_by_key(|s| (s.dur_ns(), std::cmp::Reverse(s.number))),
        Which::Number(n) => steps.steps.iter().find(|s| s.number == n),
    };
    let Some(target) = target else {
        let numbers: Vec<String> = steps.steps.iter().map(|s| s.number.to_string()).collect();
        return Err(format!("no ProfilerStep#{} in the trace (steps: {})", number(which), numbers.join(", ")));
    };
    // The steps the medians are over, and the explained one (it may be incomplete).
    let mut all: Vec<&StepSpan> = complete.clone();
    if target.incomplete {
        all.push(target);
    }
    let t = all.iter().position(|s| std::ptr::eq(*s, target)).unwrap_or(0);
    let durs: Vec<i64> = complete.iter().map(|s| s.dur_ns()).collect();
    let categories = CATEGORIES
        .iter()
        .map(|&category| {
            let per: Vec<i64> = complete.iter().map(|s| s.breakdown.get(category)).collect();
            CategoryDelta { category, step_ns: target.breakdown.get(category), median_ns: median(&per).unwrap_or(0.0) }
        })
        .collect::<Vec<_>>();
    let median_ns = median(&durs).unwrap_or(0.0);
    let delta = target.dur_ns() as f64 - median_ns;
    let (kernels, ops) = per_name(trace, &all);
    let keep = |items: HashMap<StrId, Vec<Cell>>| items_of(trace, items, t, complete.len(), delta);
    let mut categories = categories;
    categories.sort_by(|a, b| b.delta_ns().abs().total_cmp(&a.delta_ns().abs()));
    Ok(Explanation {
        step: target.number,
        slice: target.slice,
        dur_ns: target.dur_ns(),
        median_ns,
        steps: complete.len(),
        categories,
        kernels: keep(kernels),
        ops: keep(ops),
    })
}

fn number(which: Which) -> String {
    match which {
        Which::Slowest => "?".into(),
        Which::Number(n) => n.to_string(),
    }
}

/// Kernel and op cells per name and step (index into `spans`).
fn per_name(trace: &Trace, spans: &[&StepSpan]) -> (HashMap<StrId, Vec<Cell>>, HashMap<StrId, Vec<Cell>>) {
    let s = &trace.slices;
    let n = spans.len();
    let mut kernels: HashMap<StrId, Vec<Cell>> = HashMap::new();
    let mut ops: HashMap<StrId, Vec<Cell>> = HashMap::new();
    // Spans ordered by CPU start, as `launching_step` needs (the explained step may be last).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&k| spans.get(k).map_or(0, |st| st.cpu_start_ns));
    let sorted: Vec<&StepSpan> = order.iter().filter_map(|&k| spans.get(k).copied()).collect();
    let markers: std::collections::HashSet<u32> = spans.iter().map(|st| st.slice).collect();
    let mut child_ns = vec![0i64; s.len()];
    for i in 0..s.len() {
        let p = s.parent[i];
        if p != NONE {
            if let Some(c) = child_ns.get_mut(p as usize) {
                *c += s.dur_ns[i];
            }
        }
    }
    let add = |map: &mut HashMap<StrId, Vec<Cell>>, k: usize, i: usize, ns: i64| {
        let cells = map.entry(s.name[i]).or_insert_with(|| vec![Cell::default(); n]);
        if let Some(c) = cells.get_mut(k) {
            c.ns += ns;
            c.calls += 1;
            if c.longest.is_none_or(|(d, _)| s.dur_ns[i] > d) {
                c.longest = Some((s.dur_ns[i], i as u32));
            }
        }
    };
    for i in 0..s.len() {
        match trace.class(s.cat[i]) {
            CatClass::Kernel => {
                if let Some(j) = launching_step(trace, i, &sorted) {
                    if let Some(&k) = order.get(j) {
                        add(&mut kernels, k, i, s.dur_ns[i]);
                    }
                }
            }
            // The step annotations themselves (a `cpu_op` in 2021 traces) are the steps.
            CatClass::CpuOp if !markers.contains(&(i as u32)) => {
                let start = s.start_ns[i];
                let at = sorted.partition_point(|st| st.cpu_start_ns <= start);
                let Some(j) = at.checked_sub(1).filter(|&j| sorted.get(j).is_some_and(|st| start < st.cpu_end_ns)) else {
                    continue;
                };
                if let Some(&k) = order.get(j) {
                    let own = (s.dur_ns[i] - child_ns[i]).max(0);
                    add(&mut ops, k, i, own);
                }
            }
            _ => {}
        }
    }
    (kernels, ops)
}

/// The items of one kind worth naming for step index `t` (the first `complete` indices are the
/// complete steps), most different first.
fn items_of(trace: &Trace, items: HashMap<StrId, Vec<Cell>>, t: usize, complete: usize, delta: f64) -> Vec<ItemDelta> {
    let floor = (delta.abs() * MIN_SHARE).max(MIN_ITEM_NS as f64);
    let mut out: Vec<ItemDelta> = items
        .into_iter()
        .filter_map(|(name, cells)| {
            let here = cells.get(t).copied().unwrap_or_default();
            let others = cells.get(..complete).unwrap_or(&[]);
            let ns: Vec<i64> = others.iter().map(|c| c.ns).collect();
            let calls: Vec<i64> = others.iter().map(|c| i64::from(c.calls)).collect();
            let item = ItemDelta {
                name: trace.strings.get(name).into_owned(),
                step_ns: here.ns,
                median_ns: median(&ns).unwrap_or(0.0),
                step_calls: here.calls,
                median_calls: median(&calls).unwrap_or(0.0),
                slice: here.longest.map(|(_, i)| i),
            };
            (item.delta_ns().abs() >= floor).then_some(item)
        })
        .collect();
    out.sort_by(|a, b| b.delta_ns().abs().total_cmp(&a.delta_ns().abs()).then_with(|| a.name.cmp(&b.name)));
    out.truncate(TOP);
    out
}

/// The explanation in a few sentences with the numbers (the page and `report --explain-step`
/// print the same lines).
pub fn sentences(e: &Explanation) -> Vec<String> {
    let delta = e.delta_ns();
    let ratio = if e.median_ns > 0.0 { delta / e.median_ns } else { 0.0 };
    let more = if delta >= 0.0 { "more" } else { "less" };
    let mut out = vec![format!(
        "ProfilerStep#{} took {}, {} ({}) {more} than the median of {} complete steps ({}).",
        e.step,
        duration(e.dur_ns),
        duration(delta.abs().round() as i64),
        percent(ratio.abs()),
        e.steps,
        duration(e.median_ns.round() as i64),
    )];
    let floor = (delta.abs() * MIN_SHARE).max(MIN_ITEM_NS as f64);
    let parts: Vec<String> = e
        .categories
        .iter()
        .filter(|c| c.delta_ns().abs() >= floor)
        .map(|c| format!("{} {}", c.category.label(), signed(c.delta_ns())))
        .collect();
    if !parts.is_empty() {
        out.push(format!("By category (step breakdown): {}.", parts.join(", ")));
    }
    for (kind, items) in [("Kernel", &e.kernels), ("Op", &e.ops)] {
        for i in items.iter().take(3) {
            out.push(format!(
                "{kind} {} {}: {} in the step vs {} median, {} call{} vs {} median.",
                cut(&i.name, 60),
                signed(i.delta_ns()),
                duration(i.step_ns),
                duration(i.median_ns.round() as i64),
                i.step_calls,
                if i.step_calls == 1 { "" } else { "s" },
                fmt_calls(i.median_calls),
            ));
        }
    }
    out
}

/// `+3.00 ms` / `-120.0 µs`.
fn signed(ns: f64) -> String {
    let sign = if ns >= 0.0 { "+" } else { "-" };
    format!("{sign}{}", duration(ns.abs().round() as i64))
}

/// A median call count: `3`, `2.5`.
fn fmt_calls(calls: f64) -> String {
    if calls.fract() == 0.0 {
        format!("{calls:.0}")
    } else {
        format!("{calls:.1}")
    }
}
