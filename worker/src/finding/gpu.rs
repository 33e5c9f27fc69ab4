//! GPU-lane rules: profiler overhead (`activity-buffer-request`, `profiler-gap`), unstable
//! kernels (`kernel-time-variance`), GEMM patterns (`dtod-before-gemm`, `fp32-gemm`) and how
//! well the device is used (`gpu-idle`, `low-occupancy`).
//!
//! Cost: O(k log k) over the k device activities (per-stream and per-device passes); launch
//! shapes (`grid`, `block` args) are read only for kernels whose name holds at least
//! `KERNEL_VARIANCE_MIN_SHARE` of kernel time.

use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::args::ArgKey;
use crate::analysis::stats::median;
use crate::analysis::kernel_class::{is_gemm, KernelClass, Precision};
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, ProcessKind};

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    activity_buffer_request(ctx, out);
    profiler_gap(ctx, out);
    kernel_time_variance(ctx, out);
    dtod_before_gemm(ctx, out);
    fp32_gemm(ctx, out);
    gpu_idle(ctx, out);
    low_occupancy(ctx, out);
}

/// Slices of the profiler's `Activity Buffer Request` overhead.
fn buffer_requests(ctx: &Ctx) -> Vec<u32> {
    let mask = ctx.mask(|n| n == "Activity Buffer Request");
    ctx.slices_named(&mask, None)
}

/// `activity-buffer-request` (info): the profiler's own buffer requests appear in the trace.
fn activity_buffer_request(ctx: &Ctx, out: &mut Vec<Finding>) {
    let ids = buffer_requests(ctx);
    if ids.is_empty() {
        return;
    }
    let s = &ctx.trace.slices;
    let total: i64 = ids.iter().map(|&i| s.dur_ns[i as usize]).sum();
    out.push(finding(
        "activity-buffer-request",
        Severity::Info,
        format!("{} Activity Buffer Request slices ({} in total)", ids.len(), dur(total)),
        format!("{} slices named Activity Buffer Request, {} in total", ids.len(), dur(total)),
        "CUPTI (the profiler) allocating a buffer for GPU activity records: profiler overhead, \
         not your program. It explains a late first kernel (the CPU-GPU offset at the start) \
         and gaps that would not exist without profiling.",
        "Ignore this time when reading the trace; profile more steps after a warmup so it falls \
         outside the steps you measure.",
        ctx.evidence(ids),
    ));
}

/// Device activities of every GPU stream: per lane, (start, end, slice) in start order.
fn streams(ctx: &Ctx) -> Vec<Vec<(i64, i64, u32)>> {
    let t = ctx.trace;
    let s = &t.slices;
    t.processes
        .iter()
        .filter(|p| p.kind == ProcessKind::Gpu)
        .flat_map(|p| p.lanes.iter())
        .filter_map(|l| t.lanes.get(l.0 as usize))
        .map(|lane| {
            (lane.slices.start as usize..lane.slices.end as usize)
                .filter(|&i| t.class(s.cat[i]).is_device_activity())
                .map(|i| (s.start_ns[i], s.end_ns(i), i as u32))
                .collect::<Vec<_>>()
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// Idle gaps of one stream: (gap start, gap end, activity before, activity after).
fn gaps(acts: &[(i64, i64, u32)]) -> impl Iterator<Item = (i64, i64, u32, u32)> + '_ {
    // Running maximum of ends: same-stream overlaps never make a false gap (as in idle.rs).
    let mut prev: Option<(i64, u32)> = None;
    acts.iter().filter_map(move |&(a, b, id)| {
        let gap = prev.filter(|&(pe, _)| a > pe).map(|(pe, pid)| (pe, a, pid, id));
        prev = Some(match prev {
            Some((pe, pid)) if pe >= b => (pe, pid),
            _ => (b, id),
        });
        gap
    })
}

/// `profiler-gap`: a gap between activities on a stream, inside a step (anywhere when the
/// trace has no steps), that overlaps an `Activity Buffer Request`.
fn profiler_gap(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let requests: Vec<(i64, i64, u32)> = buffer_requests(ctx)
        .into_iter()
        .map(|i| (s.start_ns[i as usize], s.end_ns(i as usize), i))
        .collect();
    if requests.is_empty() {
        return;
    }
    let steps: Vec<(i64, i64)> = ctx.steps.steps.iter().map(|st| (st.start_ns, st.end_ns)).collect();
    let in_step = |a: i64, b: i64| steps.is_empty() || steps.iter().any(|&(s0, s1)| a >= s0 && b <= s1);
    let mut ids = Vec::new();
    let mut total = 0i64;
    let mut count = 0usize;
    for acts in streams(ctx) {
        for (a, b, before, after) in gaps(&acts) {
            let Some(req) = requests.iter().find(|r| r.0 < b && r.1 > a) else { continue };
            if !in_step(a, b) {
                continue;
            }
            count += 1;
            total += b - a;
            ids.extend([req.2, before, after]);
        }
    }
    if count == 0 {
        return;
    }
    out.push(finding(
        "profiler-gap",
        Severity::Info,
        format!("{count} gaps between kernels ({} in total) coincide with profiler buffer requests", dur(total)),
        format!("{count} stream gaps inside a step overlap an Activity Buffer Request ({} in total)", dur(total)),
        "The GPU went idle while the profiler requested a new activity buffer: the gap is \
         profiling overhead, not a stall of your program.",
        "Do not optimize this gap; compare with a step that has no buffer request.",
        ctx.evidence(ids),
    ));
}

/// FNV-1a over the raw text of a kernel's `grid` and `block` args: its launch shape.
fn shape_hash(grid: Option<&[u8]>, block: Option<&[u8]>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [grid.unwrap_or(b"-"), b"|", block.unwrap_or(b"-")] {
        for &b in part {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// `kernel-time-variance`: a kernel (same name, grid and block; communication kernels left
/// out, they wait for peers: a rank question, not a kernel one) present in every complete step,
/// holding >= [`KERNEL_VARIANCE_MIN_SHARE`] of kernel time, whose per-step time varies:
/// max >= [`KERNEL_VARIANCE_RATIO`] x median. A kernel belongs to the step whose CPU range
/// started its launch call ([`Ctx::launch_step`]); kernels launched before the first step
/// (or unlinked) are left out. One finding; evidence: the worst kernel's calls in its slowest
/// step first, then its other calls, then the next kernels'.
fn kernel_time_variance(ctx: &Ctx, out: &mut Vec<Finding>) {
    let steps = ctx.complete_steps();
    let total = ctx.kernels.total_ns;
    if steps.len() < 2 || total <= 0 {
        return;
    }
    let s = &ctx.trace.slices;
    let (grid, block) = (ArgKey::new("grid"), ArgKey::new("block"));
    // Only names holding the minimum share can qualify: read launch shapes for those alone.
    let big = ctx.mask(|n| {
        ctx.kernels.rows.iter().any(|r| {
            r.name == n && r.class != KernelClass::Communication && r.total_ns as f64 >= KERNEL_VARIANCE_MIN_SHARE * total as f64
        })
    });
    let mut reader = ctx.trace.args.reader();
    let mut shape = |k: u32| {
        let args = reader.bytes(s.args[k as usize]);
        shape_hash(grid.raw(args), block.raw(args))
    };
    // (name, shape) -> (per-step time, kernels with their step); per group, not per kernel.
    type Group = (Vec<i64>, Vec<(u32, usize)>);
    let mut groups: FxHashMap<(u32, u64), Group> = FxHashMap::default();
    for k in ctx.kernels_sorted_by_time(false) {
        if !ctx.is(&big, k) {
            continue;
        }
        let Some(step) = ctx.launch_step(&steps, k) else { continue };
        let g = groups.entry((s.name[k as usize].0, shape(k))).or_insert_with(|| (vec![0; steps.len()], Vec::new()));
        g.0[step] += s.dur_ns[k as usize];
        g.1.push((k, step));
    }
    let mut hits: Vec<(f64, u32, u64, usize, f64)> = Vec::new();
    for (&(name, shape), (per_step, _)) in &groups {
        let sum: i64 = per_step.iter().sum();
        if per_step.contains(&0) || (sum as f64) < KERNEL_VARIANCE_MIN_SHARE * total as f64 {
            continue;
        }
        let (Some(med), Some((worst, &max))) = (median(per_step), per_step.iter().enumerate().max_by_key(|p| *p.1)) else {
            continue;
        };
        if med > 0.0 && max as f64 >= KERNEL_VARIANCE_RATIO * med {
            hits.push((max as f64 / med, name, shape, worst, med));
        }
    }
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let Some(&(ratio, name, shape, worst, med)) = hits.first() else { return };
    let Some((per_step, _)) = groups.get(&(name, shape)) else { return };
    let max = per_step[worst];
    let mut ids: Vec<u32> = Vec::new();
    for h in &hits {
        let Some((_, calls)) = groups.get(&(h.1, h.2)) else { continue };
        ids.extend(calls.iter().filter(|c| c.1 == h.3).map(|c| c.0));
        ids.extend(calls.iter().filter(|c| c.1 != h.3).map(|c| c.0));
    }
    let kname = ctx.trace.strings.get(crate::model::StrId(name));
    out.push(finding(
        "kernel-time-variance",
        Severity::Warn,
        format!(
            "{} kernels vary across steps; {}: {} in {} vs {} median per step ({ratio:.1}x)",
            hits.len(),
            crate::text::cut(&kname, 60),
            dur(max),
            crate::analysis::steps::step_name(ctx.trace, steps[worst].number),
            dur(med as i64)
        ),
        format!(
            "per-step time (by the step that launched it) max {} / median {} = {ratio:.2} >= \
             {KERNEL_VARIANCE_RATIO}; kernel holds >= {} of kernel time; communication kernels left out",
            dur(max),
            dur(med as i64),
            pct(KERNEL_VARIANCE_MIN_SHARE)
        ),
        "The same kernel with the same launch shape takes different time in different \
         steps: contention (another stream, process or communication overlapping it), \
         clock changes, or different data (sparsity, cache) under the same shape.",
        "Look at what runs beside it in the slow step (other streams, NCCL); lock clocks when \
         benchmarking; compare inputs of the slow step.",
        ctx.evidence(ids),
    ));
}

/// The nearest enclosing op of slice `i` that fills its output before a GEMM (`aten::addmm`,
/// `aten::baddbmm`, `aten::addbmm`, `aten::linear`), if any.
fn bias_gemm_op(ctx: &Ctx, mask: &[bool], i: u32) -> Option<u32> {
    let s = &ctx.trace.slices;
    let mut p = super::launch_of(ctx.trace, i)?;
    while p != crate::model::NONE && (p as usize) < s.len() {
        if ctx.is(mask, p) {
            return Some(p);
        }
        p = s.parent[p as usize];
    }
    None
}

/// `dtod-before-gemm`: a device-to-device copy whose next activity on the same stream is a
/// GEMM kernel, both launched from inside the same `aten::addmm` / `aten::baddbmm` /
/// `aten::addbmm` / `aten::linear` call ([`bias_gemm_op`]): the op copying its bias into the
/// output before the GEMM accumulates into it. A copy that merely sits next to a GEMM (a
/// backward `copy_` before a `bmm`) is not this pattern. Evidence: copy then GEMM, largest
/// copy first.
fn dtod_before_gemm(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let dtod = ctx.mask(|n| n.contains("DtoD") || n.contains("Device -> Device"));
    let gemm = ctx.mask(is_gemm);
    let bias_ops = ctx.mask(|n| matches!(n, "aten::addmm" | "aten::baddbmm" | "aten::addbmm" | "aten::linear"));
    let hit = |m: &[bool], i: u32| m.get(s.name[i as usize].0 as usize).copied().unwrap_or(false);
    let mut found: Vec<(i64, u32, u32)> = Vec::new();
    let mut bytes_total = 0i64;
    let bytes_key = ArgKey::new("bytes");
    let mut reader = ctx.trace.args.reader();
    for acts in streams(ctx) {
        for w in acts.windows(2) {
            let (c, k) = (w[0].2, w[1].2);
            if ctx.trace.class(s.cat[c as usize]) == CatClass::Memcpy
                && hit(&dtod, c)
                && ctx.trace.class(s.cat[k as usize]) == CatClass::Kernel
                && hit(&gemm, k)
                && bias_gemm_op(ctx, &bias_ops, c).is_some_and(|op| bias_gemm_op(ctx, &bias_ops, k) == Some(op))
            {
                let bytes = bytes_key.i64(reader.bytes(s.args[c as usize])).unwrap_or(0);
                bytes_total += bytes;
                found.push((bytes, c, k));
            }
        }
    }
    if found.is_empty() {
        return;
    }
    found.sort_by_key(|f| (std::cmp::Reverse(f.0), f.1));
    let pairs = found.len();
    let copy_ns: i64 = found.iter().map(|f| s.dur_ns[f.1 as usize]).sum();
    let ids: Vec<u32> = found.iter().flat_map(|f| [f.1, f.2]).collect();
    out.push(finding(
        "dtod-before-gemm",
        Severity::Warn,
        format!(
            "{pairs} device-to-device copies right before a GEMM on the same stream ({} MB, {})",
            format_args!("{:.1}", bytes_total as f64 / 1e6),
            dur(copy_ns)
        ),
        format!(
            "{pairs} Memcpy DtoD each directly followed on its stream by a GEMM kernel, both launched \
             inside the same aten::addmm / baddbmm / linear call"
        ),
        "aten::addmm / aten::baddbmm (nn.Linear with bias, attention scores with a bias or \
         mask) first copy the broadcast input into the output, then run the GEMM with beta=1 \
         to add into it: one extra read and write of the output.",
        "Usually small; for large outputs, fuse the bias into the GEMM epilogue (torch.compile, \
         cuBLASLt epilogues) or drop the bias where a following norm makes it redundant.",
        ctx.evidence(ids),
    ));
}

/// `fp32-gemm`: GEMM kernels whose name says FP32 ([`Precision::Fp32`]: cuBLAS `sgemm`,
/// `f32f32_f32f32 ... ffma`, Tensile `S`) and that do not run on tensor / matrix cores hold >=
/// [`FP32_GEMM_MIN_SHARE`] of GEMM time, on a device with TF32 (compute capability >=
/// [`TF32_MIN_MAJOR`], or unknown): on 7.x the only remedy is autocast, which
/// `amp-opportunity` tells. GEMMs whose name does not say the precision are not counted as
/// FP32, and neither are fp16 storage SIMT kernels (`ampere_fp16_sgemm_fp16_*`: autocast would
/// not change them). Where TF32 tensor-core GEMMs already run (tensor-core kernels on fp32
/// data: `s1688gemm`, `tf32f32`), TF32 is on and the fp32 GEMMs left are the shapes cuBLAS
/// keeps on the CUDA cores (dimensions not multiples of 4, tiny K): the advice is padding, not
/// TF32. Evidence: the FP32 GEMMs, longest first.
fn fp32_gemm(ctx: &Ctx, out: &mut Vec<Finding>) {
    let major = ctx.max_compute_major();
    if major.is_some_and(|m| m < TF32_MIN_MAJOR) {
        return;
    }
    let rows = &ctx.kernels.rows;
    let gemm_ns: i64 = rows.iter().filter(|r| r.gemm).map(|r| r.total_ns).sum();
    let simt: Vec<_> = rows
        .iter()
        .filter(|r| r.gemm && !r.tensor_cores && r.precision == Precision::Fp32)
        .collect();
    let simt_ns: i64 = simt.iter().map(|r| r.total_ns).sum();
    if simt.is_empty() || gemm_ns <= 0 || (simt_ns as f64) < FP32_GEMM_MIN_SHARE * gemm_ns as f64 {
        return;
    }
    let tf32: Vec<_> = rows
        .iter()
        .filter(|r| r.gemm && r.tensor_cores && matches!(r.precision, Precision::Tf32 | Precision::Fp32))
        .collect();
    let tf32_ns: i64 = tf32.iter().map(|r| r.total_ns).sum();
    let mask = ctx.mask(|n| simt.iter().any(|r| r.name == n));
    let ids = ctx.longest_first(ctx.slices_named(&mask, Some(CatClass::Kernel)));
    let mut why = format!(
        "FP32 SIMT GEMM time {} / GEMM time {} = {} >= {} (precision from the kernel name; \
         GEMMs whose name does not say are not counted); compute capability {}",
        dur(simt_ns),
        dur(gemm_ns),
        pct(simt_ns as f64 / gemm_ns as f64),
        pct(FP32_GEMM_MIN_SHARE),
        major.map_or_else(|| "unknown".to_owned(), |m| format!("{m}.x"))
    );
    let (meaning, try_this) = if tf32.is_empty() {
        (
            "These matrix multiplies run on the CUDA cores in FP32 (sgemm / SIMT kernels), many \
             times slower than tensor cores on the same GPU.",
            "Allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True, or \
             torch.set_float32_matmul_precision(\"high\")) or run under \
             torch.autocast(\"cuda\", dtype=torch.bfloat16).",
        )
    } else {
        why.push_str(&format!(
            "; TF32 is already on: {} TF32 tensor-core GEMM kernel names run {}",
            tf32.len(),
            dur(tf32_ns)
        ));
        (
            "TF32 tensor cores already run most GEMMs; these fp32 ones stayed on the CUDA cores \
             because of their shapes: a dimension that is not a multiple of 4 (TF32) or 8 (fp16 / \
             bf16), or a tiny K, cannot be tiled for tensor cores.",
            "Pad the odd dimensions (hidden sizes, embedding widths, K) to multiples of 8; \
             merge tiny GEMMs (K of 1-16) into larger ones or compute them elementwise.",
        )
    };
    out.push(finding(
        "fp32-gemm",
        Severity::Warn,
        format!(
            "FP32 GEMMs without tensor cores take {} of GEMM time ({}, {} kernels, e.g. {})",
            pct(simt_ns as f64 / gemm_ns as f64),
            dur(simt_ns),
            simt.len(),
            crate::text::cut(&simt[0].name, 50)
        ),
        why,
        meaning,
        try_this,
        ctx.evidence(ids),
    ));
}

/// `gpu-idle`: a device's GPU Utilization < [`GPU_IDLE_UTILIZATION`] over the step window, or
/// a gap >= [`GPU_IDLE_GAP_NS`] with no device activity on a GPU between its first and last.
/// Not on a partial recording ([`Ctx::partial`]): idle time there is missing work.
fn gpu_idle(ctx: &Ctx, out: &mut Vec<Finding>) {
    if ctx.partial.is_some() {
        return;
    }
    let low = ctx
        .gpus
        .iter()
        .filter(|m| m.kernels > 0 && m.window.1 > m.window.0)
        .min_by(|a, b| a.utilization.total_cmp(&b.utilization).then(a.device.cmp(&b.device)))
        .filter(|m| m.utilization < GPU_IDLE_UTILIZATION);
    // Gaps over the union of each GPU process's streams.
    let mut big: Vec<(i64, i64, u32, u32)> = Vec::new();
    let t = ctx.trace;
    for p in t.processes.iter().filter(|p| p.kind == ProcessKind::Gpu) {
        let mut acts: Vec<(i64, i64, u32)> = Vec::new();
        for l in p.lanes.iter().filter_map(|l| t.lanes.get(l.0 as usize)) {
            acts.extend(
                (l.slices.start as usize..l.slices.end as usize)
                    .filter(|&i| t.class(t.slices.cat[i]).is_device_activity())
                    .map(|i| (t.slices.start_ns[i], t.slices.end_ns(i), i as u32)),
            );
        }
        acts.sort_unstable();
        big.extend(gaps(&acts).filter(|g| g.1 - g.0 >= GPU_IDLE_GAP_NS));
    }
    if low.is_none() && big.is_empty() {
        return;
    }
    big.sort_by_key(|g| (std::cmp::Reverse(g.1 - g.0), g.0));
    let mut parts = Vec::new();
    if let Some(m) = low {
        parts.push(format!(
            "GPU {} utilization {} over {}",
            m.device,
            pct(m.utilization),
            dur(m.window.1 - m.window.0)
        ));
    }
    if let Some(g) = big.first() {
        parts.push(format!("{} gaps of 500 ms or more (longest {})", big.len(), dur(g.1 - g.0)));
    }
    let mut evidence = ctx.evidence(big.iter().flat_map(|g| [g.2, g.3]));
    if let Some(m) = low {
        let steps: Vec<u32> = ctx.complete_steps().iter().map(|s| s.slice).collect();
        if big.is_empty() {
            evidence = ctx.evidence(steps);
        }
        evidence.range_ns = Some(m.window);
    }
    let why = format!(
        "utilization (kernel union / step window) {} < {}; gaps >= {}: {}",
        low.map_or_else(|| "not".to_owned(), |m| pct(m.utilization)),
        pct(GPU_IDLE_UTILIZATION),
        dur(GPU_IDLE_GAP_NS),
        big.len()
    );
    out.push(finding(
        "gpu-idle",
        Severity::Warn,
        parts.join("; "),
        why,
        "The GPU has nothing to do much of the time: it waits for the host (data loading, \
         Python, synchronization) or for other processes.",
        "Find what the CPU does during the gaps: overlap data loading (num_workers, \
         pin_memory, prefetch), remove syncs, increase the batch size.",
        evidence,
    ));
}

/// Names of kernels whose launch asks for more than the default 48 KiB of shared memory per
/// block (the `shared memory` arg): Kineto's occupancy estimate asks the occupancy API under
/// the default limit, which fits none of their blocks, so they read 0% whatever they achieve
/// (warp-specialized / persistent CUTLASS, xmma and nvjet GEMMs: qatut's and the H100 BERT's
/// `sm90_xmma_gemm_*` ask 226 KiB). Only kernels named in `mask` are read.
fn opted_in_shared_memory(ctx: &Ctx, mask: &[bool]) -> FxHashMap<u32, ()> {
    let s = &ctx.trace.slices;
    let key = ArgKey::new("shared memory");
    let mut reader = ctx.trace.args.reader();
    let mut out = FxHashMap::default();
    for k in ctx.kernels_sorted_by_time(false) {
        if ctx.is(mask, k) && !out.contains_key(&s.name[k as usize].0) {
            let smem = crate::analysis::kernels::f64_arg(&key, reader.bytes(s.args[k as usize]));
            if smem.is_some_and(|b| b > DEFAULT_SHARED_MEMORY_BYTES) {
                out.insert(s.name[k as usize].0, ());
            }
        }
    }
    out
}

/// `low-occupancy`: time-weighted Est. Achieved Occupancy < [`LOW_OCCUPANCY_PCT`] over the
/// kernels that report it (running >= [`LOW_OCCUPANCY_MIN_KERNEL_NS`] in total), from the
/// kernel table's per-name averages (weighted by each name's time). A name reading 0% is
/// unknown, not low, when it has >= 1 block per SM (CUPTI could not compute it: a cuBLAS GEMM
/// with 46 blocks per SM reads 0% in gpumodel) or asks for more than the default shared memory
/// ([`opted_in_shared_memory`]: warp-specialized and persistent kernels). The GPU metrics
/// table keeps tb_plugin's number, which counts such zeros. Communication kernels are left
/// out: they run a few blocks by design (NCCL, custom all-reduce, DeepEP / pplx dispatch and
/// combine) and would drag the average down. Evidence: low kernels, longest first.
fn low_occupancy(ctx: &Ctx, out: &mut Vec<Finding>) {
    let zero = ctx.mask(|n| ctx.kernels.rows.iter().any(|r| r.name == n && r.occupancy_pct == Some(0.0)));
    let opted_in = opted_in_shared_memory(ctx, &zero);
    let strings = &ctx.trace.strings;
    let unknown_zero = |r: &crate::analysis::kernels::KernelRow| {
        r.blocks_per_sm.is_some_and(|b| b >= 1.0)
            || strings.lookup(&r.name).is_some_and(|id| opted_in.contains_key(&id.0))
    };
    let rows: Vec<_> = ctx
        .kernels
        .rows
        .iter()
        .filter(|r| r.class != KernelClass::Communication)
        .filter_map(|r| r.occupancy_pct.filter(|&o| o >= 0.0).map(|o| (r, o)))
        .filter(|(r, o)| !(*o == 0.0 && unknown_zero(r)))
        .collect();
    let time: i64 = rows.iter().map(|(r, _)| r.total_ns).sum();
    if time < LOW_OCCUPANCY_MIN_KERNEL_NS {
        return;
    }
    let occ = rows.iter().map(|(r, o)| o * r.total_ns as f64).sum::<f64>() / time as f64;
    if occ >= LOW_OCCUPANCY_PCT {
        return;
    }
    let low: Vec<_> = rows.iter().filter(|(_, o)| *o < LOW_OCCUPANCY_PCT).map(|(r, _)| r).collect();
    let low_ns: i64 = low.iter().map(|r| r.total_ns).sum();
    let mask = ctx.mask(|n| low.iter().any(|r| r.name == n));
    let ids = ctx.longest_first(ctx.slices_named(&mask, Some(CatClass::Kernel)));
    out.push(finding(
        "low-occupancy",
        Severity::Warn,
        format!(
            "Est. Achieved Occupancy {occ:.1}% over {} of kernels (below {LOW_OCCUPANCY_PCT}%: {} kernel names, {})",
            dur(time),
            low.len(),
            dur(low_ns)
        ),
        format!(
            "time-weighted occupancy {occ:.1}% < {LOW_OCCUPANCY_PCT}% over {} of non-communication \
             kernels (>= {})",
            dur(time),
            dur(LOW_OCCUPANCY_MIN_KERNEL_NS)
        ),
        "Few warps are resident per SM, so the SMs cannot hide memory latency: grids too small \
         for the GPU, or kernels limited by registers or shared memory.",
        "Increase the batch or tensor sizes, fuse small kernels; for custom kernels, tune block \
         size and register use.",
        ctx.evidence(ids),
    ));
}
