//! The load worker's bookkeeping, free of the web so it is tested natively: a file's bytes
//! parsed as they arrive ([`Streaming`], the default), or held whole ([`Incoming`]) for a load
//! whose parts are parsed elsewhere and come back in any order ([`PartsJob`]). The load worker (`crate::loader`, over the wasm binary's transports)
//! owns the clock; it passes the time in, and these decide when progress is due and when a load is
//! complete, and which parse worker stopped answering. A file's size is checked against the
//! load's [`Budget`] before its bytes are held (`crate::budget`).

use crate::budget::{Budget, TooBig};
use crate::engine::{Engine, Loading, Prepared, Target};
use crate::load::Part;
use protocol::{LoadError, TraceSummary};

/// Least time between two progress reports of one phase, ms: a 1 GB file streamed in 64 KiB
/// pieces must not post 16,000 messages to the page.
pub const PROGRESS_EVERY_MS: f64 = 50.0;

/// Says when a report is due: at most once per [`PROGRESS_EVERY_MS`].
#[derive(Clone, Copy, Debug)]
pub struct Throttle {
    last_ms: f64,
}

impl Default for Throttle {
    fn default() -> Self {
        Self { last_ms: f64::MIN }
    }
}

impl Throttle {
    /// Whether a report is due at `now_ms`; if so, the next one waits [`PROGRESS_EVERY_MS`].
    pub fn due(&mut self, now_ms: f64) -> bool {
        if now_ms - self.last_ms < PROGRESS_EVERY_MS {
            return false;
        }
        self.last_ms = now_ms;
        true
    }
}

/// Says when a report of a phase is due: a new phase at once, then at most once per
/// [`PROGRESS_EVERY_MS`].
#[derive(Clone, Copy, Debug, Default)]
pub struct PhaseThrottle {
    last: Option<(protocol::Phase, Throttle)>,
}

impl PhaseThrottle {
    /// Whether a report of `phase` is due at `now_ms`.
    pub fn due(&mut self, phase: protocol::Phase, now_ms: f64) -> bool {
        if self.last.as_ref().is_none_or(|(p, _)| *p != phase) {
            self.last = Some((phase, Throttle::default()));
        }
        self.last.as_mut().is_some_and(|(_, t)| t.due(now_ms))
    }
}

/// When a streamed load started, and how long it waited for bytes: the bench tells a parse
/// slower than the download from a download slower than the parse by it.
#[derive(Clone, Copy, Debug)]
pub struct LoadClock {
    /// When the load started, ms.
    pub started_ms: f64,
    /// When the worker last finished with a piece and began waiting for the next.
    idle_since_ms: f64,
    /// Ms spent waiting for bytes.
    pub waited_ms: f64,
}

impl LoadClock {
    /// A load starting at `now_ms`.
    pub fn start(now_ms: f64) -> Self {
        Self { started_ms: now_ms, idle_since_ms: now_ms, waited_ms: 0.0 }
    }

    /// A piece arrived at `now_ms`: the wait since the last one ends.
    pub fn busy(&mut self, now_ms: f64) {
        self.waited_ms += (now_ms - self.idle_since_ms).max(0.0);
    }

    /// The piece is parsed at `now_ms`: waiting for the next begins.
    pub fn idle(&mut self, now_ms: f64) {
        self.idle_since_ms = now_ms;
    }
}

/// A file's bytes parsed as they arrive: each piece is copied into one reused buffer and
/// handed to the engine's streamed load, so the file is never held whole.
pub struct Streaming {
    /// The load's id.
    pub id: u32,
    /// The file's name.
    pub name: String,
    /// The declared size, if the source knows it.
    pub size: Option<u64>,
    loading: Loading,
    piece: Vec<u8>,
    throttle: Throttle,
}

impl Streaming {
    /// Starts load `id` of `name` into `engine`, for `target`.
    ///
    /// # Errors
    /// A `too-big` [`LoadError`] when the declared size is over the engine's budget.
    pub fn open(engine: &mut Engine, target: Target, id: u32, name: &str, size: Option<u64>) -> Result<Self, LoadError> {
        let loading = engine.begin(target, name, size)?;
        Ok(Self { id, name: name.to_owned(), size, loading, piece: Vec::new(), throttle: Throttle::default() })
    }

    /// Parses a piece of `len` bytes, which `fill` writes (the caller copies them from where
    /// they arrived); returns `(done, declared size)` when a progress report is due at `now_ms`.
    ///
    /// # Errors
    /// A `too-big` [`LoadError`] when the bytes received pass the budget.
    pub fn append(&mut self, len: usize, now_ms: f64, fill: impl FnOnce(&mut [u8])) -> Result<Option<(u64, Option<u64>)>, LoadError> {
        self.piece.resize(len, 0);
        fill(&mut self.piece);
        self.loading.push(&self.piece)?;
        Ok(self.throttle.due(now_ms).then_some((self.loading.received(), self.size)))
    }

    /// Ends the load once every byte has arrived: the trace goes to its target.
    ///
    /// # Errors
    /// As [`Engine::end`].
    pub fn finish(self, engine: &mut Engine) -> Result<TraceSummary, LoadError> {
        drop(self.piece);
        engine.end(self.loading)
    }
}

/// A file's bytes arriving in pieces: checked against the budget, reserved once from the
/// declared size, appended, with progress reports throttled.
#[derive(Debug)]
pub struct Incoming {
    /// The load's id.
    pub id: u32,
    /// Parse workers a large JSON may be split across (`load::parts_for`).
    pub cores: usize,
    /// The file's name.
    pub name: String,
    /// The declared size, if the source knows it.
    pub size: Option<u64>,
    budget: Budget,
    bytes: Vec<u8>,
    throttle: Throttle,
}

impl Incoming {
    /// Starts receiving load `id`, reserving `size` bytes at once (a large file must not grow
    /// by doubling, which needs 1.5x its size at the step).
    ///
    /// # Errors
    /// [`TooBig`] when the declared size is over `budget` (checked before anything is
    /// allocated) or cannot be allocated.
    pub fn open(id: u32, name: &str, size: Option<u64>, cores: usize, budget: Budget) -> Result<Self, TooBig> {
        if let Some(size) = size {
            budget.check_file(size, false)?;
        }
        let mut bytes = Vec::new();
        let want = size.and_then(|s| usize::try_from(s).ok()).unwrap_or(0);
        bytes.try_reserve_exact(want).map_err(|_| TooBig::out_of_memory(want as u64, budget))?;
        Ok(Self { id, cores, name: name.to_owned(), size, budget, bytes, throttle: Throttle::default() })
    }

    /// Appends a piece of `len` bytes, which `fill` writes (the caller copies them from where
    /// they arrived); returns `(done, declared size)` when a progress report is due at `now_ms`.
    ///
    /// # Errors
    /// [`TooBig`] when the bytes received pass the budget (a source that declared no size, or
    /// less than it sends), or out of memory.
    pub fn append(
        &mut self,
        len: usize,
        now_ms: f64,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<Option<(u64, Option<u64>)>, TooBig> {
        let start = self.bytes.len();
        self.budget.check_file((start + len) as u64, true)?;
        self.budget.grow(&mut self.bytes, len)?;
        self.bytes.resize(start + len, 0);
        fill(&mut self.bytes[start..]);
        let done = self.bytes.len() as u64;
        Ok(self.throttle.due(now_ms).then_some((done, self.size)))
    }

    /// The file's name and bytes, once all have arrived.
    pub fn into_bytes(self) -> (String, Vec<u8>) {
        (self.name, self.bytes)
    }
}

/// Longest a parse worker may stay silent while its part is out, ms: one that says nothing for
/// this long (a worker that died without an `error` event, or hangs) ends the load. Parse
/// workers report progress every 8 MB, so even a loaded machine stays far below it; the
/// longest honest silences are a worker's boot and the encoding of a large part, a few seconds.
pub const SILENT_MS: f64 = 30_000.0;

/// A load whose parts are parsed elsewhere (parse workers) and come back in any order: `L` is
/// what completes it with the parts `P` (a JSON held whole with its [`Part`]s, or a file read
/// in parts with their [`crate::load::StreamedPart`]s).
pub struct PartsJob<L = Prepared, P = Part> {
    /// The load's id.
    pub id: u32,
    /// When the parse started, ms on the caller's clock (for the load's `parse_ms`).
    pub started_ms: f64,
    load: L,
    /// JSON bytes over all parts.
    total: u64,
    parts: Vec<Option<P>>,
    done: Vec<u64>,
    /// When each part's worker was last heard from, ms.
    heard_ms: Vec<f64>,
    /// The longest any part's worker waited for its bytes, ms.
    waited_ms: f64,
    throttle: Throttle,
}

impl PartsJob {
    /// A job for `prepared`'s parts, none back yet.
    pub fn new(id: u32, prepared: Prepared, started_ms: f64) -> Self {
        let (n, total) = (prepared.plan.parts.len(), prepared.json.len() as u64);
        Self::of(id, prepared, n, total, started_ms)
    }
}

impl<L, P> PartsJob<L, P> {
    /// A job of `n` parts of `total` JSON bytes for `load`, none back yet.
    pub fn of(id: u32, load: L, n: usize, total: u64, started_ms: f64) -> Self {
        Self {
            id,
            started_ms,
            load,
            total,
            parts: (0..n).map(|_| None).collect(),
            done: vec![0; n],
            heard_ms: vec![started_ms; n],
            waited_ms: 0.0,
            throttle: Throttle { last_ms: started_ms },
        }
    }

    /// Part `index` has parsed `done` bytes; returns `(bytes done over all parts, JSON bytes)`
    /// when a progress report is due at `now_ms`. An index past the plan is ignored.
    pub fn progress(&mut self, index: usize, done: u64, now_ms: f64) -> Option<(u64, u64)> {
        if let Some(d) = self.done.get_mut(index) {
            *d = done;
        }
        self.heard(index, now_ms);
        self.throttle.due(now_ms).then(|| (self.done.iter().sum(), self.total))
    }

    /// Part `index` is back; true once every part is. An index past the plan is ignored.
    pub fn part(&mut self, index: usize, part: P) -> bool {
        if let Some(slot) = self.parts.get_mut(index) {
            *slot = Some(part);
        }
        self.parts.iter().all(Option::is_some)
    }

    /// Part `index`'s worker said something (booted, progress) at `now_ms`.
    pub fn heard(&mut self, index: usize, now_ms: f64) {
        if let Some(h) = self.heard_ms.get_mut(index) {
            *h = h.max(now_ms);
        }
    }

    /// A part's worker waited `ms` for its bytes (reading them itself).
    pub fn waited(&mut self, ms: f64) {
        self.waited_ms = self.waited_ms.max(ms);
    }

    /// The longest any part's worker waited for its bytes, ms: the load's `read_wait_ms`.
    pub fn waited_ms(&self) -> f64 {
        self.waited_ms
    }

    /// The first part still out whose worker has been silent for more than [`SILENT_MS`] at
    /// `now_ms`: that worker stopped answering.
    pub fn silent(&self, now_ms: f64) -> Option<usize> {
        self.parts.iter().zip(&self.heard_ms).position(|(part, &heard)| part.is_none() && now_ms - heard > SILENT_MS)
    }

    /// The load and its parts, in order.
    pub fn into_parts(self) -> (L, Vec<P>) {
        (self.load, self.parts.into_iter().flatten().collect())
    }
}
