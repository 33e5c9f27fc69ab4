//! Op, kernel and step tables on the wire.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A small table on the wire (at most a few thousand rows, so plain serde): columns, row-major
/// cells, and named totals.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TableData {
    /// `ops`, `kernels` or `steps`.
    pub kind: String,
    /// Column descriptions, in display order.
    pub columns: Vec<Column>,
    /// One `Vec` per row, one cell per column.
    pub rows: Vec<Vec<CellValue>>,
    /// Named totals, e.g. `self_cpu_total_ns`, `self_device_total_ns`.
    pub totals: BTreeMap<String, f64>,
}

/// One column of a [`TableData`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Column {
    /// Stable key (`self_cpu`, `calls`, …); test ids use it as `col-<key>`.
    pub key: String,
    /// Header text.
    pub label: String,
    /// `ns`, `count`, `pct`, `text` or `bytes`.
    pub unit: String,
    /// Why the column's empty cells are empty (the Steps table's phases the trace cannot
    /// tell apart), shown as the header's and those cells' tooltip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One cell: an integer, a float, text, or nothing (JSON `null`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CellValue {
    /// Exact integer (ns, counts, bytes).
    Int(i64),
    /// Float (percentages, averages).
    Float(f64),
    /// Text (names, shapes).
    Text(String),
    /// No value.
    Empty,
}
