//! What the load worker's decisions ask of their transport: the [`Host`] the wasm binary
//! implements with `postMessage`, `fetch`, `FileReader` and nested `Worker`s, and tests with a
//! recorder. Also the handles a load's bytes come from ([`Whole`], [`Source`]) and what parse
//! workers report ([`ParserEvent`]), generic over the host's `File` and buffer types.

use super::inflate::Inflate;
use super::parser::ToParser;
use crate::load::{Piece, Stream};
use protocol::FromWorker;
use std::ops::Range;

/// The transport of the load worker. Every method does one thing a decision asked for; none
/// decides anything. Errors are the browser's words.
pub trait Host {
    /// A picked file (a handle, not its bytes).
    type File: Clone;
    /// Bytes outside the engine's memory (a transferred `ArrayBuffer`).
    type Buffer: Clone;

    /// Milliseconds on the worker's clock.
    fn now_ms(&self) -> f64;
    /// Cores the browser reports.
    fn cores(&self) -> usize;
    /// Size of the worker's memory, bytes, if known.
    fn memory_bytes(&self) -> Option<u64>;
    /// Posts a reply to the page, `words` beside it in a transferred buffer.
    fn post(&self, msg: &FromWorker, words: Option<&[u32]>);
    /// Logs an error no reply carries.
    fn console_error(&self, msg: &str);
    /// The name of `file`.
    fn file_name(file: &Self::File) -> String;
    /// The size of `file`, bytes.
    fn file_size(file: &Self::File) -> u64;
    /// The size of `buffer`, bytes.
    fn buffer_size(buffer: &Self::Buffer) -> u64;
    /// A copy of `buffer`'s bytes.
    fn copy_out(buffer: &Self::Buffer) -> Vec<u8>;
    /// A buffer holding a copy of `bytes`.
    fn buffer_of(bytes: &[u8]) -> Self::Buffer;

    /// Streams `url` into load `id` (`Loader::open`, `arrived`, `finish` or `failed`).
    fn fetch(&mut self, id: u32, url: String, name: String);
    /// Fetches the run manifest at `url` for run load `id` (`Loader::manifest_in`).
    fn fetch_manifest(&mut self, id: u32, workers: Option<u32>, url: String);
    /// Reads `file` into load `id` as one stream.
    fn read(&mut self, id: u32, file: Self::File);
    /// Feeds posted `buffer` into load `id` as one stream.
    fn take(&mut self, id: u32, name: String, buffer: Self::Buffer);
    /// Starts a download worker for load `id`'s body at `url`, which inflates and cuts a gzip
    /// body as `inflate` says (`Loader::inflating`).
    ///
    /// # Errors
    /// When the worker cannot be created.
    fn start_pump(&mut self, id: u32, url: &str, inflate: Option<Inflate>) -> Result<(), String>;
    /// Tells the download worker `bytes` it posted were parsed.
    fn consumed(&mut self, bytes: u64);
    /// Terminates the download worker, if any (its download stops).
    fn stop_pump(&mut self);
    /// Cuts `whole` into ranges ending at event boundaries, part `k` about `shares[k]` of them.
    ///
    /// # Errors
    /// When the input cannot be read.
    fn cut(&self, whole: &Whole<Self::File, Self::Buffer>, shares: &[u32]) -> Result<Vec<(Piece, Range<u64>)>, String>;
    /// Parses `range` of `whole` into `stream` here, as part 0 of load `id`
    /// (`Loader::job_progress`, `Loader::part_here`).
    fn parse_here(&mut self, id: u32, whole: &Whole<Self::File, Self::Buffer>, stream: Stream, range: Range<u64>);

    /// Spawns parse worker `slot`.
    ///
    /// # Errors
    /// When the worker cannot be created.
    fn spawn_parser(&mut self, slot: usize) -> Result<(), String>;
    /// Drops the pool (terminating its workers) for a fresh, empty one.
    fn new_pool(&mut self);
    /// Terminates every parse worker; their events stop.
    fn terminate_parsers(&mut self);
    /// Terminates parse worker `slot`, its part being back.
    fn retire_parser(&mut self, slot: usize);
    /// Parse worker `slot` booted: posts what waited for it.
    ///
    /// # Errors
    /// When posting fails.
    fn parser_ready(&mut self, slot: usize) -> Result<(), String>;
    /// Sends `bytes`, part `index` (`piece`) of load `job`, to parse worker `slot`.
    ///
    /// # Errors
    /// When the copy or the post fails.
    fn send_part(&mut self, slot: usize, job: u32, index: usize, piece: Piece, bytes: &[u8]) -> Result<(), String>;
    /// Sends parse worker `slot` part `index` of load `job`: bytes `piece.start..end` of `whole`,
    /// which it reads itself (or is fed).
    ///
    /// # Errors
    /// When a post fails.
    fn send_range(&mut self, slot: usize, job: u32, index: usize, piece: Piece, end: u64, whole: &Whole<Self::File, Self::Buffer>) -> Result<(), String>;
    /// Sends parse worker `slot` file `index` of run load `job` to load whole and summarize.
    ///
    /// # Errors
    /// When the post fails.
    fn send_rank(&mut self, slot: usize, job: u32, index: usize, source: &Source<Self::File>) -> Result<(), String>;
    /// Posts `msg` to parse worker `slot`, `bytes` beside it (transferred).
    ///
    /// # Errors
    /// When the post fails.
    fn tell_parser(&mut self, slot: usize, msg: &ToParser, bytes: Option<Self::Buffer>) -> Result<(), String>;
    /// Fills `buffer`, given back parsed by parse worker `slot`, with the next bytes of its part
    /// of load `job`.
    ///
    /// # Errors
    /// When the post fails.
    fn refill(&mut self, slot: usize, job: u32, buffer: Self::Buffer) -> Result<(), String>;
}

/// An input read in parts: kept until they are joined, read again as one stream if a part did
/// not end at its cut.
#[derive(Clone, Debug)]
pub enum Whole<F, B> {
    /// A picked file.
    File(F),
    /// A URL whose server answers `Range` (`ranges::ranged_size`): each part's reader fetches
    /// its own bytes.
    Url {
        /// Absolute URL (after redirects).
        url: String,
        /// The trace's name.
        name: String,
        /// Its `Content-Length`.
        size: u64,
    },
    /// Bytes another page posted (`ToWorker::Bytes`).
    Bytes {
        /// The trace's name.
        name: String,
        /// Its bytes.
        buffer: B,
    },
}

/// Where a file of a run comes from.
#[derive(Clone, Debug)]
pub enum Source<F> {
    /// A URL of the run's manifest, resolved, and its file name.
    Url {
        /// Absolute URL.
        url: String,
        /// File name.
        name: String,
    },
    /// A picked file.
    File(F),
}

/// What came beside a message's JSON.
#[derive(Debug)]
pub enum Attached<F, B> {
    /// Nothing.
    None,
    /// A picked file (`Read`).
    File(F),
    /// A transferred buffer (`Bytes`).
    Buffer(B),
    /// Picked files (`ReadRun`).
    Files(Vec<F>),
}

/// What a parse worker reported, as the load worker sees it.
#[derive(Debug)]
pub enum ParserEvent<B> {
    /// Booted; messages can be posted to it.
    Ready,
    /// `done` bytes of part `index` of load `job` parsed.
    Progress {
        /// Load id.
        job: u32,
        /// Part index.
        index: usize,
        /// Bytes of the part parsed.
        done: u64,
    },
    /// Part `index` of load `job`, encoded, after `waited_ms` waiting for its file's bytes.
    Parsed {
        /// Load id.
        job: u32,
        /// Part index.
        index: usize,
        /// The encoded part.
        bytes: Vec<u8>,
        /// Ms waited for bytes.
        waited_ms: f64,
    },
    /// The parse worker could not parse or answer (`message` says why).
    Failed {
        /// Load id.
        job: u32,
        /// Part index.
        index: usize,
        /// Why.
        message: String,
    },
    /// A piece of load `job`'s posted bytes, parsed, given back to refill.
    Spent {
        /// Load id.
        job: u32,
        /// The piece's buffer.
        buffer: B,
    },
    /// File `index` of run load `job`, loaded whole by the parse worker: its run summary.
    Ranked {
        /// The run's load id.
        job: u32,
        /// File index in the run.
        index: usize,
        /// The rank's run summary.
        summary: Box<crate::run::summary::RankSummary>,
    },
    /// The parse worker died (a trap, or its script could not load).
    Crashed(String),
}
