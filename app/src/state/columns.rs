//! Which columns the op and kernel tables show: the user's choice per table kind (kept in the
//! browser's localStorage, `kinetoscope.columns.<kind>`), else a default for the page's width.
//!
//! Defaults: at [`NARROW_PX`] and wider, the percent columns, the work columns (FLOPs,
//! bytes, TFLOP/s, GB/s) and the memory columns (CPU Mem, Self CPU Mem, CUDA Mem, Self CUDA
//! Mem) of the op table and the kernels' spread, occupancy, tensor-core,
//! precision, top op and source columns are hidden, so `# of Calls` and `CUDA time avg` fit at
//! 1440 px and the kernels' roofline columns (FLOPs, TFLOP/s, % of peak, GB/s, % of BW, Bound)
//! fit beside Calls, Total, Mean, GPU % and Class; narrower, the ops
//! keep Self CUDA, CUDA total and Calls, the kernels Calls, Total, Mean, GPU %, Source and
//! TFLOP/s. Name and the sorted column are always shown; the steps table shows every
//! column. Why a default by width: at 800 px only four of twelve columns fit, and the
//! sorted column could be one of those off screen. A column dragged wider or narrower keeps its
//! width (in `ch`) until the page is reloaded.

use std::collections::{BTreeMap, BTreeSet};

/// The narrowest a column can be dragged to, in `ch`.
pub const MIN_WIDTH_CH: usize = 4;

/// Below this page width (CSS px), tables start with their narrow default.
pub const NARROW_PX: f64 = 1200.0;

/// The column choice of every table kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ColumnChoice {
    /// Columns the user hid, per table kind (`ops`, `kernels`); a kind absent: its default.
    pub chosen: BTreeMap<String, BTreeSet<String>>,
    /// The page was narrower than [`NARROW_PX`] when it started.
    pub narrow: bool,
    /// Widths the user dragged a column to, in `ch`, per `kind.key` (this page only).
    pub widths: BTreeMap<String, usize>,
}

impl ColumnChoice {
    /// The columns hidden in tables of `kind`.
    pub fn hidden(&self, kind: &str) -> BTreeSet<String> {
        self.chosen.get(kind).cloned().unwrap_or_else(|| {
            default_hidden(kind, self.narrow).iter().map(|k| (*k).to_owned()).collect()
        })
    }

    /// Indices of `columns` (keys, in table order) to show: not hidden, or Name, or `sort`.
    pub fn shown(&self, kind: &str, columns: &[&str], sort: Option<&str>) -> Vec<usize> {
        let hidden = self.hidden(kind);
        (0..columns.len())
            .filter(|&i| {
                let key = columns[i];
                key == "name" || Some(key) == sort || !hidden.contains(key)
            })
            .collect()
    }

    /// Shows a hidden column of `kind` or hides a shown one (Name stays).
    pub fn toggle(&mut self, kind: &str, key: &str) {
        if key == "name" {
            return;
        }
        let mut hidden = self.hidden(kind);
        if !hidden.remove(key) {
            hidden.insert(key.to_owned());
        }
        self.chosen.insert(kind.to_owned(), hidden);
    }

    /// The width column `key` of `kind` was dragged to, in `ch`.
    pub fn width(&self, kind: &str, key: &str) -> Option<usize> {
        self.widths.get(&format!("{kind}.{key}")).copied()
    }

    /// Column `key` of `kind` was dragged to `ch` wide (at least [`MIN_WIDTH_CH`]).
    pub fn resize(&mut self, kind: &str, key: &str, ch: usize) {
        self.widths.insert(format!("{kind}.{key}"), ch.max(MIN_WIDTH_CH));
    }

    /// The stored form of `kind`'s choice (hidden keys joined by `,`), `None` while it is the
    /// default.
    pub fn stored(&self, kind: &str) -> Option<String> {
        let hidden = self.chosen.get(kind)?;
        Some(hidden.iter().map(String::as_str).collect::<Vec<_>>().join(","))
    }

    /// Restores `kind`'s choice from its stored form.
    pub fn restore(&mut self, kind: &str, stored: &str) {
        let hidden = stored.split(',').filter(|k| !k.is_empty() && *k != "name");
        self.chosen.insert(kind.to_owned(), hidden.map(str::to_owned).collect());
    }
}

/// The columns of `kind` hidden until the user chooses (see the module docs).
fn default_hidden(kind: &str, narrow: bool) -> &'static [&'static str] {
    match (kind, narrow) {
        ("ops", false) => &[
            "self_cpu_pct",
            "cpu_total_pct",
            "self_cuda_pct",
            "flops",
            "bytes",
            "achieved_tflops",
            "achieved_gbps",
            "cpu_mem",
            "self_cpu_mem",
            "cuda_mem",
            "self_cuda_mem",
        ],
        ("ops", true) => &[
            "self_cpu",
            "self_cpu_pct",
            "cpu_total_pct",
            "cpu_total",
            "cpu_avg",
            "self_cuda_pct",
            "cuda_avg",
            "flops",
            "bytes",
            "achieved_tflops",
            "achieved_gbps",
            "cpu_mem",
            "self_cpu_mem",
            "cuda_mem",
            "self_cuda_mem",
        ],
        ("kernels", false) => &[
            "median",
            "p95",
            "max",
            "blocks_per_sm",
            "occupancy",
            "tensor_cores",
            "precision",
            "top_op",
            "source",
        ],
        ("kernels", true) => &[
            "median",
            "p95",
            "max",
            "blocks_per_sm",
            "occupancy",
            "class",
            "tensor_cores",
            "precision",
            "top_op",
            "flops",
            "peak_pct",
            "achieved_gbps",
            "bandwidth_pct",
            "bound",
        ],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The op table's columns as the worker sends them (answer/tables.rs).
    const OPS: [&str; 19] = [
        "name",
        "self_cpu_pct",
        "self_cpu",
        "cpu_total_pct",
        "cpu_total",
        "cpu_avg",
        "self_cuda",
        "self_cuda_pct",
        "cuda_total",
        "cuda_avg",
        "calls",
        "flops",
        "bytes",
        "achieved_tflops",
        "achieved_gbps",
        "cpu_mem",
        "self_cpu_mem",
        "cuda_mem",
        "self_cuda_mem",
    ];

    /// The kernel table's columns as the worker sends them.
    const KERNELS: [&str; 21] = [
        "name", "calls", "total", "mean", "median", "p95", "max", "gpu_pct", "blocks_per_sm",
        "occupancy", "class", "tensor_cores", "precision", "top_op", "source", "flops",
        "achieved_tflops", "peak_pct", "achieved_gbps", "bandwidth_pct", "bound",
    ];

    #[test]
    fn kernels_show_their_roofline_columns_when_wide() {
        let shown = |c: &ColumnChoice| -> Vec<&str> {
            c.shown("kernels", &KERNELS, None).into_iter().map(|i| KERNELS[i]).collect()
        };
        assert_eq!(
            shown(&ColumnChoice::default()),
            [
                "name", "calls", "total", "mean", "gpu_pct", "class", "flops", "achieved_tflops", "peak_pct",
                "achieved_gbps", "bandwidth_pct", "bound"
            ]
        );
        let narrow = ColumnChoice { narrow: true, ..ColumnChoice::default() };
        assert_eq!(shown(&narrow), ["name", "calls", "total", "mean", "gpu_pct", "source", "achieved_tflops"]);
    }

    fn keys(c: &ColumnChoice, sort: Option<&str>) -> Vec<&'static str> {
        c.shown("ops", &OPS, sort).into_iter().map(|i| OPS[i]).collect()
    }

    #[test]
    fn defaults_keep_calls_and_the_sorted_column() {
        let wide = ColumnChoice::default();
        assert_eq!(
            keys(&wide, None),
            ["name", "self_cpu", "cpu_total", "cpu_avg", "self_cuda", "cuda_total", "cuda_avg", "calls"]
        );
        let narrow = ColumnChoice {
            narrow: true,
            ..ColumnChoice::default()
        };
        assert_eq!(keys(&narrow, None), ["name", "self_cuda", "cuda_total", "calls"]);
        assert_eq!(
            keys(&narrow, Some("self_cpu")),
            ["name", "self_cpu", "self_cuda", "cuda_total", "calls"],
            "the sorted column stays"
        );
        assert_eq!(narrow.shown("steps", &["step", "cpu_dur"], None), [0, 1]);
    }

    #[test]
    fn a_choice_toggles_and_round_trips_through_storage() {
        let mut c = ColumnChoice::default();
        assert_eq!(c.stored("ops"), None, "the default is not stored");
        c.toggle("ops", "calls");
        c.toggle("ops", "self_cpu_pct");
        c.toggle("ops", "name");
        let stored = "achieved_gbps,achieved_tflops,bytes,calls,cpu_mem,cpu_total_pct,cuda_mem,flops,self_cpu_mem,self_cuda_mem,self_cuda_pct";
        assert_eq!(c.stored("ops").as_deref(), Some(stored));
        let mut back = ColumnChoice {
            narrow: true,
            ..ColumnChoice::default()
        };
        back.restore("ops", &format!("{stored},name"));
        assert_eq!(keys(&back, None), keys(&c, None));
        assert!(!keys(&back, None).contains(&"calls"));
    }

    #[test]
    fn a_dragged_width_is_kept_per_table_kind() {
        let mut c = ColumnChoice::default();
        assert_eq!(c.width("ops", "calls"), None);
        c.resize("ops", "calls", 20);
        c.resize("kernels", "calls", 1);
        assert_eq!(c.width("ops", "calls"), Some(20));
        assert_eq!(c.width("kernels", "calls"), Some(MIN_WIDTH_CH));
    }
}
