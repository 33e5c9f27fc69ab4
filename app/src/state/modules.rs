//! The Modules tab's tree as a plain struct: the worker's [`ModulesData`], which nodes are
//! collapsed, and the rows shown (siblings sorted by a column, a name filter that keeps the
//! matches' ancestors).
//!
//! The sort, filter, scope and pending query are the table tabs' ([`super::table::TableState`]);
//! this holds what only a tree has. A new answer (a new load or scope) expands every node again.

use protocol::ModulesData;
use std::sync::Arc;

/// A column of the tree table: key (`col-<key>`), header, tooltip.
pub struct ModuleColumn {
    /// Stable key: the sort key and the test id `col-<key>`.
    pub key: &'static str,
    /// Header text.
    pub label: &'static str,
    /// What the column counts.
    pub title: &'static str,
}

/// The columns, in display order; [`BACKWARD`] only when backward time could be tied.
pub const COLUMNS: [ModuleColumn; 6] = [
    ModuleColumn { key: "name", label: "Module", title: "nn.Module name (the same type at another path is another row)" },
    ModuleColumn { key: "occurrences", label: "Occurrences", title: "Calls counted in the scope" },
    ModuleColumn { key: "cpu_total", label: "CPU total", title: "Host time of the calls" },
    ModuleColumn { key: "cpu_self", label: "CPU self", title: "Host time outside child operators, modules and launches" },
    ModuleColumn { key: "gpu_total", label: "GPU total", title: "Device time launched under the calls (forward)" },
    ModuleColumn { key: "gpu_self", label: "GPU self", title: "Device time of the direct child operators and own launches" },
];

/// The backward GPU column.
pub const BACKWARD: ModuleColumn = ModuleColumn {
    key: "gpu_backward",
    label: "Backward GPU",
    title: "Device time of the backward ops tied (fwdbwd flows) to forward ops under the calls",
};

/// The module tree shown on the Modules tab.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModuleTree {
    /// The worker's tree (pre-order).
    pub data: Arc<ModulesData>,
    /// Per row: collapsed (its descendants hidden).
    pub collapsed: Vec<bool>,
    /// Per row: the rows right under it, in call order.
    children: Vec<Vec<usize>>,
    /// The roots, in call order.
    roots: Vec<usize>,
}

impl ModuleTree {
    /// The tree of `data`, every node expanded.
    pub fn new(data: ModulesData) -> Self {
        let n = data.rows.len();
        let (mut children, mut roots, mut open) = (vec![Vec::new(); n], Vec::new(), Vec::<usize>::new());
        for (k, r) in data.rows.iter().enumerate() {
            open.truncate(usize::from(r.depth));
            match open.last() {
                Some(&p) => children[p].push(k),
                None => roots.push(k),
            }
            open.push(k);
        }
        ModuleTree { data: Arc::new(data), collapsed: vec![false; n], children, roots }
    }

    /// Whether row `k` has children.
    pub fn has_children(&self, k: usize) -> bool {
        self.children.get(k).is_some_and(|c| !c.is_empty())
    }

    /// Collapses or expands row `k`.
    pub fn toggle(&mut self, k: usize) {
        if let Some(c) = self.collapsed.get_mut(k) {
            *c = !*c;
        }
    }

    /// Collapses (`true`) or expands every row.
    pub fn set_all(&mut self, collapsed: bool) {
        self.collapsed.iter_mut().for_each(|c| *c = collapsed);
    }

    /// Row `k`'s number in column `key` (`None`: text or not told).
    pub fn value(&self, k: usize, key: &str) -> Option<i64> {
        let r = self.data.rows.get(k)?;
        match key {
            "occurrences" => Some(i64::from(r.occurrences)),
            "cpu_total" => Some(r.host_ns),
            "cpu_self" => Some(r.self_host_ns),
            "gpu_total" => Some(r.device_ns),
            "gpu_self" => Some(r.self_device_ns),
            "gpu_backward" => r.backward_device_ns,
            _ => None,
        }
    }

    /// The rows shown, in order: depth first, siblings by `sort` (a column key and whether
    /// descending; stable; call order without one). With a `filter` (case-insensitive substring of the name) only the matches and
    /// their ancestors show, whatever is collapsed; without one a collapsed row hides its
    /// descendants.
    pub fn visible(&self, sort: Option<(&str, bool)>, filter: &str) -> Vec<usize> {
        let needle = filter.trim().to_lowercase();
        let keep = (!needle.is_empty()).then(|| self.matches_or_holds(&needle));
        let order = |list: &[usize]| -> Vec<usize> {
            let mut list: Vec<usize> = list.iter().copied().filter(|&k| keep.as_ref().is_none_or(|m| m[k])).collect();
            if let Some((key, desc)) = sort {
                list.sort_by(|&a, &b| {
                    let ord = if key == "name" {
                        self.data.rows[a].name.cmp(&self.data.rows[b].name)
                    } else {
                        self.value(a, key).cmp(&self.value(b, key))
                    };
                    if desc {
                        ord.reverse()
                    } else {
                        ord
                    }
                });
            }
            list
        };
        let mut out = Vec::new();
        let mut stack: Vec<usize> = order(&self.roots).into_iter().rev().collect();
        while let Some(k) = stack.pop() {
            out.push(k);
            if keep.is_some() || !self.collapsed[k] {
                stack.extend(order(&self.children[k]).into_iter().rev());
            }
        }
        out
    }

    /// Per row: its name holds `needle` (lower case) or a descendant's does.
    fn matches_or_holds(&self, needle: &str) -> Vec<bool> {
        let mut keep: Vec<bool> = self.data.rows.iter().map(|r| r.name.to_lowercase().contains(needle)).collect();
        // Pre-order: every child comes after its parent, so one backward pass lifts matches up.
        for k in (0..keep.len()).rev() {
            if self.children[k].iter().any(|&c| keep[c]) {
                keep[k] = true;
            }
        }
        keep
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use protocol::ModuleNode;

    /// A(B(C), D), E in pre-order, with CPU totals 10, 4, 1, 6, 20.
    fn tree() -> ModuleTree {
        let node = |name: &str, depth: u16, host_ns: i64| ModuleNode { name: name.into(), depth, host_ns, occurrences: 1, ..ModuleNode::default() };
        ModuleTree::new(ModulesData {
            rows: vec![node("A", 0, 10), node("B", 1, 4), node("C", 2, 1), node("D", 1, 6), node("E", 0, 20)],
            backward_tied: false,
        })
    }

    #[test]
    fn call_order_collapse_and_expand() {
        let mut t = tree();
        assert_eq!(t.visible(None, ""), vec![0, 1, 2, 3, 4]);
        assert!(t.has_children(1) && !t.has_children(2));
        t.toggle(1);
        assert_eq!(t.visible(None, ""), vec![0, 1, 3, 4]);
        t.set_all(true);
        assert_eq!(t.visible(None, ""), vec![0, 4]);
        t.set_all(false);
        assert_eq!(t.visible(None, "").len(), 5);
    }

    #[test]
    fn siblings_sort_both_ways_under_their_parent() {
        let t = tree();
        assert_eq!(t.visible(Some(("cpu_total", true)), ""), vec![4, 0, 3, 1, 2]);
        assert_eq!(t.visible(Some(("cpu_total", false)), ""), vec![0, 1, 2, 3, 4]);
        assert_eq!(t.visible(Some(("name", true)), ""), vec![4, 0, 3, 1, 2]);
    }

    #[test]
    fn filter_keeps_matches_and_their_ancestors_even_collapsed() {
        let mut t = tree();
        t.toggle(0);
        assert_eq!(t.visible(None, "c"), vec![0, 1, 2]);
        assert_eq!(t.visible(None, "nothing"), Vec::<usize>::new());
    }
}
