//! Why an analysis has nothing to show: one sentence per empty section, so the CLI, the JSON
//! and the page say what could not be done and why instead of showing an empty table
//! (docs/definitions.md, "Traces without steps").
//!
//! The step-dependent analyses are the step table, step statistics, the step breakdown, the
//! step charts, `--explain-step` and the rules that compare steps ([`STEP_RULES`]); the other
//! rules fall back to the whole trace or tb_plugin's window.
//!
//! Cost: a scan of the slices for the host ops (only when the op table is empty).

use super::steps::Steps;
use crate::model::{CatClass, Trace};

/// Rules that compare complete steps and cannot run without two of them.
pub const STEP_RULES: &[&str] = &["cold-start-step", "kernel-time-variance", "recompilation", "slow-step"];

/// Why `steps` (computed over `range`) is empty, or `None` when it is not.
pub fn steps(trace: &Trace, steps: &Steps, range: Option<(i64, i64)>) -> Option<String> {
    if !steps.steps.is_empty() {
        return None;
    }
    let why = match (&trace.step_marker, range) {
        (Some(marker), _) => format!("no slice matches the step marker `{marker}`"),
        (None, Some(_)) if !super::steps::profiler_steps(trace).is_empty() => {
            "no ProfilerStep#N starts in the range".to_owned()
        }
        (None, _) => "no ProfilerStep#N in this trace (inference servers and scripts have none)".to_owned(),
    };
    Some(format!(
        "{why}: no step table, step statistics, step breakdown or step charts, and the step rules \
         ({}) did not run; a repeating annotation can stand for the step (--step-marker NAME)",
        STEP_RULES.join(", ")
    ))
}

/// Why the op table is empty: no host ops (a GPU-only trace), or none in the range.
pub fn ops(trace: &Trace) -> String {
    let s = &trace.slices;
    let host = (0..s.len()).any(|i| matches!(trace.class(s.cat[i]), CatClass::CpuOp | CatClass::Annotation));
    if host {
        "no op starts in the range".to_owned()
    } else {
        "no cpu_op or user_annotation events: a GPU-only trace has no op table".to_owned()
    }
}

/// Why the kernel table, GPU metrics or idle times are empty.
pub const NO_KERNELS: &str = "no kernel events on a GPU device";
/// Why the memory section is empty.
pub const NO_MEMORY: &str = "no [memory] events (torch.profiler records them with profile_memory=True)";
/// Why the idle-time section is empty.
pub const NO_DEVICE_ACTIVITY: &str = "no device activity on a GPU stream";
