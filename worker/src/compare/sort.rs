//! Ordering diff rows: by the delta of a column, by its absolute delta, or by name.
//!
//! Ties (and equal names) fall back to name, then input shapes, ascending, whatever the
//! direction, so an order never depends on hashing or on the sort algorithm.

use super::{KernelColumn, OpColumn, Pair};
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
