//! The Modules tab's tree: [`crate::analysis::modules`] on the wire, names without the
//! `nn.Module: ` prefix and each node's earliest call as a slice reference.

use super::slice_ref;
use crate::analysis::modules;
use crate::model::Trace;
use protocol::{ModuleNode, ModulesData};

/// The module tree of `trace` with the numbers of the calls starting in `range` (ns; `None`:
/// the whole trace), as `report --modules --json` writes them.
pub fn tree(trace: &Trace, range: Option<(i64, i64)>) -> ModulesData {
    let m = modules::analyze_in(trace, range);
    let rows = m
        .rows
        .iter()
        .map(|r| {
            let s = &r.stats;
            ModuleNode {
                name: r.label(trace).into_owned(),
                module_id: r.module_id,
                depth: r.depth,
                occurrences: s.occurrences,
                host_ns: s.host_ns,
                self_host_ns: s.self_host_ns,
                device_ns: s.device_ns,
                self_device_ns: s.self_device_ns,
                backward_device_ns: m.backward_tied.then_some(s.backward_device_ns),
                first: s.first.and_then(|id| slice_ref(trace, id)),
            }
        })
        .collect();
    ModulesData { rows, backward_tied: m.backward_tied }
}
