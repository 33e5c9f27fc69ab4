//! Diagnostics: recoverable problems found while loading, counted per kind with a few samples.
//!
//! Fatal problems are errors (`json::ParseError`, `engine::LoadError`); everything else is
//! reported here and loading goes on. Each kind has a severity and a one-line description in
//! one table ([`DiagKind::describe`]); names are prefixed by the stage that reports them.

use std::fmt::Write as _;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing; nothing lost.
    Info,
    /// Some input could not be represented; the rest is intact.
    DataLoss,
    /// The input is wrong at this point; reading stopped or skipped it.
    Error,
}

/// Every kind of recoverable problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DiagKind {
    /// Input ended inside the event array.
    JsonTruncated,
    /// Syntax error after some events were read; reading stopped there.
    JsonSyntaxStop,
    /// An element of the event array was not an object.
    JsonNonObjectEvent,
    /// `ts` or `dur` was not a number.
    JsonBadTime,
    /// A gzip stream ended early or was corrupt; the decompressed prefix was used.
    InputGzipTruncated,
    /// An event needing a timestamp had none.
    ModelMissingTs,
    /// An `X` event without `dur` (treated as zero length).
    ModelMissingDur,
    /// A negative duration (treated as zero length).
    ModelNegativeDur,
    /// An `E` with no open `B` on its lane.
    ModelUnmatchedEnd,
    /// A `B` never closed; it ends at the trace end.
    ModelUnclosedBegin,
    /// A slice partially overlaps another on its lane: placed on an overflow sub-lane.
    ModelPartialOverlap,
    /// An event phase the model does not use.
    ModelUnknownPhase,
    /// A flow start or end with no partner, or no slice to bind to.
    LinkFlowUnmatched,
    /// A device activity with a correlation no launch call carries.
    LinkKernelWithoutLaunch,
    /// A string longer than `json::long::MAX_STRING_BYTES`, kept cut.
    JsonStringCut,
    /// Bytes that are not whitespace after the top-level JSON value.
    JsonTrailingBytes,
}

impl DiagKind {
    /// Every kind, in declaration order (a kind's index here is its wire code).
    pub const ALL: [DiagKind; 16] = {
        use DiagKind::*;
        [
            JsonTruncated, JsonSyntaxStop, JsonNonObjectEvent, JsonBadTime, InputGzipTruncated, ModelMissingTs,
            ModelMissingDur, ModelNegativeDur, ModelUnmatchedEnd, ModelUnclosedBegin, ModelPartialOverlap,
            ModelUnknownPhase, LinkFlowUnmatched, LinkKernelWithoutLaunch, JsonStringCut, JsonTrailingBytes,
        ]
    };

    /// Stable snake_case name, severity and one-line description.
    pub fn describe(self) -> (&'static str, Severity, &'static str) {
        use DiagKind::*;
        use Severity::*;
        match self {
            JsonTruncated => ("json_truncated", DataLoss, "input ended inside the event array; complete events before it were loaded"),
            JsonSyntaxStop => ("json_syntax_stop", Error, "invalid JSON after some events; events before it were loaded"),
            JsonNonObjectEvent => ("json_non_object_event", DataLoss, "event array element is not an object; skipped"),
            JsonBadTime => ("json_bad_time", DataLoss, "ts or dur is not a number"),
            InputGzipTruncated => ("input_gzip_truncated", DataLoss, "gzip stream ended early or is corrupt; used what decompressed"),
            ModelMissingTs => ("model_missing_ts", DataLoss, "event without ts; not placed on the timeline"),
            ModelMissingDur => ("model_missing_dur", Info, "complete event without dur; shown with zero length"),
            ModelNegativeDur => ("model_negative_dur", DataLoss, "negative duration; shown with zero length"),
            ModelUnmatchedEnd => ("model_unmatched_end", DataLoss, "end event (E, or async e / F) with no open begin on its lane or async id; ignored"),
            ModelUnclosedBegin => ("model_unclosed_begin", Info, "begin event (B, or async b / S) never closed; ends at the trace end"),
            ModelPartialOverlap => ("model_partial_overlap", Info, "slice partially overlaps another on its lane; drawn on an overflow sub-lane"),
            ModelUnknownPhase => ("model_unknown_phase", Info, "event phase not drawn (counted only)"),
            LinkFlowUnmatched => ("link_flow_unmatched", Info, "flow endpoint without a partner or a slice to bind to"),
            LinkKernelWithoutLaunch => ("link_kernel_without_launch", Info, "device activity whose correlation matches no launch call"),
            JsonStringCut => ("json_string_cut", DataLoss, "string longer than 64 KiB (a name, an arg value); its first 64 KiB kept"),
            JsonTrailingBytes => ("json_trailing_bytes", DataLoss, "bytes after the end of the top-level JSON value; not read"),
        }
    }
}

/// Maximum samples kept per kind.
const MAX_SAMPLES: usize = 3;

/// One occurrence kept as an example.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Absolute byte offset in the decompressed input, when known.
    pub offset: Option<u64>,
    /// Short context (escaped user text goes last).
    pub detail: String,
}

/// Counts and samples of every reported kind.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    entries: Vec<(DiagKind, u64, Vec<Sample>)>,
}

impl Diagnostics {
    /// Records one occurrence of `kind`.
    pub fn report(&mut self, kind: DiagKind, offset: Option<u64>, detail: impl FnOnce() -> String) {
        let entry = match self.entries.iter().position(|e| e.0 == kind) {
            Some(i) => &mut self.entries[i],
            None => {
                self.entries.push((kind, 0, Vec::new()));
                let last = self.entries.len() - 1;
                &mut self.entries[last]
            }
        };
        entry.1 += 1;
        if entry.2.len() < MAX_SAMPLES {
            entry.2.push(Sample { offset, detail: detail() });
        }
    }

    /// Records `count` occurrences of `kind` at once (none when 0), with one sample.
    pub fn report_many(&mut self, kind: DiagKind, count: u64, offset: Option<u64>, detail: impl FnOnce() -> String) {
        if count == 0 {
            return;
        }
        self.report(kind, offset, detail);
        if let Some(e) = self.entries.iter_mut().find(|e| e.0 == kind) {
            e.1 += count - 1;
        }
    }

    /// Adds all of `other`'s counts and samples (samples still capped per kind).
    pub fn absorb(&mut self, other: &Diagnostics) {
        for (kind, count, samples) in &other.entries {
            for sample in samples {
                self.report(*kind, sample.offset, || sample.detail.clone());
            }
            let extra = count - samples.len() as u64;
            if let Some(e) = self.entries.iter_mut().find(|e| e.0 == *kind) {
                e.1 += extra;
            }
        }
    }

    /// Entries in report order, as stored: `(kind, count, samples)` (for [`crate::codec`]).
    pub fn raw_entries(&self) -> &[(DiagKind, u64, Vec<Sample>)] {
        &self.entries
    }

    /// Diagnostics holding exactly `entries` (from [`Diagnostics::raw_entries`]).
    pub fn from_raw_entries(entries: Vec<(DiagKind, u64, Vec<Sample>)>) -> Self {
        Self { entries }
    }

    /// Occurrences of `kind`.
    pub fn count(&self, kind: DiagKind) -> u64 {
        self.entries.iter().find(|e| e.0 == kind).map_or(0, |e| e.1)
    }

    /// `(kind, count, samples)` ordered by severity (worst first), then kind.
    pub fn entries(&self) -> Vec<(DiagKind, u64, &[Sample])> {
        let mut v: Vec<_> = self.entries.iter().map(|e| (e.0, e.1, e.2.as_slice())).collect();
        v.sort_by_key(|e| (std::cmp::Reverse(e.0.describe().1), e.0));
        v
    }

    /// One line per kind: `name (severity): count × description; first at byte N: detail`.
    pub fn lines(&self) -> Vec<String> {
        self.entries()
            .into_iter()
            .map(|(kind, count, samples)| {
                let (name, severity, text) = kind.describe();
                let mut line = format!("{name} ({severity:?}): {count} × {text}");
                if let Some(s) = samples.first() {
                    match s.offset {
                        Some(off) => { let _ = write!(line, "; first at byte {off}"); }
                        None => line.push_str("; first"),
                    }
                    if !s.detail.is_empty() {
                        let _ = write!(line, ": {}", s.detail);
                    }
                }
                line
            })
            .collect()
    }
}
