//! Kinetoscope engine: turns PyTorch profiler (Kineto / Chrome Trace Event JSON) bytes into an
//! indexed, columnar model and answers the questions the viewer and the CLI ask of it.
//!
//! ```text
//! bytes ─input─▶ JSON ─json::Tokenizer─▶ RawEvent ─model::builder─▶ model::Trace
//!                        (load: what is fatal, what is a diagnostic)        │
//!           session::Session (trace + index + lazily built analyses) ◀──────┘
//!           engine::Engine (the current session, the baseline) ─answer─▶ protocol (worker)
//!           report (text, JSON) ◀─ the same sessions (CLI)
//! ```
//!
//! `load` can also cut the event array into parts (`input::split`) that are parsed
//! independently and merged in order (`model::builder` `merge`): the CLI parses them on threads,
//! the browser parses them in nested parse workers and sends them back encoded (`load::Part::encode`,
//! `codec`); the result equals a sequential parse.
//!
//! The engine never reads a clock, a file or the environment and never spawns threads: callers
//! (the CLI in `src/bin/kinetoscope.rs`, the wasm worker in `src/bin/worker.rs`) pass bytes in and
//! measure time themselves (`worker/clippy.toml` enforces it; the native exceptions are
//! `run::load`, the CLI's entry that reads many rank files on threads with bounded memory, and
//! `fork::Threads`, which a caller passes to run a load's join on two threads).
//! `text` formats every number the engine writes for people. `synth` (feature `synth`: the tests, benchmarks and `kinetoscope-synth`) generates traces with known ground truth.
//! `compare` diffs the analyses of two traces (baseline / candidate, `kinetoscope diff`).
//! `run` analyses a distributed run (one trace per rank): per-rank summaries, collectives
//! matched across ranks, clock offsets, stragglers and why (docs/runs.md).
//! `serve` (native only) lists a log directory of traces and serves it to the page, or
//! publishes it as a static folder (`kinetoscope serve` / `publish`, docs/deploy.md).
//! `export` (native only) writes traces and runs as Parquet tables (`kinetoscope export`,
//! `run --format parquet`).
//! `loader` holds the wasm worker's decisions and messages, natively tested; `web` (wasm only)
//! is its browser transport, the only engine code that touches web-sys / js-sys.
//!
//! On top of the model, `analysis` computes the tables (ops, kernels, steps, GPU metrics,
//! memory, idle time) and `finding` reads them as a cheatsheet: rules that name a pattern,
//! explain it and cite the slices that show it.

pub mod analysis;
pub mod answer;
pub mod budget;
pub mod codec;
pub mod compare;
pub mod diag;
pub mod engine;
#[cfg(not(target_arch = "wasm32"))]
pub mod export;
pub mod finding;
pub mod fork;
pub mod index;
pub mod input;
pub mod intake;
pub mod json;
pub mod load;
pub mod loader;
pub mod model;
pub mod ranks;
pub mod report;
pub mod run;
pub mod session;
#[cfg(not(target_arch = "wasm32"))]
pub mod serve;
#[cfg(feature = "synth")]
pub mod synth;
pub mod text;
#[cfg(target_arch = "wasm32")]
pub mod web;
