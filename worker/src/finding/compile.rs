//! torch.compile rules: compiled regions are present (`compiled-region`), compiled graphs
//! change across steps (`recompilation`), and the compiled wrapper costs more CPU than the GPU
//! work it launches (`compile-cpu-tax`).
//!
//! Names (PyTorch 2.x): `Torch-Compiled Region: F/C` (frame F, compile id C; a new C for the
//! same F is a recompile), `## Call CompiledFxGraph <hash> ##` (Inductor graph),
//! `CompiledFunction` / `CompiledFunctionBackward` (AOTAutograd), `TorchDynamo Cache Lookup`.
//!
//! Cost: one slice pass per rule; outermost regions are disjoint on a lane, so summing the
//! device time their calls launched is one pass over their contents.

use super::thresholds::*;
use super::{dur, finding, Ctx, Finding, Severity};
use crate::model::strings::FxHashMap;
use crate::model::NONE;

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    compiled_region(ctx, out);
    recompilation(ctx, out);
    compile_cpu_tax(ctx, out);
}

/// A compiled region or graph call: the names whose change means a recompile.
fn is_graph(n: &str) -> bool {
    n.starts_with("Torch-Compiled Region") || (n.starts_with("## Call CompiledFxGraph") && n.ends_with("##"))
}

/// Any torch.compile marker.
fn is_compiled(n: &str) -> bool {
    is_graph(n)
        || n.starts_with("CompiledFunction")
        || n == "TorchDynamo Cache Lookup"
        || n.starts_with("## Call CompiledFxGraph")
}

/// `compiled-region` (info): torch.compile markers are present.
fn compiled_region(ctx: &Ctx, out: &mut Vec<Finding>) {
    let mask = ctx.mask(is_compiled);
    let ids = ctx.slices_named(&mask, None);
    if ids.is_empty() {
        return;
    }
    let mut names: Vec<(String, usize)> = Vec::new();
    for &i in &ids {
        let n = ctx.name(i);
        match names.iter_mut().find(|(m, _)| *m == n) {
            Some((_, k)) => *k += 1,
            None => names.push((n.into_owned(), 1)),
        }
    }
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let list: Vec<String> = names.iter().take(3).map(|(n, k)| format!("{} x{k}", crate::text::cut(n, 40))).collect();
    let more = if names.len() > 3 { ", ..." } else { "" };
    out.push(finding(
        "compiled-region",
        Severity::Info,
        format!("{} torch.compile slices: {}{more}", ids.len(), list.join(", ")),
        format!(
            "{} slices named Torch-Compiled Region / CompiledFxGraph / CompiledFunction / TorchDynamo Cache Lookup",
            ids.len()
        ),
        "Parts of the model run through torch.compile: their ops are replaced by generated \
         (Triton) kernels launched with cuLaunchKernel, so the op table shows the wrapper, not \
         aten ops.",
        "Read the region's kernels rather than its ops; TORCH_LOGS=\"graph_breaks,recompiles\" \
         explains breaks and recompiles.",
        ctx.evidence(ids),
    ));
}

/// `recompilation`: a compiled region / graph name appears in a step that was not in the step
/// before it (steps in time order), or a frame `F` shows several compile ids `F/C`.
fn recompilation(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let mask = ctx.mask(is_graph);
    let ids = ctx.slices_named(&mask, None);
    if ids.is_empty() {
        return;
    }
    let steps = ctx.complete_steps();
    let step_of = |i: u32| {
        let t = s.start_ns[i as usize];
        steps.iter().position(|st| t >= st.cpu_start_ns && t < st.cpu_end_ns)
    };
    let mut per_step: Vec<Vec<u32>> = vec![Vec::new(); steps.len()];
    for &i in &ids {
        if let Some(k) = step_of(i) {
            per_step[k].push(s.name[i as usize].0);
        }
    }
    let mut new_ids: Vec<u32> = Vec::new();
    for k in 1..per_step.len() {
        let (prev, cur) = (&per_step[k - 1], &per_step[k]);
        if prev.is_empty() {
            continue;
        }
        new_ids.extend(
            ids.iter()
                .copied()
                .filter(|&i| step_of(i) == Some(k) && !prev.contains(&s.name[i as usize].0) && cur.contains(&s.name[i as usize].0)),
        );
    }
    // Frame -> compile ids, from `Torch-Compiled Region: F/C`.
    let mut frames: FxHashMap<String, Vec<String>> = FxHashMap::default();
    for &i in &ids {
        let name = ctx.name(i);
        if let Some((f, c)) = name.strip_prefix("Torch-Compiled Region: ").and_then(|r| r.split_once('/')) {
            let list = frames.entry(f.to_string()).or_default();
            if !list.iter().any(|x| x == c) {
                list.push(c.to_string());
            }
        }
    }
    let mut recompiled: Vec<(&String, usize)> = frames.iter().filter(|(_, c)| c.len() > 1).map(|(f, c)| (f, c.len())).collect();
    recompiled.sort();
    if new_ids.is_empty() && recompiled.is_empty() {
        return;
    }
    let mut parts = Vec::new();
    if !new_ids.is_empty() {
        parts.push(format!("{} compiled graphs appear in a step that did not run them before", new_ids.len()));
    }
    if let Some((f, n)) = recompiled.first() {
        parts.push(format!("frame {f} compiled {n} times"));
    }
    let why = format!(
        "{} graph calls new in their step (absent from the step before); {} frames with several compile ids",
        new_ids.len(),
        recompiled.len()
    );
    let evidence = if new_ids.is_empty() {
        let mask = ctx.mask(|n| recompiled.iter().any(|(f, _)| n.starts_with(&format!("Torch-Compiled Region: {f}/"))));
        ctx.evidence(ctx.slices_named(&mask, None))
    } else {
        ctx.evidence(new_ids)
    };
    out.push(finding(
        "recompilation",
        Severity::Warn,
        parts.join("; "),
        why,
        "torch.compile compiled the same code again: a guard failed (new input shape, dtype, \
         Python value or module attribute), so steps pay compilation and run different graphs.",
        "Run with TORCH_LOGS=\"recompiles\" to see the failing guard; mark dynamic dims \
         (torch._dynamo.mark_dynamic, dynamic=True) or keep shapes and Python values stable.",
        evidence,
    ));
}

/// `compile-cpu-tax`: outermost compiled regions (`Torch-Compiled Region`, else graph calls)
/// spend >= [`COMPILE_CPU_TAX_RATIO`] x as much CPU time as the device time they launch.
fn compile_cpu_tax(ctx: &Ctx, out: &mut Vec<Finding>) {
    let s = &ctx.trace.slices;
    let regions = ctx.mask(|n| n.starts_with("Torch-Compiled Region"));
    let mut ids = ctx.slices_named(&regions, None);
    let mask = if ids.is_empty() {
        ids = ctx.slices_named(&ctx.mask(is_graph), None);
        ctx.mask(is_graph)
    } else {
        regions
    };
    let inside_same = |i: u32| {
        let mut p = s.parent[i as usize];
        while p != NONE {
            if mask.get(s.name[p as usize].0 as usize).copied().unwrap_or(false) {
                return true;
            }
            p = s.parent[p as usize];
        }
        false
    };
    ids.retain(|&i| !inside_same(i));
    if ids.is_empty() {
        return;
    }
    let (mut cpu, mut gpu) = (0i64, 0i64);
    for &r in &ids {
        let ri = r as usize;
        cpu += s.dur_ns[ri];
        let Some(lane) = ctx.trace.lanes.get(s.lane[ri].0 as usize) else { continue };
        let end = s.end_ns(ri);
        for j in ri + 1..lane.slices.end as usize {
            if s.start_ns[j] >= end {
                break;
            }
            // Every activity of the call counts (cudaGraphLaunch launches many).
            gpu += ctx.launched_ns(j as u32);
        }
    }
    if (cpu as f64) < COMPILE_CPU_TAX_RATIO * gpu as f64 {
        return;
    }
    let steps = ctx.complete_steps().len();
    let per = if steps > 0 { " per step" } else { "" };
    let n = steps.max(1) as i64;
    out.push(finding(
        "compile-cpu-tax",
        Severity::Warn,
        format!(
            "Compiled regions take {} of CPU{per} for {} of GPU work they launch ({} regions)",
            dur(cpu / n),
            dur(gpu / n),
            ids.len()
        ),
        format!(
            "outermost compiled regions: CPU {} / GPU launched {} >= {COMPILE_CPU_TAX_RATIO}",
            dur(cpu),
            dur(gpu)
        ),
        "The compiled wrapper (guards, cache lookup, argument handling, launches) costs more \
         host time than its kernels run: the region is too small, or it is still compiling.",
        "Compile a larger region, use mode=\"reduce-overhead\" (CUDA graphs), and measure after \
         warm-up steps.",
        ctx.evidence(ids),
    ));
}
