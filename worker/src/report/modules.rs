//! `report --modules`: the `nn.Module` tree with occurrences, host and device times (text, and
//! `modules` in `--json`; docs/definitions.md "Modules").

use super::{cut, printable, time, SortKey};
use crate::analysis::modules::{ModuleRow, ModuleStats, Modules};
use crate::analysis::ops::us;
use crate::model::Trace;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// `modules{}`: whether backward ops could be tied to modules, and every node in pre-order
/// with its path, depth and numbers (µs).
pub fn json(trace: &Trace, m: &Modules) -> Value {
    let mut path: Vec<String> = Vec::new();
    let nodes: Vec<Value> = m
        .rows
        .iter()
        .map(|r| {
            path.truncate(usize::from(r.depth));
            path.push(r.label(trace).into_owned());
            let s = &r.stats;
            json!({
                "path": path.join("/"),
                "name": r.label(trace),
                "module_id": r.module_id,
                "depth": r.depth,
                "occurrences": s.occurrences,
                "operators": s.operators,
                "host_us": us(s.host_ns),
                "self_host_us": us(s.self_host_ns),
                "device_us": us(s.device_ns),
                "self_device_us": us(s.self_device_ns),
                "backward_device_us": m.backward_tied.then(|| us(s.backward_device_ns)),
            })
        })
        .collect();
    json!({ "backward_tied": m.backward_tied, "nodes": nodes })
}

/// The column `--sort` orders siblings by (largest first); `None`: call order.
fn column(key: Option<SortKey>) -> Option<fn(&ModuleStats) -> i64> {
    Some(match key? {
        SortKey::SelfCpu => |s| s.self_host_ns,
        SortKey::CpuTotal => |s| s.host_ns,
        SortKey::SelfDevice => |s| s.self_device_ns,
        SortKey::DeviceTotal => |s| s.device_ns,
        SortKey::Calls => |s| i64::from(s.occurrences),
        _ => return None,
    })
}

/// The text section: the tree indented by depth (at most `depth` levels below the roots),
/// siblings in call order or by `sort`'s column.
pub fn text(trace: &Trace, m: &Modules, sort: Option<SortKey>, depth: Option<usize>, name_width: usize) -> String {
    let mut out = String::from("\n==== Modules (nn.Module calls per (name, id), summed over calls; docs/definitions.md \"Modules\")\n");
    if m.rows.is_empty() {
        out.push_str("No nn.Module frames (recorded with with_stack=True).\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{:<name_width$} {:>7} {:>5} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "Module", "Calls", "Ops", "Host total", "Host self", "Device total", "Device self", "Backward dev"
    );
    for k in order(m, column(sort)) {
        let r = &m.rows[k];
        if depth.is_some_and(|d| usize::from(r.depth) > d) {
            continue;
        }
        let indent = "  ".repeat(usize::from(r.depth));
        let s = &r.stats;
        let backward = if m.backward_tied { time(s.backward_device_ns) } else { "-".to_owned() };
        let _ = writeln!(
            out,
            "{:<name_width$} {:>7} {:>5} {:>12} {:>12} {:>12} {:>12} {:>12}",
            cut(&printable(&format!("{indent}{}", r.label(trace))), name_width),
            s.occurrences,
            s.operators,
            time(s.host_ns),
            time(s.self_host_ns),
            time(s.device_ns),
            time(s.self_device_ns),
            backward
        );
    }
    if !m.backward_tied {
        out.push_str("Backward device time: not told (the trace has no fwdbwd flows tying backward ops to forward ops).\n");
    }
    out
}

/// Row indices in display order: pre-order, siblings sorted by `by` (largest first, stable).
fn order(m: &Modules, by: Option<fn(&ModuleStats) -> i64>) -> Vec<usize> {
    let Some(by) = by else { return (0..m.rows.len()).collect() };
    // Children of each row (and of the virtual root, last), in call order.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); m.rows.len() + 1];
    let mut open: Vec<usize> = Vec::new();
    for (k, r) in m.rows.iter().enumerate() {
        open.truncate(usize::from(r.depth));
        children[open.last().copied().unwrap_or(m.rows.len())].push(k);
        open.push(k);
    }
    let key = |k: &usize| std::cmp::Reverse(m.rows.get(*k).map_or(0, |r: &ModuleRow| by(&r.stats)));
    children.iter_mut().for_each(|c| c.sort_by_key(key));
    let mut out = Vec::with_capacity(m.rows.len());
    let mut stack: Vec<usize> = children[m.rows.len()].iter().rev().copied().collect();
    while let Some(k) = stack.pop() {
        out.push(k);
        stack.extend(children[k].iter().rev());
    }
    out
}
