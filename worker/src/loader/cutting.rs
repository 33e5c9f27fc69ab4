//! A gzip URL parsed in parts as it inflates: the download worker inflates it, this worker
//! cuts its JSON (`inflate::Cuts`) and hands each part to the next parse worker in turn,
//! forwarding its pieces as they come; each parsed piece given back lets the download go on
//! (`ToPump::Consumed`). The parts come back encoded and are joined in order once the gzip has
//! all inflated, or, if a part did not end at its cut, the URL is read again as one stream.
//!
//! Why no part is parsed here: this worker must hand the pieces on as they come, and a part
//! parsed here would leave the next part's pieces waiting in its queue behind it.

use super::inflate::{Cuts, Inflate, Inflating, CUT_EVERY};
use super::parser::ToParser;
use super::job::{Cutting, Job};
use super::{Host, Loader, Whole};
use crate::engine::Target;
use crate::intake::Throttle;
use crate::load::{self, Cut, Piece};
use protocol::{Phase, TraceSummary};

/// Cores from which a gzip URL is cut into parts by default.
const MIN_CORES: usize = 3;

/// What the cuts gave, to hand on: a part starts, or its next bytes in a buffer of their own.
enum Handed<B> {
    Part(Piece),
    Bytes(B),
}

impl<B> Handed<B> {
    fn of<H: Host<Buffer = B>>(cut: Cut) -> Self {
        match cut {
            Cut::Part(piece) => Handed::Part(piece),
            Cut::Bytes(bytes) => Handed::Bytes(H::buffer_of(bytes)),
        }
    }
}

impl<H: Host> Loader<H> {
    /// How the download worker of load `id` inflates and this worker cuts a gzip body: for the
    /// current trace, with `?workers=N` (N > 1) or by default from three cores; `None` (posted as
    /// it comes, inflated and parsed here) otherwise. On two cores the download worker's
    /// inflating and two parsers share them, and a 500 MB or 1 GB gzip loaded no faster than on
    /// one, with 0.2x the JSON more memory (docs/performance.md).
    pub(super) fn inflate_plan(&self, id: u32) -> Option<Inflate> {
        let workers = self.reading.filter(|&(r, _)| r == id)?.1;
        let parts = match workers {
            Some(w) => w > 1,
            None => self.host.cores() >= MIN_CORES,
        };
        let budget = self.engine.budget();
        (parts && self.target_of(id) == Target::Current).then(|| Inflate {
            every: CUT_EVERY,
            until: budget.held_whole().max_json_bytes(),
            max_json_bytes: budget.max_json_bytes(),
        })
    }

    /// What the download worker inflating load `id`'s gzip sent; false (stop the download) if
    /// the load is not current or ended.
    pub fn inflating(&mut self, id: u32, event: Inflating<H::Buffer>) -> bool {
        match event {
            Inflating::Piece { bytes, read } => self.cut_piece(id, bytes, read),
            Inflating::Done { json_bytes } => {
                self.inflated(id, json_bytes);
                false
            }
            Inflating::Failed(why) => {
                self.reread(id, &why);
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

    /// Load `id`, streamed so far, is a gzip the download worker inflates: its JSON is cut into
    /// parts for parse workers from now on. False (the load ended) if it cannot be.
    fn start_cutting(&mut self, id: u32) -> bool {
        let Some(plan) = self.inflate_plan(id) else { return false };
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
            cuts: Cuts::new(plan, size),
            started_ms: now,
            slots,
            parts: Vec::new(),
            done: Vec::new(),
            owed: vec![0; slots],
            heard_ms: vec![now; slots],
            inflated: None,
            throttle: Throttle::default(),
        }));
        true
    }

    /// The next JSON of load `id`'s gzip, `read` bytes of it read: on to the current part as it
    /// is, or cut (copied here, the cuts' bytes sent in buffers of their own).
    fn cut_piece(&mut self, id: u32, bytes: H::Buffer, read: u64) -> bool {
        if self.cutting(id).is_none() && !self.start_cutting(id) {
            return false;
        }
        let now = self.host.now_ms();
        let Some(cutting) = self.cutting(id) else { return false };
        let report = cutting.throttle.due(now).then_some(cutting.size);
        let passed = cutting.cuts.pass(H::buffer_size(&bytes), read);
        if let Some(size) = report {
            self.progress(id, Phase::Reading, read, size);
        }
        match passed {
            Ok(true) => self.forward(id, bytes),
            Ok(false) => {
                let json = H::copy_out(&bytes);
                let mut handed = Vec::new();
                if let Some(cutting) = self.cutting(id) {
                    cutting.cuts.push(&json, &mut |cut| handed.push(Handed::of::<H>(cut)));
                }
                self.hand(id, handed)
            }
            Err(too_big) => {
                let name = self.cutting(id).map(|c| c.name.clone()).unwrap_or_default();
                self.reading = None;
                self.stop_parsers();
                self.loaded(id, Err(too_big.to_load_error(&name)), 0.0);
                false
            }
        }
    }

    /// Hands on what the cuts gave, in order: parts started, bytes sent.
    fn hand(&mut self, id: u32, handed: Vec<Handed<H::Buffer>>) -> bool {
        handed.into_iter().all(|h| match h {
            Handed::Part(piece) if piece.first => self.open_part(id, piece),
            Handed::Part(piece) => self.next_part(id, piece),
            Handed::Bytes(bytes) if H::buffer_size(&bytes) == 0 => true,
            Handed::Bytes(bytes) => self.forward(id, bytes),
        })
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
        self.tell(slot, ToParser::open(id, index as u32, piece), None)
    }

    /// Sends `bytes` to the parse worker of the part being fed.
    fn forward(&mut self, id: u32, bytes: H::Buffer) -> bool {
        let Some((slot, index)) = self.cutting(id).and_then(|c| c.current()) else { return false };
        self.tell(slot, ToParser::More { job: id, index: index as u32 }, Some(bytes))
    }

    /// Load `id`'s gzip all inflated (to `json_bytes`, as the download worker counted): the
    /// bytes still held go on, and the last part ends.
    fn inflated(&mut self, id: u32, json_bytes: u64) {
        let Some(cutting) = self.cutting(id) else { return };
        let mut handed = Vec::new();
        let total = cutting.cuts.finish(&mut |cut| handed.push(Handed::of::<H>(cut)));
        if !self.hand(id, handed) {
            return;
        }
        if total != json_bytes {
            return self.job_failed(format!("the download worker inflated {json_bytes} bytes, {total} came"));
        }
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
        self.read_again(id, Whole::Url { url, name, size: 0 });
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

    /// Every part of the gzip is back: joins them (the JSON's size in the summary), or reads the
    /// URL again as one stream if a part did not end at its cut.
    pub(super) fn join_cut(&mut self, cutting: Cutting) {
        let Cutting { id, url, name, size, joining, started_ms, slots, parts, inflated, .. } = cutting;
        let joining = joining.inflated(inflated.unwrap_or(0));
        let whole = Whole::Url { url, name, size: size.unwrap_or(0) };
        // Parts, not workers, are what the join counted.
        let finish = |summary: &mut TraceSummary| summary.parse_workers = summary.parse_workers.min(slots as u32);
        self.join_parts((id, started_ms), joining, parts.into_iter().flatten().collect(), whole, finish);
    }
}
