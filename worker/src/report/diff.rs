//! `kinetoscope diff`: the comparison of two sessions, its rows ordered as asked (largest
//! |Δ| first by default, unchanged rows last), rendered as text or the stable `--json` form.

use super::compare::{comparison_json, comparison_text, Files, TextOptions};
use crate::compare::{compare, headline_column, order, CompareOptions, Comparison, KernelColumn, OpColumn, SortKey};
use crate::session::Session;

/// How a diff is computed and ordered.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiffOptions {
    /// Ops matched by name and input shapes.
    pub by_shape: bool,
    /// Op row order; `None`: |Δ| of Self CUDA (Self CPU when neither trace has device time).
    pub op_sort: Option<SortKey<OpColumn>>,
    /// Kernel row order; `None`: |Δ| of total time.
    pub kernel_sort: Option<SortKey<KernelColumn>>,
    /// Rows per text table.
    pub top: usize,
}

/// A computed, ordered comparison with the names of its two traces.
pub struct DiffReport<'s> {
    base: &'s str,
    cand: &'s str,
    comparison: Comparison,
    op_sort: SortKey<OpColumn>,
    kernel_sort: SortKey<KernelColumn>,
    default_column: OpColumn,
    top: usize,
}

impl<'s> DiffReport<'s> {
    /// Compares `base` with `cand` and orders the rows.
    pub fn build(base: &'s Session, cand: &'s Session, options: DiffOptions) -> Self {
        let mut c = compare(base, cand, &CompareOptions { by_shape: options.by_shape });
        let default_column = headline_column(&c);
        let (op_sort, kernel_sort) = order(&mut c, (options.op_sort, options.kernel_sort));
        Self {
            base: base.name(),
            cand: cand.name(),
            comparison: c,
            op_sort,
            kernel_sort,
            default_column,
            top: options.top,
        }
    }

    /// The stable `--json` form.
    pub fn json(&self) -> serde_json::Value {
        comparison_json(&self.comparison, self.files())
    }

    /// The text report.
    pub fn text(&self) -> String {
        let headline = match self.op_sort {
            SortKey::Delta(k) | SortKey::AbsDelta(k) => k,
            SortKey::Name => self.default_column,
        };
        let options = TextOptions {
            headline,
            op_order: order_title(self.op_sort, OpColumn::label),
            kernel_order: order_title(self.kernel_sort, KernelColumn::label),
            top: self.top,
        };
        comparison_text(&self.comparison, self.files(), &options)
    }

    fn files(&self) -> Files<'_> {
        Files { base: self.base, cand: self.cand }
    }
}

/// How a sort key orders rows, for a table title.
fn order_title<C: Copy>(key: SortKey<C>, label: fn(C) -> &'static str) -> String {
    match key {
        SortKey::Delta(c) => format!("Δ {} descending", label(c)),
        SortKey::AbsDelta(c) => format!("|Δ {}| descending", label(c)),
        SortKey::Name => "name".to_owned(),
    }
}
