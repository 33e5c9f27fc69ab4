//! A posted trace's part fed to a parse worker in pieces that come back to be refilled: the
//! load worker copies [`FEED_BYTES`] at a time out of the posted buffer, sends the first
//! [`FED_AHEAD`] at once, and fills each piece the parse worker gives back parsed with the next
//! bytes. Generic over the buffer ([`Posted`], an `ArrayBuffer` in the browser), so it is tested
//! natively.
//!
//! Why pieces, and reused: a transfer detaches the whole buffer, so a part is copied out; copying
//! into a buffer already in use costs no page faults, while a fresh one faults in page by page.

use super::parser::ToParser;

/// Bytes of a posted buffer copied and posted to a parse worker at a time.
pub const FEED_BYTES: u64 = 16 << 20;

/// Pieces of a posted part sent before the first comes back: the parse worker has these to
/// parse (some 0.15 s) while the load worker parses its own part and refills returned ones.
pub const FED_AHEAD: u64 = 4;

/// A buffer of posted bytes (below 4 GiB: the page refuses larger ones, so offsets fit u32).
pub trait Posted: Sized {
    /// Its length, bytes.
    fn byte_length(&self) -> u32;
    /// A new buffer holding a copy of its bytes `at..at + len`.
    fn copy_out(&self, at: u32, len: u32) -> Self;
    /// Copies its bytes `at..at + len` to the start of `into` (at least `len` long).
    fn copy_into(&self, at: u32, len: u32, into: &Self);
}

/// What is left to send of a posted part: bytes `next..end` of `bytes`.
pub struct Refill<B> {
    job: u32,
    index: u32,
    bytes: B,
    next: u64,
    end: u64,
}

impl<B: Posted> Refill<B> {
    /// Part `index` of load `job`: bytes `start..end` of `bytes`.
    pub fn new(job: u32, index: u32, bytes: B, start: u64, end: u64) -> Self {
        Self { job, index, bytes, next: start, end }
    }

    /// The first messages to send, each with its piece: `read` (the part's `ReadPart`) with the
    /// first piece, then `More` with each of the next, [`FED_AHEAD`] pieces at most. None for an
    /// empty part.
    pub fn opening(&mut self, read: ToParser) -> Vec<(ToParser, B)> {
        let mut sent = Vec::new();
        let mut msg = read;
        for _ in 0..FED_AHEAD {
            let Some(piece) = self.next_piece(None) else { break };
            sent.push((msg, piece));
            msg = ToParser::More { job: self.job, index: self.index };
        }
        sent
    }

    /// The next piece: copied into `reuse` when it is a spent piece of the same length, else
    /// into a new buffer (the first pieces, and the last, shorter one). `None` once all sent.
    fn next_piece(&mut self, reuse: Option<B>) -> Option<B> {
        if self.next >= self.end {
            return None;
        }
        let to = (self.next + FEED_BYTES).min(self.end);
        // Posted buffers are below 4 GiB, so offsets fit u32.
        let (at, len) = (self.next as u32, (to - self.next) as u32);
        self.next = to;
        Some(match reuse.filter(|b| b.byte_length() == len) {
            Some(buffer) => {
                self.bytes.copy_into(at, len, &buffer);
                buffer
            }
            None => self.bytes.copy_out(at, len),
        })
    }
}

/// Fills `buffer`, a piece of load `job` given back parsed, with the next bytes of the part
/// `refill` holds: the `More` message to send with it, or nothing once the part was all sent
/// (`refill` is then let go) or when `refill` holds no part of `job`.
pub fn refill<B: Posted>(refill: &mut Option<Refill<B>>, job: u32, buffer: B) -> Option<(ToParser, B)> {
    let part = refill.as_mut().filter(|r| r.job == job)?;
    let more = ToParser::More { job, index: part.index };
    match part.next_piece(Some(buffer)) {
        Some(piece) => Some((more, piece)),
        None => {
            *refill = None;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Form;
    use crate::load::Piece;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A shared buffer, as an `ArrayBuffer` handle is.
    type Buffer = Rc<RefCell<Vec<u8>>>;

    impl Posted for Buffer {
        fn byte_length(&self) -> u32 {
            self.borrow().len() as u32
        }

        fn copy_out(&self, at: u32, len: u32) -> Self {
            Rc::new(RefCell::new(self.borrow()[at as usize..(at + len) as usize].to_vec()))
        }

        fn copy_into(&self, at: u32, len: u32, into: &Self) {
            into.borrow_mut()[..len as usize].copy_from_slice(&self.borrow()[at as usize..(at + len) as usize]);
        }
    }

    fn posted(len: u64) -> Buffer {
        Rc::new(RefCell::new((0..len).map(|i| (i % 253) as u8).collect()))
    }

    fn read(job: u32, index: u32, start: u64, end: u64) -> ToParser {
        ToParser::read_part(job, index, Piece { start, form: Form::Array, first: false }, end)
    }

    #[test]
    fn the_first_pieces_go_at_once_with_read_part_then_more() {
        let bytes = posted(FEED_BYTES * 6 + 5);
        let (start, end) = (3, FEED_BYTES * 6);
        let mut part = Refill::new(7, 2, bytes.clone(), start, end);
        let sent = part.opening(read(7, 2, start, end));
        assert_eq!(sent.len() as u64, FED_AHEAD);
        assert_eq!(sent[0].0, read(7, 2, start, end));
        assert!(sent[1..].iter().all(|(msg, _)| *msg == ToParser::More { job: 7, index: 2 }));
        let first = &sent[0].1;
        assert_eq!(*first.borrow(), bytes.borrow()[3..3 + FEED_BYTES as usize]);
        assert_eq!(*sent[3].1.borrow(), bytes.borrow()[(3 + 3 * FEED_BYTES) as usize..(3 + 4 * FEED_BYTES) as usize]);
        let mut small = Refill::new(1, 0, posted(10), 4, 9);
        let sent = small.opening(read(1, 0, 4, 9));
        assert_eq!(sent.len(), 1);
        assert_eq!(*sent[0].1.borrow(), [4, 5, 6, 7, 8]);
        assert!(Refill::new(1, 0, posted(10), 9, 9).opening(read(1, 0, 9, 9)).is_empty());
    }

    #[test]
    fn a_spent_piece_is_refilled_in_place_until_the_part_is_sent() {
        let bytes = posted(FEED_BYTES * 5 + 100);
        let end = bytes.borrow().len() as u64;
        let mut slot = Some(Refill::new(3, 1, bytes.clone(), 0, end));
        let sent = slot.as_mut().map(|r| r.opening(read(3, 1, 0, end))).unwrap_or_default();
        let spent = sent[0].1.clone();
        let Some((more, piece)) = refill(&mut slot, 3, spent.clone()) else { panic!("no fifth piece") };
        assert_eq!(more, ToParser::More { job: 3, index: 1 });
        // The same buffer, holding the fifth piece.
        assert!(Rc::ptr_eq(&piece, &spent));
        assert_eq!(*piece.borrow(), bytes.borrow()[(4 * FEED_BYTES) as usize..(5 * FEED_BYTES) as usize]);
        // The last piece is shorter: a new buffer.
        let Some((_, last)) = refill(&mut slot, 3, sent[1].1.clone()) else { panic!("no last piece") };
        assert!(!Rc::ptr_eq(&last, &sent[1].1));
        assert_eq!(*last.borrow(), bytes.borrow()[(5 * FEED_BYTES) as usize..]);
        assert!(refill(&mut slot, 3, sent[2].1.clone()).is_none());
        assert!(slot.is_none());
    }

    #[test]
    fn a_piece_of_another_load_is_not_refilled() {
        let mut slot = Some(Refill::new(3, 1, posted(FEED_BYTES * 6), 0, FEED_BYTES * 6));
        assert!(refill(&mut slot, 4, posted(FEED_BYTES)).is_none());
        assert!(slot.is_some());
        assert!(refill(&mut None, 3, posted(FEED_BYTES)).is_none());
    }
}
