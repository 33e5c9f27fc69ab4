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
//! - host ops by name: self time of the CPU ops starting in the step's CPU span, likewise.
//!
//! Each kernel and op comes with the slice that shows it best (the longest of its name in the
//! step).
//!
//! Medians include steps where a name is absent (counted as 0), so a kernel that ran in only
//! the slow step shows its whole time. Items are kept when their difference is at least
//! [`MIN_SHARE`] of the step's difference and at least [`MIN_ITEM_NS`]; most different first.
//!
//! Cost: O(n) over slices (self times, launch step lookups by binary search) plus sorting the
//! per-name medians.

use super::breakdown::{Category, CATEGORIES};
use super::critical_path::{BoundBy, StepPath};
use super::phases::{Phase, Phases, StepPhases};
use super::stats::median;
use super::steps::{launching_step, step_name, StepSpan, Steps};
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
    /// `ProfilerStep#N` (or marker step N).
    pub step: u64,
    /// The step as people read it ([`step_name`]).
    pub name: String,
    /// The step's host annotation slice.
    pub slice: u32,
    /// Step span, ns.
    pub dur_ns: i64,
    /// Median step span of the complete steps, ns.
    pub median_ns: f64,
    /// Complete steps the medians are over.
    pub steps: usize,
    /// The step is the trace's only complete step: the medians are its own numbers, so the
    /// sentences say what it spent its time on instead of comparing it with itself.
    pub alone: bool,
    /// Breakdown categories, most different first.
    pub categories: Vec<CategoryDelta>,
    /// Kernels, most different first.
    pub kernels: Vec<ItemDelta>,
    /// Host ops (self time), most different first.
    pub ops: Vec<ItemDelta>,
    /// What the step's critical path is bound by against the median step's
    /// ([`PathContrast::of`]); `None` until the caller adds it (it needs the paths).
    pub path: Option<PathContrast>,
    /// The phase that changed most against the median step ([`PhaseDelta::of`]); `None`
    /// until the caller adds it, or when the trace tells no phase apart.
    pub phase: Option<PhaseDelta>,
}

/// The phase (docs/definitions.md "Phases") whose CPU + GPU time differs most between the
/// explained step and the median complete step.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseDelta {
    /// The phase.
    pub phase: Phase,
    /// Its CPU + GPU time in the step, ns.
    pub step_ns: i64,
    /// The median over the complete steps, ns.
    pub median_ns: f64,
}

impl PhaseDelta {
    /// The phase of step `e.step` that moved most, from every step's `phases` (`None` without
    /// that step, or when only forward is told apart).
    pub fn of(e: &Explanation, steps: &Steps, phases: &Phases) -> Option<PhaseDelta> {
        let time = |p: &StepPhases, ph: Phase| p.cpu_ns[ph as usize] + p.gpu_ns[ph as usize];
        let mine = phases.steps.iter().find(|p| p.step == e.step)?;
        let complete: Vec<&StepPhases> = steps
            .steps
            .iter()
            .filter(|s| !s.incomplete)
            .filter_map(|s| phases.steps.iter().find(|p| p.step == s.number))
            .collect();
        let told: Vec<Phase> = Phase::ALL.into_iter().filter(|ph| !phases.not_told_apart.contains(ph)).collect();
        if told.len() < 2 {
            return None;
        }
        if e.alone {
            // Nothing moved against itself: the phase that takes most.
            return told.into_iter().map(|ph| PhaseDelta { phase: ph, step_ns: time(mine, ph), median_ns: time(mine, ph) as f64 }).max_by_key(|d| d.step_ns);
        }
        told.into_iter()
            .map(|ph| PhaseDelta { phase: ph, step_ns: time(mine, ph), median_ns: median_f(complete.iter().map(|p| time(p, ph) as f64).collect()) })
            .max_by(|a, b| (a.step_ns as f64 - a.median_ns).abs().total_cmp(&(b.step_ns as f64 - b.median_ns).abs()))
    }

    /// "By phase, backward changed most: 12.0 ms of CPU and GPU time (median step: 8.0 ms)."
    pub fn sentence(&self) -> String {
        let verb = if self.step_ns as f64 >= self.median_ns { "grew" } else { "shrank" };
        format!(
            "By phase, {} {verb} most: {} of CPU and GPU time (median step: {}).",
            self.phase.key().replace('_', " "),
            duration(self.step_ns),
            duration(self.median_ns.round() as i64)
        )
    }
}

/// The explained step's critical path against the complete steps' (docs/definitions.md
/// "Critical path"): the class most of its path is in, and that class's median share.
#[derive(Clone, Debug, PartialEq)]
pub struct PathContrast {
    /// The class holding most of the step's path.
    pub bound_by: BoundBy,
    /// Its share of the step's path, 0-1.
    pub share: f64,
    /// The median over the complete steps of that class's share of their paths, 0-1.
    pub median_share: f64,
    /// The class with the largest median share, and that share, when it is another class.
    pub median_bound_by: Option<(BoundBy, f64)>,
}

impl PathContrast {
    /// The contrast for step `e.step` of `steps`, from every step's `paths` (`None` when the
    /// step has no path).
    pub fn of(e: &Explanation, steps: &Steps, paths: &[StepPath]) -> Option<PathContrast> {
        let share = |p: &StepPath, c: BoundBy| if p.wall_ns() > 0 { p.shares[c.index()] as f64 / p.wall_ns() as f64 } else { 0.0 };
        let mine = paths.iter().find(|p| p.step == Some(e.step))?;
        let complete: Vec<&StepPath> = steps
            .steps
            .iter()
            .filter(|s| !s.incomplete)
            .filter_map(|s| paths.iter().find(|p| p.step == Some(s.number)))
            .collect();
        let median_of = |c: BoundBy| median_f(complete.iter().map(|p| share(p, c)).collect());
        let bound_by = mine.bound_by();
        let (top, top_share) = BoundBy::ALL
            .into_iter()
            .map(|c| (c, median_of(c)))
            .fold((bound_by, f64::MIN), |best, (c, m)| if m > best.1 { (c, m) } else { best });
        Some(PathContrast {
            bound_by,
            share: share(mine, bound_by),
            median_share: median_of(bound_by),
            median_bound_by: (top != bound_by).then_some((top, top_share)),
        })
    }

    /// "Its critical path is 62.0% GPU compute (median step: 40.0%)." (with the median step's
    /// own bound when it is another class).
    pub fn sentence(&self) -> String {
        let other = self
            .median_bound_by
            .map(|(c, m)| format!(", whose path is mostly {}: {}", c.label(), percent(m)))
            .unwrap_or_default();
        format!(
            "Its critical path is {} {} (median step: {}{other}).",
            percent(self.share),
            self.bound_by.label(),
            percent(self.median_share)
        )
    }
}

/// The median of `values` (0 when empty).
fn median_f(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let at = |i: usize| values.get(i).copied().unwrap_or(0.0);
    if n % 2 == 1 {
        at(n / 2)
    } else {
        (at((n / 2).saturating_sub(1)) + at(n / 2)) / 2.0
    }
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
        return Err("the trace has no complete step to explain (no ProfilerStep#N; --step-marker names another annotation)".into());
    }
    let target = match which {
        Which::Slowest => complete.iter().copied().max_by_key(|s| (s.dur_ns(), std::cmp::Reverse(s.number))),
        Which::Number(n) => {
            let found = steps.steps.iter().find(|s| s.number == n);
            Some(found.ok_or_else(|| {
                let numbers: Vec<String> = steps.steps.iter().map(|s| s.number.to_string()).collect();
                format!("no {} in the trace (steps: {})", step_name(trace, n), numbers.join(", "))
            })?)
        }
    };
    let Some(target) = target else {
        return Err("the trace has no complete step to explain".into());
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
    let alone = complete.len() == 1 && !target.incomplete;
    let keep = |items: HashMap<StrId, Vec<Cell>>| items_of(trace, items, t, complete.len(), delta, alone);
    let mut categories = categories;
    if alone {
        categories.sort_by_key(|c| std::cmp::Reverse(c.step_ns));
    } else {
        categories.sort_by(|a, b| b.delta_ns().abs().total_cmp(&a.delta_ns().abs()));
    }
    Ok(Explanation {
        step: target.number,
        name: step_name(trace, target.number),
        slice: target.slice,
        dur_ns: target.dur_ns(),
        median_ns,
        steps: complete.len(),
        alone,
        categories,
        kernels: keep(kernels),
        ops: keep(ops),
        path: None,
        phase: None,
    })
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
    for (&p, &d) in s.parent.iter().zip(&s.dur_ns) {
        if p != NONE {
            if let Some(c) = child_ns.get_mut(p as usize) {
                *c += d;
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
    for (i, &children) in child_ns.iter().enumerate() {
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
                    let own = (s.dur_ns[i] - children).max(0);
                    add(&mut ops, k, i, own);
                }
            }
            _ => {}
        }
    }
    (kernels, ops)
}

/// The items of one kind worth naming for step index `t` (the first `complete` indices are the
/// complete steps), most different first: those whose difference from the median is at least a
/// share of the step's; for a trace's only step (`alone`), its largest by its own time.
fn items_of(trace: &Trace, items: HashMap<StrId, Vec<Cell>>, t: usize, complete: usize, delta: f64, alone: bool) -> Vec<ItemDelta> {
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
            let kept = if alone { item.step_ns > 0 } else { item.delta_ns().abs() >= floor };
            kept.then_some(item)
        })
        .collect();
    if alone {
        out.sort_by(|a, b| b.step_ns.cmp(&a.step_ns).then_with(|| a.name.cmp(&b.name)));
    } else {
        out.sort_by(|a, b| b.delta_ns().abs().total_cmp(&a.delta_ns().abs()).then_with(|| a.name.cmp(&b.name)));
    }
    out.truncate(TOP);
    out
}

/// The explanation in a few sentences with the numbers (the page and `report --explain-step`
/// print the same lines).
pub fn sentences(e: &Explanation) -> Vec<String> {
    cited(e).into_iter().map(|(s, _)| s).collect()
}

/// The slice each line of [`sentences`] cites, line by line: the step's annotation for the
/// first, none for the categories, the item's evidence for a kernel or op line.
pub fn sentence_slices(e: &Explanation) -> Vec<Option<u32>> {
    cited(e).into_iter().map(|(_, slice)| slice).collect()
}

/// The sentences with the slice each cites (one function, so the two never disagree).
fn cited(e: &Explanation) -> Vec<(String, Option<u32>)> {
    if e.alone {
        return alone(e);
    }
    let delta = e.delta_ns();
    let ratio = if e.median_ns > 0.0 { delta / e.median_ns } else { 0.0 };
    let more = if delta >= 0.0 { "more" } else { "less" };
    let first = format!(
        "{} took {}, {} ({}) {more} than the median of {} complete steps ({}).",
        e.name,
        duration(e.dur_ns),
        duration(delta.abs().round() as i64),
        percent(ratio.abs()),
        e.steps,
        duration(e.median_ns.round() as i64),
    );
    let mut out = vec![(first, Some(e.slice))];
    let floor = (delta.abs() * MIN_SHARE).max(MIN_ITEM_NS as f64);
    let parts: Vec<String> = e
        .categories
        .iter()
        .filter(|c| c.delta_ns().abs() >= floor)
        .map(|c| format!("{} {}", c.category.label(), signed(c.delta_ns())))
        .collect();
    if !parts.is_empty() {
        out.push((format!("By category (step breakdown): {}.", parts.join(", ")), None));
    }
    if let Some(p) = &e.path {
        out.push((p.sentence(), None));
    }
    if let Some(p) = &e.phase {
        out.push((p.sentence(), None));
    }
    for (kind, items) in [("Kernel", &e.kernels), ("Op", &e.ops)] {
        for i in items.iter().take(3) {
            let line = format!(
                "{kind} {} {}: {} in the step vs {} median, {} call{} vs {} median.",
                cut(&i.name, 60),
                signed(i.delta_ns()),
                duration(i.step_ns),
                duration(i.median_ns.round() as i64),
                i.step_calls,
                if i.step_calls == 1 { "" } else { "s" },
                fmt_calls(i.median_calls),
            );
            out.push((line, i.slice));
        }
    }
    out
}

/// The sentences of a trace's only complete step: what it spent its time on and what bounds
/// it, since there is no other step to compare it with.
fn alone(e: &Explanation) -> Vec<(String, Option<u32>)> {
    let first = format!(
        "{} took {}. It is the only complete step: there is no other step to compare it with.",
        e.name,
        duration(e.dur_ns)
    );
    let mut out = vec![(first, Some(e.slice))];
    let mut largest: Vec<&CategoryDelta> = e.categories.iter().filter(|c| c.step_ns > 0).collect();
    largest.sort_by_key(|c| std::cmp::Reverse(c.step_ns));
    let parts: Vec<String> = largest.iter().take(3).map(|c| format!("{} {}", c.category.label(), duration(c.step_ns))).collect();
    if !parts.is_empty() {
        out.push((format!("By category (step breakdown), the largest: {}.", parts.join(", ")), None));
    }
    if let Some(p) = &e.path {
        out.push((format!("Its critical path is {} {}: that is what bounds the step.", percent(p.share), p.bound_by.label()), None));
    }
    if let Some(p) = &e.phase {
        out.push((
            format!("By phase, {} takes most: {} of CPU and GPU time.", p.phase.key().replace('_', " "), duration(p.step_ns)),
            None,
        ));
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
