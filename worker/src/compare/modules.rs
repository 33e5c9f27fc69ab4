//! Module diff: the two traces' `nn.Module` trees ([`crate::analysis::modules`]) matched by
//! path, the chain of module names from the root (`BertModel_0/BertEncoder_0/BertLayer_3`), so
//! "the backward of the attention blocks got slower" reads as one row.
//!
//! Calls and times are divided by each trace's divisor (its step count when per step), as the
//! op and kernel diffs are. Rows keep the tree: the baseline's in pre-order, then the paths
//! only the candidate has, in its pre-order (a new child comes after the baseline's tree, with
//! its whole path). Two nodes on one path (same names, different module ids) are summed.

use super::{Pair, Status};
use crate::analysis::modules::Modules;
use crate::model::Trace;
use std::collections::HashMap;

/// One module of one trace, by path.
#[derive(Clone, Debug, PartialEq)]
pub struct ModulePath {
    /// Module names from the root, joined by `/`.
    pub path: String,
    /// 0 for a root.
    pub depth: u16,
    /// Calls, host time, device time (forward), backward device time (0 when not tied), ns.
    pub values: [f64; 4],
}

/// A trace's module tree as paths, in pre-order, repeated paths summed.
pub fn paths(trace: &Trace, m: &Modules) -> Vec<ModulePath> {
    let mut chain: Vec<String> = Vec::new();
    let mut out: Vec<ModulePath> = Vec::with_capacity(m.rows.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in &m.rows {
        chain.truncate(usize::from(r.depth));
        chain.push(r.label(trace).into_owned());
        let path = chain.join("/");
        let s = &r.stats;
        let values = [f64::from(s.occurrences), s.host_ns as f64, s.device_ns as f64, s.backward_device_ns as f64];
        match seen.get(&path) {
            Some(&i) => {
                for (v, add) in out[i].values.iter_mut().zip(values) {
                    *v += add;
                }
            }
            None => {
                seen.insert(path.clone(), out.len());
                out.push(ModulePath { path, depth: r.depth, values });
            }
        }
    }
    out
}

/// One row of the module diff.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleDiffRow {
    /// Module names from the root, joined by `/`.
    pub path: String,
    /// 0 for a root.
    pub depth: u16,
    /// Appeared, disappeared, changed or same.
    pub status: Status,
    /// Calls (per step when per step).
    pub calls: Pair,
    /// Host time, ns.
    pub host_ns: Pair,
    /// Device time launched under the calls (forward), ns.
    pub device_ns: Pair,
    /// Device time of the backward ops tied to the calls, ns (0 where not tied).
    pub backward_device_ns: Pair,
}

impl ModuleDiffRow {
    /// The module's own name (the path's last part).
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// The diff of two module trees; `base_div` / `cand_div` divide each side's values.
pub fn diff(base: &[ModulePath], cand: &[ModulePath], base_div: f64, cand_div: f64) -> Vec<ModuleDiffRow> {
    let in_cand: HashMap<&str, &ModulePath> = cand.iter().map(|m| (m.path.as_str(), m)).collect();
    let in_base: HashMap<&str, &ModulePath> = base.iter().map(|m| (m.path.as_str(), m)).collect();
    let both = base.iter().map(|b| (b, Some(b), in_cand.get(b.path.as_str()).copied()));
    let only_cand = cand.iter().filter(|c| !in_base.contains_key(c.path.as_str())).map(|c| (c, None, Some(c)));
    both.chain(only_cand)
        .map(|(any, b, c)| {
            let side = |m: Option<&ModulePath>, d: f64| m.map_or([0.0; 4], |m| m.values.map(|v| v / d));
            let (bv, cv) = (side(b, base_div), side(c, cand_div));
            let pairs: [Pair; 4] = std::array::from_fn(|i| Pair { base: bv[i], cand: cv[i] });
            ModuleDiffRow {
                path: any.path.clone(),
                depth: any.depth,
                status: Status::of(b.is_some(), c.is_some(), &pairs),
                calls: pairs[0],
                host_ns: pairs[1],
                device_ns: pairs[2],
                backward_device_ns: pairs[3],
            }
        })
        .collect()
}
