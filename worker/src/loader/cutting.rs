//! A gzip URL parsed in parts as it inflates: the download worker inflates and cuts it
//! (`inflate`), and this worker hands each part to the next parse worker in turn, forwarding
//! its pieces as they come; each parsed piece given back lets the download go on
//! (`ToPump::Consumed`). The parts come back encoded and are joined in order once the gzip has
//! all inflated, or, if a part did not end at its cut, the URL is read again as one stream.
//!
//! Why no part is parsed here: this worker must hand the pieces on as they come, and a part
//! parsed here would leave the next part's pieces waiting in its queue behind it.

use super::inflate::{Inflate, Inflating, CUT_EVERY};
use super::parser::ToParser;
use super::parts::Job;
use super::{Host, Loader};
use crate::budget::{Size, TooBig};
use crate::engine::{Joining, Target};
use crate::intake::{Throttle, SILENT_MS};
use crate::load::{self, Arrived, Piece};
use protocol::{LoadError, Phase, TraceSummary};

/// A gzip being inflated, cut and parsed by parse workers: its parts and their workers.
pub(super) struct Cutting {
    pub(super) id: u32,
    url: String,
    name: String,
    /// The gzip's declared size.
    size: Option<u64>,
    joining: Joining,
    pub(super) started_ms: f64,
    /// Parse workers; part `k` goes to worker `k % slots`.
    slots: usize,
    /// Per part: back, or not yet.
    parts: Vec<Option<Arrived>>,
    /// Per part: bytes parsed.
    done: Vec<u64>,
    /// Per parse worker: messages it owes an answer (a piece parsed, a part back), and when it
    /// last answered (or was sent one while owing none).
    owed: Vec<u32>,
    heard_ms: Vec<f64>,
    /// The gzip's JSON size, once it all inflated.
    inflated: Option<u64>,
    throttle: Throttle,
}

impl Cutting {
    /// Parse worker `slot` answered at `now_ms`: a piece parsed, a part back, progress.
    pub(super) fn heard(&mut self, slot: usize, now_ms: f64, answered: bool) {
        if let Some(heard) = self.heard_ms.get_mut(slot) {
            *heard = heard.max(now_ms);
        }
        if let Some(owed) = self.owed.get_mut(slot).filter(|_| answered) {
            *owed = owed.saturating_sub(1);
        }
    }

    /// Part `index` parsed `done` bytes at `now_ms`: the bytes parsed over all parts and the
    /// JSON's size, once it is known and a report is due.
    pub(super) fn progress(&mut self, index: usize, done: u64, now_ms: f64) -> Option<(u64, u64)> {
        if let Some(d) = self.done.get_mut(index) {
            *d = done;
        }
        self.heard(index % self.slots, now_ms, false);
        let total = self.inflated?;
        self.throttle.due(now_ms).then(|| (self.done.iter().sum(), total))
    }

    /// The first parse worker owing an answer and silent for more than [`SILENT_MS`] at
    /// `now_ms`: it stopped answering.
    pub(super) fn silent(&self, now_ms: f64) -> Option<usize> {
        self.owed.iter().zip(&self.heard_ms).position(|(&owed, &heard)| owed > 0 && now_ms - heard > SILENT_MS)
    }

    /// Part `index` came back; true once the gzip all inflated and every part is back.
    pub(super) fn part(&mut self, index: usize, part: Arrived) -> bool {
        if let Some(slot) = self.parts.get_mut(index) {
            *slot = Some(part);
        }
        self.complete()
    }

    fn complete(&self) -> bool {
        self.inflated.is_some() && self.parts.iter().all(Option::is_some)
    }

    /// The parse worker of the part being fed, and its index.
    fn current(&self) -> Option<(usize, usize)> {
        let index = self.parts.len().checked_sub(1)?;
        Some((index % self.slots, index))
    }
}

impl<H: Host> Loader<H> {
    /// How the download worker of load `id` inflates and cuts a gzip body: on two cores or more
    /// (or `?workers=N`, N > 1) for the current trace; `None` (posted as it comes) otherwise.
    pub(super) fn inflate_plan(&self, id: u32) -> Option<Inflate> {
        let workers = self.reading.filter(|&(r, _)| r == id)?.1;
        let cores = workers.map_or_else(|| self.host.cores(), |w| w as usize);
        let budget = self.engine.budget();
        (cores > 1 && self.target_of(id) == Target::Current).then(|| Inflate {
            every: CUT_EVERY,
            until: budget.held_whole().max_json_bytes(),
            max_json_bytes: budget.max_json_bytes(),
        })
    }

    /// What the download worker inflating load `id`'s gzip sent; false (stop the download) if
    /// the load is not current or ended.
    pub fn inflating(&mut self, id: u32, event: Inflating<H::Buffer>) -> bool {
        match event {
            Inflating::Part(piece) if piece.first => self.start_cutting(id, piece),
            Inflating::Part(piece) => self.next_part(id, piece),
            Inflating::Piece { bytes, read } => self.forward(id, bytes, read),
            Inflating::Done { json_bytes } => {
                self.inflated(id, json_bytes);
                false
            }
            Inflating::Failed(why) => {
                self.reread(id, &why);
                false
            }
            Inflating::TooBig { json_bytes, read, file_bytes } => {
                if self.cutting(id).is_some() {
                    let name = self.cutting(id).map(|c| c.name.clone()).unwrap_or_default();
                    let too_big = TooBig { size: Size::Inflating { json_bytes, read, file_bytes }, budget: self.engine.budget() };
                    self.reading = None;
                    self.stop_parsers();
                    self.loaded(id, Err(too_big.to_load_error(&name)), 0.0);
                }
                false
            }
        }
    }

    fn cutting(&mut self, id: u32) -> Option<&mut Cutting> {
        match self.job.as_mut() {
            Some(Job::Cut(cutting)) if cutting.id == id => Some(cutting),
            _ => None,
        }
    }

    /// Load `id`, streamed so far, is a gzip the download worker inflates and cuts: its parts go
    /// to parse workers from now on, starting with part 0 (`piece`).
    fn start_cutting(&mut self, id: u32, piece: Piece) -> bool {
        let Some((streaming, _)) = self.streaming.take_if(|(s, _)| s.id == id) else { return false };
        let (name, size) = (streaming.name.clone(), streaming.size);
        drop(streaming);
        let workers = self.reading.and_then(|(_, w)| w);
        let slots = workers.map_or_else(|| self.host.cores(), |w| w as usize).clamp(1, load::MAX_PARTS);
        let joining = match self.engine.begin_parts(&name, size.unwrap_or(0)) {
            Ok(joining) => joining,
            Err(error) => {
                self.reading = None;
                self.loaded(id, Err(error), 0.0);
                return false;
            }
        };
        if let Err(e) = self.pool_for(slots) {
            self.reading = None;
            self.stop_parsers();
            self.fail(id, "worker", format!("cannot start the parse workers: {e}"));
            return false;
        }
        self.pool.used = true;
        let now = self.host.now_ms();
        let url = self.pumped.take().filter(|(p, _)| *p == id).map(|(_, url)| url).unwrap_or_default();
        self.job = Some(Job::Cut(Cutting {
            id,
            url,
            name,
            size,
            joining,
            started_ms: now,
            slots,
            parts: Vec::new(),
            done: Vec::new(),
            owed: vec![0; slots],
            heard_ms: vec![now; slots],
            inflated: None,
            throttle: Throttle::default(),
        }));
        self.open_part(id, piece)
    }

    /// Part `piece` of load `id` starts: the part before it ends there.
    fn next_part(&mut self, id: u32, piece: Piece) -> bool {
        let Some((slot, index)) = self.cutting(id).and_then(|c| c.current()) else { return false };
        self.tell(slot, ToParser::End { job: id, index: index as u32, end: piece.start }, None) && self.open_part(id, piece)
    }

    /// Sends the next part, `piece`, to the next parse worker in turn.
    fn open_part(&mut self, id: u32, piece: Piece) -> bool {
        let Some(cutting) = self.cutting(id) else { return false };
        cutting.parts.push(None);
        cutting.done.push(0);
        let Some((slot, index)) = cutting.current() else { return false };
        let open = ToParser::Open { job: id, index: index as u32, start: piece.start, object: piece.form == crate::json::Form::Object, first: piece.first };
        self.tell(slot, open, None)
    }

    /// Forwards `bytes` to the parse worker of the part being fed; `read` bytes of the gzip
    /// were read.
    fn forward(&mut self, id: u32, bytes: H::Buffer, read: u64) -> bool {
        let now = self.host.now_ms();
        let Some(cutting) = self.cutting(id) else { return false };
        let Some((slot, index)) = cutting.current() else { return false };
        let report = cutting.throttle.due(now).then_some(cutting.size);
        if let Some(size) = report {
            self.progress(id, Phase::Reading, read, size);
        }
        self.tell(slot, ToParser::More { job: id, index: index as u32 }, Some(bytes))
    }

    /// Load `id`'s gzip all inflated to `json_bytes`: the last part ends there.
    fn inflated(&mut self, id: u32, json_bytes: u64) {
        let Some((slot, index)) = self.cutting(id).and_then(|c| c.current()) else { return };
        self.reading = None;
        if let Some(cutting) = self.cutting(id) {
            cutting.inflated = Some(json_bytes);
        }
        self.progress(id, Phase::Parsing, 0, Some(json_bytes));
        if self.tell(slot, ToParser::End { job: id, index: index as u32, end: json_bytes }, None) && self.cutting(id).is_some_and(|c| c.complete()) {
            self.complete_job();
        }
    }

    /// Load `id`'s gzip could not be inflated whole by the browser (`why`): it is read again
    /// here as one stream, inflated as the CLI does.
    fn reread(&mut self, id: u32, why: &str) {
        let (url, name) = match self.cutting(id) {
            Some(c) => (c.url.clone(), c.name.clone()),
            None => {
                let Some(name) = self.streaming.as_ref().filter(|(s, _)| s.id == id).map(|(s, _)| s.name.clone()) else { return };
                let Some((_, url)) = self.pumped.take().filter(|(p, _)| *p == id) else { return };
                (url, name)
            }
        };
        self.host.console_error(&format!("worker: the browser could not inflate {name:?} whole ({why}): reading it again on one core"));
        self.begin(id, Some(1));
        self.host.fetch(id, url, name);
    }

    /// Posts `msg` (with `bytes`) to parse worker `slot`, which then owes an answer for a piece
    /// or an end; false (and the load ended) if the post failed.
    fn tell(&mut self, slot: usize, msg: ToParser, bytes: Option<H::Buffer>) -> bool {
        let now = self.host.now_ms();
        let owes = !matches!(msg, ToParser::Open { .. });
        if let Some(Job::Cut(cutting)) = self.job.as_mut() {
            if let (true, Some(owed), Some(heard)) = (owes, cutting.owed.get_mut(slot), cutting.heard_ms.get_mut(slot)) {
                if *owed == 0 {
                    *heard = now;
                }
                *owed += 1;
            }
        }
        match self.host.tell_parser(slot, &msg, bytes) {
            Ok(()) => true,
            Err(e) => {
                self.job_failed(format!("parse worker {slot} could not be sent its part: {e}"));
                false
            }
        }
    }

    /// Every part of the gzip is back: joins them (the JSON's size and any gzip error in the
    /// summary), or reads the URL again as one stream if a part did not end at its cut.
    pub(super) fn join_cut(&mut self, cutting: Cutting) {
        let Cutting { id, url, name, joining, started_ms, slots, parts, inflated, .. } = cutting;
        let json_bytes = inflated.unwrap_or(0);
        let last_part = self.host.now_ms();
        let parts: Vec<Arrived> = parts.into_iter().flatten().collect();
        let reply: Result<TraceSummary, LoadError> = match self.engine.join(joining.inflated(json_bytes), parts, &crate::fork::Sequential) {
            Ok(Some(mut summary)) => {
                summary.finish_ms = self.host.now_ms() - last_part;
                // Parts, not workers, are what the join counted.
                summary.parse_workers = summary.parse_workers.min(slots as u32);
                Ok(summary)
            }
            Ok(None) => {
                self.begin(id, Some(1));
                return self.host.fetch(id, url, name);
            }
            Err(error) => Err(error),
        };
        self.loaded(id, reply, started_ms);
    }

}
