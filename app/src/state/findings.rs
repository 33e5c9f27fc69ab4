//! Cheatsheet state as a plain struct: the findings the worker detected, which one is active
//! (clicked: its evidence is outlined and selected on the timeline) and which one is hovered.

use protocol::{Answer, FindingData};

/// Everything the findings panel shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FindingsState {
    /// Findings, alerts first; `None` until the answer arrives.
    pub list: Option<Vec<FindingData>>,
    /// Id of the findings query awaited.
    pub pending: Option<u32>,
    /// Rule of the finding clicked.
    pub active: Option<String>,
}

impl FindingsState {
    /// Forgets everything (a new load).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Applies the answer to query `id`; false when it is not awaited.
    pub fn apply(&mut self, id: u32, answer: Answer) -> bool {
        if self.pending != Some(id) {
            return false;
        }
        self.pending = None;
        if let Answer::Findings(list) = answer {
            self.list = Some(list);
        }
        true
    }

    /// The finding with rule `rule`.
    pub fn find(&self, rule: &str) -> Option<&FindingData> {
        self.list.as_ref()?.iter().find(|f| f.rule == rule)
    }

    /// Counts by severity: (alert, warn, info).
    pub fn counts(&self) -> (usize, usize, usize) {
        let list = self.list.as_deref().unwrap_or(&[]);
        let n = |s: &str| list.iter().filter(|f| f.severity == s).count();
        (n("alert"), n("warn"), n("info"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_only_the_awaited_answer() {
        let mut s = FindingsState {
            pending: Some(3),
            ..FindingsState::default()
        };
        let f = |rule: &str, severity: &str| FindingData {
            rule: rule.into(),
            severity: severity.into(),
            ..FindingData::default()
        };
        assert!(!s.apply(2, Answer::Findings(vec![])));
        assert!(s.apply(3, Answer::Findings(vec![f("gpu-idle", "warn"), f("compute-bound", "info")])));
        assert_eq!(s.counts(), (0, 1, 1));
        assert_eq!(s.find("gpu-idle").map(|f| f.severity.as_str()), Some("warn"));
        assert!(s.find("nope").is_none());
    }
}
