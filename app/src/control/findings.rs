//! Cheatsheet intents: clicking a finding zooms the timeline to its evidence, outlines every
//! evidence slice and selects the first; hovering one outlines its evidence until the pointer
//! leaves.

use super::Controller;
use leptos::prelude::*;
use protocol::SliceRef;

impl Controller {
    /// Activates finding `rule`: zoom to its evidence, outline it, select its first slice.
    pub fn activate_finding(self, rule: &str) {
        let Some(f) = self.findings.with_untracked(|s| s.find(rule).cloned()) else {
            return;
        };
        self.findings.update(|s| s.active = Some(f.rule.clone()));
        let span = f.range_ns.or_else(|| extent(&f.slices));
        self.view(|t| {
            t.highlight = f.slices.clone();
            if let Some((a, b)) = span {
                t.view.show(a as f64, b as f64);
            }
        });
        if let Some(first) = f.slices.first().cloned() {
            self.select_ref(first);
            if let Some((a, b)) = span {
                // `select_ref` centers the slice; keep the whole evidence in view.
                self.view(|t| t.view.show(a as f64, b as f64));
            }
        }
    }

    /// Outlines the evidence of `rule` while hovered (`None`: back to the active finding's).
    pub fn hover_finding(self, rule: Option<String>) {
        let slices = self.findings.with_untracked(|s| {
            let rule = rule.as_deref().or(s.active.as_deref())?;
            s.find(rule).map(|f| f.slices.clone())
        });
        self.view(|t| t.highlight = slices.unwrap_or_default());
    }
}

/// The time span covering `slices`.
fn extent(slices: &[SliceRef]) -> Option<(i64, i64)> {
    let a = slices.iter().map(|r| r.start_ns).min()?;
    let b = slices.iter().map(|r| r.start_ns + r.dur_ns).max()?;
    Some((a, b))
}
