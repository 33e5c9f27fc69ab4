//! A gzip URL inflated by the download worker and cut into parts as it arrives, so parse
//! workers parse it on every core while it downloads: the plan the load worker sends
//! ([`Inflate`]), the download worker's side ([`Cuts`]: the JSON checked against the budget,
//! cut by `load::Cutter`, gathered into pieces of `download::PIECE`) and what the load worker
//! hears of it ([`Inflating`]). Nothing here touches the web, so it is tested natively;
//! `crate::web::pump` inflates with the browser's `DecompressionStream` and feeds [`Cuts`], and
//! `loader::cutting` hands the parts to the parse workers.
//!
//! Why the download worker inflates: a gzip inflates in order, so its parts exist only as it
//! inflates, and inflating there leaves the parse workers only parsing (inflated and parsed on
//! one core, 500 MB of JSON took 1.9 s, docs/performance.md). Why the browser's inflater: it
//! inflated that gzip in 0.77 s where this crate's, in wasm, took 1.46 s. It stops at a gzip's
//! first member and words a truncated one otherwise than the CLI, so any gzip it cannot inflate
//! whole is read again on one core, inflated here as the CLI does ([`Inflating::Failed`]).

use super::download::PIECE;
use crate::budget::{Budget, TooBig};
use crate::load::{Cut, Cutter, Piece};
use serde::{Deserialize, Serialize};

/// JSON bytes per part: small enough that every parse worker has one to parse soon after the
/// download starts and the window (`download::WINDOW`) holds several, large enough that a part's
/// own costs (a message, a builder, its encoding) stay small. Joining a 500 MB trace's 30 parts
/// cost no more than its 2 (80 ms natively).
pub const CUT_EVERY: u64 = 16 << 20;

/// How the download worker inflates and cuts a gzip body (sent with its URL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inflate {
    /// JSON bytes per part.
    pub every: u64,
    /// No cut past this many JSON bytes: past what the load worker can join (its budget for a
    /// load in parts), the last part takes the rest.
    pub until: u64,
    /// The most JSON the load may hold: inflating past it ends the load, too big.
    pub max_json_bytes: u64,
}

/// What the load worker hears of a gzip the download worker inflates and cuts, `V` its bytes.
#[derive(Debug, PartialEq)]
pub enum Inflating<V> {
    /// The pieces that follow are of a new part, starting where `Piece` says.
    Part(Piece),
    /// The next JSON bytes of the current part; `read` compressed bytes were read so far.
    Piece {
        /// The JSON bytes.
        bytes: V,
        /// Compressed bytes read so far.
        read: u64,
    },
    /// The gzip is all inflated: `json_bytes` of JSON.
    Done {
        /// JSON bytes inflated.
        json_bytes: u64,
    },
    /// The browser could not inflate the gzip whole (`why`): a gzip of several members, or a
    /// truncated or corrupt one.
    Failed(String),
    /// Inflating passed the load's budget: `json_bytes` of JSON from the first `read` of the
    /// gzip's `file_bytes`.
    TooBig {
        /// JSON bytes inflated when it stopped.
        json_bytes: u64,
        /// Compressed bytes read then.
        read: u64,
        /// The gzip's size (declared, else read so far).
        file_bytes: u64,
    },
}

impl<V> Inflating<V> {
    /// The same event with its bytes mapped by `f`.
    pub fn map<W>(self, f: impl FnOnce(V) -> W) -> Inflating<W> {
        match self {
            Inflating::Part(piece) => Inflating::Part(piece),
            Inflating::Piece { bytes, read } => Inflating::Piece { bytes: f(bytes), read },
            Inflating::Done { json_bytes } => Inflating::Done { json_bytes },
            Inflating::Failed(why) => Inflating::Failed(why),
            Inflating::TooBig { json_bytes, read, file_bytes } => Inflating::TooBig { json_bytes, read, file_bytes },
        }
    }
}

/// What the inflater hands on, in order.
#[derive(Debug, PartialEq)]
pub enum Out {
    /// A new part starts.
    Part(Piece),
    /// The next JSON bytes of the current part, [`PIECE`] or more but at a part's end.
    Piece(Vec<u8>),
}

/// The download worker's side: the JSON a gzip inflates to, as it comes, checked against the
/// budget, cut and gathered into pieces.
pub struct Cuts {
    budget: Budget,
    /// The gzip's size, if declared.
    file_bytes: Option<u64>,
    json_bytes: u64,
    cutter: Cutter,
    gathered: Vec<u8>,
}

impl Cuts {
    /// Cuts as `plan` says the JSON of a gzip of `file_bytes` (declared, if known).
    pub fn new(plan: Inflate, file_bytes: Option<u64>) -> Self {
        let (budget, cutter) = (Budget::new(plan.max_json_bytes), Cutter::new(plan.every, plan.until));
        Self { budget, file_bytes, json_bytes: 0, cutter, gathered: Vec::with_capacity(PIECE as usize) }
    }

    /// Takes the next `json` inflated, `read` bytes of the gzip having been read, handing on
    /// parts and pieces.
    ///
    /// # Errors
    /// [`TooBig`] when the JSON passes the plan's budget.
    pub fn push(&mut self, json: &[u8], read: u64, out: &mut dyn FnMut(Out)) -> Result<(), TooBig> {
        self.json_bytes += json.len() as u64;
        self.budget.check_inflated(self.json_bytes, read, self.file_bytes.unwrap_or(read))?;
        let Self { cutter, gathered, .. } = self;
        cutter.push(json, &mut |cut| gather(gathered, cut, out));
        Ok(())
    }

    /// Ends the JSON, handing on the last pieces: its size.
    pub fn finish(mut self, out: &mut dyn FnMut(Out)) -> u64 {
        let Self { cutter, gathered, .. } = &mut self;
        let json_bytes = cutter.finish(&mut |cut| gather(gathered, cut, out));
        if !gathered.is_empty() {
            out(Out::Piece(std::mem::take(gathered)));
        }
        json_bytes
    }
}
/// Gathers a cut's bytes into `gathered`, handing on a piece once it has [`PIECE`] bytes or its
/// part ends.
fn gather(gathered: &mut Vec<u8>, cut: Cut, out: &mut dyn FnMut(Out)) {
    match cut {
        Cut::Part(piece) => {
            if !gathered.is_empty() {
                out(Out::Piece(std::mem::replace(gathered, Vec::with_capacity(PIECE as usize))));
            }
            out(Out::Part(piece));
        }
        Cut::Bytes(bytes) => {
            gathered.extend_from_slice(bytes);
            if gathered.len() >= PIECE as usize {
                out(Out::Piece(std::mem::replace(gathered, Vec::with_capacity(PIECE as usize))));
            }
        }
    }
}
