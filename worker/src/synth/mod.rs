//! Synthetic traces: the built-in demo and large benchmark inputs.
//!
//! Two producers, both pure functions over bytes (no files, clocks or environment):
//!
//! - [`demo`] writes a small, deterministic Kineto trace of a five-step training loop (an MLP
//!   autoencoder trained with fused AdamW on one A100), shaped like what `torch.profiler`
//!   exports: CPU ops with shapes, runtime calls, kernels, memcpys, `ac2g` / `fwdbwd` flows,
//!   `[memory]` instants, GPU-side step annotations and the profiler span. The app opens it from
//!   `public/` as the demo.
//! - [`run`] writes one trace per rank of a synthetic distributed run with a designed straggler
//!   and clock skew (ground truth for `crate::run`).
//! - [`serve`] writes a small B200 inference trace (vLLM-style decode, FP4 MoE) carrying the
//!   kernel names Blackwell serving runs record, for the kernel-class tests.
//! - [`moe`] writes an expert-parallel MoE training trace whose communication kernels have
//!   names no table knows, launched under dispatch / combine / collective ops (ground truth
//!   for classes by launch context).
//! - [`graphs`] writes a small H100 decode trace replaying a CUDA graph in Kineto's graph format
//!   (`graph id` / `graph node id`, one `cudaGraphLaunch` per replay), for the graph analysis.
//! - [`paths`] writes one-step traces each bound by one thing (CPU, GPU, a sync, a cross-stream
//!   wait, a collective, a graph replay), with knobs whose re-run is a what-if's ground truth.
//! - [`cheatsheet`] writes GPU-bound training steps each showing one pattern of the cheatsheet's
//!   rules (TF32 on fp32, misaligned GEMMs, unfused attention, copies, syncs, small grids), with
//!   the knob that makes its near miss.
//! - [`inflate`] repeats the events of a real trace along time, renumbering every linking id, to
//!   make inputs of any size (hundreds of MB to GB) for benchmarks and stress tests.
//!
//! Inside, the demo is a script (`train`: the loop and data loader; `network`: forward and
//! backward ops; `kernels`: what they launch) running on a small timing model (`sim`: threads,
//! nested ops, ids; its `sim::device`: runtime calls and the GPU stream; its `sim::memory`: the
//! caching allocator), serialized by `kineto` in Kineto's own layout. `inflate` walks its input with the
//! raw scanner in `scan` so it can copy event text byte for byte; `decimal` reads and writes
//! timestamps as exact decimal text.
//!
//! Time is kept as `i64` nanoseconds everywhere and printed as microseconds with three decimals,
//! exactly as Kineto prints it; no float ever touches a timestamp, so values near `4.4e12` µs stay
//! exact (an `f64` would drift by up to a nanosecond per operation there).

pub mod cheatsheet;
mod decimal;
pub mod demo;
pub mod graphs;
pub mod inflate;
mod kernels;
mod kineto;
pub mod moe;
mod network;
pub mod paths;
pub mod run;
mod scan;
pub mod serve;
mod sim;
mod train;
