//! Findings on a recording whose events are missing all over (a truncated file, a sampled trace,
//! a trace whose host side was cut: [`Partial::stops_early`]). Kineto writes events grouped by
//! kind, not by time, so a cut file can lose the kernels of a step whose host calls it kept: a
//! share, total or per-step number measured over what was kept says nothing sure about the
//! program. Such warnings are told as info with the reason; `gpu-idle` and `overhead-bound` are
//! not judged at all (their evidence, idle time, is where the missing events were).

use super::health::Partial;
use super::{Finding, Severity};

/// Rules that keep their severity: a memory peak seen is a lower bound of the real one (the
/// `health-*` rules, about the recording itself, keep theirs too).
const STILL_TRUE: &[&str] = &["memory-near-limit"];

/// Tells every warning or alert that depends on the missing events as info, saying why.
pub(super) fn demote(partial: Option<&Partial>, findings: &mut [Finding]) {
    let Some(reason) = partial.and_then(Partial::stops_early) else { return };
    for f in findings.iter_mut() {
        if f.severity == Severity::Info || f.rule.starts_with("health-") || STILL_TRUE.contains(&f.rule) {
            continue;
        }
        if !f.why.trim_end().ends_with(['.', '!', '?']) {
            f.why.push('.');
        }
        f.why.push_str(&format!(
            " Incomplete recording: {reason}; this is measured over the events that were kept, so not a {}.",
            if f.severity == Severity::Alert { "alert" } else { "warning" }
        ));
        f.severity = Severity::Info;
    }
}
