//! Where a load's bytes come from, as the worker's sources feed them: the [`Receiver`] they call
//! (the load worker's `Loader`, or a download worker's pieces), what a fetched response's headers
//! decide ([`headers`]: read in ranged parts, refused, handed to a download worker, or read here),
//! posted bytes fed in slices ([`take`]), and fetch failures in words. The browser's side
//! (`fetch`, `File` reads) is `crate::web::source`; this is generic over its bytes, so it is
//! tested natively.
//!
//! Invariants: a source stops (and cancels its fetch) as soon as the receiver refuses a piece
//! (the load was cancelled or replaced), so a dropped load never keeps the network or the disk
//! busy.

use super::inflate::Inflating;
use super::ranges::Reply;
use super::slices::{View, SLICE_BYTES};
use std::cell::RefCell;
use std::rc::Weak;

/// Bodies this large (declared by `Content-Length`) are offered to [`Receiver::handoff`], to be
/// downloaded by a download worker: below it the stall costs little and a second request and a
/// worker's boot would cost more.
pub const HANDOFF_BYTES: u64 = 32 << 20;

/// A gzip (by its name) this large is offered too: the download worker inflates it and cuts it
/// into parts for every core (`inflate`), which pays from about 20 MB of JSON.
pub const GZIP_HANDOFF_BYTES: u64 = 2 << 20;

/// Whether a body named `name` of `size` bytes (declared) is offered to a download worker.
pub fn handoff_due(name: &str, size: Option<u64>) -> bool {
    size.is_some_and(|s| s >= HANDOFF_BYTES || (is_gzip_name(name) && s >= GZIP_HANDOFF_BYTES))
}

/// Whether a file's name says it is a gzip (`.gz`).
pub fn is_gzip_name(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with(".gz")
}

/// What a source feeds; every call names its load, and `false` means "stop, not current".
pub trait Receiver {
    /// The bytes a source hands on.
    type View: View;
    /// What a source waits on before reading on (a promise in the browser).
    type Room;
    /// Load `id` has `size` bytes (if known) named `name`.
    fn open(&mut self, id: u32, name: &str, size: Option<u64>) -> bool;
    /// The next bytes of load `id`.
    fn bytes(&mut self, id: u32, bytes: &Self::View) -> bool;
    /// Load `id` has all its bytes.
    fn finish(&mut self, id: u32);
    /// Load `id` cannot be read: `message` says why.
    fn failed(&mut self, id: u32, message: String);
    /// Something to wait for before reading on, when too many bytes are still unparsed.
    fn room(&mut self) -> Option<Self::Room> {
        None
    }
    /// Load `id`'s body (at `url`, large) could be downloaded by a download worker instead;
    /// true if one took it over (the fetch here then stops).
    fn handoff(&mut self, _id: u32, _url: &str) -> bool {
        false
    }
    /// Load `id`'s response from `url` has `reply`'s headers: true if it is read in ranged
    /// parts instead (the fetch here then stops), before `open`.
    fn ranged(&mut self, _id: u32, _name: &str, _url: &str, _reply: &Reply) -> bool {
        false
    }
    /// Load `id`'s gzip, inflated and cut by a download worker, sent `event`; false (stop the
    /// download) if the load is not current or ended.
    fn inflating(&mut self, _id: u32, _event: Inflating<Self::View>) -> bool {
        false
    }
}

/// Runs `f` on the receiver if it still exists; `T::default()` (false: stop) if it does not.
pub fn with<R, T: Default>(to: &Weak<RefCell<R>>, f: impl FnOnce(&mut R) -> T) -> T {
    to.upgrade().map(|r| f(&mut r.borrow_mut())).unwrap_or_default()
}

/// Load `id`'s response from `url` (after redirects; `name`) arrived with `reply`'s headers:
/// true if its body is read here. Otherwise (false) the caller cancels the body: it is read in
/// ranged parts, refused (too big, or dropped), or a large body went to a download worker.
pub fn headers<R: Receiver>(to: &Weak<RefCell<R>>, id: u32, name: &str, url: &str, reply: &Reply) -> bool {
    // A large body on a server that answers `Range` is read in parts by every core instead.
    if with(to, |r| r.ranged(id, name, url, reply)) {
        return false;
    }
    if !with(to, |r| r.open(id, name, reply.size)) {
        return false;
    }
    // A large body goes to a download worker that reads it while this worker parses (or, a
    // gzip, that inflates it for the parse workers).
    !(handoff_due(name, reply.size) && with(to, |r| r.handoff(id, url)))
}

/// Feeds `buffer` (bytes posted to the page, named `name`) into load `id` of `to`, in
/// [`SLICE_BYTES`] views of it, while `to` takes them.
pub fn take<R: Receiver>(to: &Weak<RefCell<R>>, id: u32, name: &str, buffer: &R::View) {
    let size = buffer.length();
    if !with(to, |r| r.open(id, name, Some(u64::from(size)))) {
        return;
    }
    let mut at = 0;
    while at < size {
        // Below 4 GiB: the length is a u32.
        let to_byte = at.saturating_add(SLICE_BYTES as u32).min(size);
        if !with(to, |r| r.bytes(id, &buffer.sub(at, to_byte))) {
            return;
        }
        at = to_byte;
    }
    with(to, |r| r.finish(id));
}

/// A failed HTTP status in words, with a hint for the usual ones.
pub fn http_error(code: u16, text: &str, url: &str) -> String {
    let hint = match code {
        404 => " (no such file on that server: check the ?url= link)",
        401 | 403 => " (the server refuses to share this file)",
        _ => "",
    };
    format!("HTTP {code} {text} fetching {url:?}{hint}")
}

/// Why a fetch of `href` was rejected (`why`, the browser's words), for a page at origin `page`:
/// the browser only says "Failed to fetch", which for another origin is almost always CORS (or
/// the server being down).
pub fn fetch_failure(href: &str, why: &str, page: &str, same_origin: bool) -> String {
    if same_origin {
        format!("fetching {href:?} failed: {why} (is the server running?)")
    } else {
        format!(
            "fetching {href:?} failed: {why}. The server did not answer, or it does not let this \
             page read the file (CORS): it must send the header `Access-Control-Allow-Origin: \
             {page}` (or `*`) with the trace."
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::rc::Rc;

    /// What a receiver heard.
    #[derive(Debug, PartialEq)]
    pub enum Call {
        Ranged(u32, String),
        Open(u32, String, Option<u64>),
        Handoff(u32, String),
        Bytes(u32, Vec<u8>),
        Finish(u32),
        Failed(u32, String),
        Inflating(u32, Inflating<Vec<u8>>),
    }

    /// A receiver that takes bytes while `accept` (and `take_bytes` more pieces), reads in ranges
    /// if `ranged`, hands off if `handoff`.
    #[derive(Default)]
    pub struct Rec {
        pub accept: bool,
        pub ranged: bool,
        pub handoff: bool,
        pub take_bytes: Option<usize>,
        pub calls: Vec<Call>,
    }

    impl Receiver for Rec {
        type View = Vec<u8>;
        type Room = ();

        fn open(&mut self, id: u32, name: &str, size: Option<u64>) -> bool {
            self.calls.push(Call::Open(id, name.into(), size));
            self.accept
        }

        fn bytes(&mut self, id: u32, bytes: &Vec<u8>) -> bool {
            self.calls.push(Call::Bytes(id, bytes.clone()));
            if let Some(left) = self.take_bytes.as_mut() {
                *left = left.saturating_sub(1);
                return self.accept && *left > 0;
            }
            self.accept
        }

        fn finish(&mut self, id: u32) {
            self.calls.push(Call::Finish(id));
        }

        fn failed(&mut self, id: u32, message: String) {
            self.calls.push(Call::Failed(id, message));
        }

        fn handoff(&mut self, id: u32, url: &str) -> bool {
            self.calls.push(Call::Handoff(id, url.into()));
            self.handoff
        }

        fn ranged(&mut self, id: u32, _name: &str, url: &str, _reply: &Reply) -> bool {
            self.calls.push(Call::Ranged(id, url.into()));
            self.ranged
        }

        fn inflating(&mut self, id: u32, event: Inflating<Vec<u8>>) -> bool {
            self.calls.push(Call::Inflating(id, event));
            self.accept
        }
    }

    fn after_headers(rec: Rec, size: Option<u64>) -> (bool, Vec<Call>) {
        let rec = Rc::new(RefCell::new(rec));
        let reply = Reply { size, ..Reply::default() };
        let read_here = headers(&Rc::downgrade(&rec), 2, "t.json", "http://x/t.json", &reply);
        let calls = rec.take().calls;
        (read_here, calls)
    }

    #[test]
    fn headers_decide_ranges_then_open_then_handoff() {
        let url = || "http://x/t.json".to_owned();
        let ranged = after_headers(Rec { accept: true, ranged: true, ..Rec::default() }, Some(HANDOFF_BYTES));
        assert_eq!(ranged, (false, vec![Call::Ranged(2, url())]));
        let refused = after_headers(Rec::default(), Some(5));
        assert_eq!(refused, (false, vec![Call::Ranged(2, url()), Call::Open(2, "t.json".into(), Some(5))]));
        let small = after_headers(Rec { accept: true, handoff: true, ..Rec::default() }, Some(HANDOFF_BYTES - 1));
        assert_eq!(small, (true, vec![Call::Ranged(2, url()), Call::Open(2, "t.json".into(), Some(HANDOFF_BYTES - 1))]));
        let large = after_headers(Rec { accept: true, handoff: true, ..Rec::default() }, Some(HANDOFF_BYTES));
        assert!(!large.0);
        assert_eq!(large.1.last(), Some(&Call::Handoff(2, url())));
        let kept = after_headers(Rec { accept: true, ..Rec::default() }, Some(HANDOFF_BYTES));
        assert!(kept.0);
        assert!(after_headers(Rec { accept: true, handoff: true, ..Rec::default() }, None).0);
        assert!(!headers(&Weak::<RefCell<Rec>>::new(), 2, "t", "u", &Reply::default()));
    }

    #[test]
    fn a_gzip_is_handed_off_from_a_smaller_size() {
        assert!(handoff_due("t.json", Some(HANDOFF_BYTES)));
        assert!(!handoff_due("t.json", Some(HANDOFF_BYTES - 1)));
        assert!(handoff_due("t.pt.trace.JSON.GZ", Some(GZIP_HANDOFF_BYTES)));
        assert!(!handoff_due("t.json.gz", Some(GZIP_HANDOFF_BYTES - 1)));
        assert!(!handoff_due("t.json.gz", None));
    }

    fn taken(rec: Rec, len: usize) -> Vec<Call> {
        let rec = Rc::new(RefCell::new(rec));
        let buffer: Vec<u8> = (0..len).map(|i| (i % 7) as u8).collect();
        take(&Rc::downgrade(&rec), 3, "posted.json", &buffer);
        rec.take().calls
    }

    #[test]
    fn posted_bytes_go_in_slices_until_refused() {
        let len = 2 * SLICE_BYTES as usize + 3;
        let calls = taken(Rec { accept: true, ..Rec::default() }, len);
        let sizes: Vec<usize> = calls.iter().filter_map(|c| if let Call::Bytes(_, b) = c { Some(b.len()) } else { None }).collect();
        assert_eq!(sizes, [SLICE_BYTES as usize, SLICE_BYTES as usize, 3]);
        assert_eq!(calls.first(), Some(&Call::Open(3, "posted.json".into(), Some(len as u64))));
        assert_eq!(calls.last(), Some(&Call::Finish(3)));
        let Some(Call::Bytes(_, last)) = calls.get(3) else { panic!("no third slice") };
        assert_eq!(*last, [(2 * SLICE_BYTES as usize) % 7, (2 * SLICE_BYTES as usize + 1) % 7, (2 * SLICE_BYTES as usize + 2) % 7].map(|b| b as u8));
        let stopped = taken(Rec { accept: true, take_bytes: Some(1), ..Rec::default() }, len);
        assert_eq!(stopped.len(), 2);
        assert_eq!(taken(Rec::default(), len), [Call::Open(3, "posted.json".into(), Some(len as u64))]);
        assert_eq!(taken(Rec { accept: true, ..Rec::default() }, 0), [Call::Open(3, "posted.json".into(), Some(0)), Call::Finish(3)]);
    }

    #[test]
    fn failures_are_put_in_words() {
        assert_eq!(http_error(404, "Not Found", "http://x/t"), r#"HTTP 404 Not Found fetching "http://x/t" (no such file on that server: check the ?url= link)"#);
        assert_eq!(http_error(403, "Forbidden", "u"), r#"HTTP 403 Forbidden fetching "u" (the server refuses to share this file)"#);
        assert_eq!(http_error(500, "Oops", "u"), r#"HTTP 500 Oops fetching "u""#);
        assert_eq!(fetch_failure("http://a/t", "Failed to fetch", "http://a", true), r#"fetching "http://a/t" failed: Failed to fetch (is the server running?)"#);
        let cors = fetch_failure("http://b/t", "Failed to fetch", "http://a", false);
        assert!(cors.contains("(CORS)") && cors.contains("`Access-Control-Allow-Origin: http://a`"), "{cors}");
    }
}
