//! Attention computed op by op (`unfused-attention`): `bmm` -> `softmax` -> `bmm`
//! chains (or `matmul` / `baddbmm`) on a host thread while no fused attention kernel
//! (FlashAttention, memory-efficient, cuDNN SDPA) runs anywhere in the trace.
//!
//! **How.** Per host lane, the outermost matmul-family and softmax ops in start order (an
//! `aten::matmul` dispatching to `aten::bmm` counts once); a softmax with a matmul-family op
//! right before and right after it in that sequence spans a chain, from the first op's start
//! to the last one's end. The chain's device time is every device activity whose launch call
//! lies inside that span on that lane: the score GEMM, the scaling, masking, softmax, dropout
//! and the context GEMM, all of which a fused kernel replaces.
//!
//! **Cost.** One pass over the op slices and one over the device activities, a binary search
//! per activity; the chains are a transient vector.

use super::thresholds::*;
use super::{dur, finding, launch_of, pct, Ctx, Finding, Severity};
use crate::analysis::args::ArgKey;
use crate::analysis::kernel_class::KernelClass;
use crate::model::link::enclosing_op;
use crate::model::CatClass;

/// Ops that multiply the scores (Q K^T) or apply them to V.
fn is_matmul(n: &str) -> bool {
    matches!(n, "aten::bmm" | "aten::baddbmm" | "aten::matmul")
}

/// Softmax forward and backward.
fn is_softmax(n: &str) -> bool {
    matches!(n, "aten::softmax" | "aten::_softmax" | "aten::_safe_softmax" | "aten::_softmax_backward_data")
}

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    unfused_attention(ctx, out);
}

/// `unfused-attention`: with no kernel of the attention class in the trace, the device time of
/// the matmul -> softmax -> matmul chains (module docs) is >= [`UNFUSED_ATTENTION_MIN_SHARE`]
/// of device time. The title names the longest chain's score shape (its softmax's first
/// `Input Dims`). Evidence: the chains' device activities, longest first.
fn unfused_attention(ctx: &Ctx, out: &mut Vec<Finding>) {
    if ctx.kernels.rows.iter().any(|r| r.class == KernelClass::Attention) {
        return;
    }
    let (t, s) = (ctx.trace, &ctx.trace.slices);
    let matmul = ctx.mask(is_matmul);
    let softmax = ctx.mask(is_softmax);
    let either = |i: u32| ctx.is(&matmul, i) || ctx.is(&softmax, i);
    // Outermost ops of either kind, ascending ids: per lane in start order.
    let mut seq: Vec<u32> = (0..s.len() as u32)
        .filter(|&i| either(i) && t.class(s.cat[i as usize]) == CatClass::CpuOp)
        .filter(|&i| {
            let mut p = enclosing_op(t, i);
            while let Some(op) = p {
                if either(op) {
                    return false;
                }
                p = enclosing_op(t, op);
            }
            true
        })
        .collect();
    seq.sort_by_key(|&i| (s.lane[i as usize].0, s.start_ns[i as usize], i));
    // (lane, start, end, softmax op) of each chain, sorted.
    let mut chains: Vec<(u32, i64, i64, u32)> = Vec::new();
    for w in seq.windows(3) {
        let (a, m, b) = (w[0], w[1], w[2]);
        let lane = s.lane[m as usize].0;
        let same_lane = s.lane[a as usize].0 == lane && s.lane[b as usize].0 == lane;
        // Scores are at least batch x queries x keys: a softmax over a 2-D gate is no attention.
        if ctx.is(&softmax, m) && ctx.is(&matmul, a) && ctx.is(&matmul, b) && same_lane && scores(ctx, m).is_some_and(|d| d.len() >= 3) {
            chains.push((lane, s.start_ns[a as usize], s.end_ns(b as usize), m));
        }
    }
    if chains.is_empty() {
        return;
    }
    let mut per_chain = vec![0i64; chains.len()];
    let mut ids: Vec<u32> = Vec::new();
    let mut device_ns = 0i64;
    for &a in &ctx.activities {
        let d = s.dur_ns[a as usize];
        device_ns += d;
        let Some(call) = launch_of(t, a) else { continue };
        let key = (s.lane[call as usize].0, s.start_ns[call as usize]);
        // The last chain starting at or before the call on its lane, if the call is inside it.
        let at = chains.partition_point(|c| (c.0, c.1) <= key);
        if let Some(k) = at.checked_sub(1).filter(|&k| chains[k].0 == key.0 && key.1 <= chains[k].2) {
            per_chain[k] += d;
            ids.push(a);
        }
    }
    let chain_ns: i64 = per_chain.iter().sum();
    if device_ns <= 0 || (chain_ns as f64) < UNFUSED_ATTENTION_MIN_SHARE * device_ns as f64 {
        return;
    }
    let longest = per_chain.iter().enumerate().max_by_key(|p| (*p.1, std::cmp::Reverse(p.0))).map_or(0, |p| p.0);
    let shape = chains.get(longest).and_then(|c| scores(ctx, c.3)).unwrap_or_default();
    let shape = shape.iter().map(u64::to_string).collect::<Vec<_>>().join("x");
    let n = chains.len();
    out.push(finding(
        "unfused-attention",
        Severity::Warn,
        format!(
            "{n} unfused attention chains (matmul -> softmax -> matmul) take {} of device time ({}; scores {shape}); no fused attention kernel runs",
            pct(chain_ns as f64 / device_ns as f64),
            dur(chain_ns)
        ),
        format!(
            "device time launched from bmm / baddbmm / matmul -> softmax -> bmm / matmul spans {} / device time {} = {} >= {}; \
             0 kernels of the attention class (FlashAttention, memory-efficient, cuDNN SDPA) in the trace; longest chain {}",
            dur(chain_ns),
            dur(device_ns),
            pct(chain_ns as f64 / device_ns as f64),
            pct(UNFUSED_ATTENTION_MIN_SHARE),
            dur(per_chain[longest])
        ),
        "Attention runs as separate kernels: the score matrix (batch x heads x sequence x \
         sequence) is written to memory, read back by the scaling, mask, softmax and dropout \
         kernels, and read again by the second matmul. Its traffic grows with the square of \
         the sequence length; a fused kernel keeps it on chip.",
        "Call torch.nn.functional.scaled_dot_product_attention (FlashAttention / memory-efficient \
         backends; attn_implementation=\"sdpa\" or \"flash_attention_2\" in Hugging Face models), \
         or compile the attention block with torch.compile.",
        ctx.evidence(ctx.longest_first(ids)),
    ));
}

/// The softmax op's first `Input Dims` (the scores' shape), if recorded.
fn scores(ctx: &Ctx, op: u32) -> Option<Vec<u64>> {
    let t = ctx.trace;
    let mut reader = t.args.reader();
    let raw = ArgKey::new("Input Dims").raw(reader.bytes(*t.slices.args.get(op as usize)?))?;
    serde_json::from_slice::<Vec<serde_json::Value>>(raw)
        .ok()?
        .iter()
        .map(|d| d.as_array().map(|a| a.iter().filter_map(serde_json::Value::as_u64).collect::<Vec<u64>>()).unwrap_or_default())
        .find(|d| !d.is_empty())
}
