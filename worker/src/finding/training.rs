//! The training loop's shape: optimizer steps with no backward pass recorded (`no-backward`),
//! and steps whose optimizer step the AMP GradScaler skipped (`grad-scaler-skips`).
//!
//! **Inputs.** Names only: `Optimizer.step#...` spans (written by `torch.optim` for every
//! optimizer), the autograd engine's ops (`autograd::engine::evaluate_function: ...`,
//! `...Backward...` nodes, `AccumulateGrad`, as in [`crate::analysis::phases`]) and
//! GradScaler's `aten::_amp_update_scale_` (run by `scaler.update()` every step). **Cost.** One
//! pass over the slices per mask.

use super::thresholds::*;
use super::{finding, pct, Ctx, Finding, Severity};
use crate::analysis::phases::is_backward;

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    no_backward(ctx, out);
    grad_scaler_skips(ctx, out);
}

/// `no-backward`: `Optimizer.step#` spans and not one autograd-engine op in the trace: the
/// optimizer steps on gradients this capture never computed. Evidence: the optimizer steps,
/// longest first.
fn no_backward(ctx: &Ctx, out: &mut Vec<Finding>) {
    let steps = ctx.slices_named(&ctx.mask(|n| n.starts_with("Optimizer.step#")), None);
    if steps.is_empty() || !ctx.slices_named(&ctx.mask(is_backward), None).is_empty() {
        return;
    }
    let n = steps.len();
    out.push(finding(
        "no-backward",
        Severity::Warn,
        format!("{n} optimizer steps and no backward pass in the trace: this profile shows no training"),
        format!("{n} `Optimizer.step#` spans; 0 autograd-engine ops (evaluate_function, *Backward*, AccumulateGrad)"),
        "The optimizer runs but autograd never does: the forward ran under torch.no_grad() or \
         torch.inference_mode() (an evaluation loop profiled instead of training), the loss's \
         backward() is outside the profiled region, or no parameter requires grad. Either the \
         model does not train, or this trace measures something other than the training step.",
        "Profile the training step itself: call loss.backward() inside the profiled steps, and \
         check that model.train() is set and no torch.no_grad() / inference_mode() wraps the \
         forward.",
        ctx.evidence(ctx.longest_first(steps)),
    ));
}

/// `grad-scaler-skips`: in a trace whose steps run `Optimizer.step#`, at least
/// [`SCALER_SKIP_MIN_SHARE`] of the complete steps run `aten::_amp_update_scale_` without one:
/// GradScaler found inf/NaN gradients and skipped the update. Evidence: those steps' spans.
fn grad_scaler_skips(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let steps = ctx.complete_steps();
    let within = |ids: &[u32], st: &&crate::analysis::steps::StepSpan| {
        ids.iter().any(|&i| (st.cpu_start_ns..st.cpu_end_ns).contains(&s.start_ns[i as usize]))
    };
    let optimizer = ctx.slices_named(&ctx.mask(|n| n.starts_with("Optimizer.step#")), None);
    let scaler = ctx.slices_named(&ctx.mask(|n| n == "aten::_amp_update_scale_"), None);
    if optimizer.is_empty() || scaler.is_empty() {
        return;
    }
    let skipped: Vec<&&crate::analysis::steps::StepSpan> =
        steps.iter().filter(|st| within(&scaler, st) && !within(&optimizer, st)).collect();
    let share = skipped.len() as f64 / steps.len().max(1) as f64;
    if skipped.is_empty() || share < SCALER_SKIP_MIN_SHARE {
        return;
    }
    let numbers: Vec<String> = skipped.iter().map(|st| format!("#{}", st.number)).collect();
    let time: i64 = skipped.iter().map(|st| st.dur_ns()).sum();
    let all: i64 = steps.iter().map(|st| st.dur_ns()).sum();
    out.push(finding(
        "grad-scaler-skips",
        Severity::Warn,
        format!(
            "GradScaler skipped the optimizer in {} of {} steps ({}): inf/NaN gradients, {} of step time trained nothing",
            skipped.len(),
            steps.len(),
            numbers.join(", "),
            pct(time as f64 / all.max(1) as f64)
        ),
        format!(
            "complete steps running aten::_amp_update_scale_ without Optimizer.step#: {} of {} = {} >= {}",
            skipped.len(),
            steps.len(),
            pct(share),
            pct(SCALER_SKIP_MIN_SHARE)
        ),
        "With fp16 autocast, GradScaler skips optimizer.step() when the scaled gradients hold \
         inf or NaN and halves the scale. A few skips at the start of training are the scale \
         calibrating; skips later mean the gradients overflow again and again (a loss spike, a \
         learning rate too high, an op that overflows in fp16), and each skipped step's compute \
         is wasted.",
        "Look at the loss and gradient norms around these steps; clip gradients, lower the \
         learning rate or GradScaler's growth_factor, or train in bf16 (same range as fp32, no \
         scaler needed) where the GPU supports it.",
        ctx.evidence(skipped.iter().map(|st| st.slice)),
    ));
}
