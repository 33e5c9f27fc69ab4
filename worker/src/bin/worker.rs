//! wasm web-worker entry: the message loop between the app and the engine, and the only file that
//! touches web-sys / js-sys. Natively it compiles to an empty `main`.
//!
//! Inputs: `[json, File | ArrayBuffer?]` arrays whose JSON is a [`protocol::ToWorker`]; the
//! `File` comes only with `Read`, the (transferred) `ArrayBuffer` of a trace posted to the page
//! only with `Bytes`. `Fetch` and `Read` make this worker read the bytes itself
//! (`worker/source.rs`).
//! Outputs: `[json, ArrayBuffer?]` arrays holding a [`protocol::FromWorker`]. The first message
//! posted is `Ready { protocol_version }`.
//!
//! `Query { id, .. }` is answered at once with `Answer` or `QueryFailed` (same id) over the loaded
//! trace; tile answers carry their rect words as a transferred `ArrayBuffer`.
//!
//! Invariants: at most one load is being read or parsed; `Fetch` / `Read` replace it (latest
//! wins, the app never interleaves loads), and bytes of a dropped load are refused, which stops
//! its source. Nothing here panics on input: a file over the tab's budget
//! (`kinetoscope::budget`) is refused with its sentence before its bytes are held, allocation
//! failures and malformed messages become `Failed` replies or console errors, and a panic is
//! thrown as a JS error with its message (the page names the worker that died).
//!
//! Cost: one copy per piece, from the fetched or read buffer into the load's `Vec<u8>` (reserved
//! once from the size). `Progress` is posted at most every `intake::PROGRESS_EVERY_MS` so a 1 GB
//! file streamed in 64 KiB chunks does not flood the main thread. The bookkeeping of bytes
//! arriving and of parts coming back (when progress is due, when a load is complete) is
//! `kinetoscope::intake`, natively tested; this file keeps the transports and the clock.
//!
//! Large inputs (see `load::parts_for`) are parsed in parts by nested sub-workers
//! (`worker/pool.rs`, booted after the last load for the next, `Worker::warm`, or spawned when
//! the size of a large file is known): once all bytes are in,
//! this worker decompresses and plans, each part's bytes go to one sub-worker, the encoded parts
//! come back and are merged here in order (`Engine::prepare` / `Engine::complete`). Meanwhile this worker keeps answering messages:
//! `Progress` sums the parts' bytes, `Cancel` or a new load terminates the sub-workers, and a
//! sub-worker that fails, dies, or says nothing for `intake::SILENT_MS` (checked every second)
//! ends the load with a `Failed` reply naming it.
//!
//! A large picked JSON file or posted buffer (two parts or more by `load::parts_for`, one per
//! core or per `?workers=N`, up to `Budget::held_whole`) is cut here from windows of it
//! (`load::cut_by`); each parse worker reads and parses its own range (of a buffer: copies of
//! the range, a piece at a time, transferred) and this worker the first itself; the parts come back
//! encoded and are joined here (`Engine::join`), or, if a part did not end at its cut, the input
//! is read again here as one stream. `?workers=1`, gzip and smaller files stream here.
//!
//! A large URL (`Content-Length` of at least `source::HANDOFF_BYTES`) is downloaded by another
//! nested worker (`worker/pump.rs`) that posts the pieces here, so the download runs while this
//! worker parses instead of stalling between reads.
//!
//! Runs (docs/architecture.md#runs-in-the-browser): `ReadRun` (the `File`s beside the message)
//! or `FetchRun` (a manifest URL, fetched and resolved here) post `RunStarted`, then load each
//! file through the same path as one load with the run's id, posting `RankProgress` instead of
//! `Progress` and `RankLoaded` after each (the engine keeps its summary and a few models,
//! `kinetoscope::ranks`); the last rank loaded ends the run load with `Loaded`. `OpenRank`
//! answers from a kept model or reloads the rank's file as a load of its own; `HoldRanks`
//! reloads the stacked view's ranks without touching the current trace, then `RanksHeld`. Which
//! file loads next and what a finished load means is `kinetoscope::ranks::loads`, natively
//! tested; this file starts the sources and posts the replies.
//!
//! Why not gloo-worker: its bincode codec copies byte buffers several times and cannot transfer
//! them. See docs/architecture.md and docs/contributing.md (no web in the engine, one protocol).

// `src/bin/worker/`, not `src/bin/`, so Cargo does not take it for another binary.
#[cfg(target_arch = "wasm32")]
#[path = "worker/crash.rs"]
mod crash;
#[cfg(target_arch = "wasm32")]
#[path = "worker/pool.rs"]
mod pool;
#[cfg(target_arch = "wasm32")]
#[path = "worker/post.rs"]
mod post;
#[cfg(target_arch = "wasm32")]
#[path = "worker/pump.rs"]
mod pump;
#[cfg(target_arch = "wasm32")]
#[path = "worker/source.rs"]
mod source;

#[cfg(target_arch = "wasm32")]
fn main() {
    wasm::run();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use crate::crash;
    use crate::pool::{self, Pool};
    use crate::pump::{self, Pump};
    use crate::post::{console_error, load_error, now_ms, post, post_with, progress_msg, throttled, wasm_memory_bytes};
    use crate::source::{self, Receiver};
    use kinetoscope::budget::Budget;
    use kinetoscope::engine::{Engine, Joining, Prepared, RankOpen, Target};
    use kinetoscope::ranks::loads::{Next, Purpose, RunLoads};
    use kinetoscope::intake::{Incoming, PartsJob, Streaming, SILENT_MS};
    use kinetoscope::load::{self, Part, StreamedPart};
    use protocol::{FromWorker, LoadError, Phase, ToWorker, PROTOCOL_VERSION};
    use std::cell::RefCell;
    use std::rc::{Rc, Weak};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    /// Where a file of a run comes from.
    #[derive(Clone)]
    enum Source {
        Url { url: String, name: String },
        File(web_sys::File),
    }

    /// Worker-wide state: the engine (keeps the loaded trace), the load being read (its id and
    /// parse worker count) and received, the load being parsed by sub-workers and their pool.
    struct Worker {
        scope: DedicatedWorkerGlobalScope,
        /// This state, for the sources it starts.
        me: Weak<RefCell<Worker>>,
        engine: Engine,
        /// The load whose source is running: its id and `workers` count.
        reading: Option<(u32, Option<u32>)>,
        /// The last load's `workers` count, which [`Worker::warm`] boots parse workers for.
        workers: Option<u32>,
        /// The load whose bytes are parsed as they arrive (the default), and its clock.
        streaming: Option<(Streaming, LoadClock)>,
        /// The load whose bytes are arriving whole, for the parse workers (`?workers=N`, N > 1).
        pending: Option<Incoming>,
        /// The load whose parts the parse workers are parsing.
        job: Option<Job>,
        /// The first part of `job` (of a file or posted bytes), parsed here once every parse
        /// worker has its part: its load id, where it is read from, its stream and its range.
        here: Option<(u32, JsValue, load::Stream, std::ops::Range<u64>)>,
        pool: Pool,
        /// Hands sub-worker events back to this state.
        pool_sink: pool::Sink,
        /// The download worker of the last large URL load, if any.
        pump: Option<Pump>,
        /// The open run's loads, if a run is open.
        run: Option<RunLoads<Source>>,
        /// The summary last posted with `Loaded`, posted again by `SetStepMarker`.
        summary: Option<protocol::TraceSummary>,
    }

    /// Parts out with the parse workers: of a JSON held whole here (`?workers=N` for a URL), or
    /// of a file or posted bytes each parse worker reads its range of (`Worker::read_in_parts`).
    enum Job {
        Held(PartsJob),
        File(PartsJob<(Joining, Whole), load::Arrived>),
    }

    /// An input read in parts, kept until they are joined: read again here as one stream if a
    /// part did not end at its cut.
    #[derive(Clone)]
    enum Whole {
        /// A picked file.
        File(web_sys::File),
        /// Bytes another page posted (`ToWorker::Bytes`), outside wasm memory.
        Bytes { name: String, buffer: js_sys::ArrayBuffer },
    }

    impl Whole {
        fn name(&self) -> String {
            match self {
                Whole::File(file) => file.name(),
                Whole::Bytes { name, .. } => name.clone(),
            }
        }

        fn size(&self) -> u64 {
            match self {
                // `File.size` is an integral byte count; the cast is exact below 2^53.
                Whole::File(file) => file.size() as u64,
                Whole::Bytes { buffer, .. } => u64::from(buffer.byte_length()),
            }
        }

        /// Where this worker reads bytes `start..end` from (`pool::stream_part`): the file, or a
        /// view of those bytes.
        fn view(&self, start: u64, end: u64) -> JsValue {
            match self {
                Whole::File(file) => file.clone().into(),
                // Both below 4 GiB.
                Whole::Bytes { buffer, .. } => js_sys::Uint8Array::new_with_byte_offset_and_length(buffer, start as u32, (end - start) as u32).into(),
            }
        }

        /// What a parse worker reads its part from.
        fn part_from(&self) -> pool::PartFrom {
            match self {
                Whole::File(file) => pool::PartFrom::File(file.clone()),
                Whole::Bytes { buffer, .. } => pool::PartFrom::Bytes(buffer.clone()),
            }
        }

        /// This worker's share of the input against each parse worker's. Of a file, 3 to 2: a
        /// part parsed here is not encoded, posted back nor decoded. Of posted bytes, equal, since
        /// this worker also copies the parse workers' pieces (1 GB posted, timed inside: at 3 to
        /// 2 the parse worker was done 0.3-0.45 s before this one, equal 0.05-0.2 s,
        /// docs/performance.md).
        fn shares(&self) -> (u32, u32) {
            match self {
                Whole::File(_) => (3, 2),
                Whole::Bytes { .. } => (1, 1),
            }
        }

        /// Cuts the input into ranges ending at event boundaries, part `k` about `shares[k]`
        /// of them (`load::cut_by`).
        fn cut(&self, shares: &[u32]) -> Result<Vec<(load::Piece, std::ops::Range<u64>)>, String> {
            let size = self.size();
            match self {
                Whole::File(file) => web_sys::FileReaderSync::new().map_err(|e| source::js_error(&e)).and_then(|reader| {
                    let mut read = |at, into: &mut [u8]| pool::read_at(&reader, file, at, into).map_err(std::io::Error::other);
                    load::cut_by(size, shares, &mut read).map_err(|e| e.to_string())
                }),
                Whole::Bytes { buffer, .. } => {
                    let mut read = |at, into: &mut [u8]| std::io::Read::read(&mut pool::BufferRead::new(js_sys::Uint8Array::new(buffer), at), into);
                    load::cut_by(size, shares, &mut read).map_err(|e| e.to_string())
                }
            }
        }

        /// Reads the whole input into load `id` of `to` as one stream.
        fn stream(self, to: Weak<RefCell<Worker>>, id: u32) {
            match self {
                Whole::File(file) => wasm_bindgen_futures::spawn_local(source::read(to, id, file)),
                Whole::Bytes { name, buffer } => wasm_bindgen_futures::spawn_local(source::take(to, id, name, buffer)),
            }
        }
    }

    impl Job {
        fn id(&self) -> u32 {
            match self {
                Job::Held(j) => j.id,
                Job::File(j) => j.id,
            }
        }

        /// Sub-worker `slot` said something: its part is `slot` held whole, `slot + 1` of a
        /// file or posted bytes (part 0 is parsed here).
        fn heard(&mut self, slot: usize, now_ms: f64) {
            match self {
                Job::Held(j) => j.heard(slot, now_ms),
                Job::File(j) => j.heard(slot + 1, now_ms),
            }
        }

        fn progress(&mut self, index: usize, done: u64, now_ms: f64) -> Option<(u64, u64)> {
            match self {
                Job::Held(j) => j.progress(index, done, now_ms),
                Job::File(j) => j.progress(index, done, now_ms),
            }
        }

        fn silent(&self, now_ms: f64) -> Option<usize> {
            match self {
                Job::Held(j) => j.silent(now_ms),
                Job::File(j) => j.silent(now_ms),
            }
        }
    }

    /// When a streamed load started, and how long it waited for bytes: the bench tells a parse
    /// slower than the download from a download slower than the parse by it.
    struct LoadClock {
        started_ms: f64,
        /// When the worker last finished with a piece and began waiting for the next.
        idle_since_ms: f64,
        waited_ms: f64,
    }

    impl LoadClock {
        fn start(now_ms: f64) -> Self {
            Self { started_ms: now_ms, idle_since_ms: now_ms, waited_ms: 0.0 }
        }

        /// A piece arrived at `now_ms`: the wait since the last one ends.
        fn busy(&mut self, now_ms: f64) {
            self.waited_ms += (now_ms - self.idle_since_ms).max(0.0);
        }

        /// The piece is parsed at `now_ms`: waiting for the next begins.
        fn idle(&mut self, now_ms: f64) {
            self.idle_since_ms = now_ms;
        }
    }

    /// Installs the message handler and posts `Ready`; in a sub-worker, runs its loop instead.
    pub fn run() {
        std::panic::set_hook(Box::new(crash::panic_hook));
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        if scope.name() == pool::PARSER_NAME {
            return pool::serve(scope);
        }
        if scope.name() == pump::NAME {
            return pump::serve(scope);
        }
        let state = Rc::new_cyclic(|me: &Weak<RefCell<Worker>>| {
            let weak = me.clone();
            let pool_sink: pool::Sink = Rc::new(move |slot, event| {
                if let Some(state) = weak.upgrade() {
                    state.borrow_mut().on_pool(slot, event);
                }
            });
            RefCell::new(Worker {
                scope: scope.clone(),
                me: me.clone(),
                engine: Engine::with_budget(Budget::TAB),
                reading: None,
                workers: None,
                streaming: None,
                pending: None,
                job: None,
                here: None,
                pool: Pool::default(),
                pool_sink,
                pump: None,
                run: None,
                summary: None,
            })
        });
        let watched = Rc::downgrade(&state);
        let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
            state.borrow_mut().handle(&ev.data());
        });
        scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        // The handler lives as long as the worker.
        on_message.forget();
        crash::every_second(&scope, move || {
            // Skipped if the state is borrowed (never, unless a trap left it so).
            if let Some(Ok(mut state)) = watched.upgrade().as_deref().map(RefCell::try_borrow_mut) {
                state.check_parsers();
            }
        });
        post(
            &scope,
            &FromWorker::Ready {
                protocol_version: PROTOCOL_VERSION,
            },
        );
    }

    impl Worker {
        /// Decodes one `[json, File?]` message and dispatches it.
        fn handle(&mut self, data: &JsValue) {
            let parts = js_sys::Array::from(data);
            let Some(json) = parts.get(0).as_string() else {
                console_error("worker: message without a JSON string");
                return;
            };
            match serde_json::from_str::<ToWorker>(&json) {
                Ok(ToWorker::Fetch { id, url, name, workers }) => {
                    self.end_run();
                    self.begin(id, workers);
                    wasm_bindgen_futures::spawn_local(source::fetch(self.me.clone(), id, url, name));
                }
                Ok(ToWorker::Read { id, workers }) => match parts.get(1).dyn_into::<web_sys::File>() {
                    Ok(file) => self.read_whole(id, workers, Whole::File(file)),
                    Err(_) => self.fail(id, "protocol", "Read message without a File".into()),
                },
                Ok(ToWorker::Bytes { id, name, workers }) => match parts.get(1).dyn_into::<js_sys::ArrayBuffer>() {
                    Ok(buffer) => self.read_whole(id, workers, Whole::Bytes { name, buffer }),
                    Err(_) => self.fail(id, "protocol", "Bytes message without an ArrayBuffer".into()),
                },
                Ok(ToWorker::FetchRun { id, url, workers }) => {
                    self.end_run();
                    self.begin(id, workers);
                    let me = self.me.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        let text = source::fetch_text(&url).await;
                        if let Some(state) = me.upgrade() {
                            state.borrow_mut().manifest_in(id, workers, &url, text);
                        }
                    });
                }
                Ok(ToWorker::ReadRun { id, workers }) => {
                    let files: Vec<Source> = js_sys::Array::from(&parts.get(1))
                        .iter()
                        .filter_map(|f| f.dyn_into::<web_sys::File>().ok())
                        .map(Source::File)
                        .collect();
                    if files.is_empty() {
                        self.fail(id, "protocol", "ReadRun message without Files".into());
                    } else {
                        self.start_run(id, workers, files);
                    }
                }
                Ok(ToWorker::OpenRank { id, rank, workers }) => self.open_rank(id, rank, workers),
                Ok(ToWorker::HoldRanks { id, ranks, workers }) => self.hold_ranks(id, &ranks, workers),
                Ok(ToWorker::SetStepMarker { id, marker }) => self.mark_steps(id, marker),
                Ok(ToWorker::SetPeaks { id, spec }) => self.set_peaks(id, spec.as_deref()),
                Ok(ToWorker::Cancel { id }) => {
                    if let Some(run) = self.run.as_mut() {
                        run.cancel(id);
                    }
                    if self.reading.is_some_and(|(r, _)| r == id) {
                        self.reading = None;
                    }
                    let receiving = self.pending.as_ref().is_some_and(|p| p.id == id);
                    if receiving || self.job.as_ref().is_some_and(|j| j.id() == id) {
                        self.pending = None;
                        self.stop_parsers();
                    }
                }
                Ok(ToWorker::Query { id, query }) => match self.engine.query(&query) {
                    Ok((answer, words)) => {
                        let reply = FromWorker::Answer {
                            id,
                            answer: Box::new(answer),
                        };
                        post_with(&self.scope, &reply, words.as_deref());
                    }
                    Err(message) => post(&self.scope, &FromWorker::QueryFailed { id, message }),
                },
                Err(e) => console_error(&format!("worker: bad message {e}: {json:?}")),
            }
        }

        /// Forgets the open run (a single trace is loaded next).
        fn end_run(&mut self) {
            self.run = None;
            self.engine.end_run();
        }

        /// The manifest of run load `id` (fetched from `url`) arrived: starts the run.
        fn manifest_in(&mut self, id: u32, workers: Option<u32>, url: &str, text: Result<String, String>) {
            if self.reading.is_none_or(|(r, _)| r != id) {
                return;
            }
            let sources = text.and_then(|t| kinetoscope::ranks::manifest(&t)).and_then(|entries| {
                entries
                    .iter()
                    .map(|e| source::resolve(&e.url, url).map(|(url, name)| Source::Url { url, name }))
                    .collect::<Result<Vec<_>, _>>()
            });
            match sources {
                Ok(sources) => self.start_run(id, workers, sources),
                Err(message) => self.fail(id, "io", message),
            }
        }

        /// Starts run load `id` of `sources`: the first file now, the next when one is in.
        fn start_run(&mut self, id: u32, workers: Option<u32>, sources: Vec<Source>) {
            let names: Vec<String> = sources
                .iter()
                .map(|s| match s {
                    Source::Url { name, .. } => name.clone(),
                    Source::File(f) => f.name(),
                })
                .collect();
            post(&self.scope, &FromWorker::RunStarted { id, names: names.clone() });
            self.engine.begin_run(names);
            let mut run = RunLoads::new(id, workers, sources);
            let next = run.start();
            self.run = Some(run);
            self.follow(next);
        }

        /// Does what the run's loads say comes next.
        fn follow(&mut self, next: Next<Source>) {
            match next {
                Next::Load(job, source) => {
                    let workers = self.run.as_ref().and_then(|r| r.workers);
                    self.begin(job.id, workers);
                    self.spawn_source(job.id, source);
                }
                Next::RunLoaded => {
                    let Some(id) = self.run.as_ref().map(|r| r.id) else { return };
                    match self.engine.finish_run() {
                        Some(summary) => self.post_loaded(id, summary),
                        None => {
                            let error = load_error("io", "no file of the run could be loaded".into());
                            post(&self.scope, &FromWorker::Failed { id, error });
                        }
                    }
                }
                Next::Held { id, failed } => self.post_held(id, failed),
                Next::HeldThenLoad { id, failed, job, source } => {
                    self.post_held(id, failed);
                    self.follow(Next::Load(job, source));
                }
                Next::Idle => {}
            }
        }

        fn post_held(&self, id: u32, failed: Vec<(u32, String)>) {
            let held = self.engine.run().map(|r| r.held()).unwrap_or_default();
            post(&self.scope, &FromWorker::RanksHeld { id, held, failed });
        }

        fn spawn_source(&self, id: u32, source: Source) {
            match source {
                Source::Url { url, name } => wasm_bindgen_futures::spawn_local(source::fetch(self.me.clone(), id, url, name)),
                Source::File(file) => wasm_bindgen_futures::spawn_local(source::read(self.me.clone(), id, file)),
            }
        }

        /// `OpenRank`: the kept model at once, else a reload of the rank's file as load `id`.
        fn open_rank(&mut self, id: u32, rank: u32, workers: Option<u32>) {
            let Some(run) = self.run.as_mut() else {
                return self.fail(id, "io", "no run is open".into());
            };
            if run.loading() {
                return self.fail(id, "io", "the run is still loading".into());
            }
            run.workers = workers.or(run.workers);
            match self.engine.open_rank(rank) {
                RankOpen::Ready(summary) => {
                    self.begin(id, workers);
                    self.reading = None;
                    self.post_loaded(id, *summary);
                }
                RankOpen::Reload(index) => {
                    let next = self.run.as_mut().map_or(Next::Idle, |run| run.reopen(id, index));
                    self.follow(next);
                }
                RankOpen::Unknown => self.fail(id, "io", format!("rank {rank} is not in the run")),
            }
        }

        /// `HoldRanks`: pins the ranks' models, reloading the dropped ones one after another.
        fn hold_ranks(&mut self, id: u32, ranks: &[u32], workers: Option<u32>) {
            let refuse = |why: &str| ranks.iter().map(|&r| (r, why.to_owned())).collect();
            let Some(run) = self.run.as_mut() else {
                return self.post_held(id, refuse("no run is open"));
            };
            if run.loading() {
                return self.post_held(id, refuse("the run is still loading"));
            }
            run.workers = workers.or(run.workers);
            let hold = self.engine.hold_ranks(ranks);
            let next = self.run.as_mut().map_or(Next::Idle, |run| run.hold(id, hold.reload, hold.refused));
            self.follow(next);
        }

        /// The run's load `id` if it is one, with the file index progress reports name (not
        /// for a reopened rank, which loads as a trace of its own).
        fn rank_of(&self, id: u32) -> Option<u32> {
            let job = self.run.as_ref()?.job(id)?;
            (job.purpose != Purpose::Reopen).then_some(job.index as u32)
        }

        /// Starts load `id` (its source follows), dropping the one being read or parsed.
        fn begin(&mut self, id: u32, workers: Option<u32>) {
            self.reading = Some((id, workers));
            self.workers = workers;
            self.streaming = None;
            self.pending = None;
            self.stop_parsers();
        }

        /// Sends each part of `prepared` to a sub-worker; `on_pool` assembles what comes back.
        fn start_job(&mut self, id: u32, prepared: Prepared, started_ms: f64) {
            let n = prepared.plan.parts.len();
            let mut sent = self.pool_for(n);
            for index in 0..n {
                let Some((piece, range)) = prepared.plan.piece(index) else { continue };
                sent = sent.and_then(|()| self.pool.parse(id, index, piece, &prepared.json[range]));
            }
            if let Err(e) = sent {
                self.stop_parsers();
                return self.fail(id, "worker", format!("cannot start the parse workers: {e}"));
            }
            let json_bytes = prepared.json.len() as u64;
            self.progress(id, Phase::Parsing, 0, Some(json_bytes));
            self.job = Some(Job::Held(PartsJob::new(id, prepared, started_ms)));
        }

        /// One sub-worker event: boot, progress, a part back, or a failure that ends the load.
        fn on_pool(&mut self, slot: usize, event: pool::Event) {
            let current = self.job.as_ref().map(Job::id);
            match event {
                pool::Event::Ready => {
                    let now = now_ms(&self.scope);
                    if let Some(job) = self.job.as_mut() {
                        job.heard(slot, now);
                    }
                    if let Err(e) = self.pool.ready(slot) {
                        return self.job_failed(format!("parse worker {slot} could not be sent its part: {e}"));
                    }
                    if self.pool.all_ready() {
                        self.start_here();
                    }
                }
                pool::Event::Progress { job, index, done } if Some(job) == current => self.job_progress(index, done),
                pool::Event::Parsed { job, index, bytes, waited_ms } if Some(job) == current => {
                    self.pool.retire(slot);
                    self.job_part(index, bytes, waited_ms);
                }
                pool::Event::Failed { job, index, message } if Some(job) == current => {
                    self.job_failed(format!("parse worker {index} failed: {message}"));
                }
                pool::Event::Spent { job, buffer } if Some(job) == current => {
                    if let Err(e) = self.pool.refill(slot, job, buffer) {
                        self.job_failed(format!("parse worker {slot} could not be sent its next bytes: {e}"));
                    }
                }
                pool::Event::Crashed(message) if current.is_some() => {
                    self.job_failed(format!("parse worker {slot} stopped: {message}"));
                }
                // Died while booting, before its part: the job would wait for it forever, so
                // the pool goes and the job spawns a fresh one.
                pool::Event::Crashed(message) => {
                    console_error(&format!("worker: parse worker {slot} stopped before its part: {message}"));
                    self.pool.terminate();
                }
                _ => {}
            }
        }

        /// Ends the load if one of its parse workers has been silent too long.
        fn check_parsers(&mut self) {
            let now = now_ms(&self.scope);
            if let Some(index) = self.job.as_ref().and_then(|j| j.silent(now)) {
                let secs = SILENT_MS / 1000.0;
                self.job_failed(format!("parse worker {index} stopped answering: nothing from it for {secs} s"));
            }
        }

        fn job_progress(&mut self, index: usize, done: u64) {
            let now = now_ms(&self.scope);
            let Some(job) = self.job.as_mut() else { return };
            if let Some((sum, total)) = job.progress(index, done, now) {
                let id = job.id();
                self.progress(id, Phase::Parsing, sum, Some(total));
            }
        }

        /// Part `index` came back encoded, its worker having waited `waited_ms` for bytes; the
        /// last one completes the load.
        fn job_part(&mut self, index: usize, bytes: Vec<u8>, waited_ms: f64) {
            let Some(job) = self.job.as_mut() else { return };
            let complete = match job {
                Job::Held(job) => Part::decode(&bytes).map(|part| job.part(index, part)),
                Job::File(job) => {
                    job.waited(waited_ms);
                    StreamedPart::decode_later(bytes).map(|part| job.part(index, part))
                }
            };
            match complete {
                Ok(true) => self.complete_job(),
                Ok(false) => {}
                Err(e) => self.job_failed(format!("parse worker {index} sent an unreadable part: {e}")),
            }
        }

        /// Parses the first part of the job here, now that every parse worker has its own.
        fn start_here(&mut self) {
            let Some((id, from, stream, range)) = self.here.take() else { return };
            let me = self.me.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let current = |me: &Weak<RefCell<Worker>>| source::with(me, |w| w.job.as_ref().is_some_and(|j| j.id() == id));
                let mut progress = |done| source::with(&me, |w| w.job_progress(0, done));
                let read = pool::stream_part(&from, stream, range, &mut progress, &mut || current(&me)).await;
                source::with(&me, |w| w.part_here(id, read));
            });
        }

        /// The first part of load `id`, parsed here (`None`: the load was dropped meanwhile).
        fn part_here(&mut self, id: u32, read: Result<Option<(StreamedPart, f64)>, String>) {
            let Some(Job::File(job)) = self.job.as_mut().filter(|j| j.id() == id) else { return };
            match read {
                Ok(Some((part, waited_ms))) => {
                    job.waited(waited_ms);
                    if job.part(0, part.into()) {
                        self.complete_job();
                    }
                }
                Ok(None) => {}
                Err(e) => self.job_failed(format!("reading the first part failed: {e}")),
            }
        }

        /// Every part of the job is in: joins them and ends the load.
        fn complete_job(&mut self) {
            let Some(job) = self.job.take() else { return };
            self.pool.terminate();
            match job {
                Job::Held(job) => {
                    let (id, started_ms) = (job.id, job.started_ms);
                    let (prepared, parts) = job.into_parts();
                    let reply = self.engine.complete(prepared, parts);
                    self.loaded(id, reply, started_ms);
                }
                Job::File(job) => {
                    let (id, started_ms, waited_ms) = (job.id, job.started_ms, job.waited_ms());
                    let ((joining, whole), parts) = job.into_parts();
                    let last_part = now_ms(&self.scope);
                    let reply = match self.engine.join(joining, parts, &kinetoscope::fork::Sequential) {
                        Ok(Some(mut summary)) => {
                            summary.read_wait_ms = waited_ms;
                            summary.finish_ms = now_ms(&self.scope) - last_part;
                            Ok(summary)
                        }
                        // A part did not end at its cut: the input is read again, here, as a stream.
                        Ok(None) => {
                            self.begin(id, Some(1));
                            return whole.stream(self.me.clone(), id);
                        }
                        Err(error) => Err(error),
                    };
                    self.loaded(id, reply, started_ms);
                }
            }
        }

        /// Starts load `id` of a picked file or posted bytes: in parts if large, else
        /// streamed here.
        fn read_whole(&mut self, id: u32, workers: Option<u32>, whole: Whole) {
            self.end_run();
            self.begin(id, workers);
            if !self.read_in_parts(id, workers, &whole) {
                whole.stream(self.me.clone(), id);
            }
        }

        /// Reads a large JSON input in parts (`load::cut_by`, one part per core or per
        /// `?workers=N`): the first parsed here, each other by a parse worker that reads its own
        /// range of the file (or is sent its range of posted bytes), so only the first part's
        /// bytes pass through this worker's memory; false when it is read here as a stream
        /// (small, gzip, not a trace's head, `?workers=1`, or larger than `Budget::held_whole`,
        /// past which the parts and their join were not measured).
        fn read_in_parts(&mut self, id: u32, workers: Option<u32>, whole: &Whole) -> bool {
            let started = now_ms(&self.scope);
            let size = whole.size();
            let cores = workers.map_or_else(|| self.scope.navigator().hardware_concurrency() as usize, |w| w as usize);
            let parts = load::parts_for(usize::try_from(size).unwrap_or(usize::MAX), cores);
            if parts < 2 || self.engine.budget().held_whole().check_file(size, false).is_err() {
                return false;
            }
            let joining = match self.engine.begin_parts(&whole.name(), size) {
                Ok(joining) => joining,
                Err(error) => {
                    self.reading = None;
                    self.loaded(id, Err(error), 0.0);
                    return true;
                }
            };
            let (here, sent) = whole.shares();
            let shares: Vec<u32> = (0..parts).map(|k| if k == 0 { here } else { sent }).collect();
            let cuts = match whole.cut(&shares) {
                Ok(cuts) if cuts.len() > 1 => cuts,
                Ok(_) => return false,
                Err(e) => {
                    self.reading = None;
                    self.fail(id, "io", e);
                    return true;
                }
            };
            self.reading = None;
            let mut sent = self.pool_for(cuts.len() - 1);
            for (index, (piece, range)) in cuts.iter().enumerate().skip(1) {
                sent = sent.and_then(|()| self.pool.read_part(index - 1, id, index, *piece, range.end, whole.part_from()));
            }
            if let Some((piece, range)) = cuts.first() {
                // The other parts are joined into this one's model: its columns are sized for all.
                let stream = load::Stream::part(*piece).expecting(size);
                self.here = Some((id, whole.view(piece.start, range.end), stream, piece.start..range.end));
            }
            if let Err(e) = sent {
                self.stop_parsers();
                self.fail(id, "worker", format!("cannot start the parse workers: {e}"));
                return true;
            }
            self.progress(id, Phase::Parsing, 0, Some(size));
            self.job = Some(Job::File(PartsJob::of(id, (joining, whole.clone()), cuts.len(), size, started)));
            // Parse workers booted before the load (`warm`) have their part already.
            if self.pool.all_ready() {
                self.start_here();
            }
            true
        }

        fn job_failed(&mut self, message: String) {
            let Some(id) = self.job.as_ref().map(Job::id) else { return };
            // Also drops a first part not yet started here.
            self.stop_parsers();
            self.fail(id, "worker", message);
        }

        /// Drops the load being parsed by sub-workers, if any, and terminates them; idle ones
        /// stay for the next load.
        fn stop_parsers(&mut self) {
            self.job = None;
            self.here = None;
            if !self.pool.is_idle() {
                self.pool.terminate();
            }
        }

        /// Makes the pool one of `n` parse workers for a load: the idle one (booted for this
        /// load or ahead of it by [`Worker::warm`]), grown, or a fresh one.
        fn pool_for(&mut self, n: usize) -> Result<(), String> {
            if !self.pool.is_idle() {
                self.pool = Pool::default();
            }
            self.pool.grow(n, &self.pool_sink)
        }

        /// Once a load's parse workers are gone, boots one per other core (or per the load's
        /// `?workers=N` but one) for the next load, so a large file picked or posted next is
        /// parsed at once where booting them took 0.1-0.15 s. An idle one holds only a fresh
        /// instance's memory.
        fn warm(&mut self) {
            let gone = self.pool.is_terminated() || (self.pool.is_idle() && self.pool.is_empty());
            if !gone {
                return;
            }
            let cores = self.workers.map_or_else(|| self.scope.navigator().hardware_concurrency() as usize, |w| w as usize);
            let n = cores.min(load::MAX_PARTS).saturating_sub(1);
            if n > 0 {
                self.pool = Pool::default();
                if let Err(e) = self.pool.grow(n, &self.pool_sink) {
                    console_error(&format!("worker: cannot start parse workers: {e}"));
                }
            }
        }

        /// Load `id` ended: a run's file is kept (or noted as failed) and the run's next load
        /// starts; a rank reloaded for `OpenRank` is kept again; otherwise `Loaded` or `Failed`.
        fn loaded(&mut self, id: u32, reply: Result<protocol::TraceSummary, LoadError>, started_ms: f64) {
            let reply = reply.map(|mut summary| {
                summary.parse_ms = now_ms(&self.scope) - started_ms;
                summary
            });
            self.warm();
            let Some(job) = self.run.as_ref().and_then(|r| r.job(id)) else {
                return match reply {
                    Ok(summary) => self.post_loaded(id, summary),
                    Err(error) => post(&self.scope, &FromWorker::Failed { id, error }),
                };
            };
            let error = reply.as_ref().err().map(|e| e.message.clone());
            match (job.purpose, reply) {
                (Purpose::Run, reply) => {
                    let info = match reply {
                        Ok(summary) => self.engine.keep_rank(job.index, summary),
                        Err(error) => self.engine.rank_failed(job.index, error.message),
                    };
                    let total = self.run.as_ref().map_or(0, |r| r.sources().len() as u32);
                    if let Some(mut info) = info {
                        info.memory_bytes = wasm_memory_bytes();
                        post(&self.scope, &FromWorker::RankLoaded { id, total, info });
                    }
                }
                (Purpose::Reopen, Ok(summary)) => {
                    self.engine.keep_rank(job.index, summary.clone());
                    self.post_loaded(id, summary);
                }
                (Purpose::Reopen, Err(error)) => post(&self.scope, &FromWorker::Failed { id, error }),
                // The engine kept a held rank's model as it completed the load (`Target::Held`).
                (Purpose::Hold, _) => {}
            }
            let next = self.run.as_mut().and_then(|r| r.ended(id, error)).unwrap_or(Next::Idle);
            self.follow(next);
        }

        /// Posts `Loaded` for the current trace, with its layout (tiles warmed first).
        fn post_loaded(&mut self, id: u32, summary: protocol::TraceSummary) {
            let layout = self.engine.layout().unwrap_or_default();
            self.engine.warm_tiles();
            let steps = self.engine.step_marking();
            let msg = FromWorker::Loaded { id, summary: Box::new(summary.clone()), layout: Box::new(layout), steps };
            self.summary = Some(summary);
            post(&self.scope, &msg);
        }

        /// `SetStepMarker`: re-marks the loaded trace's steps and posts `Loaded` again.
        fn mark_steps(&mut self, id: u32, marker: Option<String>) {
            let summary = self.summary.clone().filter(|_| self.engine.session().is_some());
            match (summary, self.engine.mark_steps(marker)) {
                (Some(summary), Ok(())) => self.post_loaded(id, summary),
                _ => post(&self.scope, &FromWorker::Failed { id, error: load_error("io", "no trace is loaded".into()) }),
            }
        }

        /// `SetPeaks`: measures the loaded trace against the given peaks and posts `Loaded`
        /// again (`Failed` with the reason when the spec does not parse).
        fn set_peaks(&mut self, id: u32, spec: Option<&str>) {
            let summary = self.summary.clone().filter(|_| self.engine.session().is_some());
            match (summary, self.engine.set_peaks(spec)) {
                (Some(summary), Ok(())) => self.post_loaded(id, summary),
                (None, _) => post(&self.scope, &FromWorker::Failed { id, error: load_error("io", "no trace is loaded".into()) }),
                (Some(_), Err(why)) => post(&self.scope, &FromWorker::Failed { id, error: load_error("peaks", why) }),
            }
        }

        /// Starts load `id` parsed as its bytes arrive; false (the load answered) if refused.
        fn open_streaming(&mut self, id: u32, name: &str, size: Option<u64>) -> bool {
            let target = self.target_of(id);
            match Streaming::open(&mut self.engine, target, id, name, size) {
                Ok(streaming) => self.streaming = Some((streaming, LoadClock::start(now_ms(&self.scope)))),
                Err(error) => {
                    self.reading = None;
                    self.loaded(id, Err(error), 0.0);
                    return false;
                }
            }
            self.progress(id, Phase::Reading, 0, size);
            true
        }

        /// Where load `id` goes: a held rank of the open run, or the current trace.
        fn target_of(&self, id: u32) -> Target {
            match self.run.as_ref().and_then(|r| r.job(id)) {
                Some(job) if job.purpose == Purpose::Hold => Target::Held(job.index),
                _ => Target::Current,
            }
        }

        fn progress(&self, id: u32, phase: Phase, done_bytes: u64, total_bytes: Option<u64>) {
            post(&self.scope, &progress_msg(id, self.rank_of(id), phase, done_bytes, total_bytes));
        }

        fn fail(&mut self, id: u32, kind: &str, message: String) {
            self.loaded(id, Err(load_error(kind, message)), 0.0);
        }
    }

    /// The sources started by `Fetch` / `Read` feed the load through these.
    impl Receiver for Worker {
        fn open(&mut self, id: u32, name: &str, size: Option<u64>) -> bool {
            let Some((_, workers)) = self.reading.filter(|&(r, _)| r == id) else {
                return false;
            };
            // Parsed as the bytes arrive, here, unless the page's `?workers=N` asks for N > 1
            // parse workers (the JSON is then held whole and split; the e2e tests compare both).
            let Some(cores) = workers.map(|w| w as usize).filter(|&w| w > 1) else {
                return self.open_streaming(id, name, size);
            };
            // The size is checked (and the bytes reserved) before any parse worker starts.
            match Incoming::open(id, name, size, cores, self.engine.budget().held_whole()) {
                Ok(incoming) => self.pending = Some(incoming),
                Err(too_big) => {
                    self.reading = None;
                    self.loaded(id, Err(too_big.to_load_error(name)), 0.0);
                    return false;
                }
            }
            // Start the sub-workers now, so they boot while the bytes arrive.
            let parts = size.map_or(1, |s| load::parts_for(usize::try_from(s).unwrap_or(usize::MAX), cores));
            if parts > 1 {
                if let Err(e) = self.pool_for(parts) {
                    console_error(&format!("worker: cannot start parse workers: {e}"));
                }
            }
            self.progress(id, Phase::Reading, 0, size);
            true
        }

        fn handoff(&mut self, id: u32, url: &str) -> bool {
            // Only a load parsed as it arrives stalls its download; one held whole for parse
            // workers (`?workers=N`) only copies the bytes.
            if self.streaming.as_ref().is_none_or(|(s, _)| s.id != id) {
                return false;
            }
            match Pump::start(self.me.clone(), id, url) {
                Ok(pump) => {
                    self.pump = Some(pump);
                    true
                }
                Err(e) => {
                    console_error(&format!("worker: cannot start the download worker, reading here: {e}"));
                    false
                }
            }
        }

        fn bytes(&mut self, id: u32, view: &js_sys::Uint8Array) -> bool {
            let now = now_ms(&self.scope);
            if let Some((streaming, clock)) = self.streaming.as_mut().filter(|(s, _)| s.id == id) {
                clock.busy(now);
                let appended = streaming.append(view.length() as usize, now, |into| view.copy_to(into));
                clock.idle(now_ms(&self.scope));
                match appended {
                    Ok(Some((done, total))) => self.progress(id, Phase::Reading, done, total),
                    Ok(None) => {}
                    Err(error) => {
                        self.streaming = None;
                        self.reading = None;
                        self.loaded(id, Err(error), 0.0);
                        return false;
                    }
                }
                return true;
            }
            let Some(pending) = self.pending.as_mut().filter(|p| p.id == id) else {
                return false;
            };
            match pending.append(view.length() as usize, now, |into| view.copy_to(into)) {
                Ok(Some((done, total))) => self.progress(id, Phase::Reading, done, total),
                Ok(None) => {}
                Err(too_big) => {
                    let name = self.pending.take().map(|p| p.name).unwrap_or_default();
                    self.reading = None;
                    self.stop_parsers();
                    self.loaded(id, Err(too_big.to_load_error(&name)), 0.0);
                    return false;
                }
            }
            true
        }

        fn finish(&mut self, id: u32) {
            if let Some((streaming, mut clock)) = self.streaming.take_if(|(s, _)| s.id == id) {
                self.reading = None;
                let last_byte = now_ms(&self.scope);
                clock.busy(last_byte);
                let reply = streaming.finish(&mut self.engine).map(|mut summary| {
                    summary.read_wait_ms = clock.waited_ms;
                    summary.finish_ms = now_ms(&self.scope) - last_byte;
                    summary
                });
                return self.loaded(id, reply, clock.started_ms);
            }
            let Some(incoming) = self.pending.take_if(|p| p.id == id) else {
                return;
            };
            let cores = incoming.cores;
            let (name, bytes) = incoming.into_bytes();
            self.reading = None;
            let total = bytes.len() as u64;
            self.progress(id, Phase::Reading, total, Some(total));
            let scope = self.scope.clone();
            let started = now_ms(&scope);
            let mut report = throttled(scope.clone(), id, self.rank_of(id));
            // One part per parse worker for a large JSON (its size is known after decompression).
            let target = self.target_of(id);
            let prepared = match self.engine.prepare_to(target, &name, bytes, cores, &mut report) {
                Ok(p) => p,
                Err(error) => return self.loaded(id, Err(error), started),
            };
            if prepared.plan.parts.len() > 1 {
                return self.start_job(id, prepared, started);
            }
            self.stop_parsers();
            let json_bytes = prepared.json.len() as u64;
            let part = load::parse_part(&prepared.json, &prepared.plan, 0, &mut |done| report(Phase::Parsing, done, Some(json_bytes)));
            let reply = self.engine.complete(prepared, vec![part]);
            self.loaded(id, reply, started);
        }

        fn failed(&mut self, id: u32, message: String) {
            if self.reading.is_some_and(|(r, _)| r == id) {
                self.reading = None;
                self.streaming = None;
                self.pending = None;
                self.fail(id, "io", message);
            }
        }
    }
}
