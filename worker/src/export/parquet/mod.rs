//! Parquet output: `kinetoscope export TRACE... --format parquet DIR` writes the model of each
//! trace as tables ([`trace`]), `kinetoscope run ... --format parquet DIR` the rank x step and
//! collective rows of each run ([`run`]); one `DIR/TABLE.parquet` per table, the traces (or
//! runs) of one command stacked as row groups, so a dataframe or DuckDB opens
//! `DIR/*.parquet` with no schema to declare (docs/cli.md, docs/runs.md).
//!
//! - [`table`]: typed columns and the file writer (the `parquet` crate, no Arrow).
//! - [`trace`]: slices, kernels, ops, steps, flows, counters, memory of one session.
//! - [`run`]: steps, collectives, diagnostics of analysed runs.
//!
//! Native only, like `serve`: this is where the library writes files and runs threads (the
//! engine builds the tables; [`Sink`] puts them on disk, a thread per table).

// Writing the tables to DIR is this module's job.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

pub mod run;
pub mod table;
pub mod trace;

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use table::{Table, TableFile};

/// `DIR/NAME.parquet` for each of a fixed list of table names, appended to in turn.
pub struct Sink {
    dir: PathBuf,
    files: Vec<(&'static str, TableFile<BufWriter<File>>)>,
}

impl Sink {
    /// Creates `dir` (and parents) and one file per name in it, replacing files of those names.
    ///
    /// # Errors
    /// `dir` or a file cannot be created (the path and the reason).
    pub fn create(dir: &Path, names: &[&'static str]) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let files = names
            .iter()
            .map(|&name| {
                let path = dir.join(format!("{name}.parquet"));
                let file = File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
                Ok((name, TableFile::new(BufWriter::with_capacity(1 << 20, file))))
            })
            .collect::<Result<_, String>>()?;
        Ok(Self { dir: dir.to_path_buf(), files })
    }

    /// Appends each of `tables` to the file of its name.
    ///
    /// # Errors
    /// A table with no file of its name, or a write error (the file and the reason).
    pub fn append(&mut self, tables: &[(&'static str, Table)]) -> Result<(), String> {
        for (name, table) in tables {
            let (_, file) = self
                .files
                .iter_mut()
                .find(|(n, _)| n == name)
                .ok_or_else(|| format!("no file for table {name}"))?;
            file.append(table).map_err(|e| format!("{}: {e}", self.dir.join(format!("{name}.parquet")).display()))?;
        }
        Ok(())
    }

    /// Builds each file's table with `build` and appends it, every table on a thread of its own
    /// (they are independent; a big trace's slices take the longest).
    ///
    /// # Errors
    /// `build` has no table of a file's name, or a write error (the file and the reason).
    pub fn append_each(&mut self, build: impl Fn(&str) -> Option<Table> + Sync) -> Result<(), String> {
        let (dir, build) = (&self.dir, &build);
        std::thread::scope(|scope| {
            let jobs: Vec<_> = self
                .files
                .iter_mut()
                .map(|(name, file)| {
                    scope.spawn(move || {
                        let table = build(name).ok_or_else(|| format!("no table {name}"))?;
                        file.append(&table).map_err(|e| format!("{}: {e}", dir.join(format!("{name}.parquet")).display()))
                    })
                })
                .collect();
            jobs.into_iter().try_for_each(|job| job.join().unwrap_or_else(|_| Err("a table's thread panicked".into())))
        })
    }

    /// Closes every file; the rows written per table, in the order created.
    ///
    /// # Errors
    /// A write error (the file and the reason).
    pub fn finish(self) -> Result<Vec<(&'static str, u64)>, String> {
        let dir = self.dir;
        self.files
            .into_iter()
            .map(|(name, file)| {
                file.finish().map(|rows| (name, rows)).map_err(|e| format!("{}: {e}", dir.join(format!("{name}.parquet")).display()))
            })
            .collect()
    }
}
