//! CPU-lane rules: slow first steps (`cold-start-step`, `annotation-dispatch-gap`), what the
//! host waits on (`long-device-sync`, `sync-heavy`, `hidden-memcpy`), what launches cost
//! (`launch-overhead`) and which kernels are launched adaptively (`occupancy-query`).
//!
//! Cost: one pass over the slices per rule; per query or annotation a bounded look at the
//! slices after it on its lane; per memcpy call a parent walk.

use crate::analysis::steps::step_name;
use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::stats::median;
use crate::model::link::enclosing_op;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, NONE};

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    cold_start_step(ctx, out);
    slow_step(ctx, out);
    annotation_dispatch_gap(ctx, out);
    occupancy_query(ctx, out);
    long_device_sync(ctx, out);
    sync_heavy(ctx, out);
    hidden_memcpy(ctx, out);
    launch_overhead(ctx, out);
}

/// `cold-start-step`: the first complete step's CPU time (its `ProfilerStep#N` range, which
/// GPU work launched before the capture cannot stretch) is >= [`COLD_START_RATIO`] x the median
/// CPU time of the other complete steps.
fn cold_start_step(ctx: &Ctx, out: &mut Vec<Finding>) {
    let complete = ctx.complete_steps();
    let Some((first, rest)) = complete.split_first() else { return };
    let others: Vec<i64> = rest.iter().map(|s| s.cpu_dur_ns()).collect();
    let Some(med) = median(&others).filter(|&m| m > 0.0) else { return };
    let ratio = first.cpu_dur_ns() as f64 / med;
    if ratio < COLD_START_RATIO {
        return;
    }
    out.push(finding(
        "cold-start-step",
        Severity::Warn,
        format!(
            "First step {} took {} of CPU time, {ratio:.1}x the median of the other {} steps",
            step_name(ctx.trace, first.number),
            dur(first.cpu_dur_ns()),
            others.len()
        ),
        format!(
            "CPU step time {} / median {} = {ratio:.2} >= {COLD_START_RATIO}",
            dur(first.cpu_dur_ns()),
            dur(med as i64)
        ),
        "The first step pays one-time costs: CUDA context and allocator warm-up, cuDNN/cuBLAS \
         autotuning (cudnn.benchmark), lazy module init, torch.compile compilation.",
        "Skip it when measuring: profile with schedule(wait=1, warmup=1, active=N) and compare \
         the steady-state steps.",
        ctx.evidence([first.slice]),
    ));
}

/// `slow-step`: a complete step other than the first whose CPU time is >= [`SLOW_STEP_RATIO`] x
/// the median of its neighbours (up to [`SLOW_STEP_NEIGHBOURS`] complete steps on each side,
/// the first step left out: it is cold-start-step's). Evidence: the slow steps, slowest
/// (by ratio) first.
fn slow_step(ctx: &Ctx, out: &mut Vec<Finding>) {
    let complete = ctx.complete_steps();
    let d: Vec<i64> = complete.iter().map(|s| s.cpu_dur_ns()).collect();
    let mut hits: Vec<(f64, usize, f64)> = Vec::new();
    for k in 1..d.len() {
        let lo = k.saturating_sub(SLOW_STEP_NEIGHBOURS).max(1);
        let hi = (k + SLOW_STEP_NEIGHBOURS + 1).min(d.len());
        let near: Vec<i64> = (lo..hi).filter(|&j| j != k).map(|j| d[j]).collect();
        let Some(med) = median(&near).filter(|&m| m > 0.0) else { continue };
        let ratio = d[k] as f64 / med;
        if ratio >= SLOW_STEP_RATIO {
            hits.push((ratio, k, med));
        }
    }
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let Some(&(ratio, k, med)) = hits.first() else { return };
    out.push(finding(
        "slow-step",
        Severity::Warn,
        format!(
            "{} slow steps; {} took {}, {ratio:.1}x its neighbours' median {}",
            hits.len(),
            step_name(ctx.trace, complete[k].number),
            dur(d[k]),
            dur(med as i64)
        ),
        format!(
            "CPU step time / median of up to {SLOW_STEP_NEIGHBOURS} complete steps each side \
             (first step left out) >= {SLOW_STEP_RATIO}: worst {}/{} = {ratio:.2}",
            dur(d[k]),
            dur(med as i64)
        ),
        "One step in the middle of the run is much slower than the steps around it: something \
         happened once (garbage collection, a checkpoint or evaluation, a data stall, another \
         process on the GPU, a recompilation).",
        "Open the slow step and compare it with a neighbour: look for host gaps, syncs, \
         DataLoader waits or extra kernels.",
        ctx.evidence(hits.iter().map(|h| complete[h.1].slice)),
    ));
}

/// Gap from the start of annotation `i` to the first `cpu_op` inside it on its lane, if any.
fn first_op_gap(ctx: &Ctx, i: usize) -> Option<i64> {
    let s = &ctx.trace.slices;
    let lane = ctx.trace.lanes.get(s.lane[i].0 as usize)?;
    let end = s.end_ns(i);
    (i + 1..lane.slices.end as usize)
        .take_while(|&j| s.start_ns[j] < end)
        .find(|&j| ctx.trace.class(s.cat[j]) == CatClass::CpuOp)
        .map(|j| s.start_ns[j] - s.start_ns[i])
}

/// `annotation-dispatch-gap`: for a record_function (`user_annotation`) seen several times,
/// its first occurrence waits >= [`DISPATCH_GAP_MIN_NS`] before its first op, and >=
/// [`DISPATCH_GAP_RATIO`] x the median of that gap in later occurrences. `ProfilerStep#N`
/// counts as one name. One finding; evidence: the first occurrences, largest gap first.
fn annotation_dispatch_gap(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let steps = ctx.mask(|n| n.starts_with("ProfilerStep#"));
    // name key (all steps share one) -> (slice, gap) in time order
    let mut by_name: FxHashMap<u32, Vec<(u32, i64)>> = FxHashMap::default();
    let mut order: Vec<(i64, u32, u32)> = (0..s.len())
        .filter(|&i| ctx.trace.class(s.cat[i]) == CatClass::Annotation)
        .map(|i| (s.start_ns[i], i as u32, s.name[i].0))
        .collect();
    order.sort_unstable();
    for (_, i, name) in order {
        let key = if steps.get(name as usize).copied().unwrap_or(false) { u32::MAX } else { name };
        if let Some(gap) = first_op_gap(ctx, i as usize) {
            by_name.entry(key).or_default().push((i, gap));
        }
    }
    let mut hits: Vec<(u32, i64, f64)> = Vec::new();
    for list in by_name.values() {
        let Some((&(first, gap), later)) = list.split_first() else { continue };
        let later: Vec<i64> = later.iter().map(|l| l.1).collect();
        let Some(med) = median(&later) else { continue };
        if gap >= DISPATCH_GAP_MIN_NS && gap as f64 >= DISPATCH_GAP_RATIO * med {
            hits.push((first, gap, med));
        }
    }
    hits.sort_by_key(|h| (std::cmp::Reverse(h.1), h.0));
    let Some(&(slice, gap, med)) = hits.first() else { return };
    let more = if hits.len() > 1 { format!(" (and {} more regions)", hits.len() - 1) } else { String::new() };
    out.push(finding(
        "annotation-dispatch-gap",
        Severity::Warn,
        format!(
            "{}: {} from its start to its first op in the first occurrence, {} median later{more}",
            ctx.name(slice),
            dur(gap),
            dur(med as i64)
        ),
        format!(
            "first gap {} >= {} and >= {DISPATCH_GAP_RATIO:.0}x the later median {}",
            dur(gap),
            dur(DISPATCH_GAP_MIN_NS),
            dur(med as i64)
        ),
        "Before the first op of this region runs, the host does something once: lazy \
         initialization, module hooks, Python imports, data on first touch, compilation.",
        "Warm the region up before profiling (or skip the first step); if it recurs, look \
         at the python_function events (with_stack=True) in the gap.",
        ctx.evidence(hits.iter().map(|h| h.0)),
    ));
}

/// `occupancy-query` (info): `cudaOccupancyMaxActiveBlocksPerMultiprocessor[WithFlags]`
/// followed, inside the same enclosing slice, by a call that launched a kernel: that kernel
/// sizes its grid from the query (heavyweight, adaptively launched kernels).
fn occupancy_query(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let queries = ctx.mask(|n| {
        n.starts_with("cudaOccupancyMaxActiveBlocksPerMultiprocessor")
            || n.starts_with("hipOccupancyMaxActiveBlocksPerMultiprocessor")
    });
    let mut ids = Vec::new();
    let mut kernels: Vec<u32> = Vec::new();
    for q in ctx.slices_named(&queries, Some(CatClass::Launch)) {
        let qi = q as usize;
        let Some(lane) = ctx.trace.lanes.get(s.lane[qi].0 as usize) else { continue };
        let parent = s.parent[qi];
        let end = if parent == NONE { i64::MAX } else { s.end_ns(parent as usize) };
        // The first call after the query that launched device work decides: a kernel is a
        // hit, a memset or copy is not. Bounded lookahead keeps this O(1) per query.
        let hit = (qi + 1..lane.slices.end as usize)
            .take(OCCUPANCY_LOOKAHEAD_SLICES)
            .take_while(|&j| s.start_ns[j] < end)
            .filter(|&j| ctx.trace.class(s.cat[j]) == CatClass::Launch)
            .take(OCCUPANCY_LOOKAHEAD_CALLS)
            .find_map(|j| ctx.launched(j as u32))
            .filter(|&k| ctx.trace.class(s.cat[k as usize]) == CatClass::Kernel);
        if let Some(k) = hit {
            ids.push(q);
            kernels.push(k);
        }
    }
    if ids.is_empty() {
        return;
    }
    // The most frequent kernel is the example (ties: the smaller name), deterministic.
    let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
    for &k in &kernels {
        *counts.entry(s.name[k as usize].0).or_default() += 1;
    }
    let mut names: Vec<(usize, String)> = counts
        .iter()
        .map(|(&n, &c)| (c, ctx.trace.strings.get(crate::model::StrId(n)).into_owned()))
        .collect();
    names.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let example = names.first().map(|n| crate::text::cut(&n.1, 60)).unwrap_or_default();
    let title = format!(
        "{} occupancy queries right before kernel launches ({} distinct kernels, e.g. {})",
        ids.len(),
        names.len(),
        example
    );
    let why = format!(
        "{} occupancy queries each followed, within {OCCUPANCY_LOOKAHEAD_CALLS} launch calls in the same \
         enclosing slice, by a kernel launch",
        ids.len()
    );
    // Evidence: each query beside the kernel it sized, in time order.
    let pairs: Vec<u32> = ids.iter().zip(&kernels).flat_map(|(&q, &k)| [q, k]).collect();
    out.push(finding(
        "occupancy-query",
        Severity::Info,
        title,
        why,
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor asks how many blocks fit on an SM; the \
         library then sizes the grid of the kernel it launches next. It marks heavyweight, \
         adaptively launched kernels (GEMMs, reductions, cub scans), and costs host time.",
        "Nothing to fix by itself; if these launches dominate host time, CUDA graphs or \
         torch.compile remove the per-call query.",
        ctx.evidence(pairs),
    ));
}

/// Names of calls that block the host until the device catches up.
pub(super) fn is_sync_call(n: &str) -> bool {
    matches!(
        n,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "cudaMemcpy2D"
            | "cudaMemset"
            | "cuCtxSynchronize"
            | "cuStreamSynchronize"
            | "cuEventSynchronize"
            | "hipDeviceSynchronize"
            | "hipStreamSynchronize"
            | "hipEventSynchronize"
            | "hipMemcpy"
    )
}

/// `long-device-sync`: a device-wide synchronize lasting >= [`LONG_SYNC_MIN_NS`] during which
/// every device is busy < [`LONG_SYNC_MAX_BUSY_SHARE`] of the call, and after which device work
/// still starts: the capture's final synchronize (the profiler flushing, the script ending)
/// waits in no loop. Evidence: longest first.
fn long_device_sync(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let mask = ctx.mask(|n| matches!(n, "cudaDeviceSynchronize" | "hipDeviceSynchronize" | "cuCtxSynchronize"));
    let last_work = ctx.last_activity_start_ns();
    let mut hits: Vec<(u32, i64, i64)> = ctx
        .slices_named(&mask, Some(CatClass::Launch))
        .into_iter()
        .filter(|&i| s.dur_ns[i as usize] >= LONG_SYNC_MIN_NS && s.end_ns(i as usize) < last_work)
        .map(|i| {
            let (a, d) = (s.start_ns[i as usize], s.dur_ns[i as usize]);
            (i, d, ctx.busy_ns((a, a + d)))
        })
        .filter(|&(_, d, busy)| (busy as f64) < LONG_SYNC_MAX_BUSY_SHARE * d as f64)
        .collect();
    hits.sort_by_key(|h| (std::cmp::Reverse(h.1), h.0));
    let Some(&(_, d, busy)) = hits.first() else {
        return;
    };
    out.push(finding(
        "long-device-sync",
        Severity::Warn,
        format!(
            "{} long cudaDeviceSynchronize calls; the longest waits {} while the GPU is busy {}",
            hits.len(),
            dur(d),
            pct(busy as f64 / d.max(1) as f64)
        ),
        format!(
            "calls >= {} with GPU busy < {} of the call: longest {}, busy {}",
            dur(LONG_SYNC_MIN_NS),
            pct(LONG_SYNC_MAX_BUSY_SHARE),
            dur(d),
            dur(busy)
        ),
        "The host waits for the whole device but little GPU work runs meanwhile: the wait is on \
         something else (another process or stream, a copy, the profiler flushing), or the \
         sync is simply not needed there.",
        "Remove device-wide syncs from the training loop (they are rarely needed with streams); \
         if timing, use CUDA events.",
        ctx.evidence(hits.iter().map(|h| h.0)),
    ));
}

/// `sync-heavy`: synchronizing calls ([`is_sync_call`]) take >= [`SYNC_HEAVY_SHARE`] of Self
/// CPU time total. Not counted: a call during which the GPU is busy more than
/// [`SYNC_MAX_BUSY_SHARE`] (the host waits for real work, it does not starve the GPU), and a
/// trailing call after which no device work starts (the end-of-capture synchronize).
/// Evidence: the counted calls, longest first.
fn sync_heavy(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let total = ctx.ops.self_cpu_total_ns;
    let mask = ctx.mask(is_sync_call);
    let all = ctx.slices_named(&mask, Some(CatClass::Launch));
    let last_work = ctx.last_activity_start_ns();
    let (mut busy_skipped, mut trailing) = (0usize, 0usize);
    let mut ids: Vec<u32> = Vec::new();
    for i in all {
        let (a, d) = (s.start_ns[i as usize], s.dur_ns[i as usize]);
        if a + d >= last_work {
            trailing += 1;
        } else if d > 0 && ctx.busy_ns((a, a + d)) as f64 > SYNC_MAX_BUSY_SHARE * d as f64 {
            busy_skipped += 1;
        } else {
            ids.push(i);
        }
    }
    let sync: i64 = ids.iter().map(|&i| s.dur_ns[i as usize]).sum();
    if total <= 0 || ids.is_empty() || (sync as f64) < SYNC_HEAVY_SHARE * total as f64 {
        return;
    }
    let n = ids.len();
    let share = pct(sync as f64 / total as f64);
    let causes = sync_causes(ctx, &ids);
    out.push(finding(
        "sync-heavy",
        Severity::Warn,
        format!("Synchronizing calls take {share} of CPU time ({} in {n} calls); by the op that synced: {}", dur(sync), causes.0),
        format!(
            "{} of {} Self CPU = {share} >= {}; left out: {busy_skipped} calls with the GPU busy > {}, \
             {trailing} trailing; {} ops synced",
            dur(sync),
            dur(total),
            pct(SYNC_HEAVY_SHARE),
            pct(SYNC_MAX_BUSY_SHARE),
            causes.1
        ),
        "The host blocks until the GPU catches up, so it cannot queue work ahead. Typical \
         causes: .item(), .cpu(), .tolist(), printing or logging tensors, torch.cuda.synchronize.",
        "Move the value reads out of the step (log every N steps), keep metrics on the GPU, use \
         non_blocking copies; find the op calling each sync in the evidence.",
        ctx.evidence(ctx.longest_first(ids)),
    ));
}

/// The synchronizing calls `ids` grouped by the op the user called around them ([`user_op`]:
/// `aten::item`, `aten::nonzero`, `aten::to` for `.cpu()`, ...; "no op" for calls made from
/// Python directly, e.g. `torch.cuda.synchronize()`): the three largest as "name time (calls)",
/// most time first, and how many ops there are.
fn sync_causes(ctx: &Ctx, ids: &[u32]) -> (String, usize) {
    let s = &ctx.trace.slices;
    let mut by_op: FxHashMap<Option<u32>, (i64, u32)> = FxHashMap::default();
    for &i in ids {
        let e = by_op.entry(user_op(ctx, i).map(|op| s.name[op as usize].0)).or_insert((0, 0));
        e.0 += s.dur_ns[i as usize];
        e.1 += 1;
    }
    let mut causes: Vec<(Option<u32>, (i64, u32))> = by_op.into_iter().collect();
    causes.sort_by_key(|c| (std::cmp::Reverse(c.1 .0), c.0));
    let named: Vec<String> = causes
        .iter()
        .take(3)
        .map(|(op, (ns, n))| {
            let name = op.map_or_else(|| "no op".into(), |id| ctx.trace.strings.get(crate::model::StrId(id)));
            format!("{name} {} ({n})", dur(*ns))
        })
        .collect();
    (named.join(", "), causes.iter().filter(|c| c.0.is_some()).count())
}

/// Ops whose job is to copy: a memcpy inside them is what the user wrote.
fn is_copy_op(n: &str) -> bool {
    matches!(
        n,
        "aten::copy_"
            | "aten::_copy_from"
            | "aten::_copy_from_and_resize"
            | "aten::to"
            | "aten::_to_copy"
            | "aten::clone"
            | "aten::contiguous"
            | "aten::_local_scalar_dense"
            | "aten::item"
            | "aten::cpu"
            | "aten::cuda"
            | "aten::pin_memory"
            | "aten::_pin_memory"
            | "aten::tolist"
    )
}

/// The op the user called around slice `i`: the outermost enclosing dispatcher op (a name
/// with `::`, so record_functions and 2021-era `ProfilerStep#N` operators are skipped, and not
/// autograd's `evaluate_function` wrapper), else the innermost enclosing op.
pub(super) fn user_op(ctx: &Ctx, i: u32) -> Option<u32> {
    let s = &ctx.trace.slices;
    let inner = enclosing_op(ctx.trace, i)?;
    let mut outer = None;
    let mut p = Some(inner);
    while let Some(op) = p {
        let name = ctx.name(op);
        // Autograd's node wrapper names the backward node, not an op the user called.
        if name.contains("::") && !name.starts_with("autograd::engine::evaluate_function") {
            outer = Some(op);
        }
        p = enclosing_op(ctx.trace, op);
        debug_assert!(p.is_none_or(|q| s.depth[q as usize] < s.depth[op as usize]));
    }
    Some(outer.unwrap_or(inner))
}

/// Ops and annotations that copy by nature, whatever op runs inside them: DDP's bucket copies
/// (`torch.distributed.ddp.reducer::copy_bucket_to_grad`, older traces without the
/// `torch.distributed.` prefix), collectives staging their buffers (names holding all2all /
/// all_gather / all_reduce ..., e.g. vLLM's `vllm::all_reduce`), `aten::repeat`
/// and `aten::cat` writing their output, `aten::clone` (out-of-place ops clone their input),
/// `slice_scatter` / `slice_backward` (a copy with a slice written in).
fn copies_by_nature(n: &str) -> bool {
    const OPS: [&str; 6] =
        ["aten::repeat", "aten::repeat_interleave", "aten::clone", "aten::cat", "aten::slice_scatter", "aten::slice_backward"];
    const COLLECTIVES: [&str; 9] = [
        "all2all", "alltoall", "all_to_all", "allgather", "all_gather", "reducescatter", "reduce_scatter", "allreduce",
        "all_reduce",
    ];
    let lower = n.to_ascii_lowercase();
    n.contains("ddp.reducer::")
        || OPS.contains(&n)
        || crate::analysis::kernel_context::is_communication_op(n)
        || COLLECTIVES.iter().any(|c| lower.contains(c))
}

/// Whether any slice enclosing `i` (any category) satisfies `mask`.
pub(super) fn inside(ctx: &Ctx, mask: &[bool], i: u32) -> bool {
    let s = &ctx.trace.slices;
    let mut p = s.parent.get(i as usize).copied().unwrap_or(NONE);
    while p != NONE && (p as usize) < s.len() {
        if ctx.is(mask, p) {
            return true;
        }
        p = s.parent[p as usize];
    }
    false
}

/// `hidden-memcpy`: a `cudaMemcpy*` call issued inside an op the user did not write as a copy
/// ([`user_op`] is not a [`is_copy_op`]): `aten::baddbmm` copying its bias, `aten::nonzero`
/// or `aten::is_nonzero` reading a value back, indexing uploading a CPU index. Calls inside
/// something that copies by nature ([`copies_by_nature`]) are left out. Evidence: each call
/// beside its copy, longest copy first.
fn hidden_memcpy(ctx: &Ctx, out: &mut Vec<Finding>) {
    let memcpy = ctx.mask(|n| n.starts_with("cudaMemcpy") || n.starts_with("hipMemcpy"));
    let copy_ops = ctx.mask(is_copy_op);
    let natural = ctx.mask(copies_by_nature);
    let s = &ctx.trace.slices;
    let mut hits: Vec<(i64, u32, Option<u32>)> = Vec::new();
    let mut by_op: Vec<(String, u32)> = Vec::new();
    for c in ctx.slices_named(&memcpy, Some(CatClass::Launch)) {
        let Some(op) = user_op(ctx, c) else { continue };
        if copy_ops.get(s.name[op as usize].0 as usize).copied().unwrap_or(true) || inside(ctx, &natural, c) {
            continue;
        }
        let name = ctx.name(op);
        match by_op.iter_mut().find(|(n, _)| *n == name) {
            Some((_, k)) => *k += 1,
            None => by_op.push((name.into_owned(), 1)),
        }
        let act = ctx.launched(c);
        let d = act.map_or(0, |a| s.dur_ns[a as usize]);
        hits.push((d, c, act));
    }
    if by_op.is_empty() {
        return;
    }
    by_op.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.sort_by_key(|h| (std::cmp::Reverse(h.0), h.1));
    let calls: u32 = by_op.iter().map(|b| b.1).sum();
    let list: Vec<String> = by_op.iter().take(4).map(|(n, k)| format!("{n} x{k}")).collect();
    out.push(finding(
        "hidden-memcpy",
        Severity::Warn,
        format!("{calls} memcpy calls inside ops that are not copies: {}", list.join(", ")),
        format!(
            "{calls} cudaMemcpy* calls whose outermost op is none of the copy ops (aten::copy_, \
             aten::to, ...), none inside something that copies by nature (DDP bucket copies, \
             collectives, clone, cat, repeat, slice_scatter)"
        ),
        "An op copies memory behind your back: addmm pre-fills its output with the bias, \
         nonzero/masked_select/unique read a count back to the host (a sync), indexing with \
         a CPU tensor uploads it.",
        "Check the ops listed: keep index tensors on the GPU, avoid data-dependent shapes in the \
         step, and see dtod-before-gemm for the bias copy.",
        ctx.evidence(hits.iter().flat_map(|h| std::iter::once(h.1).chain(h.2))),
    ));
}

/// `launch-overhead`: >= [`LAUNCH_OVERHEAD_SHARE`] of the linked kernels (and at least
/// [`LAUNCH_OVERHEAD_MIN_KERNELS`]) are shorter than their launch call (HTA's short kernels).
/// Evidence: the short kernels in time order (they matter as a run, not one by one).
fn launch_overhead(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let mut linked = 0usize;
    let mut short = Vec::new();
    for k in ctx.kernels_sorted_by_time(false) {
        let Some(l) = super::launch_of(ctx.trace, k) else { continue };
        linked += 1;
        if s.dur_ns[k as usize] < s.dur_ns[l as usize] {
            short.push(k);
        }
    }
    if short.len() < LAUNCH_OVERHEAD_MIN_KERNELS || (short.len() as f64) < LAUNCH_OVERHEAD_SHARE * linked as f64 {
        return;
    }
    out.push(finding(
        "launch-overhead",
        Severity::Warn,
        format!(
            "{} of {} kernels ({}) are shorter than their launch calls",
            short.len(),
            linked,
            pct(short.len() as f64 / linked as f64)
        ),
        format!(
            "short kernels (HTA: shorter than the launch call) {} >= {LAUNCH_OVERHEAD_MIN_KERNELS} and {} >= {} of linked kernels",
            short.len(),
            pct(short.len() as f64 / linked.max(1) as f64),
            pct(LAUNCH_OVERHEAD_SHARE)
        ),
        "Launching a kernel costs more host time than the kernel runs: the GPU finishes each \
         one before the next is queued (tiny tensors, elementwise chains).",
        "Fuse kernels (torch.compile), use CUDA graphs, batch small tensors together, use \
         foreach/fused optimizers.",
        ctx.evidence(short),
    ));
}
