//! Report rendering: analyses -> text tables shaped like `torch.profiler`'s printed tables, and
//! the stable `--json` form of `kinetoscope report`. One file per analysis area.
//!
//! Text fits a 120-column terminal: names are cut with `...` like PyTorch does; times use
//! PyTorch's units (`us`, `ms`, `s` with 3 decimals).
//!
//! - [`ops`]: op tables; [`kernels`]: the kernel table; [`gpu`]: GPU metrics per device.
//! - [`steps`]: steps, breakdown and step-time statistics; [`memory`]: memory peaks and largest
//!   allocations; [`idle`]: GPU idle time per stream and launch statistics.
//! - [`compare`]: a baseline / candidate comparison rendered; [`diff`]: `kinetoscope diff`, computed and ordered.
//! - [`findings`]: the cheatsheet's findings (text section and `findings[]`).
//! - [`trace`]: the whole `kinetoscope report` of one trace, assembled from its session.
//! - [`explain`]: `report --explain-step`: why one step is slow.
//! - [`gate`]: `diff --fail-if` expressions (CI gates); [`schema`]: the `--json` contract keys;
//!   [`markdown`]: Markdown tables for `--format md` (PR comments).
//! - [`html`]: `--format html` and the page's Export report (one self-contained file);
//!   [`svg`]: its inline charts.

pub mod ops;
pub mod kernels;
pub mod gpu;
pub mod steps;
pub mod memory;
pub mod idle;
pub mod compare;
pub mod findings;
pub mod diff;
pub mod trace;
pub mod explain;
pub mod gate;
pub mod schema;
pub mod markdown;
pub mod html;
pub mod svg;

pub use crate::text::{cut, printable, pytorch_time as time};
pub use ops::{op_table_text, ops_json, sorted, SortKey};

/// Total width of a text table.
pub const WIDTH: usize = 120;
