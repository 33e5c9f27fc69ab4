//! Long strings cut before a stream holds them: the bytes a [`super::Stream`] holds stay
//! bounded when one string is longer than what it would otherwise hold (a 200 MB name, a
//! 1 GB arg value inflating from a 5 MB gzip), where the stream would hold the whole event.
//!
//! How: once a read leaves more than [`CHECK_AFTER`] bytes unread (the element being read is
//! that long; no real event comes near), [`Clip::check`] walks what is held for strings, from
//! where it stopped last. A string longer than `json::long::MAX_STRING_BYTES` is cut as the
//! tokenizer would cut it (`json::long::cut_len`): the rest of it is let go, and if its
//! closing quote has not arrived, what arrives is let go up to it ([`Clip::arrived`]). The
//! tokenizer then reads the kept text, a string short enough to keep whole, so the model is
//! the one a whole read gives. A cut is counted once the tokenizer has read past it
//! ([`Clip::read_past`]), as the tokenizer counts the strings it cuts itself: a string after a
//! syntax error is not counted by either.
//!
//! Offsets: the tokenizer counts the bytes it reads, so past a gap its offsets are short of
//! the input's by what was let go; [`Clip::original`] adds it back for every offset the stream
//! reports, and the gaps go with the bytes held to locate a diagnostic (`json::Window::gaps`).
//!
//! Invariants: `held[0]` is outside any string (a read stops at an element boundary); gaps lie
//! inside elements not yet read whole, so a read that lets bytes go lets go whole gaps.
//!
//! Cost: nothing for a stream whose reads leave less than [`CHECK_AFTER`] unread; else one
//! walk over what is held (16 bytes at a time) and, for a string being let go, one search for
//! its closing quote in what arrives.

use crate::json::long::{cut_len, string_end, MAX_STRING_BYTES};
use crate::json::{Gap, LongStrings};

/// Unread bytes after a read above which what is held is checked for long strings: 1 MiB,
/// as a stream reads every 1 MiB, and hundreds of times the longest real event.
pub(super) const CHECK_AFTER: usize = 1 << 20;

/// Long strings in what a stream holds; see the module docs. Indexes are into the bytes held.
#[derive(Debug, Default)]
pub(super) struct Clip {
    /// Bytes before this index were checked.
    checked: usize,
    /// Inside a string at `checked`: where its text starts.
    open: Option<usize>,
    /// A backslash inside the string ended the bytes checked.
    escape: bool,
    /// The string being let go as it arrives: its quote's offset and raw length so far.
    skipping: Option<(u64, u64)>,
    /// Input let go between the bytes held, in order.
    gaps: Vec<Gap>,
    /// Strings cut here and closed, not yet read past: quote offset and raw length, in order.
    cut: Vec<(u64, u64)>,
}

impl Clip {
    /// Input let go between the bytes held.
    pub(super) fn gaps(&self) -> &[Gap] {
        &self.gaps
    }

    /// The input's offset of `offset`, an offset the tokenizer gave reading the bytes held
    /// from `base` on.
    pub(super) fn original(&self, offset: u64) -> u64 {
        let mut at = offset;
        for g in &self.gaps {
            if g.at <= at {
                at += g.len;
            }
        }
        at
    }

    /// Cuts the long strings in `held` (the input from `base` on) not yet checked.
    pub(super) fn check(&mut self, held: &mut Vec<u8>, base: u64) {
        while self.skipping.is_none() {
            let Some(text) = self.open else {
                let Some(quote) = memchr::memchr(b'"', held.get(self.checked..).unwrap_or_default()) else {
                    self.checked = held.len();
                    return;
                };
                self.open = Some(self.checked + quote + 1);
                self.checked += quote + 1;
                continue;
            };
            let end = string_end(held, self.checked, &mut self.escape);
            if end.unwrap_or(held.len()) - text <= MAX_STRING_BYTES {
                let Some(end) = end else {
                    self.checked = held.len();
                    return;
                };
                self.open = None;
                self.checked = end + 1;
                continue;
            }
            let keep = text + cut_len(&held[text..]);
            let quote = self.original(base + text as u64 - 1);
            let stop = end.unwrap_or(held.len());
            self.let_go(held, keep..stop, base);
            self.open = None;
            match end {
                Some(end) => {
                    self.cut.push((quote, (end - text) as u64));
                    self.checked = keep + 1;
                }
                None => {
                    self.skipping = Some((quote, (stop - text) as u64));
                    self.checked = keep;
                }
            }
        }
    }

    /// Lets `held[range]` go, as a gap.
    fn let_go(&mut self, held: &mut Vec<u8>, range: std::ops::Range<usize>, base: u64) {
        let at = self.original(base + range.start as u64);
        self.gaps.push(Gap { at, len: 0, newlines: 0, line_start: None });
        self.grow_gap(&held[range.clone()]);
        held.drain(range);
    }

    /// Counts `gone` into the last gap, which it follows.
    fn grow_gap(&mut self, gone: &[u8]) {
        let Some(g) = self.gaps.last_mut() else { return };
        g.newlines += memchr::memchr_iter(b'\n', gone).count() as u64;
        if let Some(last) = memchr::memrchr(b'\n', gone) {
            g.line_start = Some(g.at + g.len + last as u64 + 1);
        }
        g.len += gone.len() as u64;
    }

    /// How many of the first bytes of `bytes`, arriving after the bytes held, are let go: all
    /// of them while a long string's closing quote has not come, then none.
    pub(super) fn arrived(&mut self, bytes: &[u8]) -> usize {
        let Some((quote, len)) = self.skipping else { return 0 };
        let end = string_end(bytes, 0, &mut self.escape);
        let gone = end.unwrap_or(bytes.len());
        self.grow_gap(&bytes[..gone]);
        let len = len + gone as u64;
        match end {
            Some(_) => {
                self.cut.push((quote, len));
                self.skipping = None;
                // The quote is the next byte held, right where the kept text ends.
                self.checked += 1;
            }
            None => self.skipping = Some((quote, len)),
        }
        gone
    }

    /// The strings cut here that start before offset `reached`, which the tokenizer has read
    /// past, counted (once).
    pub(super) fn read_past(&mut self, reached: u64) -> LongStrings {
        let n = self.cut.iter().position(|&(quote, _)| quote >= reached).unwrap_or(self.cut.len());
        let mut long = LongStrings::default();
        for (quote, len) in self.cut.drain(..n) {
            long.add(quote, len);
        }
        long
    }

    /// A read let go of the first `used` bytes held, which started at `base`: what was checked
    /// moves with the rest, and the gaps among them go. Returns the input's offset of what is
    /// now held first, and the newlines of the gaps gone and where the line after the last
    /// starts.
    pub(super) fn used(&mut self, used: usize, base: u64) -> (u64, u64, Option<u64>) {
        let next = self.original(base + used as u64);
        let kept = self.gaps.iter().position(|g| g.at >= next).unwrap_or(self.gaps.len());
        let gone = &self.gaps[..kept];
        let newlines = gone.iter().map(|g| g.newlines).sum();
        let line_start = gone.iter().filter_map(|g| g.line_start).next_back();
        self.gaps.drain(..kept);
        self.checked = self.checked.saturating_sub(used);
        self.open = self.open.and_then(|text| text.checked_sub(used));
        (next, newlines, line_start)
    }
}
