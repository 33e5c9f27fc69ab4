//! Wire types between the Kinetoscope app (main thread) and its engine worker.
//!
//! Control messages are JSON strings (serde); bulk bytes (file chunks) travel beside them as
//! transferred `ArrayBuffer`s, never through serde. Names are from the boundary's point of view:
//! [`ToWorker`] and [`FromWorker`]. Requests carry an `id` that replies echo.
//!
//! These are wire types, not engine structs: the engine converts its model into them, so engine
//! refactors do not change the protocol.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped on any incompatible change; the app refuses a worker that reports another version.
pub const PROTOCOL_VERSION: u32 = 2;

/// A message from the app to the worker.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type")]
pub enum ToWorker {
    /// Starts a load; chunks follow with the same id. `size` is the file size if known.
    Open { id: u32, name: String, size: Option<u64> },
    /// One chunk of file bytes; the bytes are the transferred buffer sent with this message.
    Chunk { id: u32 },
    /// All chunks were sent: decompress, parse and index.
    Finish { id: u32 },
    /// Drops a load in progress.
    Cancel { id: u32 },
    /// Asks for a table over the loaded trace; answered by `Table` or `QueryFailed` with `id`.
    Query { id: u32, query: Query },
}

/// A table request over the loaded trace. Times are ns from the trace origin.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Query {
    /// PyTorch's `key_averages` table, by name or by name + input shapes.
    Ops { by_shape: bool, range_ns: Option<(i64, i64)> },
    /// Kernels grouped by name.
    Kernels { range_ns: Option<(i64, i64)> },
    /// Profiler steps with their time breakdown.
    Steps,
}

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

/// A message from the worker to the app.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type")]
pub enum FromWorker {
    /// First message after the worker's wasm has started.
    Ready { protocol_version: u32 },
    /// Work in progress on load `id`.
    Progress { id: u32, phase: Phase, done_bytes: u64, total_bytes: Option<u64> },
    /// Load `id` finished; the trace is indexed and its summary is attached.
    Loaded { id: u32, summary: Box<TraceSummary> },
    /// Load `id` failed; nothing was kept.
    Failed { id: u32, error: LoadError },
    /// The answer to query `id`.
    Table { id: u32, table: Box<TableData> },
    /// Query `id` could not be answered (e.g. no trace loaded).
    QueryFailed { id: u32, message: String },
}

/// Stage of a load, for the progress bar.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Receiving bytes from the app.
    Reading,
    /// Gunzipping.
    Decompressing,
    /// Tokenizing and building the model.
    Parsing,
}

/// Why a load failed, with the position in the (decompressed) input when known.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LoadError {
    /// `malformed`, `empty`, `gzip`, `io` or `protocol`; the app adds `io` for fetch and file
    /// read failures and `worker` when the worker could not start or crashed.
    pub kind: String,
    /// Full human message, ending with the position when known.
    pub message: String,
    /// Absolute byte offset in the decompressed input.
    pub offset: Option<u64>,
    /// 1-based line of `offset`.
    pub line: Option<u64>,
    /// 1-based column of `offset`.
    pub column: Option<u64>,
}

/// What `kinetoscope info` prints and the page shows after a load.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceSummary {
    /// File name as given by the user.
    pub file_name: String,
    /// Size of the file as read (compressed if gzip).
    pub file_bytes: u64,
    /// Size of the JSON after decompression.
    pub json_bytes: u64,
    /// `json-object`, `json-array`, with `+gzip` when the input was gzip.
    pub format: String,
    /// Trace events read (every element of the event array that is an object).
    pub events: u64,
    /// Event counts by `ph` (missing `ph` counts as `""`).
    pub phases: BTreeMap<String, u64>,
    /// Event counts by `cat` (missing `cat` counts as `""`).
    pub categories: BTreeMap<String, u64>,
    /// Processes (CPU processes and GPU devices) in display order, each with its lanes.
    pub processes: Vec<ProcessSummary>,
    /// Total number of lanes (threads and streams).
    pub lanes: u64,
    /// Flow endpoints matched and unmatched.
    pub flows: FlowSummary,
    /// Device activities (kernels, memcpy, memset) with a launching call / an enclosing op.
    pub links: LinkSummary,
    /// Time from the first event start to the last event end, in microseconds.
    pub span_us: f64,
    /// One line per recoverable problem kind, with its count and first location.
    pub warnings: Vec<String>,
    /// True when the input ended before the event array was closed.
    pub truncated: bool,
    /// Decompress + parse + index wall time, measured by the caller; 0 when unmeasured.
    pub parse_ms: f64,
}

/// One process or device and its lanes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ProcessSummary {
    /// The `pid` as written in the trace (numbers as decimal text).
    pub pid: String,
    /// Display name (from metadata, or derived).
    pub name: String,
    /// `cpu` or `gpu`.
    pub kind: String,
    /// Threads or streams in display order.
    pub lanes: Vec<LaneSummary>,
}

/// One thread or stream.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LaneSummary {
    /// The `tid` as written in the trace.
    pub tid: String,
    /// Display name.
    pub name: String,
    /// Slices on this lane.
    pub slices: u64,
    /// Nesting depth used (1 for flat lanes), overflow sub-lanes included.
    pub depth: u32,
}

/// Flow matching counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FlowSummary {
    /// Flows with both a start and an end bound to slices.
    pub linked: u64,
    /// Flow starts or ends that found no partner or no slice.
    pub unlinked: u64,
}

/// Device activity linking counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LinkSummary {
    /// Kernels, memcpys and memsets on GPU lanes.
    pub device_activities: u64,
    /// Of those, linked to a launching runtime/driver call by correlation.
    pub with_launch: u64,
    /// Of those, whose launch call sits inside a CPU op.
    pub with_op: u64,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn query_and_table_round_trip() {
        let q = ToWorker::Query {
            id: 3,
            query: Query::Ops { by_shape: true, range_ns: Some((1, 2)) },
        };
        let json = serde_json::to_string(&q).unwrap();
        assert_eq!(serde_json::from_str::<ToWorker>(&json).unwrap(), q);
        let table = TableData {
            kind: "ops".into(),
            columns: vec![Column { key: "name".into(), label: "Name".into(), unit: "text".into() }],
            rows: vec![vec![
                CellValue::Text("aten::mm".into()),
                CellValue::Int(7),
                CellValue::Float(1.5),
                CellValue::Empty,
            ]],
            totals: BTreeMap::new(),
        };
        let msg = FromWorker::Table { id: 3, table: Box::new(table) };
        let json = serde_json::to_string(&msg).unwrap();
        assert_eq!(serde_json::from_str::<FromWorker>(&json).unwrap(), msg);
    }
}
