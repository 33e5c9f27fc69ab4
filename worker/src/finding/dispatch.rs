//! Dispatch rules (info): what PyTorch turned the user's call into. `addmm-fusion`: linear
//! layers with bias run as `aten::addmm`; `bmm-dispatch`: `aten::matmul` on batched inputs
//! runs as `aten::bmm`.
//!
//! Cost: one pass over the slices per rule, plus a parent walk per `aten::bmm`.

use super::{dur, finding, Ctx, Finding, Severity};
use crate::model::{CatClass, NONE};

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    addmm_fusion(ctx, out);
    bmm_dispatch(ctx, out);
}

/// `addmm-fusion` (info): `aten::addmm` calls are present.
fn addmm_fusion(ctx: &Ctx, out: &mut Vec<Finding>) {
    let mask = ctx.mask(|n| n == "aten::addmm");
    let ids = ctx.slices_named(&mask, Some(CatClass::CpuOp));
    if ids.is_empty() {
        return;
    }
    let device: i64 = ctx
        .ops
        .rows
        .iter()
        .filter(|r| r.name == "aten::addmm")
        .map(|r| r.self_device_ns)
        .sum();
    out.push(finding(
        "addmm-fusion",
        Severity::Info,
        if device > 0 {
            format!("{} aten::addmm calls ({} of GPU time): matmul and bias add in one op", ids.len(), dur(device))
        } else {
            format!("{} aten::addmm calls: matmul and bias add in one op", ids.len())
        },
        format!("{} cpu_op slices named aten::addmm", ids.len()),
        "nn.Linear with a bias dispatches to aten::addmm instead of mm + add: the bias is \
         written into the output first (a copy) and the GEMM accumulates into it.",
        "Nothing to fix; this is why a DtoD copy or a fill kernel precedes these GEMMs \
         (see dtod-before-gemm).",
        ctx.evidence(ids),
    ));
}

/// `bmm-dispatch` (info): `aten::bmm` calls made from inside `aten::matmul`.
fn bmm_dispatch(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let bmm = ctx.mask(|n| n == "aten::bmm");
    let matmul = ctx.mask(|n| n == "aten::matmul");
    let is = |m: &[bool], i: u32| m.get(s.name[i as usize].0 as usize).copied().unwrap_or(false);
    let ids: Vec<u32> = ctx
        .slices_named(&bmm, Some(CatClass::CpuOp))
        .into_iter()
        .filter(|&b| {
            let mut p = s.parent[b as usize];
            while p != NONE {
                if is(&matmul, p) {
                    return true;
                }
                p = s.parent[p as usize];
            }
            false
        })
        .collect();
    if ids.is_empty() {
        return;
    }
    out.push(finding(
        "bmm-dispatch",
        Severity::Info,
        format!("{} aten::matmul calls ran as aten::bmm", ids.len()),
        format!("{} aten::bmm calls with an aten::matmul among their enclosing ops", ids.len()),
        "torch.matmul on inputs with more than two dimensions folds the batch dimensions and \
         calls bmm; with broadcasting it may first expand and copy an input (reshape/contiguous).",
        "Nothing to fix usually; if a copy precedes the bmm, make the broadcast operand \
         contiguous once or use einsum / explicit bmm with matching batch shapes.",
        ctx.evidence(ids),
    ));
}
