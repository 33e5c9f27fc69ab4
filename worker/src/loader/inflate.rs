//! A gzip URL inflated by the download worker and cut into parts here as its JSON arrives, so
//! parse workers parse it on every core while it downloads: the plan sent with the URL
//! ([`Inflate`]), what the load worker hears ([`Inflating`]) and the JSON's cuts ([`Cuts`]: the
//! budget, then `load::Cutter`, which reads only the head and the bytes around each cut; every
//! other piece goes on to its parse worker as it came). Nothing here touches the web, so it is
//! tested natively; `crate::web::gunzip` inflates, `loader::cutting` hands the parts out.
//!
//! Why the download worker inflates, with the browser's inflater: a gzip inflates in order, so
//! its parts exist only as it inflates; the browser's `DecompressionStream` inflated 500 MB of
//! JSON in 0.77 s where this crate's inflater, in wasm, took 1.46 s (docs/performance.md). It
//! stops at a gzip's first member and words a truncated one otherwise than the CLI, so a gzip
//! it cannot inflate whole is read again on one core, inflated here as the CLI does
//! ([`Inflating::Failed`]). Why the cuts are made here, not there: this worker is idle while
//! the parse workers parse, and the download worker then only inflates and gathers.

use crate::budget::{Budget, TooBig};
use crate::load::{Cut, Cutter};
use serde::{Deserialize, Serialize};

/// JSON bytes per part: small enough that every parse worker has one to parse soon after the
/// download starts and the window (`download::WINDOW`) holds several, large enough that a part's
/// own costs (a message, a builder, its encoding) stay small. Joining a 500 MB trace's 30 parts
/// cost no more than its 2 (80 ms natively).
pub const CUT_EVERY: u64 = 16 << 20;

/// How the download worker inflates and this worker cuts a gzip body (sent with its URL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inflate {
    /// JSON bytes per part.
    pub every: u64,
    /// No cut past this many JSON bytes: past what this worker can join (its budget for a load
    /// in parts), the last part takes the rest.
    pub until: u64,
    /// The most JSON the load may hold: inflating past it ends the load, too big.
    pub max_json_bytes: u64,
}

/// What the load worker hears of a gzip the download worker inflates, `V` its bytes.
#[derive(Debug, PartialEq)]
pub enum Inflating<V> {
    /// The next JSON bytes; `read` bytes of the gzip were read so far.
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
}

impl<V> Inflating<V> {
    /// The same event with its bytes mapped by `f`.
    pub fn map<W>(self, f: impl FnOnce(V) -> W) -> Inflating<W> {
        match self {
            Inflating::Piece { bytes, read } => Inflating::Piece { bytes: f(bytes), read },
            Inflating::Done { json_bytes } => Inflating::Done { json_bytes },
            Inflating::Failed(why) => Inflating::Failed(why),
        }
    }
}

/// A gzip's JSON as it arrives, checked against the budget and cut into parts.
pub struct Cuts {
    budget: Budget,
    /// The gzip's size, if declared.
    file_bytes: Option<u64>,
    json_bytes: u64,
    cutter: Cutter,
}

impl Cuts {
    /// Cuts as `plan` says the JSON of a gzip of `file_bytes` (declared, if known).
    pub fn new(plan: Inflate, file_bytes: Option<u64>) -> Self {
        Self { budget: Budget::new(plan.max_json_bytes), file_bytes, json_bytes: 0, cutter: Cutter::new(plan.every, plan.until) }
    }

    /// The next `len` JSON bytes arrived, `read` bytes of the gzip having been read: true if
    /// they go on to the current part as they are, unread; false if the caller must
    /// [`Cuts::push`] them.
    ///
    /// # Errors
    /// [`TooBig`] when the JSON passes the plan's budget.
    pub fn pass(&mut self, len: u64, read: u64) -> Result<bool, TooBig> {
        let passes = self.cutter.passes(len);
        self.count(len, read)?;
        if passes {
            self.cutter.pass(len);
        }
        Ok(passes)
    }

    /// Cuts `json`, the bytes [`Cuts::pass`] did not let go on, handing on parts and bytes.
    pub fn push(&mut self, json: &[u8], out: &mut dyn FnMut(Cut)) {
        self.cutter.push(json, out);
    }

    /// Ends the JSON, handing on the bytes still held: its size.
    pub fn finish(&mut self, out: &mut dyn FnMut(Cut)) -> u64 {
        self.cutter.finish(out)
    }

    fn count(&mut self, len: u64, read: u64) -> Result<(), TooBig> {
        self.json_bytes += len;
        self.budget.check_inflated(self.json_bytes, read, self.file_bytes.unwrap_or(read))
    }
}
