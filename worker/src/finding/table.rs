//! Table-level rules: where the time goes overall (`overhead-bound`, `compute-bound`) and which
//! ops dominate (`hotspot-op`, `many-small-calls`). Numbers come from the op table
//! (`key_averages()` semantics) and the step spans, so they match the tables the user sees.
//!
//! Cost: O(rows) over the op table, O(log k) per step for GPU busy time (the shared
//! `GpuIndex`), one slice pass per rule (a parent walk per op for `many-small-calls`), one
//! idle pass over the GPU streams for `overhead-bound`.

use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::breakdown::Category;
use crate::analysis::ops::OpKind;
use crate::model::link::enclosing_op;
use crate::model::CatClass;

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    overhead_bound(ctx, out);
    compute_bound(ctx, out);
    hotspot_op(ctx, out);
    many_small_calls(ctx, out);
}

/// Per-step GPU busy share: (step slice, busy ns, step ns) of complete steps with device work.
fn step_busy(ctx: &Ctx) -> Vec<(u32, i64, i64)> {
    ctx.complete_steps()
        .iter()
        .filter(|s| s.device_activities > 0 && s.dur_ns() > 0)
        .map(|s| (s.slice, ctx.busy_ns((s.start_ns, s.end_ns)), s.dur_ns()))
        .collect()
}

/// DataLoader time of each complete step with device work (the step breakdown's: host time in
/// `enumerate(DataLoader)#...` with no device activity and no runtime call beside it), in
/// [`step_busy`]'s order, ns.
fn step_dataloader(ctx: &Ctx) -> Vec<i64> {
    ctx.complete_steps()
        .iter()
        .filter(|s| s.device_activities > 0 && s.dur_ns() > 0)
        .map(|s| s.breakdown.get(Category::DataLoader))
        .collect()
}

/// Idle time of every GPU stream inside `window` by HTA class: (host wait, kernel wait,
/// other), ns (`analysis::idle`).
fn idle_by_class(ctx: &Ctx, window: Option<(i64, i64)>) -> [i64; 3] {
    let idle = crate::analysis::idle::analyze(ctx.trace, window);
    let mut by = [0i64; 3];
    for st in &idle.streams {
        for (k, v) in by.iter_mut().enumerate() {
            *v += st.idle_ns[k];
        }
    }
    by
}

/// `overhead-bound`: there is GPU work, but the GPU idles while the host dispatches: most steps
/// leave the GPU idle > [`OVERHEAD_STEP_IDLE_SHARE`], or (no steps) Self CUDA total <
/// [`OVERHEAD_DEVICE_SHARE`] of Self CPU total; and host wait (HTA: the launch came after the
/// stream went idle) is >= [`OVERHEAD_HOST_WAIT_SHARE`] of the streams' idle time, so the GPU
/// really waited for the host and not for work queued far ahead. Idle time in which the host
/// waits for the DataLoader (the step breakdown's DataLoader time) is `dataloader-bound`'s:
/// it is taken out of each step's idle time and out of the host wait. Not on a partial
/// recording ([`Ctx::partial`]: idle time there is missing work). Evidence: the steps, most
/// idle first (no steps: the kernels, longest first).
fn overhead_bound(ctx: &Ctx, out: &mut Vec<Finding>) {
    let ops = &ctx.ops;
    if ctx.kernels.rows.is_empty() || ctx.partial.is_some() {
        return;
    }
    let mut steps = step_busy(ctx);
    let loader = step_dataloader(ctx);
    let loader_ns: i64 = loader.iter().sum();
    let (title, mut why, window) = if steps.is_empty() {
        let (cpu, dev) = (ops.self_cpu_total_ns, ops.self_device_total_ns);
        if cpu <= 0 || dev as f64 >= OVERHEAD_DEVICE_SHARE * cpu as f64 {
            return;
        }
        let share = pct(dev as f64 / cpu as f64);
        (
            format!("Self CUDA total {} is {share} of Self CPU total {}", dur(dev), dur(cpu)),
            format!("Self CUDA / Self CPU {share} < {}", pct(OVERHEAD_DEVICE_SHARE)),
            None,
        )
    } else {
        let idle = steps
            .iter()
            .zip(&loader)
            .filter(|((_, busy, d), dl)| (d - busy - *dl) as f64 > OVERHEAD_STEP_IDLE_SHARE * *d as f64)
            .count();
        // Most steps, not one: a single slow step is slow-step's or cold-start-step's business.
        if idle * 2 <= steps.len() {
            return;
        }
        let busy: i64 = steps.iter().map(|s| s.1).sum();
        let total: i64 = steps.iter().map(|s| s.2).sum();
        let window = steps.iter().fold((i64::MAX, i64::MIN), |w, s| {
            let st = ctx.trace.slices.start_ns.get(s.0 as usize).copied().unwrap_or(w.0);
            (w.0.min(st), w.1.max(st + s.2))
        });
        (
            format!(
                "GPU idle {} of step time in {idle} of {} steps (busy {} of {})",
                pct(1.0 - busy as f64 / total.max(1) as f64),
                steps.len(),
                dur(busy),
                dur(total)
            ),
            format!(
                "{idle} of {} steps idle > {} of their span, not counting {} of DataLoader waits",
                steps.len(),
                pct(OVERHEAD_STEP_IDLE_SHARE),
                dur(loader_ns)
            ),
            Some(window),
        )
    };
    let [host, kernel, other] = idle_by_class(ctx, window);
    let host = (host - loader_ns).max(0);
    let idle_ns = host + kernel + other;
    if idle_ns <= 0 || (host as f64) < OVERHEAD_HOST_WAIT_SHARE * idle_ns as f64 {
        return;
    }
    why.push_str(&format!(
        "; host wait {} of {} stream idle time ({}; >= {}), kernel wait {}, other {}",
        dur(host),
        dur(idle_ns),
        pct(host as f64 / idle_ns as f64),
        pct(OVERHEAD_HOST_WAIT_SHARE),
        dur(kernel),
        dur(other)
    ));
    steps.sort_by_key(|s| (std::cmp::Reverse(s.2 - s.1), s.0));
    let evidence = if steps.is_empty() {
        ctx.evidence(ctx.kernels_sorted_by_time(true))
    } else {
        ctx.evidence(steps.iter().map(|s| s.0))
    };
    out.push(finding(
        "overhead-bound",
        Severity::Warn,
        title,
        why,
        "The GPU waits for the CPU: Python, the dispatcher and kernel launches take longer than \
         the kernels they issue, typically small batches or many small ops.",
        "Increase the batch size, fuse ops (torch.compile), use CUDA graphs \
         (torch.compile(mode=\"reduce-overhead\")), and remove host work from the step.",
        evidence,
    ));
}

/// `compute-bound` (info): the GPU is busy at least [`COMPUTE_BOUND_BUSY_SHARE`] of the steps'
/// time (tb_plugin's window when there are no steps). Evidence: compute kernels (communication
/// kernels left out: the remedy is about the kernels' own speed), longest first.
fn compute_bound(ctx: &Ctx, out: &mut Vec<Finding>) {
    let steps = step_busy(ctx);
    let (busy, total) = if steps.is_empty() {
        let Some(m) = ctx.gpus.iter().max_by_key(|m| m.busy_ns) else {
            return;
        };
        (m.busy_ns, m.window.1 - m.window.0)
    } else {
        (steps.iter().map(|s| s.1).sum(), steps.iter().map(|s| s.2).sum())
    };
    if total <= 0 || (busy as f64) < COMPUTE_BOUND_BUSY_SHARE * total as f64 {
        return;
    }
    let share = pct(busy as f64 / total as f64);
    out.push(finding(
        "compute-bound",
        Severity::Info,
        format!("GPU busy {share} of step time ({} of {})", dur(busy), dur(total)),
        format!("GPU busy {share} >= {}", pct(COMPUTE_BOUND_BUSY_SHARE)),
        "The GPU is kept busy: host overhead is hidden, and speed now depends on the kernels \
         themselves.",
        "Look at the top kernels: use tensor cores (bf16/fp16 autocast, TF32), fuse \
         memory-bound ops, and check occupancy.",
        ctx.evidence(ctx.kernels_sorted_by_time(true).into_iter().filter(|&k| !ctx.classes.is_communication(ctx.trace.slices.name[k as usize]))),
    ));
}

/// `hotspot-op`: one op (`cpu_op` row by name; annotations such as `ProfilerStep*` and launch
/// calls are not ops) holds >= [`HOTSPOT_OP_SHARE`] of Self CUDA time total, among at least two
/// ops with device time (with a single such op there is no choice to point at). Evidence: its
/// calls, longest first.
fn hotspot_op(ctx: &Ctx, out: &mut Vec<Finding>) {
    let ops = &ctx.ops;
    let total = ops.self_device_total_ns;
    let with_device = ops.rows.iter().filter(|r| r.self_device_ns > 0).count();
    if total <= 0 || with_device < 2 {
        return;
    }
    // Ties: first occurrence (the table's order), so the result is deterministic.
    let Some(top) = ops
        .rows
        .iter()
        .filter(|r| r.kind == OpKind::Op)
        .reduce(|a, b| if b.self_device_ns > a.self_device_ns { b } else { a })
    else {
        return;
    };
    let share = top.self_device_ns as f64 / total as f64;
    if share < HOTSPOT_OP_SHARE {
        return;
    }
    let mask = ctx.mask(|n| n == top.name);
    out.push(finding(
        "hotspot-op",
        Severity::Info,
        format!(
            "{} holds {} of Self CUDA time ({} in {} calls)",
            top.name,
            pct(share),
            dur(top.self_device_ns),
            top.calls
        ),
        format!(
            "Self CUDA {} of {} total = {} >= {}",
            dur(top.self_device_ns),
            dur(total),
            pct(share),
            pct(HOTSPOT_OP_SHARE)
        ),
        "One op dominates GPU time: any speed-up of the model starts here.",
        "Check this op's kernels (tensor cores, dtype, shapes that tile well), or whether it \
         can be fused or avoided.",
        ctx.evidence(ctx.longest_first(ctx.slices_named(&mask, Some(CatClass::CpuOp)))),
    ));
}

/// Ops that only make views, read metadata or allocate: called thousands of times by the ops
/// around them, they are links of a call chain, not work a user wrote in a loop.
fn is_view_or_alloc(n: &str) -> bool {
    matches!(
        n,
        "aten::view"
            | "aten::_unsafe_view"
            | "aten::as_strided"
            | "aten::empty"
            | "aten::empty_strided"
            | "aten::empty_like"
            | "aten::t"
            | "aten::transpose"
            | "aten::permute"
            | "aten::reshape"
            | "aten::_reshape_alias"
            | "aten::expand"
            | "aten::squeeze"
            | "aten::unsqueeze"
            | "aten::slice"
            | "aten::select"
            | "aten::narrow"
            | "aten::detach"
            | "aten::alias"
            | "aten::resize_"
            | "aten::lift_fresh"
            | "aten::result_type"
            | "detach"
    )
}

/// `many-small-calls`: ops called >= [`MANY_SMALL_CALLS_PER_STEP`] times per step (in the whole
/// trace when it has no steps), counting only outermost calls (no enclosing `cpu_op`: a call
/// made by another op is a link of its chain) and leaving out view / metadata / allocation ops
/// ([`is_view_or_alloc`]), with an average CPU time < [`MANY_SMALL_CALLS_MAX_AVG_NS`] and
/// together >= [`MANY_SMALL_CALLS_MIN_CPU_SHARE`] of Self CPU time total. One finding for all
/// such ops, most calls first; evidence: the calls of the first op, then the next.
fn many_small_calls(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let skip = ctx.mask(is_view_or_alloc);
    // name -> (calls, CPU ns, slices)
    let mut by_name: crate::model::strings::FxHashMap<u32, (u64, i64, Vec<u32>)> = Default::default();
    for i in 0..s.len() as u32 {
        let (n, c) = (s.name[i as usize].0, s.cat[i as usize]);
        if ctx.trace.class(c) != CatClass::CpuOp || ctx.is(&skip, i) || enclosing_op(ctx.trace, i).is_some() {
            continue;
        }
        let e = by_name.entry(n).or_default();
        e.0 += 1;
        e.1 += s.dur_ns[i as usize];
        e.2.push(i);
    }
    let steps = ctx.steps.steps.len();
    let per = steps.max(1) as f64;
    let cpu_total = ctx.ops.self_cpu_total_ns.max(1) as f64;
    let mut rows: Vec<(u64, i64, Vec<u32>, String)> = by_name
        .into_iter()
        .filter(|(_, (calls, ns, _))| {
            *calls as f64 / per >= MANY_SMALL_CALLS_PER_STEP
                && ns / (*calls as i64) < MANY_SMALL_CALLS_MAX_AVG_NS
                && *ns as f64 >= MANY_SMALL_CALLS_MIN_CPU_SHARE * cpu_total
        })
        .map(|(n, (calls, ns, ids))| (calls, ns, ids, ctx.trace.strings.get(crate::model::StrId(n)).into_owned()))
        .collect();
    if rows.is_empty() {
        return;
    }
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.3.cmp(&b.3)));
    let unit = if steps > 0 { "per step" } else { "in the trace (no steps)" };
    let list: Vec<String> = rows
        .iter()
        .take(3)
        .map(|(calls, ns, _, name)| {
            format!("{name} {:.0} {unit}, {} avg", *calls as f64 / per, dur(ns / *calls as i64))
        })
        .collect();
    let more = if rows.len() > 3 { ", ..." } else { "" };
    let cpu: i64 = rows.iter().map(|r| r.1).sum();
    out.push(finding(
        "many-small-calls",
        Severity::Warn,
        format!("{} ops called 1000+ times {unit}: {}{more}", rows.len(), list.join("; ")),
        format!(
            "outermost calls >= {MANY_SMALL_CALLS_PER_STEP:.0} {unit}, avg < {}, together {} of CPU \
             ({} >= {} each)",
            dur(MANY_SMALL_CALLS_MAX_AVG_NS),
            dur(cpu),
            pct(cpu as f64 / cpu_total),
            pct(MANY_SMALL_CALLS_MIN_CPU_SHARE)
        ),
        "Thousands of tiny calls: each pays dispatcher and launch overhead, which adds up to \
         more than the work itself (Python loops over tensors, per-parameter optimizer updates).",
        "Vectorize the loop, use foreach/fused optimizers (foreach=True, fused=True), or \
         torch.compile the region.",
        ctx.evidence(rows.into_iter().flat_map(|r| r.2)),
    ));
}

impl Ctx<'_> {
    /// Kernel slice ids, longest first when `longest_first`, ascending ids otherwise.
    pub(crate) fn kernels_sorted_by_time(&self, longest_first: bool) -> Vec<u32> {
        let s = &self.trace.slices;
        let mut ids: Vec<u32> = self
            .activities
            .iter()
            .copied()
            .filter(|&i| self.trace.class(s.cat[i as usize]) == CatClass::Kernel)
            .collect();
        if longest_first {
            ids.sort_by_key(|&i| (std::cmp::Reverse(s.dur_ns[i as usize]), i));
        }
        ids
    }

    /// `ids` sorted longest first (ties: ascending id): the usual "most telling first".
    pub(crate) fn longest_first(&self, mut ids: Vec<u32>) -> Vec<u32> {
        let s = &self.trace.slices;
        ids.sort_by_key(|&i| (std::cmp::Reverse(s.dur_ns.get(i as usize).copied().unwrap_or(0)), i));
        ids
    }

    /// Whether slice `i`'s name is set in `mask` (false past either end).
    pub(crate) fn is(&self, mask: &[bool], i: u32) -> bool {
        let s = &self.trace.slices;
        s.name.get(i as usize).is_some_and(|n| mask.get(n.0 as usize).copied().unwrap_or(false))
    }
}
