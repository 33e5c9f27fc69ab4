//! Loads: a trace's bytes -> the [`Session`] the engine holds, one of three ways.
//!
//! - Streamed ([`Engine::begin`], [`Loading::push`], [`Engine::end`]): JSON is parsed as its
//!   bytes arrive (`load::Stream`), a gzip inflated into the parse as its bytes arrive
//!   (`input::Gunzip`), so neither is held whole and the parse overlaps the download. The
//!   page's default, and the CLI's for gzip and small files.
//! - Split ([`Engine::prepare`], parts parsed anywhere, [`Engine::complete`]): the whole JSON
//!   is cut into parts at event boundaries for parse workers (the page's `?workers=N`).
//! - Joined ([`Engine::begin_parts`], parts parsed anywhere, [`Engine::join`]): one file cut by `load::cut` and its parts streamed on their own
//!   (the CLI's threads), so a large file is parsed on several cores and never held whole.
//!
//! All give the same model as the sequential parse (tests/stream.rs, tests/part_codec.rs,
//! tests/cut.rs), and all check the input against the engine's [`Budget`] before holding it.

use super::{error, failure, Engine, Target};
use crate::budget::Budget;
use crate::fork::{Fork, Sequential};
use crate::input::{self, Gunzip};
use crate::load::{self, Arrived, Part, Plan, Stream};
use crate::model::Trace;
use crate::index::Index;
use crate::session::Session;
use crate::answer::summary::summarize;
use protocol::{LoadError, Phase, TraceSummary};
use std::sync::Arc;

/// Bytes [`Engine::load`] hands the stream at a time (what a file read gives).
const PIECE: usize = 8 << 20;

/// A load between [`Engine::prepare`] and [`Engine::complete`]: the decompressed JSON and how
/// it is cut into parts.
pub struct Prepared {
    target: Target,
    name: String,
    file_bytes: u64,
    /// The decompressed JSON (parts are ranges of it).
    pub json: Vec<u8>,
    gzip: bool,
    gzip_error: Option<String>,
    /// The parts to parse.
    pub plan: Plan,
}

/// A load read as parts between [`Engine::begin_parts`] and [`Engine::join`].
pub struct Joining {
    name: String,
    file_bytes: u64,
    /// Of a gzip inflated whole into the parts: its JSON's size.
    inflated: Option<u64>,
}

impl Joining {
    /// The parts are of a gzip that inflated whole to `json_bytes` of JSON.
    #[must_use]
    pub fn inflated(mut self, json_bytes: u64) -> Self {
        self.inflated = Some(json_bytes);
        self
    }
}

/// A streamed load between [`Engine::begin`] and [`Engine::end`].
pub struct Loading {
    target: Target,
    name: String,
    budget: Budget,
    file_bytes: u64,
    /// The size the source declared, if any.
    declared: Option<u64>,
    input: Input,
}

/// What the bytes so far are.
enum Input {
    /// Too few bytes to tell gzip from JSON.
    Start(Vec<u8>),
    /// JSON, parsed as it arrives (boxed: the builder is large, the other variants small).
    Json(Box<Stream>),
    /// A gzip, inflated into the parse as it arrives.
    Gzip(Box<Gunzip<Stream>>),
}

impl Loading {
    /// Takes the next bytes of the file.
    ///
    /// # Errors
    /// A `too-big` [`LoadError`] when the file passes the budget (the load is then over).
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        self.file_bytes += bytes.len() as u64;
        self.budget.check_file(self.file_bytes, true).map_err(|t| t.to_load_error(&self.name))?;
        if let Input::Start(first) = &mut self.input {
            first.extend_from_slice(bytes);
            if first.len() < 2 {
                return Ok(());
            }
            let first = std::mem::take(first);
            self.input = if input::is_gzip(&first) {
                Input::Gzip(Box::new(Gunzip::new(Stream::new(), self.budget, self.declared)))
            } else {
                Input::Json(Box::default())
            };
            return self.feed(&first);
        }
        self.feed(bytes)
    }

    /// Parses (or inflates and parses) the next bytes of a load whose kind is known.
    fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        match &mut self.input {
            Input::Json(stream) => stream.push(bytes),
            Input::Gzip(gunzip) => gunzip.push(bytes).map_err(|t| t.to_load_error(&self.name))?,
            Input::Start(first) => first.extend_from_slice(bytes),
        }
        Ok(())
    }

    /// Bytes of the file received so far.
    pub fn received(&self) -> u64 {
        self.file_bytes
    }

    /// The trace, once every byte has arrived.
    fn finish(self) -> Result<(Trace, u64, bool, Option<String>), LoadError> {
        let (stream, gzip, gzip_error) = match self.input {
            Input::Start(first) if first.is_empty() => return Err(empty_file()),
            Input::Start(first) => {
                let mut stream = Stream::new();
                stream.push(&first);
                (stream, false, None)
            }
            Input::Json(stream) => (*stream, false, None),
            Input::Gzip(gunzip) => {
                let (stream, gzip_error) = gunzip.finish().map_err(|t| t.to_load_error(&self.name))?;
                if stream.received() == 0 {
                    return Err(unreadable_gzip(gzip_error));
                }
                (stream, true, gzip_error)
            }
        };
        let json_bytes = stream.received();
        let trace = stream.finish().map_err(|f| failure(&f, gzip))?;
        Ok((trace, json_bytes, gzip, gzip_error))
    }
}

impl Engine {
    /// Starts a streamed load of `name` (`declared`: the size its source states, if any) that
    /// goes to `target`; only a load of the current trace drops it.
    ///
    /// # Errors
    /// A `too-big` [`LoadError`] when the declared size is over the budget.
    pub fn begin(&mut self, target: Target, name: &str, declared: Option<u64>) -> Result<Loading, LoadError> {
        if let Some(size) = declared {
            self.budget.check_file(size, false).map_err(|t| t.to_load_error(name))?;
        }
        self.drop_current(target);
        Ok(Loading { target, name: name.to_owned(), budget: self.budget, file_bytes: 0, declared, input: Input::Start(Vec::new()) })
    }

    /// Ends a streamed load: the trace, summarized and indexed, goes to its target.
    ///
    /// # Errors
    /// A [`LoadError`] when the input is empty, not readable gzip, or not a trace.
    pub fn end(&mut self, loading: Loading) -> Result<TraceSummary, LoadError> {
        let (target, name, file_bytes) = (loading.target, loading.name.clone(), loading.file_bytes);
        let (trace, json_bytes, gzip, gzip_error) = loading.finish()?;
        self.adopt(target, name, trace, Sizes { file_bytes, json_bytes, gzip, gzip_error, parts: 1 }, &Sequential)
    }

    /// Decompresses (gzip by magic bytes), parses and indexes `bytes`, replacing any loaded
    /// trace (not the baseline). `progress(phase, done_bytes, total_bytes)` is called every few MB.
    ///
    /// # Errors
    /// A [`LoadError`] when the input is empty, not a trace, or malformed before any event.
    pub fn load(
        &mut self,
        name: &str,
        bytes: Vec<u8>,
        progress: &mut dyn FnMut(Phase, u64, Option<u64>),
    ) -> Result<TraceSummary, LoadError> {
        let total = bytes.len() as u64;
        let mut loading = self.begin(Target::Current, name, Some(total))?;
        for piece in bytes.chunks(PIECE) {
            loading.push(piece)?;
            progress(Phase::Parsing, loading.received(), Some(total));
        }
        drop(bytes);
        self.end(loading)
    }

    /// [`Engine::load`] from `reader` (a file: `declared` is its size), read [`PIECE`] bytes
    /// at a time and parsed as it is read, so the JSON is never held whole.
    ///
    /// # Errors
    /// As [`Engine::load`], and kind `io` when reading fails.
    pub fn load_from(
        &mut self,
        name: &str,
        reader: &mut dyn std::io::Read,
        declared: Option<u64>,
        progress: &mut dyn FnMut(Phase, u64, Option<u64>),
    ) -> Result<TraceSummary, LoadError> {
        let mut loading = self.begin(Target::Current, name, declared)?;
        let mut piece = vec![0u8; PIECE];
        loop {
            match reader.read(&mut piece) {
                Ok(0) => break,
                Ok(n) => loading.push(&piece[..n])?,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(error("io", format!("cannot read {name:?}: {e}"), None)),
            }
            progress(Phase::Parsing, loading.received(), declared);
        }
        drop(piece);
        self.end(loading)
    }

    /// Starts a load of file `name` (`file_bytes` of JSON) read as parts on their own
    /// (`load::cut`, `load::Stream::part`, on any threads), ended by [`Engine::join`]; like
    /// [`Engine::begin`], it drops the current trace first, so its memory is free for the parts.
    ///
    /// # Errors
    /// A `too-big` [`LoadError`] when the size is over the budget.
    pub fn begin_parts(&mut self, name: &str, file_bytes: u64) -> Result<Joining, LoadError> {
        self.budget.check_file(file_bytes, false).map_err(|t| t.to_load_error(name))?;
        self.drop_current(Target::Current);
        Ok(Joining { name: name.to_owned(), file_bytes, inflated: None })
    }

    /// Ends a load started by [`Engine::begin_parts`] with its parts, in file order, as
    /// [`Engine::end`] does; `None` when a part did not end cleanly at its cut: the caller then
    /// loads the file sequentially. `fork` runs the join's independent steps at once.
    ///
    /// # Errors
    /// As [`Engine::end`] when no event was read.
    pub fn join(&mut self, joining: Joining, parts: Vec<impl Into<Arrived>>, fork: &impl Fork) -> Result<Option<TraceSummary>, LoadError> {
        let Joining { name, file_bytes, inflated } = joining;
        if inflated == Some(0) {
            return Err(unreadable_gzip(None));
        }
        let count = parts.len();
        let Some(joined) = load::join(parts, fork) else { return Ok(None) };
        let gzip = inflated.is_some();
        let trace = joined.map_err(|f| failure(&f, gzip))?;
        let sizes = Sizes { file_bytes, json_bytes: inflated.unwrap_or(file_bytes), gzip, gzip_error: None, parts: count };
        self.adopt(Target::Current, name, trace, sizes, fork).map(Some)
    }

    /// First stage of a load split across workers: drops the loaded trace (not the baseline),
    /// decompresses `bytes` and cuts the JSON into parts at event boundaries, as many as
    /// [`load::parts_for`] gives for its size and `cores` (one when `cores` is 1).
    /// The caller parses [`Prepared::plan`]'s parts (`load::parse_piece`, anywhere) and hands
    /// them, in order, to [`Engine::complete`].
    ///
    /// # Errors
    /// A [`LoadError`] when the input is empty, not readable gzip, or not a trace.
    pub fn prepare(
        &mut self,
        name: &str,
        bytes: Vec<u8>,
        cores: usize,
        progress: &mut dyn FnMut(Phase, u64, Option<u64>),
    ) -> Result<Prepared, LoadError> {
        self.prepare_to(Target::Current, name, bytes, cores, progress)
    }

    /// [`Engine::prepare`] for a load that goes to `target`: only a load of the current trace
    /// drops it.
    ///
    /// # Errors
    /// As [`Engine::prepare`].
    pub fn prepare_to(
        &mut self,
        target: Target,
        name: &str,
        bytes: Vec<u8>,
        cores: usize,
        progress: &mut dyn FnMut(Phase, u64, Option<u64>),
    ) -> Result<Prepared, LoadError> {
        self.drop_current(target);
        let file_bytes = bytes.len() as u64;
        if bytes.is_empty() {
            return Err(empty_file());
        }
        let decoded = input::decode(bytes, self.budget.held_whole(), &mut |done| progress(Phase::Decompressing, done, Some(file_bytes)))
            .map_err(|too_big| too_big.to_load_error(name))?;
        if decoded.gzip && decoded.json.is_empty() {
            return Err(unreadable_gzip(decoded.gzip_error));
        }
        let parts = load::parts_for(decoded.json.len(), cores);
        let plan = load::plan(&decoded.json, parts).map_err(|f| failure(&f, decoded.gzip))?;
        Ok(Prepared { target, name: name.to_owned(), file_bytes, json: decoded.json, gzip: decoded.gzip, gzip_error: decoded.gzip_error, plan })
    }

    /// Last stage of a split load: merges `parts` (in plan order), summarizes and indexes.
    ///
    /// # Errors
    /// A [`LoadError`] when no event could be read.
    pub fn complete(&mut self, prepared: Prepared, parts: Vec<Part>) -> Result<TraceSummary, LoadError> {
        let Prepared { target, name, file_bytes, json, gzip, gzip_error, plan } = prepared;
        let json_bytes = json.len() as u64;
        let trace = load::assemble(&json, &plan, parts).map_err(|f| failure(&f, gzip))?;
        drop(json);
        self.adopt(target, name, trace, Sizes { file_bytes, json_bytes, gzip, gzip_error, parts: plan.parts.len() }, &Sequential)
    }

    /// A load of the current trace drops it (and what was computed from it) first, so its
    /// memory is free for the new one; the baseline, the run and the step marker stay.
    fn drop_current(&mut self, target: Target) {
        if target == Target::Current {
            *self = Self {
                baseline: self.baseline.take(),
                run: self.run.take(),
                step_marker: self.step_marker.take(),
                budget: self.budget,
                ..Self::default()
            };
        }
    }

    /// A parsed trace becomes a session at `target`; returns its summary. `fork` builds the
    /// summary beside the timeline index.
    fn adopt(&mut self, target: Target, name: String, mut trace: Trace, sizes: Sizes, fork: &impl Fork) -> Result<TraceSummary, LoadError> {
        if let Some(why) = &sizes.gzip_error {
            trace.diagnostics.report(crate::diag::DiagKind::InputGzipTruncated, Some(sizes.json_bytes), || why.clone());
            trace.truncated = true;
        }
        trace.step_marker.clone_from(&self.step_marker);
        let (mut summary, index) =
            fork.join(|| summarize(&trace, &name, sizes.file_bytes, sizes.json_bytes, sizes.gzip), || Index::build(&trace));
        summary.parse_workers = sizes.parts as u32;
        let session = Arc::new(Session::indexed(name, trace, index));
        match (target, self.run.as_mut()) {
            (Target::Held(index), Some(run)) => {
                run.keep(index, session, summary.clone());
            }
            (Target::Held(_), None) => return Err(error("io", "no run is open".into(), None)),
            (Target::Current, _) => self.current = Some(session),
        }
        Ok(summary)
    }
}

/// A file of 0 bytes.
fn empty_file() -> LoadError {
    error("empty", "the file is empty (0 bytes)".into(), None)
}

/// A gzip that inflated to nothing: `why` is what stopped it, if anything did.
fn unreadable_gzip(why: Option<String>) -> LoadError {
    let why = why.unwrap_or_else(|| "no data".into());
    error("gzip", format!("not a readable gzip file: {why}"), None)
}

/// How big a load was, for its summary.
struct Sizes {
    file_bytes: u64,
    json_bytes: u64,
    gzip: bool,
    gzip_error: Option<String>,
    parts: usize,
}
