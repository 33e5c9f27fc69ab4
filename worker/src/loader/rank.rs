//! A run's file loaded whole by a parse worker (`ToParser::Rank`): its bytes pushed as they
//! arrive into an engine of the parse worker's own, then summarized for the run
//! (`run::summary::summarize`); only the summary goes back to the load worker, the model is
//! dropped with the engine. The browser's side reads the source (`web::parser`).
//!
//! Why: a run's files loaded one after another kept one core busy (8 ranks of 25 MB reached the
//! heatmap in 2.15 s on two cores, docs/performance.md); each parse worker loads the next file
//! while the load worker loads its own.

use crate::budget::Budget;
use crate::engine::{Engine, Loading, Target};
use crate::run::summary::{summarize, RankSummary};

/// Bytes gathered before they are parsed: a fetch body comes in chunks of tens of KiB, and a
/// stream parses a large piece in place where it copies small ones into its own buffer first.
pub const GATHER_BYTES: usize = 1 << 20;

/// A run's file being loaded whole.
pub struct RankLoad {
    engine: Engine,
    loading: Loading,
    name: String,
    /// Bytes arrived, not parsed yet (under [`GATHER_BYTES`]).
    gathered: Vec<u8>,
}

impl RankLoad {
    /// Starts loading file `name` (`declared` bytes, if its source says) within a tab's budget.
    ///
    /// # Errors
    /// The declared size is over the budget (the words of a `too-big` load).
    pub fn begin(name: &str, declared: Option<u64>) -> Result<Self, String> {
        let mut engine = Engine::with_budget(Budget::TAB);
        let loading = engine.begin(Target::Current, name, declared).map_err(|e| e.message)?;
        Ok(Self { engine, loading, name: name.to_owned(), gathered: Vec::with_capacity(GATHER_BYTES) })
    }

    /// The file's next `len` bytes, which `fill` writes; parsed (plain JSON or gzip, as any
    /// load) once [`GATHER_BYTES`] have gathered.
    ///
    /// # Errors
    /// The bytes cannot be parsed (the words of the load's error).
    pub fn push_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> Result<(), String> {
        let at = self.gathered.len();
        self.gathered.resize(at + len, 0);
        fill(&mut self.gathered[at..]);
        if self.gathered.len() < GATHER_BYTES {
            return Ok(());
        }
        let pushed = self.loading.push(&self.gathered).map_err(|e| e.message);
        self.gathered.clear();
        pushed
    }

    /// [`RankLoad::push_with`] of `bytes`.
    ///
    /// # Errors
    /// As [`RankLoad::push_with`].
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.push_with(bytes.len(), |into| into.copy_from_slice(bytes))
    }

    /// Ends the load and summarizes the file for the run.
    ///
    /// # Errors
    /// The file is empty, not a trace, or its gzip is broken (the words of the load's error).
    pub fn finish(self) -> Result<RankSummary, String> {
        let Self { mut engine, mut loading, name, gathered } = self;
        loading.push(&gathered).map_err(|e| e.message)?;
        drop(gathered);
        engine.end(loading).map_err(|e| e.message)?;
        let session = engine.session().ok_or("no trace after loading")?;
        Ok(summarize(&name, session))
    }
}
