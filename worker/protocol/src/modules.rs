//! The Modules tab on the wire: the `nn.Module` tree with each node's calls and times.

use crate::SliceRef;
use serde::{Deserialize, Serialize};

/// The module tree of the loaded trace ([`crate::Query::Modules`]); empty when the trace has
/// no `nn.Module` frames.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ModulesData {
    /// Every node in pre-order (a parent right before its children, siblings in call order).
    pub rows: Vec<ModuleNode>,
    /// Whether backward GPU time could be tied to modules (`fwdbwd` flows); when false every
    /// [`ModuleNode::backward_device_ns`] is `None`.
    pub backward_tied: bool,
}

/// One (name, module id) node; times in ns, summed over its calls in the scope asked for.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ModuleNode {
    /// The module's name without the `nn.Module: ` prefix (`Linear_3`).
    pub name: String,
    /// `Python module id`.
    pub module_id: i64,
    /// 0 for a root.
    pub depth: u16,
    /// Calls counted.
    pub occurrences: u32,
    /// Host (CPU) time of the calls.
    pub host_ns: i64,
    /// Host time outside child operators, modules and launches.
    pub self_host_ns: i64,
    /// Device (GPU) time launched under the calls (the forward's).
    pub device_ns: i64,
    /// Device time of the direct child operators and own launches.
    pub self_device_ns: i64,
    /// Device time of the backward ops tied to the calls' forward ops; `None`: not told.
    pub backward_device_ns: Option<i64>,
    /// The earliest counted call, to select on the timeline.
    pub first: Option<SliceRef>,
}
