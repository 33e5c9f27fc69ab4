//! `cuda-graph` (info): how much of the GPU's kernel time runs inside CUDA graphs, with the
//! graph launches, and the gaps in the graph links (a launch with no kernel recorded, a graphed
//! kernel with no launch call); or, when the trace only captures graphs, that it does.
//! Numbers from `analysis::graphs` (docs/definitions.md, "CUDA graphs").
//!
//! Cost: one graph analysis (a pass over the slices and the flows).

use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::graphs::{self, Graphs};

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    let g = graphs::analyze(ctx.trace);
    if g.graphed_kernels > 0 || !g.launches.is_empty() {
        launched(ctx, &g, out);
    } else if g.captures > 0 {
        captured_only(ctx, &g, out);
    }
}

/// Graph launches or graphed kernels are present. Evidence: the launch calls with kernels,
/// then the launches without kernels, then the graphed kernels without a launch.
fn launched(ctx: &Ctx, g: &Graphs, out: &mut Vec<Finding>) {
    let with = g.launches_with_kernels();
    let linked: u64 = g.launches.iter().map(|l| l.kernels.len() as u64).sum();
    let per = if with > 0 { format!("{:.1}", linked as f64 / with as f64) } else { "no".to_owned() };
    let empty = g.empty_launches();
    let mut evidence: Vec<u32> = g.launches.iter().filter(|l| !l.kernels.is_empty()).map(|l| l.call).collect();
    evidence.extend(&empty);
    evidence.extend(&g.unlaunched);
    let mut ev = ctx.evidence(evidence);
    ev.total = (g.launches.len() + g.unlaunched.len()) as u32;
    out.push(finding(
        "cuda-graph",
        Severity::Info,
        format!(
            "{} of kernel time runs inside CUDA graphs ({} graph launches, {} kernels, {per} kernels per launch)",
            pct(g.graphed_share()),
            with,
            g.graphed_kernels
        ),
        format!(
            "graphed kernel time {} / kernel time {}; graph launch calls without a kernel \
             recorded: {}; graphed kernels without a graph launch call: {}; node dependency \
             edges: {}",
            dur(g.graphed_ns),
            dur(g.kernel_ns),
            empty.len(),
            g.unlaunched.len(),
            g.edges.len()
        ),
        "A CUDA graph replays many kernels with one launch call (cudaGraphLaunch), so the host \
         cost per kernel is paid once per graph; the kernels inside run as captured.",
        "Kernels outside graphs still pay a launch each: if the rest is many short kernels, \
         capture more of the step (torch.compile mode=\"reduce-overhead\", CUDA graph capture \
         of the decode loop). A launch with no kernel recorded usually means the profiler \
         missed the graph's activity; a graphed kernel with no launch was launched before the \
         capture window.",
        ev,
    ));
}

/// Stream captures but no graph launch: the trace records graphs being built, not run.
fn captured_only(ctx: &Ctx, g: &Graphs, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let ids: Vec<u32> = (0..s.len() as u32)
        .filter(|&i| graphs::is_capture_begin(&ctx.trace.strings.get(s.name[i as usize])))
        .collect();
    out.push(finding(
        "cuda-graph",
        Severity::Info,
        format!("CUDA graphs are captured ({} stream captures) but never launched in this trace", g.captures),
        format!("stream-capture begin calls: {}; graph launch calls: 0; graphed kernels: 0", g.captures),
        "The profiled window covers graph capture (warm-up), not replay: the kernels seen run \
         eagerly during capture, and the steady state the graphs serve is not in the trace.",
        "Profile after warm-up (a later schedule window) to see the graphs replayed.",
        ctx.evidence(ids),
    ));
}
