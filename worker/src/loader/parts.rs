//! Large inputs parsed in parts by parse workers: planning the parts, assigning them to the
//! pool's workers, collecting the encoded parts in order, joining them (or reading the input
//! again as one stream when a part did not end at its cut), and ending the load with a message
//! naming the parse worker that failed, died or went silent (`intake::SILENT_MS`).
//!
//! Pool lifetime: a pool serves one load and is terminated when that load ends (a wasm
//! instance's memory never shrinks). The next pool is booted right after (`warm`), idle until a
//! large load takes it as it is; if none is idle, one is spawned for the load.

use super::job::Job;
use super::{Host, Loader, ParserEvent, Whole};
use crate::engine::{Joining, Prepared};
use crate::intake::{PartsJob, SILENT_MS};
use crate::load::{self, Arrived, Part, StreamedPart};
use protocol::{LoadError, Phase, TraceSummary};

/// The pool's state as decisions see it; the workers themselves are the host's.
#[derive(Debug, Default)]
pub(super) struct Roster {
    /// Per parse worker: booted and posted what waited for it.
    ready: Vec<bool>,
    /// A part (or a run's file) was sent: the pool is a load's, and goes with it.
    pub(super) used: bool,
    /// Terminated: it cannot parse any more.
    ended: bool,
}

impl Roster {
    /// True while no part was sent and the workers (if any) are up or booting: a load may take
    /// the pool as it is.
    fn is_idle(&self) -> bool {
        !self.used && !self.ended
    }

    fn all_ready(&self) -> bool {
        self.ready.iter().all(|&r| r)
    }
}

impl<H: Host> Loader<H> {
    /// Sends each part of `prepared` to a parse worker; `parser` assembles what comes back.
    pub(super) fn start_job(&mut self, id: u32, prepared: Prepared, started_ms: f64) {
        let n = prepared.plan.parts.len();
        let mut sent = self.pool_for(n);
        for index in 0..n {
            let Some((piece, range)) = prepared.plan.piece(index) else { continue };
            self.pool.used = true;
            sent = sent.and_then(|()| self.host.send_part(index, id, index, piece, &prepared.json[range]));
        }
        if let Err(e) = sent {
            self.stop_parsers();
            return self.fail(id, "worker", format!("cannot start the parse workers: {e}"));
        }
        let json_bytes = prepared.json.len() as u64;
        self.progress(id, Phase::Parsing, 0, Some(json_bytes));
        self.job = Some(Job::Held(PartsJob::new(id, prepared, started_ms)));
    }

    /// One event of parse worker `slot`: boot, progress, a part back, or a failure that ends
    /// the load.
    pub fn parser(&mut self, slot: usize, event: ParserEvent<H::Buffer>) {
        let Some(event) = self.side_event(slot, event) else { return };
        let current = self.job.as_ref().map(Job::id);
        match event {
            ParserEvent::Ready => {
                let now = self.host.now_ms();
                if let Some(job) = self.job.as_mut() {
                    job.heard(slot, now, false);
                }
                if let Some(ready) = self.pool.ready.get_mut(slot) {
                    *ready = true;
                }
                if let Err(e) = self.host.parser_ready(slot) {
                    return self.job_failed(format!("parse worker {slot} could not be sent its part: {e}"));
                }
                if self.pool.all_ready() {
                    self.start_here();
                }
            }
            ParserEvent::Progress { job, index, done } if Some(job) == current => self.job_progress(index, done),
            ParserEvent::Parsed { job, index, bytes, waited_ms } if Some(job) == current => {
                let now = self.host.now_ms();
                match self.job.as_mut() {
                    // The parse worker has further parts of the gzip to parse.
                    Some(cut @ Job::Cut(_)) => cut.heard(slot, now, true),
                    _ => self.host.retire_parser(slot),
                }
                self.job_part(index, bytes, waited_ms);
            }
            ParserEvent::Failed { job, index, message } if Some(job) == current => {
                self.job_failed(format!("parse worker {index} failed: {message}"));
            }
            ParserEvent::Spent { job, buffer } if Some(job) == current && matches!(self.job, Some(Job::Cut(_))) => {
                let now = self.host.now_ms();
                if let Some(cut) = self.job.as_mut() {
                    cut.heard(slot, now, true);
                }
                // Parsed: the download may go on.
                self.host.consumed(H::buffer_size(&buffer));
            }
            ParserEvent::Spent { job, buffer } if Some(job) == current => {
                if let Err(e) = self.host.refill(slot, job, buffer) {
                    self.job_failed(format!("parse worker {slot} could not be sent its next bytes: {e}"));
                }
            }
            ParserEvent::Crashed(message) if current.is_some() => {
                self.job_failed(format!("parse worker {slot} stopped: {message}"));
            }
            // Died while booting, before its part: the job would wait for it forever, so the
            // pool goes and the job spawns a fresh one.
            ParserEvent::Crashed(message) => {
                self.host.console_error(&format!("worker: parse worker {slot} stopped before its part: {message}"));
                self.terminate_pool();
            }
            _ => {}
        }
    }

    /// The clock ticked (every second): ends the load if one of its parse workers has been
    /// silent too long, or fails the run's file of a parse worker silent that long.
    pub fn tick(&mut self) {
        self.tick_sides();
        let now = self.host.now_ms();
        if let Some(index) = self.job.as_ref().and_then(|j| j.silent(now)) {
            let secs = SILENT_MS / 1000.0;
            self.job_failed(format!("parse worker {index} stopped answering: nothing from it for {secs} s"));
        }
    }

    /// Part `index` of the current job has parsed `done` bytes.
    pub fn job_progress(&mut self, index: usize, done: u64) {
        let now = self.host.now_ms();
        let Some(job) = self.job.as_mut() else { return };
        if let Some((sum, total)) = job.progress(index, done, now) {
            let id = job.id();
            self.progress(id, Phase::Parsing, sum, Some(total));
        }
    }

    /// True while load `id` is being parsed in parts (the part parsed here goes on).
    pub fn parsing(&self, id: u32) -> bool {
        self.job.as_ref().is_some_and(|j| j.id() == id)
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
            Job::Cut(job) => StreamedPart::decode_later(bytes).map(|part| job.part(index, part)),
        };
        match complete {
            Ok(true) => self.complete_job(),
            Ok(false) => {}
            Err(e) => self.job_failed(format!("parse worker {index} sent an unreadable part: {e}")),
        }
    }

    /// Parses the first part of the job here, now that every parse worker has its own.
    fn start_here(&mut self) {
        if let Some((id, whole, stream, range)) = self.here.take() {
            self.host.parse_here(id, &whole, stream, range);
        }
    }

    /// The first part of load `id`, parsed here (`None`: the load was dropped meanwhile), and
    /// the ms waited for its bytes.
    pub fn part_here(&mut self, id: u32, read: Result<Option<(StreamedPart, f64)>, String>) {
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
    pub(super) fn complete_job(&mut self) {
        let Some(job) = self.job.take() else { return };
        self.terminate_pool();
        match job {
            Job::Cut(cutting) => self.join_cut(cutting),
            Job::Held(job) => {
                let (id, started_ms) = (job.id, job.started_ms);
                let (prepared, parts) = job.into_parts();
                let reply = self.engine.complete(prepared, parts);
                self.loaded(id, reply, started_ms);
            }
            Job::File(job) => {
                let (id, started_ms, waited_ms) = (job.id, job.started_ms, job.waited_ms());
                let ((joining, whole), parts) = job.into_parts();
                self.join_parts((id, started_ms), joining, parts, whole, |summary| summary.read_wait_ms = waited_ms);
            }
        }
    }

    /// Joins the parts of load `id` (parsed from `started_ms`) into the current trace, `finish`
    /// adding to the summary how they were read; a part that did not end at its cut reads
    /// `whole` again, here, as one stream.
    pub(super) fn join_parts(
        &mut self,
        (id, started_ms): (u32, f64),
        joining: Joining,
        parts: Vec<Arrived>,
        whole: Whole<H::File, H::Buffer>,
        finish: impl FnOnce(&mut TraceSummary),
    ) {
        let last_part = self.host.now_ms();
        let reply: Result<TraceSummary, LoadError> = match self.engine.join(joining, parts, &crate::fork::Sequential) {
            Ok(Some(mut summary)) => {
                summary.finish_ms = self.host.now_ms() - last_part;
                finish(&mut summary);
                Ok(summary)
            }
            Ok(None) => return self.read_again(id, whole),
            Err(error) => Err(error),
        };
        self.loaded(id, reply, started_ms);
    }

    /// Reads `whole` again into load `id`, here, as one stream (`?workers=1`).
    pub(super) fn read_again(&mut self, id: u32, whole: Whole<H::File, H::Buffer>) {
        self.begin(id, Some(1));
        self.stream(id, whole);
    }

    /// Reads the whole input into load `id` as one stream.
    fn stream(&mut self, id: u32, whole: Whole<H::File, H::Buffer>) {
        match whole {
            Whole::File(file) => self.host.read(id, file),
            Whole::Bytes { name, buffer } => self.host.take(id, name, buffer),
            Whole::Url { url, name, .. } => self.host.fetch(id, url, name),
        }
    }

    /// Starts load `id` of a picked file or posted bytes: in parts if large, else streamed here.
    pub(super) fn read_whole(&mut self, id: u32, workers: Option<u32>, whole: Whole<H::File, H::Buffer>) {
        self.end_run();
        self.begin(id, workers);
        if !self.read_in_parts(id, workers, &whole) {
            self.stream(id, whole);
        }
    }

    /// Reads a large JSON input in parts (`load::cut_by`, one part per core or per
    /// `?workers=N`): the first parsed here, each other by a parse worker that reads its own
    /// range (of a file, or of a URL in ranged requests; or is sent its range of posted bytes),
    /// so only the first part's bytes pass through this worker's memory; false when it is read
    /// here as a stream (small, gzip, not a trace's head, `?workers=1`, larger than
    /// `Budget::held_whole`, past which the parts and their join were not measured, or a URL
    /// whose ranges could not be read).
    pub(super) fn read_in_parts(&mut self, id: u32, workers: Option<u32>, whole: &Whole<H::File, H::Buffer>) -> bool {
        let started = self.host.now_ms();
        let (name, size) = match whole {
            Whole::File(file) => (H::file_name(file), H::file_size(file)),
            Whole::Bytes { name, buffer } => (name.clone(), H::buffer_size(buffer)),
            Whole::Url { name, size, .. } => (name.clone(), *size),
        };
        let mut cores = workers.map_or_else(|| self.host.cores(), |w| w as usize);
        if matches!(whole, Whole::Url { .. }) {
            cores = cores.min(super::ranges::MAX_REQUESTS);
        }
        let parts = load::parts_for(usize::try_from(size).unwrap_or(usize::MAX), cores);
        if parts < 2 || self.engine.budget().held_whole().check_file(size, false).is_err() {
            return false;
        }
        let joining = match self.engine.begin_parts(&name, size) {
            Ok(joining) => joining,
            Err(error) => {
                self.reading = None;
                self.loaded(id, Err(error), 0.0);
                return true;
            }
        };
        // This worker's share against each parse worker's. Of a file (or a URL, each reader
        // fetching its own range), 3 to 2: a part parsed here is not encoded, posted back nor
        // decoded. Of posted bytes, equal, since this worker also copies the parse workers'
        // pieces (docs/performance.md).
        let (here, sent) = match whole {
            Whole::File(_) | Whole::Url { .. } => (3, 2),
            Whole::Bytes { .. } => (1, 1),
        };
        let shares: Vec<u32> = (0..parts).map(|k| if k == 0 { here } else { sent }).collect();
        let cuts = match self.host.cut(whole, &shares) {
            Ok(cuts) if cuts.len() > 1 => cuts,
            Ok(_) => return false,
            // The server said it answers `Range` but its ranges could not be read: its body,
            // still arriving, is read as one stream instead.
            Err(e) if matches!(whole, Whole::Url { .. }) => {
                self.host.console_error(&format!("worker: reading in ranges failed, reading as one stream: {e}"));
                return false;
            }
            Err(e) => {
                self.reading = None;
                self.fail(id, "io", e);
                return true;
            }
        };
        self.reading = None;
        let mut sent = self.pool_for(cuts.len() - 1);
        for (index, (piece, range)) in cuts.iter().enumerate().skip(1) {
            self.pool.used = true;
            sent = sent.and_then(|()| self.host.send_range(index - 1, id, index, *piece, range.end, whole));
        }
        if let Some((piece, range)) = cuts.first() {
            // The other parts are joined into this one's model: its columns are sized for all.
            let stream = load::Stream::part(*piece).expecting(size);
            self.here = Some((id, whole.clone(), stream, piece.start..range.end));
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

    pub(super) fn job_failed(&mut self, message: String) {
        let Some(id) = self.job.as_ref().map(Job::id) else { return };
        // Also drops a first part not yet started here.
        self.stop_parsers();
        self.fail(id, "worker", message);
    }

    /// Drops the load being parsed by parse workers, if any, and terminates them; idle ones
    /// stay for the next load.
    pub(super) fn stop_parsers(&mut self) {
        // A gzip cut for the parse workers: its download worker waits for them, so it goes too.
        if matches!(self.job, Some(Job::Cut(_))) {
            self.host.stop_pump();
        }
        self.job = None;
        self.here = None;
        if !self.pool.is_idle() {
            self.terminate_pool();
        }
    }

    pub(super) fn terminate_pool(&mut self) {
        if !self.pool.ended {
            self.pool.ended = true;
            self.host.terminate_parsers();
        }
    }

    /// A fresh, empty pool in place of the current one (terminated with it).
    fn new_pool(&mut self) {
        self.host.new_pool();
        self.pool = Roster::default();
    }

    /// Spawns parse workers until the pool has `n`.
    fn grow(&mut self, n: usize) -> Result<(), String> {
        while self.pool.ready.len() < n {
            self.host.spawn_parser(self.pool.ready.len())?;
            self.pool.ready.push(false);
        }
        Ok(())
    }

    /// Makes the pool one of `n` parse workers for a load: the idle one (booted for this load
    /// or ahead of it by `warm`), grown, or a fresh one.
    pub(super) fn pool_for(&mut self, n: usize) -> Result<(), String> {
        if !self.pool.is_idle() {
            self.new_pool();
        }
        self.grow(n)
    }

    /// Once a load's parse workers are gone, boots one per other core (or per the load's
    /// `?workers=N` but one) for the next load, so a large file picked or posted next is parsed
    /// at once where booting them took 0.1-0.15 s. An idle one holds only a fresh instance's
    /// memory.
    pub(super) fn warm(&mut self) {
        let gone = self.pool.ended || (self.pool.is_idle() && self.pool.ready.is_empty());
        if !gone {
            return;
        }
        let cores = self.workers.map_or_else(|| self.host.cores(), |w| w as usize);
        let n = cores.min(load::MAX_PARTS).saturating_sub(1);
        if n > 0 {
            self.new_pool();
            if let Err(e) = self.grow(n) {
                self.host.console_error(&format!("worker: cannot start parse workers: {e}"));
            }
        }
    }
}
