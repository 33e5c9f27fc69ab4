//! Export report: the one report query in flight and how the last one ended. The worker builds
//! the HTML (`Query::Report`); the page only saves it as a file named after the trace
//! ([`file_name`]).

use protocol::Answer;

/// The Export report button's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExportState {
    /// Id of the report query awaited.
    pub pending: Option<u32>,
    /// Why the last export failed (shown on the button), `None` after a success.
    pub error: Option<String>,
}

impl ExportState {
    /// Report query `id` was sent; an older one is no longer awaited.
    pub fn sent(&mut self, id: u32) {
        self.pending = Some(id);
        self.error = None;
    }

    /// The report's HTML when `answer` answers the awaited query, else `None` (stale or not a
    /// report).
    pub fn apply(&mut self, id: u32, answer: Answer) -> Option<String> {
        if self.pending != Some(id) {
            return None;
        }
        self.pending = None;
        match answer {
            Answer::Report(html) => Some(html),
            _ => {
                self.error = Some("the worker answered with something other than a report".into());
                None
            }
        }
    }

    /// Report query `id` failed; whether it was the awaited one.
    pub fn failed(&mut self, id: u32, message: String) -> bool {
        if self.pending != Some(id) {
            return false;
        }
        self.pending = None;
        self.error = Some(message);
        true
    }
}

/// The report's file name for trace `name`: the trace's name without `.gz` / `.json`, then
/// `.report.html` (`run1.pt.trace.json.gz` -> `run1.pt.trace.report.html`); path separators
/// and characters file systems refuse become `_`.
pub fn file_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = base.strip_suffix(".gz").unwrap_or(base);
    let stem = stem.strip_suffix(".json").unwrap_or(stem);
    let stem: String = stem
        .chars()
        .map(|c| if c.is_control() || matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') { '_' } else { c })
        .collect();
    let stem = if stem.trim_matches('.').is_empty() { "trace".to_owned() } else { stem };
    format!("{stem}.report.html")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_named_after_the_trace() {
        assert_eq!(file_name("run1.pt.trace.json.gz"), "run1.pt.trace.report.html");
        assert_eq!(file_name("traces/a.json"), "a.report.html");
        assert_eq!(file_name("x<y>.json"), "x_y_.report.html");
        assert_eq!(file_name(".json"), "trace.report.html");
    }

    #[test]
    fn only_the_awaited_answer_counts() {
        let mut s = ExportState::default();
        s.sent(1);
        s.sent(2);
        assert_eq!(s.apply(1, Answer::Report("old".into())), None);
        assert_eq!(s.apply(2, Answer::Report("new".into())), Some("new".into()));
        assert_eq!(s.pending, None);
        s.sent(3);
        assert!(!s.failed(2, "x".into()));
        assert!(s.failed(3, "no trace is loaded".into()));
        assert_eq!(s.error.as_deref(), Some("no trace is loaded"));
    }
}
