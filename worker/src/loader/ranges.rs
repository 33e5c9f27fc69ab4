//! URL loads fetched in byte ranges, so their parts are parsed on every core as a picked file's
//! are: whether a response can be (its headers), the `Range` header of a part, and whether a
//! ranged reply holds the bytes asked for. Each part is one request, parsed as its body arrives
//! (`body`). The wasm side asks these; nothing here touches the web.
//!
//! Why ranges, not cutting the one download as it arrives: each part's reader (the load worker
//! and every parse worker) then fetches its own bytes on its own thread, as it reads its range
//! of a picked file, and no byte passes through another worker's memory.

use super::{Host, Loader, Whole};
use crate::engine::Target;
use std::ops::Range;

/// Parts of a URL at most, each one request open until its body is read: a browser opens 6
/// HTTP/1.1 connections per host, and a seventh part's request would wait for a part to end.
pub const MAX_REQUESTS: usize = 6;

/// What a plain GET's response says of ranges, as the worker sees its headers (a header the
/// server did not send, or that CORS hides from another origin, is `None`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Reply<'a> {
    /// `Content-Length`, parsed.
    pub size: Option<u64>,
    /// `Accept-Ranges`.
    pub accept_ranges: Option<&'a str>,
    /// `Content-Encoding`.
    pub content_encoding: Option<&'a str>,
}

/// Why a URL is read as one stream rather than in ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unranged {
    /// No `Content-Length`: the parts cannot be planned.
    NoLength,
    /// The server does not say it answers `Range` (or CORS hides that it does).
    NoRanges,
    /// The body is encoded on the wire (gzip, br): `Content-Length` and ranges count encoded
    /// bytes, not the JSON's.
    Encoded,
}

/// Whether a `Content-Encoding` says the body is encoded on the wire (gzip, br).
pub fn encoded(content_encoding: Option<&str>) -> bool {
    content_encoding.map(str::trim).is_some_and(|e| !e.is_empty() && !e.eq_ignore_ascii_case("identity"))
}

/// The size of the body's bytes as they arrive, from a response's `Content-Length` and
/// `Content-Encoding` headers: the length unless the body is encoded on the wire (the length
/// then counts encoded bytes).
pub fn json_size(content_length: Option<&str>, content_encoding: Option<&str>) -> Option<u64> {
    content_length.and_then(|s| s.trim().parse().ok()).filter(|_| !encoded(content_encoding))
}

/// The size of the JSON a response's body holds if it can be fetched in byte ranges: it
/// declares its length, says `Accept-Ranges: bytes` and is not encoded on the wire.
///
/// # Errors
/// Why it cannot ([`Unranged`]).
pub fn ranged_size(reply: &Reply) -> Result<u64, Unranged> {
    if encoded(reply.content_encoding) {
        return Err(Unranged::Encoded);
    }
    let size = reply.size.ok_or(Unranged::NoLength)?;
    let ranges = reply.accept_ranges.is_some_and(|r| r.split(',').any(|unit| unit.trim().eq_ignore_ascii_case("bytes")));
    if !ranges {
        return Err(Unranged::NoRanges);
    }
    Ok(size)
}

/// The `Range` header asking for `range` (an HTTP range's end is inclusive); `None` when it is
/// empty.
pub fn range_header(range: &Range<u64>) -> Option<String> {
    (range.end > range.start).then(|| format!("bytes={}-{}", range.start, range.end - 1))
}

/// Whether a reply to a request for `asked` holds those bytes: status 206, a `Content-Range`
/// (when the worker can see it) naming them, and `got` bytes (when the body is read; `None`
/// before).
///
/// # Errors
/// What the server answered instead, in words.
pub fn check_reply(status: u16, content_range: Option<&str>, got: Option<u64>, asked: &Range<u64>) -> Result<(), String> {
    let want = asked.end.saturating_sub(asked.start);
    if status != 206 {
        return Err(format!("asked for bytes {}..{} the server answered HTTP {status}, not 206 (partial content)", asked.start, asked.end));
    }
    if let Some(header) = content_range {
        let span = header.trim().strip_prefix("bytes ").and_then(|r| r.split('/').next()).and_then(|r| r.split_once('-'));
        let span = span.and_then(|(a, b)| Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?)));
        if span != Some((asked.start, asked.end.saturating_sub(1))) {
            return Err(format!("asked for bytes {}..{} the server sent Content-Range {header:?}", asked.start, asked.end));
        }
    }
    match got {
        Some(got) if got != want => Err(format!("asked for bytes {}..{} the server sent {got} bytes", asked.start, asked.end)),
        _ => Ok(()),
    }
}

impl<H: Host> Loader<H> {
    /// Load `id`'s response from `url` (`name`) arrived with `reply`'s headers: true if it is
    /// read in parts, each part fetched in ranges by its reader (the caller then drops its own
    /// body); false to read the body as it arrives (`open`): too small, one core or `?workers=1`,
    /// no ranges, encoded, gzip, not a trace's head, a held rank, or the range probe failed.
    pub fn ranged(&mut self, id: u32, name: &str, url: &str, reply: &Reply) -> bool {
        let Some((_, workers)) = self.reading.filter(|&(r, _)| r == id) else {
            return false;
        };
        // A held rank's model goes to the run, not the current trace the parts are joined into.
        if self.target_of(id) != Target::Current {
            return false;
        }
        let Ok(size) = ranged_size(reply) else { return false };
        let whole = Whole::Url { url: url.to_owned(), name: name.to_owned(), size };
        self.read_in_parts(id, workers, &whole)
    }
}
