//! The cheatsheet rules for tensor cores, attention, copies, syncs, SM fill and the training loop's shape on synthetic steps (`synth::cheatsheet`, ground truth by
//! construction): each rule fires on the trace built to show its pattern with the numbers the
//! construction gives, and stays silent on the one built not to. The steps are GPU-bound (the
//! kernels run back to back from 100 µs to the step's end), so a rule's evidence kernels lie
//! on the critical path and its impact is their time over the steps' 3 x 1000 µs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::finding::{Finding, Severity};
use kinetoscope::synth::cheatsheet::{generate, Case, STEPS, STEP_NS};

const US: i64 = 1_000;

fn findings(case: Case) -> Vec<Finding> {
    let (engine, result) = common::load_bytes("cheatsheet.json", generate(case));
    result.unwrap();
    engine.session().unwrap().findings().to_vec()
}

/// The finding of `rule` on `case`, or a panic listing what fired.
fn fired(case: Case, rule: &str) -> Finding {
    let all = findings(case);
    let rules: Vec<&str> = all.iter().map(|f| f.rule).collect();
    all.into_iter().find(|f| f.rule == rule).unwrap_or_else(|| panic!("{rule} did not fire on {case:?} (fired: {rules:?})"))
}

fn silent(case: Case, rule: &str) {
    assert!(findings(case).iter().all(|f| f.rule != rule), "{rule} fired on its near miss {case:?}");
}

/// The finding's impact is `per_step_us` of evidence per step on the path, all steps.
fn assert_impact(f: &Finding, per_step_us: i64) {
    let i = f.impact.unwrap();
    assert_eq!((i.ns, i.per_step_ns, i.step_ns, i.steps), (STEPS * per_step_us * US, per_step_us * US, STEP_NS, STEPS as u32), "{}", f.rule);
    assert!((i.pct - 100.0 * (per_step_us * US) as f64 / STEP_NS as f64).abs() < 1e-9, "{}", f.rule);
}

/// `tf32-fp32`: the fp32 `aten::mm` runs `cutlass_80_tensorop_s1688gemm` (TF32 by name) for
/// 600 of each step's 1000 µs: 1.80 ms of TF32 GEMMs, all GEMM time; bf16 would take half
/// (900 µs saved, modelled: 300 µs per step). Near miss: the same trace without `Input type`
/// (shapes not recorded): the rule does not guess the dtype.
#[test]
fn tf32_fp32() {
    let f = fired(Case::Tf32 { recorded: true }, "tf32-fp32");
    assert_eq!(f.severity, Severity::Warn, "{}", f.why);
    assert_eq!(f.evidence.total, 3);
    assert!(f.title.starts_with("TF32 tensor-core GEMMs on fp32 inputs take 100.0% of GEMM time (1.80 ms in 3 calls, 1 kernel names); bf16 would save ~900.0 µs"), "{}", f.title);
    assert_impact(&f, 600);
    let r = f.remedy.unwrap();
    assert_eq!(r.per_step_ns, 300 * US, "half of each step's 600 µs TF32 GEMM");
    silent(Case::Tf32 { recorded: false }, "tf32-fp32");
    // amp-opportunity no longer goes silent on TF32 tensor-core kernels, but leaves them to
    // tf32-fp32 when that fires; without recorded dtypes it speaks.
    assert!(findings(Case::Tf32 { recorded: true }).iter().all(|f| f.rule != "amp-opportunity"));
    assert!(findings(Case::Tf32 { recorded: false }).iter().any(|f| f.rule == "amp-opportunity"));
}

/// `gemm-alignment`: a bf16 4096 x 1024 x 50257 GEMM (N = GPT-2's vocabulary, 50257 = 8 x
/// 6282 + 1) runs 500 µs per step beside an aligned one of 400 µs: 1.50 ms misaligned of
/// 2.70 ms GEMM time (55.6%), N padded to 50264. Near miss: N = 50304.
#[test]
fn gemm_alignment() {
    let f = fired(Case::Alignment { n: 50257 }, "gemm-alignment");
    assert_eq!(f.severity, Severity::Warn, "{}", f.why);
    assert_eq!(f.evidence.total, 3);
    assert!(f.title.starts_with("3 GEMM calls in 1 shapes have M, N or K off the tensor-core multiple (55.6% of GEMM time, 1.50 ms; e.g. M=4096 N=50257 K=1024)"), "{}", f.title);
    assert!(f.why.contains("the longest: N=50257 (pad to 50264)"), "{}", f.why);
    assert_impact(&f, 500);
    silent(Case::Alignment { n: 50304 }, "gemm-alignment");
}


/// `unfused-attention`: baddbmm [10, 15] -> softmax [16, 22] -> bmm [27, 32] on the host; the
/// kernels they and the dropout between launch run 200 + 100 + 50 + 200 = 550 of each step's
/// 900 µs of device time: 1.65 ms of 2.70 ms (61.1%) in 3 chains, scores 16 x 128 x 128; the
/// projection GEMM after the chain is not counted. Near miss: a FlashAttention kernel runs too.
#[test]
fn unfused_attention() {
    let f = fired(Case::Attention { fused: false }, "unfused-attention");
    assert_eq!(f.severity, Severity::Warn, "{}", f.why);
    assert_eq!(f.evidence.total, 12);
    assert!(
        f.title.starts_with("3 unfused attention chains (matmul -> softmax -> matmul) take 61.1% of device time (1.65 ms; scores 16x128x128)"),
        "{}",
        f.title
    );
    assert_impact(&f, 550);
    silent(Case::Attention { fused: true }, "unfused-attention");
}

/// `copy-overhead`: per step a `contiguous` inside `aten::matmul` copies for 200 µs, `aten::to`
/// for 100, `aten::repeat` for 50: 350 of 900 µs of device time (38.9%), 1.05 ms in 9 copies,
/// attributed to matmul (600 µs), to (300), repeat (150). Near miss: copies a tenth as long
/// (35 of 900 µs, 3.9%).
#[test]
fn copy_overhead() {
    let f = fired(Case::Copies { copy_us: 100 }, "copy-overhead");
    assert_eq!(f.severity, Severity::Warn, "{}", f.why);
    assert_eq!(f.evidence.total, 9);
    assert_eq!(
        f.title,
        "Layout and dtype copies take 38.9% of device time (1.05 ms in 9 activities); by the op that caused them: \
         aten::matmul 600.0 µs (3), aten::to 300.0 µs (3), aten::repeat 150.0 µs (3)"
    );
    assert_impact(&f, 350);
    silent(Case::Copies { copy_us: 10 }, "copy-overhead");
}

/// `sync-heavy` by cause: per step `aten::nonzero` waits 350 µs in `cudaStreamSynchronize`,
/// `aten::item` 180 µs, `aten::to` 80 µs in a blocking `cudaMemcpy`, the GPU idle in each but
/// for nonzero's 50 µs kernel: 1.83 ms in 9 calls, by op 1.05 ms (3), 540 µs (3), 240 µs (3).
/// The waits are on the path (the host launches the step's last kernel after them). Near
/// miss: waits a tenth as long.
#[test]
fn sync_heavy_by_cause() {
    let f = fired(Case::Syncs { long: true }, "sync-heavy");
    assert_eq!(f.severity, Severity::Warn, "{}", f.why);
    assert_eq!(f.evidence.total, 9);
    assert!(
        f.title.ends_with("(1.83 ms in 9 calls); by the op that synced: aten::nonzero 1.05 ms (3), aten::item 540.0 µs (3), aten::to 240.0 µs (3)"),
        "{}",
        f.title
    );
    assert!(f.why.contains("; 3 ops synced"), "{}", f.why);
    // On the path: item's 180 and to's 80 µs whole, nonzero's at least from its kernel's end
    // (150) to the sync's return (390); at most all 610 µs.
    let on_path = f.impact.unwrap().per_step_ns;
    assert!((500 * US..=610 * US).contains(&on_path), "{:?}", f.impact);
    silent(Case::Syncs { long: false }, "sync-heavy");
}

/// `low-sm-efficiency`: a 300 µs GEMM at 4 blocks per SM and a 600 µs reduction at 0.1 per
/// step: fill (300 + 0.1 x 600) / 900 = 40.0% < 50%; the reduction's 1.80 ms are the evidence
/// and all on the path. Near miss: the reduction at 0.9 blocks per SM (93.3%).
#[test]
fn low_sm_efficiency() {
    let f = fired(Case::SmFill { blocks_per_sm: 0.1 }, "low-sm-efficiency");
    assert_eq!(f.severity, Severity::Warn, "{}", f.why);
    assert_eq!(f.evidence.total, 3);
    assert!(f.title.starts_with("Kernels fill 40.0% of the SMs while they run; 1 kernel names launch fewer blocks than SMs (1.80 ms;"), "{}", f.title);
    assert_impact(&f, 600);
    silent(Case::SmFill { blocks_per_sm: 0.9 }, "low-sm-efficiency");
}

/// `no-backward`: each of the 3 steps runs `Optimizer.step#Adam.step` and no autograd-engine
/// op: 3 optimizer steps, no backward. About what the capture shows, not step time: a warning
/// whatever its impact. Near miss: the same steps with `MmBackward0`.
#[test]
fn no_backward() {
    let f = fired(Case::Training { backward: false, skipped: 0 }, "no-backward");
    assert_eq!(f.severity, Severity::Warn, "{}", f.why);
    assert_eq!(f.evidence.total, 3);
    assert_eq!(f.title, "3 optimizer steps and no backward pass in the trace: this profile shows no training");
    silent(Case::Training { backward: true, skipped: 0 }, "no-backward");
}

/// `grad-scaler-skips`: step #2 of 3 runs `aten::_amp_update_scale_` and no
/// `Optimizer.step#`: 1 of 3 steps (33.3% >= 25%) skipped; its span is the evidence and its
/// whole 700 µs is on the path (25.9% of the 2.7 ms of steps). Near miss: no step skipped (the scaler runs in all three).
#[test]
fn grad_scaler_skips() {
    let f = fired(Case::Training { backward: true, skipped: 1 }, "grad-scaler-skips");
    assert_eq!(f.severity, Severity::Warn, "{}", f.why);
    assert_eq!(f.evidence.total, 1);
    assert_eq!(f.title, "GradScaler skipped the optimizer in 1 of 3 steps (#2): inf/NaN gradients, 25.9% of step time trained nothing");
    // Step #2 ends with its last kernel at 700 µs (the others at 1000): 700 of 2700 µs.
    let i = f.impact.unwrap();
    assert_eq!((i.ns, i.step_ns), (700 * US, 900 * US), "the skipped step's whole time is on the path: {i:?}");
    silent(Case::Training { backward: true, skipped: 0 }, "grad-scaler-skips");
    // The trace is training: no-backward stays silent on it.
    assert!(findings(Case::Training { backward: true, skipped: 1 }).iter().all(|f| f.rule != "no-backward"));
}
