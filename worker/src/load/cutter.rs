//! A JSON arriving in order (a gzip inflating as it downloads) cut into parts of about
//! `every` bytes at event boundaries as it arrives, so each part can be parsed elsewhere
//! ([`super::Stream::part`]) while the rest is still coming; [`super::join`] merges them as it
//! merges [`super::cut`]'s.
//!
//! How: the head is copied aside until the tokenizer finds the form and where the events begin;
//! every byte is handed on at once but those from a cut's guess on, held until a boundary
//! (`input::split::boundary_after`, verified by parsing a few events) is found in them. A window
//! of [`WINDOW`] bytes without one gives that cut up: the bytes go to the current part and the
//! next cut is tried `every` bytes later. As for [`super::cut`], a wrong cut costs a second
//! read, never correctness: the join checks every part but the last ends at its cut.

use super::Piece;
use crate::input::split::boundary_after;
use crate::json::{Form, Tokenizer};

/// Head bytes looked at for the form and the events' start: past it, the input is one part.
const HEAD: usize = 1 << 20;

/// Bytes held from a cut's guess before a boundary is looked for, doubled at each miss.
const FIRST_LOOK: usize = 64 << 10;

/// Bytes held from a cut's guess at most: larger than any real event.
const WINDOW: usize = 4 << 20;

/// What the cutter hands on, in input order.
#[derive(Debug, PartialEq, Eq)]
pub enum Cut<'a> {
    /// The bytes that follow start part `Piece` (the first is the input's head).
    Part(Piece),
    /// The next bytes of the current part.
    Bytes(&'a [u8]),
}

/// What is known of the input's head.
enum Head {
    /// Still arriving: its bytes so far.
    Reading(Vec<u8>),
    /// The events array's form.
    Found(Form),
    /// Not a trace's head within [`HEAD`] bytes: no cuts.
    Uncut,
}

/// A JSON arriving in order, cut into parts; see the module docs.
pub struct Cutter {
    every: u64,
    until: u64,
    head: Head,
    /// Bytes handed on (the offset of the first byte held, if any).
    at: u64,
    /// Where the next cut is looked for.
    next: u64,
    /// Bytes from `at` on, held while a boundary is looked for in them.
    held: Vec<u8>,
    /// Bytes to hold before the next look.
    look_at: usize,
    started: bool,
    parts: usize,
}

impl Cutter {
    /// Cuts about every `every` bytes (at least one), the last cut before byte `until` (the last
    /// part takes the rest).
    pub fn new(every: u64, until: u64) -> Self {
        let every = every.max(1);
        Self { every, until, head: Head::Reading(Vec::new()), at: 0, next: every, held: Vec::new(), look_at: FIRST_LOOK, started: false, parts: 0 }
    }

    /// Parts started so far.
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// Whether the next `len` bytes would all be handed on to the current part as they are (no
    /// cut among them, the head known): the caller may then [`Cutter::pass`] them unread.
    pub fn passes(&self, len: u64) -> bool {
        let far = match self.head {
            Head::Reading(_) => false,
            Head::Found(_) => self.next >= self.until || self.next.saturating_sub(self.at) >= len,
            Head::Uncut => true,
        };
        self.started && self.held.is_empty() && far
    }

    /// Counts `len` bytes the caller handed on itself ([`Cutter::passes`] said it may).
    pub fn pass(&mut self, len: u64) {
        self.at += len;
    }

    /// Takes the input's next `bytes`, handing on what can be: the first call starts part 0.
    pub fn push(&mut self, bytes: &[u8], out: &mut dyn FnMut(Cut)) {
        self.start(out);
        self.read_head(bytes);
        if self.held.is_empty() {
            return self.hand_on(bytes, out);
        }
        self.held.extend_from_slice(bytes);
        self.look(out);
    }

    /// Hands on `bytes` (none held before them) up to the next cut's guess, holding the rest.
    fn hand_on(&mut self, bytes: &[u8], out: &mut dyn FnMut(Cut)) {
        let before = self.next.saturating_sub(self.at);
        if !matches!(self.head, Head::Found(_)) || self.next >= self.until || before >= bytes.len() as u64 {
            self.at += bytes.len() as u64;
            return out(Cut::Bytes(bytes));
        }
        // Below `bytes.len()`, so it fits a usize.
        let (now, from_guess) = bytes.split_at(before as usize);
        if !now.is_empty() {
            self.at += now.len() as u64;
            out(Cut::Bytes(now));
        }
        self.held.extend_from_slice(from_guess);
        self.look(out);
    }

    /// Ends the input: hands on the bytes still held (an empty input is one empty part). The
    /// input's length.
    pub fn finish(&mut self, out: &mut dyn FnMut(Cut)) -> u64 {
        self.start(out);
        self.give_up(out);
        self.at
    }

    /// Starts part 0, the input's head, once.
    fn start(&mut self, out: &mut dyn FnMut(Cut)) {
        if !self.started {
            self.started = true;
            self.parts = 1;
            out(Cut::Part(Piece { start: 0, form: Form::Array, first: true }));
        }
    }

    /// Copies the head aside until its form is known (or it is not a trace's).
    fn read_head(&mut self, bytes: &[u8]) {
        let Head::Reading(head) = &mut self.head else { return };
        head.extend_from_slice(&bytes[..bytes.len().min(HEAD - head.len())]);
        self.head = match Tokenizer::new(head, 0) {
            Ok(tokens) => Head::Found(tokens.form()),
            Err(e) if e.is_eof() && head.len() < HEAD => return,
            Err(_) => Head::Uncut,
        };
    }

    /// Looks for a boundary in the bytes held, once there are enough: cuts there, or gives the
    /// cut up past [`WINDOW`] bytes.
    fn look(&mut self, out: &mut dyn FnMut(Cut)) {
        if self.held.len() < self.look_at {
            return;
        }
        let Head::Found(form) = self.head else { return self.give_up(out) };
        match boundary_after(&self.held, 0, form) {
            Some(rel) => {
                let start = self.at + rel as u64;
                let held = std::mem::take(&mut self.held);
                out(Cut::Bytes(&held[..rel]));
                out(Cut::Part(Piece { start, form, first: false }));
                self.parts += 1;
                self.at = start;
                self.look_at = FIRST_LOOK;
                self.next = start + self.every;
                // The bytes after the cut may reach the next one.
                self.hand_on(&held[rel..], out);
                if self.held.is_empty() {
                    self.held = held;
                    self.held.clear();
                }
            }
            None if self.held.len() >= WINDOW => self.give_up(out),
            None => self.look_at = (self.look_at * 2).min(WINDOW),
        }
    }

    /// Hands on the bytes held to the current part; the next cut is looked for `every` bytes on.
    fn give_up(&mut self, out: &mut dyn FnMut(Cut)) {
        if self.held.is_empty() {
            return;
        }
        out(Cut::Bytes(&self.held));
        self.at += self.held.len() as u64;
        self.held.clear();
        self.look_at = FIRST_LOOK;
        self.next = self.at + self.every;
    }
}
