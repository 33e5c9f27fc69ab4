//! Ordering diff rows: by the delta of a column, by its absolute delta, or by name.
//!
//! Ties (and equal names) fall back to name, then input shapes, ascending, whatever the
//! direction, so an order never depends on hashing or on the sort algorithm.

use super::{Comparison, KernelColumn, OpColumn, Pair};
use std::cmp::Ordering;

/// A diff row that can be sorted: op and kernel rows.
pub trait DiffRow {
    /// The row's compared columns.
    type Column: Copy;
    /// Both sides' values of `column`.
    fn pair(&self, column: Self::Column) -> Pair;
    /// Row name.
    fn name(&self) -> &str;
    /// Second part of the row key (input shapes), empty when none.
    fn detail(&self) -> &str;
}

/// What orders diff rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey<C> {
    /// `cand - base` of a column.
    Delta(C),
    /// `|cand - base|` of a column.
    AbsDelta(C),
    /// Name, then input shapes.
    Name,
}

/// Sorts `rows` by `key`, largest first when `descending` (ties: name ascending).
pub fn sort_rows<R: DiffRow>(rows: &mut [R], key: SortKey<R::Column>, descending: bool) {
    let by_name = |a: &R, b: &R| {
        a.name()
            .cmp(b.name())
            .then_with(|| a.detail().cmp(b.detail()))
    };
    let primary = |a: &R, b: &R| -> Ordering {
        match key {
            SortKey::Delta(c) => a.pair(c).delta().total_cmp(&b.pair(c).delta()),
            SortKey::AbsDelta(c) => a.pair(c).delta().abs().total_cmp(&b.pair(c).delta().abs()),
            SortKey::Name => by_name(a, b),
        }
    };
    rows.sort_by(|a, b| {
        let order = primary(a, b);
        let order = if descending { order.reverse() } else { order };
        order.then_with(|| by_name(a, b))
    });
}

/// Orders `c`'s rows by `keys`, each table's default where `None`: ops by |Δ| of Self CUDA
/// (Self CPU when neither trace has device time), kernels by |Δ| of total time, largest first,
/// so unchanged rows come last; name sorts ascending. `kinetoscope diff` and the Compare tab
/// both show rows in this order. Returns the keys applied.
pub fn order(c: &mut Comparison, keys: SortKeys) -> (SortKey<OpColumn>, SortKey<KernelColumn>) {
    let op_sort = keys.0.unwrap_or(SortKey::AbsDelta(headline_column(c)));
    let kernel_sort = keys.1.unwrap_or(SortKey::AbsDelta(KernelColumn::Total));
    sort_rows(&mut c.ops, op_sort, op_sort != SortKey::Name);
    sort_rows(&mut c.kernels, kernel_sort, kernel_sort != SortKey::Name);
    (op_sort, kernel_sort)
}

/// The op column a comparison leads with: Self CUDA, or Self CPU when neither trace has
/// device time.
pub fn headline_column(c: &Comparison) -> OpColumn {
    let device = c.ops.iter().any(|r| r.self_device_ns.base != 0.0 || r.self_device_ns.cand != 0.0);
    if device {
        OpColumn::SelfDevice
    } else {
        OpColumn::SelfCpu
    }
}

/// Sort keys for the op table and the kernel table; `None`: that table's default order.
pub type SortKeys = (Option<SortKey<OpColumn>>, Option<SortKey<KernelColumn>>);

/// Parses a `--sort` value for both tables: `name`, `COLUMN` or `abs:COLUMN` (absolute
/// delta), `delta:COLUMN` (signed delta). Op columns: `calls`, `self_cpu`, `self_cuda`,
/// `cuda_total`; kernel columns: `calls`, `total`, `mean`. A table whose columns the key does
/// not name gets `None` (its default order). `None` overall when the value is not a key.
pub fn parse_sort(text: &str) -> Option<SortKeys> {
    if text == "name" {
        return Some((Some(SortKey::Name), Some(SortKey::Name)));
    }
    let (signed, column) = match text.split_once(':') {
        Some(("abs", c)) => (false, c),
        Some(("delta", c)) => (true, c),
        Some(_) => return None,
        None => (false, text),
    };
    let op = OpColumn::parse(column);
    let kernel = KernelColumn::parse(column);
    if op.is_none() && kernel.is_none() {
        return None;
    }
    if signed {
        Some((op.map(SortKey::Delta), kernel.map(SortKey::Delta)))
    } else {
        Some((op.map(SortKey::AbsDelta), kernel.map(SortKey::AbsDelta)))
    }
}
