//! Memory rules over what holds memory (`analysis::memory::held`): `memory-leak`,
//! `activation-peak`, `optimizer-state-peak`, `memory-fragmentation`.
//!
//! Each reads the session's [`Held`] (allocation lifetimes, categories, step peaks, leaks)
//! and, for fragmentation, the reserved curve of `analysis::memory`. Evidence: the ops that
//! made the allocations in question (innermost `cpu_op`), largest allocation first; a rule
//! about a moment without ops (fragmentation) cites the peak's time.

use super::thresholds::{
    ACTIVATION_PEAK_SHARE, FRAGMENTATION_MIN_BYTES, FRAGMENTATION_RATIO, LEAK_MIN_SHARE_OF_PEAK,
    OPTIMIZER_STATE_PEAK_SHARE,
};
use super::{finding, pct, Ctx, Evidence, Finding, Severity};
use crate::analysis::memory::category::Category;
use crate::analysis::memory::held::Held;
use crate::analysis::memory::steps::StepMemory;
use crate::text::bytes;

/// `memory`: the trace's series (built by `detect` for these rules and `memory-near-limit`).
pub(crate) fn rules(ctx: &Ctx, memory: &crate::analysis::memory::Memory, out: &mut Vec<Finding>) {
    // Built for these rules and dropped: at load, a cached copy would hold about 30 bytes per
    // allocation for the session's life (the page and `report --memory` build their own).
    let steps: Vec<(u64, i64, i64)> = ctx.steps.steps.iter().map(|s| (s.number, s.cpu_start_ns, s.cpu_end_ns)).collect();
    let held = Held::new(ctx.trace, &steps);
    memory_leak(ctx, &held, out);
    category_peak(ctx, &held, out, Category::Activation);
    category_peak(ctx, &held, out, Category::OptimizerState);
    fragmentation(memory, out);
}

/// The innermost op that made each of `allocs` (allocation indices, most telling first);
/// allocations made outside any op are skipped.
fn makers(ctx: &Ctx, held: &Held, allocs: &[u32]) -> Vec<u32> {
    allocs.iter().filter_map(|&a| held.maker(ctx.trace, a as usize)).collect()
}

/// `name (bytes)` of the ops that made the most of `allocs`' bytes, at most 3.
fn top_makers(ctx: &Ctx, held: &Held, allocs: &[u32]) -> String {
    let mut by_op: Vec<(String, i64)> = Vec::new();
    // Each allocation with its own maker: one made outside any op is skipped, not paired with
    // the next one's op.
    for (a, op) in allocs.iter().filter_map(|&a| Some((a, held.maker(ctx.trace, a as usize)?))) {
        let name = ctx.name(op).into_owned();
        let b = held.lifetimes.bytes.get(a as usize).copied().unwrap_or(0);
        match by_op.iter_mut().find(|(n, _)| *n == name) {
            Some(e) => e.1 += b,
            None => by_op.push((name, b)),
        }
    }
    by_op.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    by_op.iter().take(3).map(|(n, b)| format!("`{n}` {}", bytes(*b))).collect::<Vec<_>>().join(", ")
}

/// `memory-leak` (warn): allocated bytes at step start grow at every step
/// (`analysis::memory::steps::leaks`) by at least [`LEAK_MIN_SHARE_OF_PEAK`] of the highest
/// step peak per step.
fn memory_leak(ctx: &Ctx, held: &Held, out: &mut Vec<Finding>) {
    for leak in &held.leaks {
        let Some(peak) = held.peak_step(leak.device) else { continue };
        if leak.slope_bytes_per_step < LEAK_MIN_SHARE_OF_PEAK * peak.peak_allocated as f64 {
            continue;
        }
        let label = device_label(held, leak.device);
        let starts: Vec<String> = held
            .steps
            .iter()
            .filter(|s| s.device == leak.device)
            .map(|s| bytes(s.start_allocated))
            .collect();
        let ids = makers(ctx, held, &leak.never_freed);
        out.push(finding(
            "memory-leak",
            Severity::Warn,
            format!(
                "{label}: allocated at step start grows {} per step over {} steps ({} allocations never freed)",
                bytes(leak.slope_bytes_per_step.round() as i64),
                starts.len(),
                leak.never_freed.len()
            ),
            format!(
                "allocated at each step's start {}: grows at every step, least-squares slope {} per step \
                 >= {} of the highest step peak {}; never freed: {} in {} allocations, made by {}",
                starts.join(" -> "),
                bytes(leak.slope_bytes_per_step.round() as i64),
                pct(LEAK_MIN_SHARE_OF_PEAK),
                bytes(peak.peak_allocated),
                bytes(leak.never_freed_bytes),
                leak.never_freed.len(),
                top_makers(ctx, held, &leak.never_freed)
            ),
            "Something keeps tensors of every step alive: a list of losses or outputs that \
             still hold their graph, backward(retain_graph=True), a growing cache. The run \
             will run out of memory after enough steps.",
            "Keep .item() or .detach() of what you log, not the tensor; drop retain_graph=True; \
             look at the ops below, which made the allocations never freed.",
            ctx.evidence(ids),
        ));
    }
}

/// `activation-peak` / `optimizer-state-peak` (info): at a device's highest step peak, the
/// allocations of `category` hold at least [`ACTIVATION_PEAK_SHARE`] /
/// [`OPTIMIZER_STATE_PEAK_SHARE`] of it (activations only on a device with backward allocations).
/// One finding, for the device where the share is highest.
fn category_peak(ctx: &Ctx, held: &Held, out: &mut Vec<Finding>, category: Category) {
    let (rule, share_min) = match category {
        Category::Activation => ("activation-peak", ACTIVATION_PEAK_SHARE),
        _ => ("optimizer-state-peak", OPTIMIZER_STATE_PEAK_SHARE),
    };
    // Activations matter for what backward keeps: on a device with no backward allocation
    // (inference, a host staging buffer) there is nothing to checkpoint.
    let lt = &held.lifetimes;
    let trains = |device: u16| {
        (0..lt.len()).any(|i| lt.device[i] == device && held.category.get(i).is_some_and(|c| matches!(c, Category::Gradient | Category::AutogradDetail)))
    };
    let share = |s: &StepMemory| s.by_category[category.index()] as f64 / s.peak_allocated.max(1) as f64;
    let best = (0..lt.devices.len())
        .filter_map(|d| held.peak_step(u16::try_from(d).ok()?))
        .filter(|s| category != Category::Activation || trains(s.device))
        .filter(|s| s.peak_allocated > 0 && share(s) >= share_min)
        .reduce(|a, b| if share(b) > share(a) { b } else { a });
    let Some(step) = best else { return };
    let live: Vec<u32> = held
        .live_at(step.device, step.peak_ns, usize::MAX)
        .into_iter()
        .filter(|&i| held.category.get(i as usize) == Some(&category))
        .collect();
    let held_bytes = step.by_category[category.index()];
    let (meaning, try_this) = match category {
        Category::Activation => (
            "Forward results kept for backward hold most of the peak: memory grows with batch \
             size, sequence length and depth.",
            "Activation checkpointing (torch.utils.checkpoint) on the largest blocks, a smaller \
             micro-batch with gradient accumulation, or mixed precision; the ops below made the \
             largest activations.",
        ),
        _ => (
            "Optimizer state (Adam keeps two moments per parameter) holds most of the peak.",
            "A fused or 8-bit optimizer (bitsandbytes), or shard the state across ranks \
             (ZeRO, FSDP); SGD with momentum keeps one buffer, Adam two.",
        ),
    };
    out.push(finding(
        rule,
        Severity::Info,
        format!(
            "{}: {} holds {} of the peak ({} of {}, step {})",
            device_label(held, step.device),
            category.name().replace('_', " "),
            pct(share(step)),
            bytes(held_bytes),
            bytes(step.peak_allocated),
            step.step
        ),
        format!(
            "at the highest step peak ({} allocated in step {}), live {} allocations hold {} = {} >= {}; \
             largest made by {}",
            bytes(step.peak_allocated),
            step.step,
            category.name().replace('_', " "),
            bytes(held_bytes),
            pct(share(step)),
            pct(share_min),
            top_makers(ctx, held, &live)
        ),
        meaning,
        try_this,
        ctx.evidence(makers(ctx, held, &live)),
    ));
}

/// `memory-fragmentation` (warn): at a device's allocated peak, reserved is at least
/// [`FRAGMENTATION_RATIO`] times allocated and exceeds it by [`FRAGMENTATION_MIN_BYTES`].
fn fragmentation(memory: &crate::analysis::memory::Memory, out: &mut Vec<Finding>) {
    for d in &memory.devices {
        let Some(at) = d.series.iter().find(|s| s.ts_ns == d.peak_allocated_ns && s.allocated == d.peak_allocated) else {
            continue;
        };
        let (allocated, reserved) = (at.allocated, at.reserved);
        if allocated <= 0
            || (reserved as f64) < FRAGMENTATION_RATIO * allocated as f64
            || reserved - allocated < FRAGMENTATION_MIN_BYTES
        {
            continue;
        }
        out.push(finding(
            "memory-fragmentation",
            Severity::Warn,
            format!(
                "{}: reserved {} is {:.2}x the {} allocated at the peak",
                d.label,
                bytes(reserved),
                reserved as f64 / allocated as f64,
                bytes(allocated)
            ),
            format!(
                "at the allocated peak ({}), Total Reserved {} / Total Allocated {} = {:.2} >= {:.2}, \
                 {} reserved and unused >= {}",
                crate::text::duration(d.peak_allocated_ns),
                bytes(reserved),
                bytes(allocated),
                reserved as f64 / allocated as f64,
                FRAGMENTATION_RATIO,
                bytes(reserved - allocated),
                bytes(FRAGMENTATION_MIN_BYTES)
            ),
            "The caching allocator holds blocks it cannot reuse for the sizes asked (varying \
             shapes split its segments): the device runs out of memory before the tensors fill it.",
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; keep shapes static (pad to \
             buckets); avoid torch.cuda.empty_cache() in the loop.",
            Evidence { range_ns: Some((d.peak_allocated_ns, d.peak_allocated_ns)), ..Default::default() },
        ));
    }
}

/// `cpu`, `cuda:0`, ... of a device of `held`.
fn device_label(held: &Held, device: u16) -> String {
    held.lifetimes
        .devices
        .get(device as usize)
        .map_or_else(|| "?".to_owned(), |&(t, id)| crate::analysis::memory::device_label(t, id))
}
