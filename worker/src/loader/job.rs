//! A load's parts out with the parse workers, as the load worker tracks them ([`Job`]): of a
//! JSON held whole, of a file, posted bytes or a URL each parse worker reads its range of, or of
//! a gzip cut as it inflates ([`Cutting`]): which parts are back, each part's progress, and which
//! parse worker went silent.

use super::inflate::Cuts;
use crate::engine::Joining;
use crate::intake::{PartsJob, Throttle, SILENT_MS};
use crate::load::{self, Arrived};

/// Parts out with the parse workers: of a JSON held whole here (`?workers=N` for a URL), or
/// of a file or posted bytes each parse worker reads its range of (`read_in_parts`).
pub(super) enum Job<W> {
    Held(PartsJob),
    File(PartsJob<(Joining, W), load::Arrived>),
    /// A gzip URL cut as it inflates (`cutting`).
    Cut(Cutting),
}

impl<W> Job<W> {
    pub(super) fn id(&self) -> u32 {
        match self {
            Job::Held(j) => j.id,
            Job::File(j) => j.id,
            Job::Cut(j) => j.id,
        }
    }

    /// Parse worker `slot` said something: its part is `slot` held whole, `slot + 1` of a
    /// file or posted bytes (part 0 is parsed here); of a gzip cut, it answered a piece or a
    /// part's end if `answered`.
    pub(super) fn heard(&mut self, slot: usize, now_ms: f64, answered: bool) {
        match self {
            Job::Held(j) => j.heard(slot, now_ms),
            Job::File(j) => j.heard(slot + 1, now_ms),
            Job::Cut(j) => j.heard(slot, now_ms, answered),
        }
    }

    pub(super) fn progress(&mut self, index: usize, done: u64, now_ms: f64) -> Option<(u64, u64)> {
        match self {
            Job::Held(j) => j.progress(index, done, now_ms),
            Job::File(j) => j.progress(index, done, now_ms),
            Job::Cut(j) => j.progress(index, done, now_ms),
        }
    }

    pub(super) fn silent(&self, now_ms: f64) -> Option<usize> {
        match self {
            Job::Held(j) => j.silent(now_ms),
            Job::File(j) => j.silent(now_ms),
            Job::Cut(j) => j.silent(now_ms),
        }
    }
}

/// A gzip being inflated, cut and parsed by parse workers: its parts and their workers.
pub(super) struct Cutting {
    pub(super) id: u32,
    pub(super) url: String,
    pub(super) name: String,
    /// The gzip's declared size.
    pub(super) size: Option<u64>,
    pub(super) joining: Joining,
    /// The JSON's cuts.
    pub(super) cuts: Cuts,
    pub(super) started_ms: f64,
    /// Parse workers; part `k` goes to worker `k % slots`.
    pub(super) slots: usize,
    /// Per part: back, or not yet.
    pub(super) parts: Vec<Option<Arrived>>,
    /// Per part: bytes parsed.
    pub(super) done: Vec<u64>,
    /// Per parse worker: messages it owes an answer (a piece parsed, a part back), and when it
    /// last answered (or was sent one while owing none).
    pub(super) owed: Vec<u32>,
    pub(super) heard_ms: Vec<f64>,
    /// The gzip's JSON size, once it all inflated.
    pub(super) inflated: Option<u64>,
    pub(super) throttle: Throttle,
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

    pub(super) fn complete(&self) -> bool {
        self.inflated.is_some() && self.parts.iter().all(Option::is_some)
    }

    /// The parse worker of the part being fed, and its index.
    pub(super) fn current(&self) -> Option<(usize, usize)> {
        let index = self.parts.len().checked_sub(1)?;
        Some((index % self.slots, index))
    }
}

