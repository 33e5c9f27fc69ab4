//! The memory chart's state as a plain struct: the worker's [`MemoryData`] for the device
//! shown, the moment whose live allocations are listed (the highest step peak until the
//! pointer hovers the chart) and the list's sort order.
//!
//! Inputs: [`MemoryView::chart`] (the answer to `Query::Memory`, applied by `ChartState`),
//! [`MemoryView::hover_sent`] / [`MemoryView::apply_live`] for `Query::MemoryLive`,
//! [`MemoryView::pick_device`], [`MemoryView::back_to_peak`], [`MemoryView::sort_by`].
//! Output: [`MemoryView::live`] and [`MemoryView::rows`] (sorted).
//!
//! Invariants: at most one live query awaited (`live_pending`, latest wins on its channel); a
//! live answer for another device than the one shown is dropped. The worker does every sum;
//! this only picks and sorts the rows it sent (docs/viewer.md#memory).

use protocol::{LiveAllocation, LiveMemory, MemoryData};

/// Live allocations the page lists (as `report` does by default).
pub const LIVE_ROWS: u32 = 20;

/// A column of the live allocations list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveKey {
    /// Size.
    Bytes,
    /// The op that made it.
    Op,
    /// Its category.
    Category,
    /// Phase, then module.
    Phase,
    /// How long it had been live at the moment.
    Age,
}

impl LiveKey {
    /// Every column, in display order.
    pub const ALL: [Self; 5] = [Self::Bytes, Self::Op, Self::Category, Self::Phase, Self::Age];

    /// Stable key (`col` test ids, the hook).
    pub fn key(self) -> &'static str {
        match self {
            Self::Bytes => "bytes",
            Self::Op => "op",
            Self::Category => "category",
            Self::Phase => "phase",
            Self::Age => "age",
        }
    }

    /// Column heading.
    pub fn label(self) -> &'static str {
        match self {
            Self::Bytes => "Size",
            Self::Op => "Op",
            Self::Category => "Category",
            Self::Phase => "Phase / module",
            Self::Age => "Age",
        }
    }
}

/// What the memory chart shows.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryView {
    /// The chart of the device shown, once it arrived.
    pub data: Option<MemoryData>,
    /// The device asked for (`None`: the worker's pick, the highest peak).
    pub device: Option<String>,
    /// The live allocations at the hovered moment (`None`: at the peak, `data.live`).
    pub hovered: Option<LiveMemory>,
    /// The live query awaited.
    pub live_pending: Option<u32>,
    /// Sort column and direction (descending when true).
    pub sort: (LiveKey, bool),
}

impl Default for MemoryView {
    fn default() -> Self {
        MemoryView { data: None, device: None, hovered: None, live_pending: None, sort: (LiveKey::Bytes, true) }
    }
}

impl MemoryView {
    /// The chart arrived: the hovered list goes (it was for the previous chart).
    pub fn chart(&mut self, data: MemoryData) {
        self.hovered = None;
        self.live_pending = None;
        self.data = Some(data);
    }

    /// Shows device `label`: the chart is asked for again (true when it changed).
    pub fn pick_device(&mut self, label: String) -> bool {
        let shown = self.data.as_ref().map(|d| d.device.as_str());
        if shown == Some(label.as_str()) {
            return false;
        }
        self.device = Some(label);
        self.data = None;
        self.hovered = None;
        self.live_pending = None;
        true
    }

    /// The device shown and its live query for `at_ns`, if a chart is here.
    pub fn live_query(&self, at_ns: i64) -> Option<protocol::Query> {
        let device = self.data.as_ref()?.device.clone();
        (!device.is_empty()).then_some(protocol::Query::MemoryLive { device, at_ns, top: LIVE_ROWS })
    }

    /// Records that the live query was sent as `id`.
    pub fn hover_sent(&mut self, id: u32) {
        self.live_pending = Some(id);
    }

    /// Applies the answer to live query `id` (others, and another device's, are dropped).
    pub fn apply_live(&mut self, id: u32, live: LiveMemory) {
        if self.live_pending != Some(id) {
            return;
        }
        self.live_pending = None;
        if self.data.as_ref().is_some_and(|d| d.device == live.device) {
            self.hovered = Some(live);
        }
    }

    /// Live query `id` failed: the list stays as it was.
    pub fn live_failed(&mut self, id: u32) {
        if self.live_pending == Some(id) {
            self.live_pending = None;
        }
    }

    /// Lists the peak's allocations again.
    pub fn back_to_peak(&mut self) {
        self.hovered = None;
        self.live_pending = None;
    }

    /// The allocations listed: at the hovered moment, else at the peak.
    pub fn live(&self) -> Option<&LiveMemory> {
        self.hovered.as_ref().or(self.data.as_ref().map(|d| &d.live))
    }

    /// Sorts by `key`: descending first, a second click ascending.
    pub fn sort_by(&mut self, key: LiveKey) {
        self.sort = if self.sort.0 == key { (key, !self.sort.1) } else { (key, true) };
    }

    /// The listed rows in the chosen order (ties keep the worker's order: largest first).
    pub fn rows(&self) -> Vec<LiveAllocation> {
        let Some(live) = self.live() else { return Vec::new() };
        let mut rows = live.rows.clone();
        let at = live.at_ns;
        let (key, desc) = self.sort;
        rows.sort_by(|a, b| {
            let order = match key {
                LiveKey::Bytes => a.bytes.cmp(&b.bytes),
                LiveKey::Op => op_name(a).cmp(op_name(b)),
                LiveKey::Category => a.category.cmp(&b.category),
                LiveKey::Phase => (&a.phase, &a.module).cmp(&(&b.phase, &b.module)),
                LiveKey::Age => (at - a.at_ns).cmp(&(at - b.at_ns)),
            };
            if desc { order.reverse() } else { order }
        });
        rows
    }
}

/// The name of the op that made `a` ("" without one).
pub fn op_name(a: &LiveAllocation) -> &str {
    a.op.as_ref().map_or("", |o| o.name.as_str())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn alloc(bytes: i64, at_ns: i64, category: &str) -> LiveAllocation {
        LiveAllocation { bytes, at_ns, category: category.into(), ..LiveAllocation::default() }
    }

    fn view() -> MemoryView {
        let live = LiveMemory {
            device: "cpu".into(),
            at_ns: 100,
            count: 3,
            bytes: 60,
            rows: vec![alloc(30, 90, "activation"), alloc(20, 10, "gradient"), alloc(10, 50, "activation")],
        };
        let mut v = MemoryView::default();
        v.chart(MemoryData { device: "cpu".into(), live, ..MemoryData::default() });
        v
    }

    #[test]
    fn rows_sort_by_any_column_and_flip_on_a_second_click() {
        let mut v = view();
        let sizes = |v: &MemoryView| v.rows().iter().map(|r| r.bytes).collect::<Vec<_>>();
        assert_eq!(sizes(&v), [30, 20, 10]);
        v.sort_by(LiveKey::Bytes);
        assert_eq!(sizes(&v), [10, 20, 30]);
        v.sort_by(LiveKey::Age);
        assert_eq!(sizes(&v), [20, 10, 30], "oldest first");
        v.sort_by(LiveKey::Category);
        assert_eq!(sizes(&v), [20, 30, 10], "gradient before activation, ties in the worker's order");
    }

    #[test]
    fn a_hovered_moment_replaces_the_peak_until_asked_back() {
        let mut v = view();
        let q = v.live_query(40).unwrap();
        assert_eq!(q, protocol::Query::MemoryLive { device: "cpu".into(), at_ns: 40, top: LIVE_ROWS });
        v.hover_sent(7);
        v.apply_live(6, LiveMemory { device: "cpu".into(), at_ns: 1, ..LiveMemory::default() });
        assert_eq!(v.live().unwrap().at_ns, 100, "an older answer is dropped");
        v.apply_live(7, LiveMemory { device: "cpu".into(), at_ns: 40, ..LiveMemory::default() });
        assert_eq!(v.live().unwrap().at_ns, 40);
        v.back_to_peak();
        assert_eq!(v.live().unwrap().at_ns, 100);
        v.hover_sent(8);
        assert!(v.pick_device("cuda:0".into()));
        v.apply_live(8, LiveMemory { device: "cpu".into(), at_ns: 40, ..LiveMemory::default() });
        assert!(v.live().is_none(), "another device's list is not shown");
    }
}
