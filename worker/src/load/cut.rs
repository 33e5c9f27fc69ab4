//! One file read as parts on their own: [`cut`] finds event boundaries by reading only a window
//! at each guess, each part is streamed from its own byte range ([`Stream::part`], on any
//! thread), and [`join`] merges them into the trace a sequential parse gives. How the CLI
//! streams one file on several cores without holding it whole.
//!
//! A cut is verified as `input::split`'s are; if a part but the last does not end cleanly at
//! its boundary, [`join`] says so and the caller reads the file sequentially, so the result
//! never depends on the cut.

use super::{empty, finish, Arrived, Joined, LoadFailure, Piece};
use crate::fork::Fork;
use crate::input::{is_gzip, split::boundary_after};
use crate::json::{Form, Location, Tokenizer, Window};
use crate::model::Trace;
use std::io;
use std::ops::Range;

/// Bytes read at the file's start to find its form and where its events begin.
const HEAD: usize = 1 << 20;

/// Bytes read at each guessed cut to find a boundary in: larger than any real event.
const WINDOW: usize = 4 << 20;

/// Cuts a file of `len` bytes into at most `parts` parts at event boundaries, reading only
/// its head and a window at each guess with `read_at(offset, buf)` (fills `buf` from
/// `offset`, returns the bytes read, fewer only at the end). One part, the whole file, when
/// it is gzip, its head is not a trace's, or no boundary is found.
///
/// # Errors
/// The first read that fails.
pub fn cut(
    len: u64,
    parts: usize,
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<usize>,
) -> io::Result<Vec<(Piece, Range<u64>)>> {
    cut_by(len, &vec![1; parts], read_at)
}

/// As [`cut`], into at most `shares.len()` parts, part `k` about `shares[k]` shares of the
/// events' bytes: a first part read where the others' bytes go elsewhere (the page's load
/// worker, which parses it itself) can take more.
///
/// # Errors
/// The first read that fails.
pub fn cut_by(
    len: u64,
    shares: &[u32],
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<usize>,
) -> io::Result<Vec<(Piece, Range<u64>)>> {
    // A first part finds its form itself.
    let whole = |form| vec![(Piece { start: 0, form, first: true }, 0..len)];
    let mut head = vec![0; HEAD.min(usize::try_from(len).unwrap_or(HEAD))];
    let got = read_at(0, &mut head)?;
    head.truncate(got);
    if shares.len() < 2 || is_gzip(&head) {
        return Ok(whole(Form::Array));
    }
    let Ok(tokens) = Tokenizer::new(&head, 0) else { return Ok(whole(Form::Array)) };
    let (form, events_start) = (tokens.form(), tokens.offset());
    let total: u64 = shares.iter().map(|&s| u64::from(s)).sum();
    let step = len.saturating_sub(events_start) / total.max(1);
    let (mut starts, mut window, mut before) = (vec![0], Vec::new(), 0);
    for &share in &shares[..shares.len() - 1] {
        before += u64::from(share);
        let Some(at) = boundary_near(events_start + before * step, len, form, &mut window, read_at)? else { continue };
        if starts.last().is_some_and(|&last| at > last) {
            starts.push(at);
        }
    }
    let ends = starts.iter().skip(1).copied().chain(std::iter::once(len));
    let pieces = starts.iter().zip(ends).map(|(&start, end)| (Piece { start, form, first: start == 0 }, start..end));
    Ok(pieces.collect())
}

/// The first event boundary at or after `guess` and before `end`, found by reading a window
/// there with `read_at` into `window` (the caller's, grown once to [`WINDOW`] and reused across
/// guesses); `None` when there is none in the window.
///
/// # Errors
/// The window's read.
pub(super) fn boundary_near(
    guess: u64,
    end: u64,
    form: Form,
    window: &mut Vec<u8>,
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<usize>,
) -> io::Result<Option<u64>> {
    window.resize(WINDOW, 0);
    let got = read_at(guess, window)?;
    Ok(boundary_after(&window[..got], 0, form).map(|rel| guess + rel as u64).filter(|&at| at < end))
}

/// Merges parts read on their own ([`Stream::finish_part`], in file order) into the trace a
/// sequential parse of the file gives, `fork` running its independent steps at once; `None`
/// when a part but the last did not end cleanly at its cut (the caller then reads the file
/// sequentially).
pub fn join(parts: Vec<impl Into<Arrived>>, fork: &impl Fork) -> Option<Result<Trace, LoadFailure>> {
    let mut parts: Vec<Arrived> = parts.into_iter().map(Into::into).collect();
    let Arrived { part: last, encoded: last_encoded } = parts.pop()?;
    if parts.iter().any(|p| !p.part.part.ended_cleanly()) {
        return None;
    }
    if !last.any && parts.iter().all(|p| !p.part.any) {
        return Some(Err(empty()));
    }
    // The last part's diagnostics are located in the whole file: count the lines before it,
    // those of the bytes each part still holds and of the strings it let go among them.
    let (mut lines, mut line_start) = (0, 0);
    for Arrived { part: p, .. } in &parts {
        let end = p.base + p.held.len() as u64 + p.gaps.iter().map(|g| g.len).sum::<u64>();
        let held = Window { bytes: &p.held, base: p.base, lines_before: lines + p.lines_before, line_start: p.line_start.unwrap_or(line_start), gaps: &p.gaps };
        let at = Location::within(held, end);
        (lines, line_start) = (at.line - 1, end + 1 - at.column);
    }
    let window = Window {
        bytes: &last.held,
        base: last.base,
        lines_before: lines + last.lines_before,
        line_start: last.line_start.unwrap_or(line_start),
        gaps: &last.gaps,
    };
    let joined = |a: Arrived| Joined { part: a.part.part, encoded: a.encoded };
    let last = Joined { part: last.part, encoded: last_encoded };
    let all = parts.into_iter().map(joined).chain(std::iter::once(last)).collect();
    Some(finish(window, all, fork))
}
