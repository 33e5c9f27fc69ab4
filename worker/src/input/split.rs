//! Split points for a parallel parse: cut the event array into parts at event boundaries.
//!
//! A boundary is the byte right after a `,` that separates two events: `}` , `{` with only
//! whitespace between. Positions are found by searching forward from evenly spaced guesses; a
//! candidate is accepted only if a few events parse from it, so a `},{` inside a string is
//! rejected (a string would have to contain whole valid events to fool it). The parse driver
//! re-checks that every part but the last ends cleanly at its boundary and falls back to a
//! sequential parse otherwise, so a wrong guess costs time, never correctness.
//!
//! Cost: O(parts × search window); the search stops at the first verified boundary.

use crate::json::{Form, RawEvent, Tokenizer};
use std::ops::Range;

/// Events that must parse after a candidate boundary.
const VERIFY_EVENTS: u32 = 4;
/// Bytes tried when verifying a candidate.
const VERIFY_WINDOW: usize = 1 << 16;

/// Byte ranges covering `json` whose joins are event boundaries; `events_start` is where the
/// event array's first element may begin (after `[`). At most `parts` ranges; one range when
/// the input is small or no boundary is found.
pub fn split(json: &[u8], events_start: usize, form: Form, parts: usize) -> Vec<Range<usize>> {
    let mut cuts = vec![0];
    let len = json.len();
    if parts > 1 && len > events_start {
        let step = (len - events_start) / parts;
        for k in 1..parts {
            let guess = (events_start + k * step).max(cuts[cuts.len() - 1] + 1);
            if let Some(cut) = boundary_after(json, guess, form) {
                if cut > cuts[cuts.len() - 1] && cut < len {
                    cuts.push(cut);
                }
            }
        }
    }
    cuts.push(len);
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// The first verified boundary at or after `from`.
pub fn boundary_after(json: &[u8], from: usize, form: Form) -> Option<usize> {
    let mut at = from;
    while let Some(rel) = memchr::memchr(b',', json.get(at..)?) {
        let comma = at + rel;
        at = comma + 1;
        let before = json[..comma].iter().rposition(|b| !b.is_ascii_whitespace());
        let after = json[at..].iter().position(|b| !b.is_ascii_whitespace()).map(|p| at + p);
        if before.map(|i| json[i]) != Some(b'}') || after.map(|i| json[i]) != Some(b'{') {
            continue;
        }
        if verified(json, at, form) {
            return Some(at);
        }
    }
    None
}

/// True when events parse from `start` (up to [`VERIFY_EVENTS`], or the window's end).
fn verified(json: &[u8], start: usize, form: Form) -> bool {
    let end = (start + VERIFY_WINDOW).min(json.len());
    let mut t = Tokenizer::events_only(&json[start..end], start as u64, form);
    let mut ev = RawEvent::default();
    for _ in 0..VERIFY_EVENTS {
        match t.next_event(&mut ev) {
            Ok(true) if ev.ph.is_some() => {}
            Ok(false) => return t.events_read() > 0,
            Ok(true) => return false,
            Err(e) => return e.is_eof() && t.events_read() > 0,
        }
    }
    true
}
