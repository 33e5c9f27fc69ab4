//! Analyses: read-only computations over a loaded [`crate::model::Trace`] that answer the
//! questions of the viewer and the CLI (REFERENCE.md defines every number; issue #4).
//!
//! Each analysis takes the trace (and an optional time range in ns from the trace origin) and
//! returns plain structs with integer ns and bytes; µs as f64 appear only in output helpers.
//! Analyses never mutate the model: where PyTorch's definitions need a different structure
//! than the model's (the op tree of `key_averages()`), the analysis builds its own.
//!
//! - [`ops`]: the op table (`key_averages()` by name or by input shapes, CPU, device, memory).
//! - [`steps`]: the host `ProfilerStep#N` list.
//! - `args` / `shapes`: reading one field of an event's raw args; PyTorch's shape strings.

pub mod args;
pub mod ops;
pub mod steps;
mod shapes;
