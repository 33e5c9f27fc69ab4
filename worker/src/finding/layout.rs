//! Copies that only move data into another layout or dtype (`copy-overhead`):
//! device work launched under `copy_`, `contiguous`, `clone`, `repeat`, `to` and friends, as a
//! share of device time, attributed to the op the user called ([`super::cpu::user_op`]: a
//! `contiguous` inside `aten::matmul` is matmul's cost).
//!
//! Counted: kernels and device-to-device copies. Host-device copies are left out: they are
//! data movement (`pageable-memcpy`, `hidden-memcpy`), not layout.
//!
//! **Cost.** One pass over the device activities with a parent walk each; a transient map of
//! time per user op name.

use super::thresholds::*;
use super::{dur, finding, launch_of, pct, Ctx, Finding, Severity};
use crate::model::link::enclosing_op;
use crate::model::strings::FxHashMap;
use crate::model::CatClass;

/// Ops whose device work is a copy into a new layout, dtype or repetition.
fn is_layout_copy(n: &str) -> bool {
    matches!(
        n,
        "aten::copy_"
            | "aten::_copy_from"
            | "aten::contiguous"
            | "aten::clone"
            | "aten::repeat"
            | "aten::repeat_interleave"
            | "aten::to"
            | "aten::_to_copy"
            | "aten::permute"
            | "aten::expand_as"
    )
}

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    copy_overhead(ctx, out);
}

/// `copy-overhead`: kernels and device-to-device copies launched under a layout-copy op
/// ([`is_layout_copy`]) take at least [`COPY_OVERHEAD_MIN_SHARE`] of device time and at
/// least [`COPY_OVERHEAD_MIN_NS`]. The title names
/// the user ops that caused most of it. Evidence: those activities, longest first.
fn copy_overhead(ctx: &Ctx, out: &mut Vec<Finding>) {
    let (t, s) = (ctx.trace, &ctx.trace.slices);
    let copy_op = ctx.mask(is_layout_copy);
    let dtod = ctx.mask(|n| n.contains("DtoD") || n.contains("Device -> Device"));
    let mut device_ns = 0i64;
    let mut ids: Vec<u32> = Vec::new();
    // User op name -> (device ns, activities).
    let mut by_op: FxHashMap<u32, (i64, u32)> = FxHashMap::default();
    for &a in &ctx.activities {
        let d = s.dur_ns[a as usize];
        device_ns += d;
        let class = t.class(s.cat[a as usize]);
        if !(class == CatClass::Kernel || (class == CatClass::Memcpy && ctx.is(&dtod, a))) {
            continue;
        }
        let Some(call) = launch_of(t, a) else { continue };
        let mut p = enclosing_op(t, call);
        let under_copy = loop {
            match p {
                Some(op) if ctx.is(&copy_op, op) => break true,
                Some(op) => p = enclosing_op(t, op),
                None => break false,
            }
        };
        if !under_copy {
            continue;
        }
        ids.push(a);
        if let Some(user) = super::cpu::user_op(ctx, call) {
            let e = by_op.entry(s.name[user as usize].0).or_insert((0, 0));
            e.0 += d;
            e.1 += 1;
        }
    }
    let copy_ns: i64 = ids.iter().map(|&a| s.dur_ns[a as usize]).sum();
    if device_ns <= 0 || copy_ns < COPY_OVERHEAD_MIN_NS || (copy_ns as f64) < COPY_OVERHEAD_MIN_SHARE * device_ns as f64 {
        return;
    }
    let mut causes: Vec<(u32, (i64, u32))> = by_op.into_iter().collect();
    causes.sort_by_key(|c| (std::cmp::Reverse(c.1 .0), c.0));
    let named: Vec<String> = causes
        .iter()
        .take(3)
        .map(|(name, (ns, n))| format!("{} {} ({n})", t.strings.get(crate::model::StrId(*name)), dur(*ns)))
        .collect();
    out.push(finding(
        "copy-overhead",
        Severity::Warn,
        format!(
            "Layout and dtype copies take {} of device time ({} in {} activities); by the op that caused them: {}",
            pct(copy_ns as f64 / device_ns as f64),
            dur(copy_ns),
            ids.len(),
            named.join(", ")
        ),
        format!(
            "kernels and device-to-device copies launched under copy_ / contiguous / clone / repeat / to / permute: {} / device \
             time {} = {} >= {}; {} user ops cause them",
            dur(copy_ns),
            dur(device_ns),
            pct(copy_ns as f64 / device_ns as f64),
            pct(COPY_OVERHEAD_MIN_SHARE),
            causes.len()
        ),
        "The GPU spends this time rewriting tensors, not computing: .contiguous() after a \
         permute / transpose, .to(dtype) casts, repeat / expand materialized, matmul inputs \
         made contiguous behind the scenes.",
        "Keep tensors in the layout their consumer wants (permute once, or not at all: many ops \
         take strided inputs); cast once (autocast instead of .to() per op); use expand instead \
         of repeat; torch.compile fuses most of these copies into their consumers.",
        ctx.evidence(ctx.longest_first(ids)),
    ));
}
