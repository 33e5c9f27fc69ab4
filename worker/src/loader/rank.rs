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

/// A run's file being loaded whole.
pub struct RankLoad {
    engine: Engine,
    loading: Loading,
    name: String,
}

impl RankLoad {
    /// Starts loading file `name` (`declared` bytes, if its source says) within a tab's budget.
    ///
    /// # Errors
    /// The declared size is over the budget (the words of a `too-big` load).
    pub fn begin(name: &str, declared: Option<u64>) -> Result<Self, String> {
        let mut engine = Engine::with_budget(Budget::TAB);
        let loading = engine.begin(Target::Current, name, declared).map_err(|e| e.message)?;
        Ok(Self { engine, loading, name: name.to_owned() })
    }

    /// Parses the file's next bytes (plain JSON or gzip, as any load).
    ///
    /// # Errors
    /// The bytes cannot be parsed (the words of the load's error).
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.loading.push(bytes).map_err(|e| e.message)
    }

    /// Ends the load and summarizes the file for the run.
    ///
    /// # Errors
    /// The file is empty, not a trace, or its gzip is broken (the words of the load's error).
    pub fn finish(self) -> Result<RankSummary, String> {
        let Self { mut engine, loading, name } = self;
        engine.end(loading).map_err(|e| e.message)?;
        let session = engine.session().ok_or("no trace after loading")?;
        Ok(summarize(&name, session))
    }
}
