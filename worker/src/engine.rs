//! Request handling over the protocol types; knows nothing about transports or clocks.
//!
//! The wasm worker and the CLI both call [`Engine::load`]; they time it themselves.

use crate::analysis::ops::{OpIndex, OpOptions};
use crate::analysis::{kernels, steps};
use crate::input;
use crate::load::{self, LoadFailure};
use crate::model::Trace;
use crate::summary::summarize;
use protocol::{LoadError, Phase, Query, TableData, TraceSummary};

/// Holds the currently loaded trace between requests.
#[derive(Default)]
pub struct Engine {
    trace: Option<Trace>,
    /// Op index of `trace`, built on the first ops query.
    ops: Option<OpIndex>,
}

impl Engine {
    /// A new engine with no trace loaded.
    pub fn new() -> Self {
        Self::default()
    }

    /// The loaded trace, if any.
    pub fn trace(&self) -> Option<&Trace> {
        self.trace.as_ref()
    }

    /// Decompresses (gzip by magic bytes), parses and indexes `bytes`, replacing any loaded
    /// trace. `progress(phase, done_bytes, total_bytes)` is called every few MB.
    ///
    /// # Errors
    /// A [`LoadError`] when the input is empty, not a trace, or malformed before any event.
    pub fn load(
        &mut self,
        name: &str,
        bytes: Vec<u8>,
        progress: &mut dyn FnMut(Phase, u64, Option<u64>),
    ) -> Result<TraceSummary, LoadError> {
        self.trace = None;
        self.ops = None;
        let file_bytes = bytes.len() as u64;
        if bytes.is_empty() {
            return Err(error("empty", "the file is empty (0 bytes)".into(), None));
        }
        let decoded = input::decode(bytes, &mut |done| progress(Phase::Decompressing, done, Some(file_bytes)));
        if decoded.gzip && decoded.json.is_empty() {
            let why = decoded.gzip_error.unwrap_or_else(|| "no data".into());
            return Err(error("gzip", format!("not a readable gzip file: {why}"), None));
        }
        let json_bytes = decoded.json.len() as u64;
        let mut trace = load::parse(&decoded.json, &mut |done| progress(Phase::Parsing, done, Some(json_bytes)))
            .map_err(|f| failure(&f, decoded.gzip))?;
        if let Some(why) = &decoded.gzip_error {
            trace.diagnostics.report(crate::diag::DiagKind::InputGzipTruncated, Some(json_bytes), || why.clone());
            trace.truncated = true;
        }
        let summary = summarize(&trace, name, file_bytes, json_bytes, decoded.gzip);
        self.trace = Some(trace);
        Ok(summary)
    }

    /// Answers a table query over the loaded trace.
    ///
    /// # Errors
    /// A message when no trace is loaded.
    pub fn query(&mut self, q: &Query) -> Result<TableData, String> {
        let Some(trace) = self.trace.as_ref() else {
            return Err("no trace is loaded".into());
        };
        Ok(match q {
            Query::Ops { by_shape, range_ns } => {
                let index = self.ops.get_or_insert_with(|| OpIndex::new(trace));
                let opts = OpOptions {
                    by_shape: *by_shape,
                    range: *range_ns,
                };
                crate::tables::ops(&index.table(trace, &opts), *by_shape)
            }
            Query::Kernels { range_ns } => {
                crate::tables::kernels(&kernels::kernel_table(trace, *range_ns))
            }
            Query::Steps => crate::tables::steps(&steps::analyze(trace, None)),
        })
    }
}

fn error(kind: &str, message: String, loc: Option<&crate::json::Location>) -> LoadError {
    LoadError {
        kind: kind.into(),
        message,
        offset: loc.map(|l| l.offset),
        line: loc.map(|l| l.line),
        column: loc.map(|l| l.column),
    }
}

fn failure(f: &LoadFailure, gzip: bool) -> LoadError {
    let mut message = f.to_string();
    if gzip && f.location.is_some() {
        message.push_str(" (offsets count decompressed bytes)");
    }
    error(f.kind, message, f.location.as_ref())
}
