//! Report rendering: analyses -> text tables shaped like `torch.profiler`'s printed tables, and
//! the stable `--json` form of `kinetoscope report`. One file per analysis area.
//!
//! Text sections fit a 120-column terminal, except the op and kernel tables, whose Name
//! column is as wide as PyTorch's (`--name-width`, 55 by default); names longer than it are cut
//! with `...` like PyTorch does. Times use PyTorch's units (`us`, `ms`, `s` with 3 decimals).
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
//! - [`critical_path`]: `--critical-path` and `--what-if`: what bounds each step, what a change buys.
//! - [`phases`]: `--phases`: each step's data loading, forward, backward, optimizer and exposed
//!   communication.
//! - [`modules`]: `--modules`: the `nn.Module` tree with calls, host and device times.
//! - [`html`]: `--format html` and the page's Export report (one self-contained file), with its
//!   inline charts ([`html::svg`]).

pub mod ops;
pub mod kernels;
pub mod gpu;
pub mod steps;
pub mod memory;
pub mod held;
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
pub mod work;
pub mod critical_path;
pub mod phases;
pub mod modules;
pub mod throughput;
pub mod tree;

pub use crate::text::{cut, printable, pytorch_time as time};
pub use ops::{op_table_text, ops_json, sorted, SortKey};

/// Total width of a text section.
pub const WIDTH: usize = 120;

/// The Name column's width limit PyTorch's `table()` uses by default (`max_name_column_width`).
pub const NAME_WIDTH: usize = 55;

/// A Name column's width: the longest name, at most `limit`, at least `header`'s.
pub fn column_width<'a>(header: &str, cells: impl Iterator<Item = &'a str>, limit: usize) -> usize {
    let floor = header.chars().count();
    cells.map(|c| c.chars().count()).max().unwrap_or(0).min(limit).max(floor)
}

/// A section's title line `==== title ====…`, `width` characters long.
pub fn title_line(title: &str, width: usize) -> String {
    format!("==== {title} {}", "=".repeat(width.saturating_sub(title.chars().count() + 6)))
}
