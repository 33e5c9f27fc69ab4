//! The download worker ("pump") of a large URL: its messages ([`ToPump`], [`FromPump`]), the
//! pieces it gathers and the bytes in flight ([`Gather`]), and what the load worker does with
//! each of its messages ([`from_pump`]). Generic over the transport's bytes, so it is tested
//! natively; `crate::web::pump` posts the messages and owns the worker.
//!
//! Flow: the pump posts `Ready`, is sent `Fetch { url }`, downloads the body and posts it in
//! pieces of at least [`PIECE`] bytes (`Bytes`, the piece beside it); the load worker parses each
//! and answers `Consumed`. At most [`WINDOW`] bytes are in flight, so a parse slower than the
//! network holds 64 MiB, never the file. `Finish` or `Failed` end the download.
//!
//! A gzip body, when the load worker sends a plan with the URL (`inflate::Inflate`), is
//! inflated here instead (`web::gunzip`): `Piece` carries its JSON (answered `Consumed` once a
//! parse worker parsed it), `Inflated` or `Uninflatable` ends it.

use super::inflate::{Inflate, Inflating};
use super::source::{with, Receiver};
use super::slices::View;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::rc::Weak;

/// Name given to the download worker; the worker binary reads it to pick the role.
pub const PUMP_NAME: &str = "kinetoscope-fetch";

/// Most bytes posted to the load worker and not yet parsed.
pub const WINDOW: u64 = 64 << 20;

/// Bytes gathered before a piece is posted: read as soon as they arrive, the network's pieces
/// are often a few KiB, and each message costs the load worker a task.
pub const PIECE: u32 = 1 << 20;

/// From the load worker to the pump.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ToPump {
    /// Download `url`.
    Fetch {
        /// The body's URL.
        url: String,
        /// How to inflate and cut it if it is a gzip; `None`: post it as it comes.
        inflate: Option<Inflate>,
    },
    /// `bytes` of the posted pieces were parsed.
    Consumed {
        /// Bytes parsed.
        bytes: u64,
    },
}

/// From the pump to the load worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum FromPump {
    /// Booted: send it the URL.
    Ready,
    /// The next piece is the transferred buffer beside this message.
    Bytes,
    /// The body was all posted.
    Finish,
    /// The next JSON the gzip inflated to is the transferred buffer beside this message; `read`
    /// bytes of the gzip were read so far.
    Piece {
        /// Compressed bytes read so far.
        read: u64,
    },
    /// The gzip was all inflated and posted: `json_bytes` of JSON.
    Inflated {
        /// JSON bytes.
        json_bytes: u64,
    },
    /// The browser could not inflate the gzip whole: `message` says why.
    Uninflatable {
        /// The browser's words.
        message: String,
    },
    /// The download failed: `message` says why.
    Failed {
        /// Why.
        message: String,
    },
}

/// A pump message's JSON, as posted.
pub fn encode<M: Serialize>(msg: &M) -> String {
    // Tags, integers and strings: serializing cannot fail.
    serde_json::to_string(msg).unwrap_or_default()
}

/// A message read from its JSON; `None` if it is none of `M`'s.
pub fn decode<M: for<'de> Deserialize<'de>>(json: Option<&str>) -> Option<M> {
    serde_json::from_str(json?).ok()
}

/// The pump's side: pieces read and not posted yet, and bytes posted and not parsed yet.
pub struct Gather<V> {
    gathered: Vec<V>,
    gathered_bytes: u32,
    in_flight: u64,
}

impl<V> Default for Gather<V> {
    fn default() -> Self {
        Self { gathered: Vec::new(), gathered_bytes: 0, in_flight: 0 }
    }
}

impl<V: View> Gather<V> {
    /// Keeps `bytes`, read; the pieces to post as one, and their length, once [`PIECE`] bytes
    /// are gathered.
    pub fn add(&mut self, bytes: V) -> Option<(Vec<V>, u32)> {
        self.gathered_bytes = self.gathered_bytes.saturating_add(bytes.length());
        self.gathered.push(bytes);
        (self.gathered_bytes >= PIECE).then(|| self.flush()).flatten()
    }

    /// The pieces gathered, to post as one, and their length (counted in flight); `None` if none.
    pub fn flush(&mut self) -> Option<(Vec<V>, u32)> {
        if self.gathered.is_empty() {
            return None;
        }
        self.in_flight += u64::from(self.gathered_bytes);
        let len = std::mem::take(&mut self.gathered_bytes);
        Some((std::mem::take(&mut self.gathered), len))
    }

    /// Whether the download waits: more than [`WINDOW`] bytes posted and not parsed.
    pub fn full(&self) -> bool {
        self.in_flight > WINDOW
    }

    /// `bytes` posted were parsed; whether the download may go on.
    pub fn consumed(&mut self, bytes: u64) -> bool {
        self.in_flight = self.in_flight.saturating_sub(bytes);
        !self.full()
    }
}

/// Handles a pump's message for load `id` of `to` (downloading `url`, inflating a gzip as
/// `inflate` says): `json` its first element (if a string), `beside` the piece after it. The
/// answer to post to the pump, if any (an inflated piece is answered once parsed, by the load
/// worker); `terminate` ends the pump when the download is over (finished, failed or dropped),
/// before `to` hears of it.
pub fn from_pump<R: Receiver>(
    to: &Weak<RefCell<R>>,
    id: u32,
    (url, inflate): (&str, Option<Inflate>),
    json: Option<&str>,
    beside: Option<R::View>,
    terminate: &dyn Fn(),
) -> Option<ToPump> {
    let inflating = |event: Inflating<R::View>| {
        if !with(to, |r| r.inflating(id, event)) {
            terminate();
        }
    };
    match decode::<FromPump>(json) {
        Some(FromPump::Ready) => Some(ToPump::Fetch { url: url.to_owned(), inflate }),
        Some(FromPump::Piece { read }) => {
            match beside {
                Some(bytes) => inflating(Inflating::Piece { bytes, read }),
                None => with(to, |r| r.failed(id, "the download worker sent a piece without its bytes".into())),
            }
            None
        }
        Some(FromPump::Inflated { json_bytes }) => {
            terminate();
            with(to, |r| r.inflating(id, Inflating::Done { json_bytes }));
            None
        }
        Some(FromPump::Uninflatable { message }) => {
            terminate();
            with(to, |r| r.inflating(id, Inflating::Failed(message)));
            None
        }
        Some(FromPump::Bytes) => {
            let Some(bytes) = beside else {
                with(to, |r| r.failed(id, "the download worker sent a piece without its bytes".into()));
                return None;
            };
            // Refused: the load was dropped, and so is the download.
            if !with(to, |r| r.bytes(id, &bytes)) {
                terminate();
                return None;
            }
            Some(ToPump::Consumed { bytes: u64::from(bytes.length()) })
        }
        Some(FromPump::Finish) => {
            terminate();
            with(to, |r| r.finish(id));
            None
        }
        Some(FromPump::Failed { message }) => {
            terminate();
            with(to, |r| r.failed(id, message));
            None
        }
        None => {
            terminate();
            with(to, |r| r.failed(id, "the download worker sent an unreadable message".into()));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::source::tests::{Call, Rec};
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn pieces_are_gathered_to_a_mib_and_counted_in_flight() {
        let mut gather = Gather::default();
        assert_eq!(gather.add(vec![0; (PIECE - 10) as usize]), None);
        let Some((pieces, len)) = gather.add(vec![1; 10]) else { panic!("no piece") };
        assert_eq!((pieces.len(), len), (2, PIECE));
        assert_eq!(gather.flush(), None);
        assert_eq!(gather.add(vec![2; 3]), None);
        assert_eq!(gather.flush(), Some((vec![vec![2; 3]], 3)));
        assert!(!gather.full());
        for _ in 0..64 {
            let _ = gather.add(vec![0; PIECE as usize]);
        }
        // 65 MiB and 3 bytes in flight: over the window until 1 MiB and 3 bytes are parsed.
        assert!(gather.full());
        assert!(!gather.consumed(u64::from(PIECE) + 2));
        assert!(gather.consumed(1));
        assert!(gather.consumed(u64::MAX));
    }

    #[test]
    fn messages_round_trip() {
        let fetch = ToPump::Fetch { url: "http://x/t.json".into(), inflate: None };
        assert_eq!(encode(&fetch), r#"{"type":"Fetch","url":"http://x/t.json","inflate":null}"#);
        assert_eq!(decode::<ToPump>(Some(&encode(&fetch))), Some(fetch));
        assert_eq!(decode::<ToPump>(Some(r#"{"type":"Consumed","bytes":5}"#)), Some(ToPump::Consumed { bytes: 5 }));
        assert_eq!(decode::<FromPump>(Some(&encode(&FromPump::Finish))), Some(FromPump::Finish));
        assert_eq!(decode::<FromPump>(Some("{}")), None);
        assert_eq!(decode::<FromPump>(None), None);
    }

    /// Handles `msg` (with `beside`) for load 1; the answer, whether the pump was terminated, and
    /// what the receiver heard.
    fn handle(accept: bool, msg: Option<&FromPump>, beside: Option<Vec<u8>>) -> (Option<ToPump>, bool, Vec<Call>) {
        let rec = Rc::new(RefCell::new(Rec { accept, ..Rec::default() }));
        let ended = Cell::new(false);
        let json = msg.map(encode);
        let answer = from_pump(&Rc::downgrade(&rec), 1, ("http://x/t", None), json.as_deref(), beside, &|| ended.set(true));
        let calls = rec.take().calls;
        (answer, ended.get(), calls)
    }

    #[test]
    fn each_pump_message_is_answered() {
        assert_eq!(handle(true, Some(&FromPump::Ready), None), (Some(ToPump::Fetch { url: "http://x/t".into(), inflate: None }), false, vec![]));
        let bytes = handle(true, Some(&FromPump::Bytes), Some(vec![7; 5]));
        assert_eq!(bytes, (Some(ToPump::Consumed { bytes: 5 }), false, vec![Call::Bytes(1, vec![7; 5])]));
        assert_eq!(handle(false, Some(&FromPump::Bytes), Some(vec![7; 5])), (None, true, vec![Call::Bytes(1, vec![7; 5])]));
        let lost = handle(true, Some(&FromPump::Bytes), None);
        assert_eq!(lost, (None, false, vec![Call::Failed(1, "the download worker sent a piece without its bytes".into())]));
        assert_eq!(handle(true, Some(&FromPump::Finish), None), (None, true, vec![Call::Finish(1)]));
        let failed = handle(true, Some(&FromPump::Failed { message: "HTTP 500".into() }), None);
        assert_eq!(failed, (None, true, vec![Call::Failed(1, "HTTP 500".into())]));
        let piece = handle(true, Some(&FromPump::Piece { read: 4 }), Some(vec![1, 2]));
        assert_eq!(piece, (None, false, vec![Call::Inflating(1, Inflating::Piece { bytes: vec![1, 2], read: 4 })]));
        let dropped = handle(false, Some(&FromPump::Piece { read: 4 }), Some(vec![1, 2]));
        assert!(dropped.1, "a piece refused ends the download");
        let done = handle(true, Some(&FromPump::Inflated { json_bytes: 7 }), None);
        assert_eq!(done, (None, true, vec![Call::Inflating(1, Inflating::Done { json_bytes: 7 })]));
        let junk = handle(true, Some(&FromPump::Uninflatable { message: "Junk".into() }), None);
        assert_eq!(junk, (None, true, vec![Call::Inflating(1, Inflating::Failed("Junk".into()))]));
        let bad = handle(true, None, None);
        assert_eq!(bad, (None, true, vec![Call::Failed(1, "the download worker sent an unreadable message".into())]));
    }
}
