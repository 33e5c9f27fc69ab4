//! What a loaded trace that shows little or nothing says where the eye is: an empty-state
//! message when no event landed on a lane, a banner when the file was cut short.
//!
//! Input: the worker's [`TraceSummary`] (`events`, `lanes`, `truncated`, `warnings`; the
//! `json_truncated` warning names the byte where reading stopped). Output: the texts, or
//! `None` when there is nothing to say. Plain functions, tested natively.

use super::format;
use protocol::TraceSummary;

/// What the demo is and how to open one's own trace (shown while the demo is loaded).
pub const DEMO: &str = "This is Kinetoscope's demo: a synthetic training run. To open your own trace, drop a \
     .json or .json.gz file anywhere on this page, use Open trace (or Open folder for every rank of \
     a run), or add ?url=https://host/trace.json to this page's address.";

/// Why the timeline is empty, or `None` when some lane has slices.
pub fn empty_state(s: &TraceSummary) -> Option<String> {
    if s.lanes > 0 {
        return None;
    }
    Some(if s.events == 0 {
        "Nothing to show: this file holds no trace events (JSON objects with \"ph\", \"name\", \
         \"ts\" in a \"traceEvents\" array or a top-level array)."
            .to_owned()
    } else {
        format!(
            "Nothing to draw: the file's {} events put no slice on a thread or stream.",
            format::count(s.events)
        )
    })
}

/// The truncation banner: where reading stopped and how many events were loaded, or `None`
/// when the file is whole.
pub fn truncation(s: &TraceSummary) -> Option<String> {
    if !s.truncated {
        return None;
    }
    let warning = s.warnings.iter().find(|w| w.starts_with("json_truncated"));
    let at = warning.and_then(|w| stopped_at(w));
    let place = match at {
        Some((byte, Some(pos))) => format!(" at byte {} ({pos})", format::count(byte)),
        Some((byte, None)) => format!(" at byte {}", format::count(byte)),
        None => String::new(),
    };
    Some(format!(
        "This file is cut short: reading stopped{place}. The {} complete events before it are \
         loaded; anything after is missing.",
        format::count(s.events)
    ))
}

/// The byte offset in a diagnostic's `at byte N`, with its `line L, column C` when given.
fn stopped_at(warning: &str) -> Option<(u64, Option<&str>)> {
    let rest = warning.split_once("at byte ")?.1;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let byte = rest.get(..digits)?.parse().ok()?;
    let pos = rest.find("line ").and_then(|i| rest.get(i..)).map(str::trim);
    Some((byte, pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(events: u64, lanes: u64, truncated: bool, warnings: &[&str]) -> TraceSummary {
        TraceSummary {
            events,
            lanes,
            truncated,
            warnings: warnings.iter().map(|w| (*w).to_owned()).collect(),
            ..TraceSummary::default()
        }
    }

    #[test]
    fn empty_states_say_why() {
        let numbers = summary(0, 0, false, &["json_non_object_event (DataLoss): 1 × ..."]);
        assert!(empty_state(&numbers).is_some_and(|t| t.contains("no trace events")));
        let metadata = summary(3, 0, false, &[]);
        assert!(empty_state(&metadata).is_some_and(|t| t.contains("3 events")));
        assert_eq!(empty_state(&summary(3, 1, false, &[])), None);
    }

    /// The warning as `kinetoscope info` gives it for the first 3,000 bytes of
    /// fixtures/real/partx__profiler_trace_single_sample.json.
    #[test]
    fn truncation_names_the_byte_and_the_events() {
        let w = "json_truncated (DataLoss): 1 × input ended inside the event array; complete \
                 events before it were loaded; first at byte 2671: incomplete event: line 52, column 3";
        let text = truncation(&summary(5, 1, true, &[w]));
        assert_eq!(
            text.as_deref(),
            Some(
                "This file is cut short: reading stopped at byte 2,671 (line 52, column 3). \
                 The 5 complete events before it are loaded; anything after is missing."
            )
        );
        assert!(truncation(&summary(5, 1, true, &[])).is_some_and(|t| t.contains("stopped.")));
        assert_eq!(truncation(&summary(5, 1, false, &[w])), None);
    }
}
