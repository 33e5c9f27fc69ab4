//! Request handling over the protocol types; knows nothing about transports or clocks.
//!
//! The wasm worker and the CLI both call [`Engine::load`]; they time it themselves.

use crate::analysis::gpu::GpuIndex;
use crate::analysis::memory::{self, Memory};
use crate::analysis::ops::{OpIndex, OpOptions};
use crate::analysis::{kernels, steps};
use crate::index::{search, Index};
use crate::input;
use crate::load::{self, LoadFailure};
use crate::model::Trace;
use crate::summary::summarize;
use crate::timeline;
use protocol::{Answer, LoadError, Phase, Query, TraceSummary};

/// Holds the currently loaded trace and what queries built from it, between requests.
#[derive(Default)]
pub struct Engine {
    trace: Option<Trace>,
    /// Timeline index of `trace`, built at load.
    index: Index,
    /// Op index of `trace`, built on the first ops query.
    ops: Option<OpIndex>,
    /// GPU kernel profiles, built on the first counters query.
    gpu: Option<GpuIndex>,
    /// Memory series, built on the first counters query.
    memory: Option<Memory>,
    /// Cheatsheet findings, detected on the first findings query.
    findings: Option<Vec<crate::finding::Finding>>,
    /// The last search text and its compiled query (tiles and search steps reuse it).
    search: Option<(String, search::Query)>,
}

/// An answer and, for tiles, the rect words that travel beside it.
pub type Reply = (Answer, Option<Vec<u32>>);

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
        *self = Self::default();
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
        self.index = Index::build(&trace);
        self.trace = Some(trace);
        Ok(summary)
    }

    /// Answers `q` over the loaded trace.
    ///
    /// # Errors
    /// A message when no trace is loaded.
    pub fn query(&mut self, q: &Query) -> Result<Reply, String> {
        let Some(trace) = self.trace.as_ref() else {
            return Err("no trace is loaded".into());
        };
        let answer = match q {
            Query::Ops { by_shape, range_ns } => {
                let index = self.ops.get_or_insert_with(|| OpIndex::new(trace));
                let opts = OpOptions {
                    by_shape: *by_shape,
                    range: *range_ns,
                };
                Answer::Table(crate::tables::ops(&index.table(trace, &opts), *by_shape))
            }
            Query::Kernels { range_ns } => {
                Answer::Table(crate::tables::kernels(&kernels::kernel_table(trace, *range_ns)))
            }
            Query::Steps => Answer::Table(crate::tables::steps(&steps::analyze(trace, None))),
            Query::Layout => Answer::Layout(timeline::layout::layout(trace)),
            Query::Tiles {
                lanes,
                start_ns,
                end_ns,
                resolution_ns,
                search,
            } => {
                let compiled = match search.as_deref().filter(|t| !t.is_empty()) {
                    Some(text) => Some(compile(&mut self.search, trace, &self.index, text)),
                    None => None,
                };
                let (set, words) = timeline::tiles::tiles(
                    trace,
                    &self.index,
                    lanes,
                    (*start_ns, *end_ns),
                    *resolution_ns,
                    compiled,
                );
                return Ok((Answer::Tiles(set), Some(words)));
            }
            Query::Details { slice } | Query::Hover { slice } => {
                Answer::Details(timeline::details::slice_details(trace, &self.index, *slice))
            }
            Query::Resolve { key } => Answer::Details(
                timeline::details::resolve(trace, key)
                    .and_then(|id| timeline::details::slice_details(trace, &self.index, id)),
            ),
            Query::Search {
                text,
                from_slice,
                from_ns,
                forward,
            } => {
                let query = compile(&mut self.search, trace, &self.index, text);
                let cursor = from_slice.map_or(search::Cursor::Time(*from_ns), search::Cursor::Slice);
                Answer::Search(timeline::search::step(trace, query, text, cursor, *forward))
            }
            Query::Counters {
                start_ns,
                end_ns,
                buckets,
            } => {
                let gpu = self.gpu.get_or_insert_with(|| GpuIndex::new(trace));
                let memory = self.memory.get_or_insert_with(|| memory::analyze(trace, None, 0));
                Answer::Counters(timeline::counters::counters(gpu, memory, (*start_ns, *end_ns), *buckets))
            }
            Query::Findings => {
                let found = self.findings.get_or_insert_with(|| crate::finding::detect(trace));
                Answer::Findings(timeline::findings::wire(trace, found))
            }
            Query::Histogram { name, bins } => {
                Answer::Histogram(timeline::counters::histogram(trace, name, *bins))
            }
        };
        Ok((answer, None))
    }
}

/// The compiled query for `text`, reusing the cached one when the text is unchanged.
fn compile<'a>(
    cache: &'a mut Option<(String, search::Query)>,
    trace: &Trace,
    index: &Index,
    text: &str,
) -> &'a search::Query {
    if cache.as_ref().is_some_and(|(t, _)| t != text) {
        *cache = None;
    }
    &cache
        .get_or_insert_with(|| (text.to_owned(), search::Query::new(trace, index, text)))
        .1
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
