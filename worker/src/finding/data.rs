//! Data and device rules: input pipeline (`dataloader-bound`, `pageable-memcpy`, host-to-device
//! copies serialized with compute: `h2d-not-overlapped`), distributed
//! communication (`comm-heavy`, `comm-not-overlapped`), memory (`memory-near-limit`) and
//! mixed precision (`amp-opportunity`). Shares of step time come from the step breakdown
//! (tb_plugin's priority rule), so they equal the steps table.
//!
//! Cost: one slice pass per rule, a union of each GPU's compute kernels (O(k log k)) for the
//! overlap; the `[memory]` series comes from `detect`, shared with the memory rules.

use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::kernel_class::{KernelClass, Precision};
use crate::analysis::kernels::KernelRow;
use crate::analysis::breakdown::{is_dataloader, Breakdown, Category, Roles};
use crate::analysis::kernel_context::communicates;
use crate::analysis::gpu::metrics_window_of;
use crate::analysis::memory::Memory;
use crate::analysis::phases::{overlap, union};
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, ProcessKind};

/// `memory`: the trace's series, built once for these rules and the memory ones.
pub(super) fn rules(ctx: &Ctx, memory: &Memory, out: &mut Vec<Finding>) {
    dataloader_bound(ctx, out);
    pageable_memcpy(ctx, out);
    h2d_not_overlapped(ctx, out);
    comm_heavy(ctx, out);
    comm_not_overlapped(ctx, out);
    memory_near_limit(ctx, memory, out);
    amp_opportunity(ctx, out);
}

/// The breakdown summed over complete steps; without steps, over tb_plugin's window.
fn breakdown(ctx: &Ctx) -> Breakdown {
    let steps = ctx.complete_steps();
    if steps.is_empty() {
        let (w0, w1) = metrics_window_of(ctx.trace, &ctx.steps);
        return Roles::new(ctx.trace).breakdown(w0, w1);
    }
    let mut b = Breakdown::default();
    for s in steps {
        for (k, v) in b.ns.iter_mut().enumerate() {
            *v += s.breakdown.ns[k];
        }
    }
    b
}

/// `dataloader-bound`: DataLoader > [`DATALOADER_SHARE`] of step time (tb_plugin's rule).
fn dataloader_bound(ctx: &Ctx, out: &mut Vec<Finding>) {
    let b = breakdown(ctx);
    let (dl, total) = (b.get(Category::DataLoader), b.total());
    if total <= 0 || dl as f64 <= DATALOADER_SHARE * total as f64 {
        return;
    }
    let mask = ctx.mask(is_dataloader);
    out.push(finding(
        "dataloader-bound",
        Severity::Warn,
        format!("DataLoader takes {} of step time ({} of {})", pct(dl as f64 / total as f64), dur(dl), dur(total)),
        format!(
            "DataLoader in the step breakdown {} of {} = {} > {}",
            dur(dl),
            dur(total),
            pct(dl as f64 / total as f64),
            pct(DATALOADER_SHARE)
        ),
        "The training loop waits for the next batch: loading, decoding or augmenting data is \
         slower than the model step.",
        "Use DataLoader(num_workers>0, pin_memory=True, persistent_workers=True, \
         prefetch_factor), move augmentation to the GPU, cache decoded data.",
        ctx.evidence(ctx.slices_named(&mask, None)),
    ));
}

/// `pageable-memcpy`: host-device copies from or to pageable memory (Nsight's rule) that
/// pinning could speed up: copies under [`PAGEABLE_MIN_BYTES`] and copies launched inside
/// `aten::item` / `aten::_local_scalar_dense` (a scalar read back) are left out, their cost is
/// the round trip, not the staging. Evidence: the copies, then their calls.
fn pageable_memcpy(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let mask = ctx.mask(|n| n.contains("Pageable"));
    let readback = ctx.mask(|n| matches!(n, "aten::item" | "aten::_local_scalar_dense"));
    let all = ctx.slices_named(&mask, Some(CatClass::Memcpy));
    let bytes_key = crate::analysis::args::ArgKey::new("bytes");
    let mut reader = ctx.trace.args.reader();
    let (mut ids, mut bytes, mut small, mut scalar) = (Vec::new(), 0i64, 0usize, 0usize);
    for i in all {
        let b = bytes_key.i64(reader.bytes(s.args[i as usize]));
        let call = super::launch_of(ctx.trace, i);
        if call.is_some_and(|c| ctx.is(&readback, c) || super::cpu::inside(ctx, &readback, c)) {
            scalar += 1;
        } else if b.is_some_and(|b| b < PAGEABLE_MIN_BYTES) {
            small += 1;
        } else {
            bytes += b.unwrap_or(0);
            ids.push(i);
        }
    }
    if ids.is_empty() {
        return;
    }
    let total: i64 = ids.iter().map(|&i| s.dur_ns[i as usize]).sum();
    let calls: Vec<u32> = ids.iter().filter_map(|&i| super::launch_of(ctx.trace, i)).collect();
    out.push(finding(
        "pageable-memcpy",
        Severity::Warn,
        format!(
            "{} copies between device and pageable host memory ({:.2} MB, {})",
            ids.len(),
            bytes as f64 / 1e6,
            dur(total)
        ),
        format!(
            "{} gpu_memcpy slices named with Pageable, of >= {} KiB; left out: {small} smaller, {scalar} \
             scalar reads (aten::item / _local_scalar_dense), which pinning would not speed up",
            ids.len(),
            PAGEABLE_MIN_BYTES / 1024
        ),
        "Copies from unpinned memory go through a staging buffer and are synchronous with the \
         host: slower, and they cannot overlap compute.",
        "Pin host memory (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with \
         .to(device, non_blocking=True).",
        ctx.evidence(ids.into_iter().chain(calls)),
    ));
}

/// A host-to-device copy's name: CUDA's `Memcpy HtoD (...)`, HIP's `CopyHostToDevice`.
fn is_h2d(name: &str) -> bool {
    name.contains("HtoD") || name.contains("HostToDevice")
}

/// One complete step's device work, for `h2d-not-overlapped`.
#[derive(Default)]
struct StepCopies {
    /// Compute kernels (not communication): (device process, start, end), ns.
    compute: Vec<(u32, i64, i64)>,
    /// Compute kernel time per lane (stream), ns.
    per_lane: FxHashMap<u32, i64>,
    /// Host-to-device copies not already `pageable-memcpy`'s evidence: (slice, bytes).
    copies: Vec<(u32, Option<i64>)>,
}

/// `h2d-not-overlapped`: per complete step, host-to-device copies that serialize with compute,
/// leaving out the pageable ones of >= [`PAGEABLE_MIN_BYTES`] (`pageable-memcpy`'s evidence):
/// a copy on the stream holding the step's most compute-kernel time counts whole, one elsewhere
/// counts its time with no compute kernel of its device running. Fires when the median step's
/// serialized time is >= [`H2D_SERIAL_MIN_SHARE`] of its span and >= [`H2D_SERIAL_MIN_NS`], or
/// when the median step makes >= [`H2D_MANY_PER_STEP`] such copies of a median under
/// [`H2D_SMALL_BYTES`]. Evidence: the serialized copies, longest first, then the others.
fn h2d_not_overlapped(ctx: &Ctx, out: &mut Vec<Finding>) {
    let (trace, s) = (ctx.trace, &ctx.trace.slices);
    let steps = ctx.complete_steps();
    if steps.is_empty() {
        return;
    }
    let (h2d, pageable, comm) = (ctx.mask(is_h2d), ctx.mask(|n| n.contains("Pageable")), ctx.classes.communication_mask(trace));
    let bytes_key = crate::analysis::args::ArgKey::new("bytes");
    let mut reader = trace.args.reader();
    let mut per: Vec<StepCopies> = steps.iter().map(|_| StepCopies::default()).collect();
    for &a in &ctx.activities {
        let Some(i) = ctx.launch_step(&steps, a) else { continue };
        let (lane, start, end) = (s.lane[a as usize].0, s.start_ns[a as usize], s.end_ns(a as usize));
        match trace.class(s.cat[a as usize]) {
            CatClass::Kernel if !ctx.is(&comm, a) => {
                let process = trace.lanes.get(lane as usize).map_or(u32::MAX, |l| l.process);
                per[i].compute.push((process, start, end));
                *per[i].per_lane.entry(lane).or_insert(0) += end - start;
            }
            CatClass::Memcpy if ctx.is(&h2d, a) => {
                let bytes = bytes_key.i64(reader.bytes(s.args[a as usize]));
                if !(ctx.is(&pageable, a) && bytes.is_none_or(|b| b >= PAGEABLE_MIN_BYTES)) {
                    per[i].copies.push((a, bytes));
                }
            }
            _ => {}
        }
    }
    // Per step: (serialized ns, span ns, copies); the serialized copies and the others.
    let (mut rows, mut serial, mut rest, mut sizes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (st, k) in steps.iter().zip(per) {
        let main = k.per_lane.iter().max_by_key(|(l, ns)| (**ns, std::cmp::Reverse(**l))).map(|(l, _)| *l);
        let mut ns = 0;
        for &(c, bytes) in &k.copies {
            let (lane, start, end) = (s.lane[c as usize].0, s.start_ns[c as usize], s.end_ns(c as usize));
            let process = trace.lanes.get(lane as usize).map_or(u32::MAX, |l| l.process);
            let compute = union(k.compute.iter().filter(|x| x.0 == process).map(|x| (x.1, x.2)).collect());
            let alone = if Some(lane) == main { end - start } else { end - start - overlap(&[(start, end)], &compute) };
            ns += alone;
            if alone > 0 {
                serial.push(c);
            } else {
                rest.push(c);
            }
            sizes.extend(bytes);
        }
        rows.push((ns, st.dur_ns(), k.copies.len() as i64));
    }
    let median = |mut v: Vec<i64>| -> i64 {
        v.sort_unstable();
        v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
    };
    rows.sort_by(|a, b| (a.0 as f64 / a.1.max(1) as f64).total_cmp(&(b.0 as f64 / b.1.max(1) as f64)));
    let Some(&(ns, span, _)) = rows.get(rows.len().saturating_sub(1) / 2) else { return };
    let share = ns as f64 / span.max(1) as f64;
    let count = median(rows.iter().map(|r| r.2).collect());
    let bytes = median(sizes.clone());
    let serialized = share >= H2D_SERIAL_MIN_SHARE && ns >= H2D_SERIAL_MIN_NS;
    let many = count >= H2D_MANY_PER_STEP && !sizes.is_empty() && bytes < H2D_SMALL_BYTES;
    if !serialized && !many {
        return;
    }
    out.push(finding(
        "h2d-not-overlapped",
        Severity::Warn,
        format!(
            "{} per step of host-to-device copies serialized with compute ({} of the step); {count} copies per step, a median {} B each",
            dur(ns),
            pct(share),
            bytes
        ),
        format!(
            "median complete step: host-to-device copies on the compute stream, or with no compute kernel running, {} of a {} \
             step = {} (>= {} and >= {}: {}); {count} copies per step of a median {bytes} B (>= {H2D_MANY_PER_STEP} under {} B: \
             {}); pageable copies of >= {} KiB left to pageable-memcpy",
            dur(ns),
            dur(span),
            pct(share),
            pct(H2D_SERIAL_MIN_SHARE),
            dur(H2D_SERIAL_MIN_NS),
            if serialized { "yes" } else { "no" },
            H2D_SMALL_BYTES,
            if many { "yes" } else { "no" },
            PAGEABLE_MIN_BYTES / 1024
        ),
        "Host-to-device copies that run on the same stream as the model's kernels, or while the \
         GPU computes nothing, add their whole time to the step: the copy engine could move the \
         next batch while the current one computes. Many small copies per step (scalars, masks, \
         per-sample tensors built on the CPU) each pay a launch and a DMA setup.",
        "Prefetch the next batch on a side stream (torch.cuda.Stream with record_stream / \
         wait_stream, or a prefetcher in the data pipeline) with pinned memory and \
         non_blocking=True; build small tensors on the device, or stack them into one buffer and \
         copy once.",
        ctx.evidence(ctx.longest_first(serial).into_iter().chain(rest)),
    ));
}

/// Communication kernels and host ops.
fn comm_slices(ctx: &Ctx) -> Vec<u32> {
    let kernels = ctx.classes.communication_mask(ctx.trace);
    let ops = ctx.mask(communicates);
    let s = &ctx.trace.slices;
    (0..s.len() as u32)
        .filter(|&i| {
            let (n, class) = (s.name[i as usize].0 as usize, ctx.trace.class(s.cat[i as usize]));
            match class {
                CatClass::Kernel => kernels.get(n).copied().unwrap_or(false),
                CatClass::CpuOp | CatClass::Annotation => ops.get(n).copied().unwrap_or(false),
                _ => false,
            }
        })
        .collect()
}

/// `comm-heavy`: communication > [`COMM_HEAVY_SHARE`] of step time (tb_plugin's rule).
fn comm_heavy(ctx: &Ctx, out: &mut Vec<Finding>) {
    let b = breakdown(ctx);
    let (comm, total) = (b.get(Category::Communication), b.total());
    if total <= 0 || comm as f64 <= COMM_HEAVY_SHARE * total as f64 {
        return;
    }
    out.push(finding(
        "comm-heavy",
        Severity::Warn,
        format!(
            "Communication takes {} of step time ({} of {}, not hidden by kernels)",
            pct(comm as f64 / total as f64),
            dur(comm),
            dur(total)
        ),
        format!(
            "Communication in the step breakdown {} of {} = {} > {}",
            dur(comm),
            dur(total),
            pct(comm as f64 / total as f64),
            pct(COMM_HEAVY_SHARE)
        ),
        "Collectives (all-reduce, all-to-all, ...) take a large share of the step without \
         compute running beside them: the job is communication-bound.",
        "Overlap communication with backward (DDP bucket_cap_mb, FSDP prefetch), compress or \
         reduce what is exchanged, use larger batches per rank.",
        ctx.evidence(comm_slices(ctx)),
    ));
}

/// Length of `[a, b)` covered by the sorted disjoint `cover`.
fn covered(cover: &[(i64, i64)], a: i64, b: i64) -> i64 {
    let from = cover.partition_point(|c| c.1 <= a);
    cover[from..]
        .iter()
        .take_while(|c| c.0 < b)
        .map(|c| c.1.min(b) - c.0.max(a))
        .sum()
}

/// `comm-not-overlapped`: on a GPU, communication kernels take >= [`COMM_MIN_KERNEL_SHARE`] of
/// kernel time and >= [`COMM_EXPOSED_SHARE`] of their time runs with no compute kernel beside
/// them (HTA's comm/compute overlap, inverted).
fn comm_not_overlapped(ctx: &Ctx, out: &mut Vec<Finding>) {
    let t = ctx.trace;
    let s = &t.slices;
    let comm_mask = ctx.classes.communication_mask(t);
    let mut worst: Option<(f64, i64, i64, Vec<u32>, String)> = None;
    for p in t.processes.iter().filter(|p| p.kind == ProcessKind::Gpu) {
        let (mut comm, mut compute) = (Vec::new(), Vec::new());
        for l in p.lanes.iter().filter_map(|l| t.lanes.get(l.0 as usize)) {
            for i in l.slices.start as usize..l.slices.end as usize {
                if t.class(s.cat[i]) != CatClass::Kernel {
                    continue;
                }
                if comm_mask.get(s.name[i].0 as usize).copied().unwrap_or(false) {
                    comm.push(i as u32);
                } else {
                    compute.push((s.start_ns[i], s.end_ns(i)));
                }
            }
        }
        let compute_ns: i64 = compute.iter().map(|c| c.1 - c.0).sum();
        let comm_ns: i64 = comm.iter().map(|&i| s.dur_ns[i as usize]).sum();
        if comm_ns <= 0 || (comm_ns as f64) < COMM_MIN_KERNEL_SHARE * (comm_ns + compute_ns) as f64 {
            continue;
        }
        let cover = crate::analysis::breakdown::merge(compute);
        let mut exposed: Vec<(i64, u32)> = comm
            .iter()
            .map(|&i| {
                let (a, b) = (s.start_ns[i as usize], s.end_ns(i as usize));
                ((b - a) - covered(&cover, a, b), i)
            })
            .collect();
        let exposed_ns: i64 = exposed.iter().map(|e| e.0).sum();
        let share = exposed_ns as f64 / comm_ns as f64;
        if share < COMM_EXPOSED_SHARE || worst.as_ref().is_some_and(|w| w.0 >= share) {
            continue;
        }
        exposed.sort_by_key(|e| (std::cmp::Reverse(e.0), e.1));
        let name = t.strings.get(p.name).into_owned();
        worst = Some((share, exposed_ns, comm_ns, exposed.into_iter().map(|e| e.1).collect(), name));
    }
    let Some((share, exposed_ns, comm_ns, ids, name)) = worst else { return };
    out.push(finding(
        "comm-not-overlapped",
        Severity::Warn,
        format!(
            "{}: {} of communication kernel time ({} of {}) runs with no compute beside it",
            crate::text::printable(&name),
            pct(share),
            dur(exposed_ns),
            dur(comm_ns)
        ),
        format!(
            "communication kernels without compute beside them {} of {} = {} >= {}",
            dur(exposed_ns),
            dur(comm_ns),
            pct(share),
            pct(COMM_EXPOSED_SHARE)
        ),
        "NCCL kernels run while the GPU computes nothing: every step waits for the \
         collectives instead of hiding them behind compute.",
        "Overlap communication with computation: DDP/FSDP bucketing and prefetch, issue \
         collectives on a side stream early (async_op=True), avoid syncing right after them.",
        ctx.evidence(ids),
    ));
}

/// `memory-near-limit` (alert): a device's peak reserved (else allocated) memory >
/// [`MEMORY_NEAR_LIMIT_SHARE`] of its `totalGlobalMem` (tb_plugin's rule). One finding, for
/// the fullest device.
fn memory_near_limit(ctx: &Ctx, mem: &Memory, out: &mut Vec<Finding>) {
    let devices = ctx.devices();
    if devices.is_empty() {
        return;
    }
    // (share, peak, limit, at, label) per device over the line; the fullest is reported.
    let mut over: Vec<(f64, i64, i64, i64, String)> = Vec::new();
    for d in &mem.devices {
        // c10::DeviceType CUDA = 1, HIP = 6: the devices deviceProperties describes.
        if !matches!(d.device_type, 1 | 6) {
            continue;
        }
        let Some(limit) = devices.iter().find(|p| p.id == d.device_id).and_then(|p| p.total_mem) else {
            continue;
        };
        let (peak, at) = if d.peak_reserved > 0 {
            (d.peak_reserved, d.peak_reserved_ns)
        } else {
            (d.peak_allocated, d.peak_allocated_ns)
        };
        if limit > 0 && peak as f64 > MEMORY_NEAR_LIMIT_SHARE * limit as f64 {
            over.push((peak as f64 / limit as f64, peak, limit, at, d.label.clone()));
        }
    }
    over.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.4.cmp(&b.4)));
    let Some((share, peak, limit, at, label)) = over.first().cloned() else { return };
    // The peak is a `[memory]` instant, not a slice: the evidence is its time.
    let evidence = super::Evidence { range_ns: Some((at, at)), ..Default::default() };
    let others = if over.len() > 1 { format!(" ({} devices over the line)", over.len()) } else { String::new() };
    out.push(finding(
        "memory-near-limit",
        Severity::Alert,
        format!(
            "{label}: peak memory {:.2} GB is {} of the device's {:.2} GB{others}",
            peak as f64 / 1e9,
            pct(share),
            limit as f64 / 1e9
        ),
        format!(
            "peak reserved (else allocated) {:.2} GB / totalGlobalMem {:.2} GB = {} > {}",
            peak as f64 / 1e9,
            limit as f64 / 1e9,
            pct(share),
            pct(MEMORY_NEAR_LIMIT_SHARE)
        ),
        "The caching allocator holds almost all device memory: one larger batch or \
         sequence will run out of memory, and fragmentation may already cost time.",
        "Lower the batch size, use activation checkpointing, mixed precision, or \
         PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; free references to old tensors.",
        evidence,
    ));
}

/// Ops that run on tensor cores under autocast.
fn is_amp_eligible(n: &str) -> bool {
    matches!(
        n,
        "aten::mm"
            | "aten::addmm"
            | "aten::bmm"
            | "aten::baddbmm"
            | "aten::addbmm"
            | "aten::matmul"
            | "aten::linear"
            | "aten::conv1d"
            | "aten::conv2d"
            | "aten::conv3d"
            | "aten::convolution"
            | "aten::_convolution"
            | "aten::cudnn_convolution"
            | "aten::conv_transpose2d"
            | "aten::einsum"
            | "aten::scaled_dot_product_attention"
    )
}

/// `amp-opportunity` (info): a device with compute capability >= [`TENSOR_CORE_MIN_MAJOR`], no
/// tensor-core kernel other than TF32 ones (and no `tf32-fp32` finding, which says it for those), no GEMM or attention kernel whose name says a reduced precision
/// (bf16 / fp16 / fp8 / fp4 / int8: mixed precision is already on, e.g. fp16 SIMT GEMMs of
/// misaligned shapes), and autocast-eligible ops that launched GPU work (tb_plugin's rule plus
/// the precision). Counts the outermost eligible op of each dispatch chain. Evidence: those,
/// in order.
fn amp_opportunity(ctx: &Ctx, out: &mut Vec<Finding>) {
    let rows = &ctx.kernels.rows;
    let reduced = |r: &KernelRow| {
        matches!(r.class, KernelClass::Gemm | KernelClass::Attention) && r.precision.is_reduced()
    };
    // TF32 tensor cores on fp32 data are not mixed precision (before, the rule went silent
    // on them); where `tf32-fp32` measured those GEMMs, it gives the same advice with numbers.
    let reduced_tc = |r: &KernelRow| r.tensor_cores && !matches!(r.precision, Precision::Tf32 | Precision::Fp32);
    let told = out.iter().any(|f| f.rule == "tf32-fp32");
    if rows.is_empty() || told || rows.iter().any(reduced_tc) || rows.iter().any(reduced) {
        return;
    }
    if ctx.max_compute_major().is_none_or(|m| m < TENSOR_CORE_MIN_MAJOR) {
        return;
    }
    let eligible_ns: i64 = ctx
        .ops
        .rows
        .iter()
        .filter(|r| is_amp_eligible(&r.name))
        .map(|r| r.device_total_ns)
        .max()
        .unwrap_or(0);
    if eligible_ns <= 0 {
        return;
    }
    let mask = ctx.mask(is_amp_eligible);
    // One per dispatch chain (linear -> addmm, conv2d -> convolution -> ...): the outermost.
    let ids: Vec<u32> = ctx
        .slices_named(&mask, Some(CatClass::CpuOp))
        .into_iter()
        .filter(|&i| {
            let mut p = crate::model::link::enclosing_op(ctx.trace, i);
            while let Some(op) = p {
                if ctx.is(&mask, op) {
                    return false;
                }
                p = crate::model::link::enclosing_op(ctx.trace, op);
            }
            true
        })
        .collect();
    let major = ctx.max_compute_major().unwrap_or(0);
    out.push(finding(
        "amp-opportunity",
        Severity::Info,
        format!(
            "No reduced-precision tensor-core kernels on a tensor-core GPU; {} matmul/conv ops could use them",
            ids.len()
        ),
        format!(
            "compute capability {major}.x >= {TENSOR_CORE_MIN_MAJOR}, 0 of {} kernel names use tensor cores \
             other than in TF32 and no GEMM / attention kernel names a reduced precision (a name that does not say \
             counts as not reduced), {} outermost matmul/conv ops launched GPU work",
            rows.len(),
            ids.len()
        ),
        "Every kernel runs on the CUDA cores in FP32 although the GPU has tensor cores, which \
         run matmuls and convolutions several times faster in reduced precision.",
        if major < TF32_MIN_MAJOR {
            "Wrap the forward pass in torch.autocast(\"cuda\", dtype=torch.float16) with a \
             GradScaler (this GPU has no TF32 and no fast bfloat16)."
        } else {
            "Wrap the forward pass in torch.autocast(\"cuda\", dtype=torch.bfloat16) (or float16 \
             with a GradScaler), or allow TF32 for FP32 matmuls."
        },
        ctx.evidence(ids),
    ));
}
