//! The Summary tab's lead: the worker's [`Glance`] (step time, GPU metrics, what bounds the
//! steps), asked for once per load after the first timeline paint, and the one-line reading of
//! the trace's health.

use protocol::{Answer, Glance, HealthCheck, HealthSummary};
use std::sync::Arc;

/// The glance of the loaded trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GlanceState {
    /// The answer; `None` until it arrives.
    pub data: Option<Arc<Glance>>,
    /// Id of the query awaited.
    pub pending: Option<u32>,
    /// Why the query failed.
    pub error: Option<String>,
}

impl GlanceState {
    /// Whether it was asked for this load (answered, failed or awaited).
    pub fn asked(&self) -> bool {
        self.data.is_some() || self.pending.is_some() || self.error.is_some()
    }

    /// Applies the answer to query `id`; false when it is not awaited.
    pub fn apply(&mut self, id: u32, answer: Answer) -> bool {
        if self.pending != Some(id) {
            return false;
        }
        self.pending = None;
        if let Answer::Glance(g) = answer {
            self.data = Some(Arc::from(g));
        }
        true
    }

    /// Query `id` failed; false when it is not awaited.
    pub fn failed(&mut self, id: u32, message: String) -> bool {
        if self.pending != Some(id) {
            return false;
        }
        self.pending = None;
        self.error = Some(message);
        true
    }
}

/// Trace health in one line: what is missing or suspect, or that nothing is.
pub fn health_line(h: &HealthSummary, warnings: usize) -> String {
    let mut parts = Vec::new();
    if h.truncated {
        parts.push("truncated: the event array never closes, events after the cut are missing".to_owned());
    }
    let checks: [(&HealthCheck, &str); 4] = [
        (&h.launches_without_activity, "launch calls ran nothing recorded"),
        (&h.activities_without_launch, "device activities have no launch call"),
        (&h.outside_window, "device activities fall outside the capture"),
        (&h.before_launch, "device activities start before their launch"),
    ];
    for (c, what) in checks {
        if c.count > 0 {
            parts.push(format!("{} of {} {what}", c.count, c.of));
        }
    }
    let skipped: u64 = h.skipped.values().sum();
    if skipped > 0 {
        parts.push(format!("{skipped} {} skipped by the parse", if skipped == 1 { "event" } else { "events" }));
    }
    if parts.is_empty() && warnings == 0 {
        return "Complete: every launch has its device work, nothing skipped.".to_owned();
    }
    if parts.is_empty() {
        parts.push(format!("{warnings} parse {}", if warnings == 1 { "warning" } else { "warnings" }));
    }
    let mut line = parts.join("; ");
    if let Some(first) = line.get(..1) {
        line = first.to_uppercase() + &line[1..];
    }
    line + "."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_only_the_awaited_answer() {
        let mut s = GlanceState { pending: Some(4), ..GlanceState::default() };
        assert!(s.asked());
        assert!(!s.apply(3, Answer::Glance(Box::default())));
        assert!(s.apply(4, Answer::Glance(Box::default())));
        assert!(s.data.is_some() && s.pending.is_none());
        assert!(!s.failed(4, "late".into()));
    }

    #[test]
    fn health_reads_as_one_line() {
        let mut h = HealthSummary::default();
        assert_eq!(health_line(&h, 0), "Complete: every launch has its device work, nothing skipped.");
        assert_eq!(health_line(&h, 1), "1 parse warning.");
        h.truncated = true;
        h.launches_without_activity = HealthCheck { count: 3, of: 245, examples: vec![] };
        assert_eq!(
            health_line(&h, 1),
            "Truncated: the event array never closes, events after the cut are missing; 3 of 245 launch calls ran nothing recorded."
        );
    }
}
