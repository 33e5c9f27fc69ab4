//! Analyses: read-only computations over a loaded [`crate::model::Trace`] that answer the
//! questions of the viewer and the CLI (docs/definitions.md defines every number).
//!
//! Each analysis takes the trace (and an optional time range in ns from the trace origin) and
//! returns plain structs with integer ns and bytes; µs as f64 appear only in output helpers.
//! Analyses never mutate the model: where PyTorch's definitions need a different structure
//! than the model's (the op tree of `key_averages()`), the analysis builds its own.
//!
//! - [`ops`]: the op table (`key_averages()` by name or by input shapes, CPU, device, memory).
//! - [`steps`]: `ProfilerStep#N` list with CPU / GPU / step spans, statistics, breakdown.
//! - [`explain`]: why one step is slow: its time against the median step, by category and name.
//! - [`breakdown`]: a span's time by category (Kernel > Memcpy > ... > CPU Exec > Other).
//! - [`memory`]: `[memory]` events: allocated / reserved per device, peaks, largest allocations;
//!   what holds memory: allocation lifetimes, categories, step peaks by category, leaks.
//! - [`idle`]: idle time per GPU stream (host wait / kernel wait / other), launch statistics.
//! - [`health`]: trace health: unlinked launches and activities, activities outside the
//!   capture window, overlapping on a stream or before their launch; what the parse lost.
//! - [`graphs`]: CUDA graphs: graphed kernels, their `cudaGraphLaunch`, node dependency edges.
//! - [`source`]: Triton / compiled kernels to their source (`kernel_file` on the launching op).
//! - [`unavailable`]: why an analysis has nothing to show (traces without steps, GPU-only traces).
//! - [`stats`]: mean / std / median / percentiles of integer samples (shared definitions).
//! - [`kernels`]: the kernel table (per name: distribution, blocks per SM, occupancy, top op).
//! - [`gpu`]: per-device GPU Utilization, Est. SM Efficiency, occupancy, tensor-core share.
//! - [`kernel_class`]: the kernel-name table: class, tensor-core use, precision (one place).
//! - [`kernel_context`]: one trace's kernel classes: the name table, then the launching op
//!   (communication launched under a collective); what every class-splitting analysis reads.
//! - [`device`]: the trace's `deviceProperties` (GPU name, memory, compute capability).
//! - [`work`]: FLOPs and bytes per op call and kernel, GPU peaks, roofline bound, step MFU.
//! - [`roofline`]: which kernel names the roofline draws, and why the others are left off.
//! - [`critical_path`]: what bounds each step: its dependency graph, critical path, bound-by
//!   shares and what-if answers.
//! - [`phases`]: each step's data loading, forward, backward, optimizer and the communication
//!   they do not hide (CPU and GPU time).
//! - [`modules`]: the `nn.Module` tree: occurrences, host and device times per (name, id), as
//!   the TensorBoard plugin's Module view; backward device time through `fwdbwd` flows.
//! - `args` / `shapes`: reading one field of an event's raw args; PyTorch's shape strings.

pub mod args;
pub mod ops;
pub mod steps;
pub mod explain;
mod shapes;
pub mod stats;
pub mod breakdown;
pub mod kernels;
pub mod gpu;
pub mod kernel_class;
pub mod kernel_context;
pub mod memory;
pub mod idle;
pub mod health;
pub mod graphs;
pub mod source;
pub mod unavailable;
pub mod device;
pub mod work;
pub mod roofline;
pub mod critical_path;
pub mod phases;
pub mod modules;
pub mod call_tree;
