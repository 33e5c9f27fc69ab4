//! A load's bytes arriving from its source: taken while the load is current, refused (which
//! stops the source) once it was dropped; parsed as they arrive, or held whole for parse
//! workers (`?workers=N`, N > 1), with `Progress` throttled (`intake`).

use super::{progress_msg, Host, Loader};
use crate::intake::{Incoming, LoadClock, PhaseThrottle, Streaming};
use crate::load;
use protocol::Phase;

impl<H: Host> Loader<H> {
    /// Load `id` has `size` bytes (if known) named `name`; false (stop the source) if it is not
    /// current or is refused (too big: answered).
    pub fn open(&mut self, id: u32, name: &str, size: Option<u64>) -> bool {
        let Some((_, workers)) = self.reading.filter(|&(r, _)| r == id) else {
            return false;
        };
        // Parsed as the bytes arrive, here, unless the page's `?workers=N` asks for N > 1
        // parse workers (the JSON is then held whole and split; the e2e tests compare both). A
        // gzip is streamed to its download worker, which inflates it for them (`cutting`).
        let gzip = super::source::is_gzip_name(name);
        let Some(cores) = workers.map(|w| w as usize).filter(|&w| w > 1 && !gzip) else {
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
                self.host.console_error(&format!("worker: cannot start parse workers: {e}"));
            }
        }
        self.progress(id, Phase::Reading, 0, size);
        true
    }

    /// Starts load `id` parsed as its bytes arrive; false (the load answered) if refused.
    fn open_streaming(&mut self, id: u32, name: &str, size: Option<u64>) -> bool {
        let target = self.target_of(id);
        match Streaming::open(&mut self.engine, target, id, name, size) {
            Ok(streaming) => self.streaming = Some((streaming, LoadClock::start(self.host.now_ms()))),
            Err(error) => {
                self.reading = None;
                self.loaded(id, Err(error), 0.0);
                return false;
            }
        }
        self.progress(id, Phase::Reading, 0, size);
        true
    }

    /// Load `id`'s body (at `url`, large, or a gzip for parts) could be downloaded by a download
    /// worker; true if one took it over. Only a load parsed as it arrives stalls its download;
    /// one held whole for parse workers only copies the bytes.
    pub fn handoff(&mut self, id: u32, url: &str) -> bool {
        let Some((streaming, _)) = self.streaming.as_ref().filter(|(s, _)| s.id == id) else { return false };
        let small = streaming.size.is_some_and(|s| s < super::source::HANDOFF_BYTES);
        let inflate = self.inflate_plan(id);
        // A gzip offered below the usual size only for its parts: without them, read here.
        if small && inflate.is_none() {
            return false;
        }
        match self.host.start_pump(id, url, inflate) {
            Ok(()) => {
                self.pumped = Some((id, url.to_owned()));
                true
            }
            Err(e) => {
                self.host.console_error(&format!("worker: cannot start the download worker, reading here: {e}"));
                false
            }
        }
    }

    /// The next `len` bytes of load `id`, which `fill` copies in; false (stop the source) if the
    /// load is not current or failed.
    pub fn arrived(&mut self, id: u32, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        let now = self.host.now_ms();
        if let Some((streaming, clock)) = self.streaming.as_mut().filter(|(s, _)| s.id == id) {
            clock.busy(now);
            let appended = streaming.append(len, now, fill);
            clock.idle(self.host.now_ms());
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
        match pending.append(len, now, fill) {
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

    /// Load `id` has all its bytes: a streamed load ends; one held whole is planned into parts
    /// for the parse workers (its JSON size known after decompression), or parsed here.
    pub fn finish(&mut self, id: u32) {
        if let Some((streaming, mut clock)) = self.streaming.take_if(|(s, _)| s.id == id) {
            self.reading = None;
            let last_byte = self.host.now_ms();
            clock.busy(last_byte);
            let reply = streaming.finish(&mut self.engine).map(|mut summary| {
                summary.read_wait_ms = clock.waited_ms;
                summary.finish_ms = self.host.now_ms() - last_byte;
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
        let started = self.host.now_ms();
        let (rank, target) = (self.rank_of(id), self.target_of(id));
        let mut phases = PhaseThrottle::default();
        let host = &self.host;
        let mut report = |phase: Phase, done: u64, total: Option<u64>| {
            if phases.due(phase, host.now_ms()) {
                host.post(&progress_msg(id, rank, phase, done, total), None);
            }
        };
        let prepared = match self.engine.prepare_to(target, &name, bytes, cores, &mut report) {
            Ok(p) => p,
            Err(error) => return self.loaded(id, Err(error), started),
        };
        if prepared.plan.parts.len() > 1 {
            return self.start_job(id, prepared, started);
        }
        self.stop_parsers();
        let json_bytes = prepared.json.len() as u64;
        let host = &self.host;
        let mut report = |done| {
            if phases.due(Phase::Parsing, host.now_ms()) {
                host.post(&progress_msg(id, rank, Phase::Parsing, done, Some(json_bytes)), None);
            }
        };
        let part = load::parse_part(&prepared.json, &prepared.plan, 0, &mut report);
        let reply = self.engine.complete(prepared, vec![part]);
        self.loaded(id, reply, started);
    }

    /// Load `id` cannot be read: `message` says why.
    pub fn failed(&mut self, id: u32, message: String) {
        if self.reading.is_some_and(|(r, _)| r == id) {
            self.reading = None;
            self.streaming = None;
            self.pending = None;
            if self.parsing(id) {
                self.stop_parsers();
            }
            self.fail(id, "io", message);
        }
    }
}
