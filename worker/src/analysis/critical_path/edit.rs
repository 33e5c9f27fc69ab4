//! What-if edits: scale the time of a class of edges, or of the kernels / ops whose names
//! match, and recompute the step from the same graph.
//!
//! Grammar (`--what-if`, the page's What if panel): `SELECTOR*FACTOR` or `SELECTOR=0`
//! (`=0` is `*0`). Selectors:
//! - a class id of [`BoundBy::as_str`] or a short name: `launch` (launch delays), `gap`
//!   (kernel-to-kernel gaps), `sync` (sync waits; `sync=0` also drops the GPU -> CPU waits:
//!   the sync removed), `comm` (communication kernels), `memcpy` (copies and memsets),
//!   `python` (time between ops), `dataloader`, `cpu` (all CPU time), `gpu` (all device work);
//! - `gemm`, `attention`: kernels of that class (the kernel-class table);
//! - `kernel:TEXT`: kernels whose name contains TEXT (case-insensitive);
//! - `op:TEXT`: CPU time inside ops whose name contains TEXT, their children included
//!   (`op:aten::copy_=0`).

use super::graph::{Graph, Kind, REMOVED};
use super::BoundBy;
use crate::analysis::kernel_class::{class_of, KernelClass};
use crate::model::strings::FxHashMap;
use crate::model::{Trace, NONE};

/// What an edit applies to.
#[derive(Clone, Debug, PartialEq)]
pub enum Selector {
    /// Edges of these classes.
    Classes(Vec<BoundBy>),
    /// Kernels of this class.
    KernelClass(KernelClass),
    /// Kernels whose name contains this text (lowercase).
    Kernel(String),
    /// CPU time inside ops whose name contains this text (lowercase).
    Op(String),
    /// Edges of these classes (any class when empty) spent in these slices (sorted), below one
    /// of them on its lane, or in device work one of them launched: a finding's evidence, for
    /// the what-if of its remedy (not in the `--what-if` grammar).
    Slices { slices: Vec<u32>, classes: Vec<BoundBy> },
}

/// One what-if edit.
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    /// What it applies to.
    pub selector: Selector,
    /// The factor its time is multiplied by (0 removes it).
    pub factor: f64,
    /// As written.
    pub text: String,
}

/// Why an edit could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditError(pub String);

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for Edit {
    type Err = EditError;

    fn from_str(text: &str) -> Result<Self, EditError> {
        let text = text.trim();
        let (selector, factor) = if let Some((sel, value)) = text.rsplit_once('=') {
            (sel, value)
        } else if let Some((sel, value)) = text.rsplit_once('*') {
            (sel, value)
        } else {
            return Err(EditError(format!("`{text}`: write SELECTOR*FACTOR or SELECTOR=0 (e.g. gemm*0.5, launch=0)")));
        };
        let factor: f64 = factor
            .trim()
            .parse()
            .ok()
            .filter(|f: &f64| f.is_finite() && *f >= 0.0)
            .ok_or_else(|| EditError(format!("`{text}`: the factor must be a number >= 0")))?;
        if text.contains('=') && factor != 0.0 {
            return Err(EditError(format!("`{text}`: `=` sets a time to 0 only; scale with `*` (e.g. gemm*0.5)")));
        }
        Ok(Edit { selector: selector_of(selector.trim())?, factor, text: text.to_owned() })
    }
}

fn selector_of(text: &str) -> Result<Selector, EditError> {
    if let Some(name) = text.strip_prefix("kernel:") {
        return nonempty(name).map(Selector::Kernel);
    }
    if let Some(name) = text.strip_prefix("op:") {
        return nonempty(name).map(Selector::Op);
    }
    use BoundBy as B;
    let classes = match text {
        "gemm" => return Ok(Selector::KernelClass(KernelClass::Gemm)),
        "attention" => return Ok(Selector::KernelClass(KernelClass::Attention)),
        "launch" => vec![B::LaunchDelay],
        "gap" => vec![B::KernelGap],
        "sync" => vec![B::SyncWait],
        "comm" => vec![B::GpuCommunication],
        "memcpy" => vec![B::MemcpyMemset],
        "python" => vec![B::CpuOverhead],
        "dataloader" => vec![B::DataLoading],
        "cpu" => vec![B::CpuOp, B::CpuOverhead, B::DataLoading],
        "gpu" => vec![B::GpuCompute, B::GpuCommunication, B::MemcpyMemset],
        id => match BoundBy::ALL.into_iter().find(|c| c.as_str() == id) {
            Some(c) => vec![c],
            None => {
                return Err(EditError(format!(
                    "`{id}`: not a selector (launch, gap, sync, comm, memcpy, python, dataloader, cpu, gpu, gemm, \
                     attention, a class id, kernel:TEXT, op:TEXT)"
                )))
            }
        },
    };
    Ok(Selector::Classes(classes))
}

fn nonempty(name: &str) -> Result<String, EditError> {
    if name.is_empty() {
        return Err(EditError("kernel: and op: need a name to match".into()));
    }
    Ok(name.to_lowercase())
}

/// Edits with their name matches remembered across graphs: each distinct name is tested
/// once per edit for the whole trace, not once per step.
pub(super) struct Matcher<'a> {
    edits: &'a [Edit],
    names: Vec<NameMatch>,
}

impl<'a> Matcher<'a> {
    /// A matcher for `edits`.
    pub fn new(edits: &'a [Edit]) -> Self {
        Matcher { edits, names: edits.iter().map(|_| NameMatch::default()).collect() }
    }

    /// `graph`'s weights after the edits, applied in order (factors multiply).
    pub fn weights(&mut self, trace: &Trace, graph: &Graph) -> Vec<i64> {
        let mut weights = graph.weights();
        for (edit, names) in self.edits.iter().zip(&mut self.names) {
            for (id, e) in graph.edges.iter().enumerate() {
                let w = &mut weights[id];
                if *w > REMOVED && matches(trace, names, &edit.selector, e.class, e.kind, e.slice) {
                    // A GPU -> CPU wait scaled to nothing is the sync removed: the CPU goes on.
                    *w = if e.kind == Kind::SyncReturn && edit.factor == 0.0 { REMOVED } else { scale(*w, edit.factor) };
                }
            }
        }
        weights
    }
}

fn scale(w: i64, factor: f64) -> i64 {
    (w as f64 * factor).round() as i64
}

/// One edit's answers per name string, so its pattern is matched once per distinct name.
#[derive(Default)]
struct NameMatch {
    cache: FxHashMap<u32, bool>,
}

impl NameMatch {
    fn name_matches(&mut self, trace: &Trace, slice: u32, test: impl Fn(&str) -> bool) -> bool {
        let Some(&name) = trace.slices.name.get(slice as usize) else {
            return false;
        };
        *self.cache.entry(name.0).or_insert_with(|| test(&trace.strings.get(name)))
    }
}

fn matches(trace: &Trace, names: &mut NameMatch, selector: &Selector, class: BoundBy, kind: Kind, slice: u32) -> bool {
    match selector {
        Selector::Classes(classes) => classes.contains(&class),
        Selector::KernelClass(k) => {
            kind == Kind::Run && class == BoundBy::GpuCompute && names.name_matches(trace, slice, |n| class_of(n) == *k)
        }
        Selector::Kernel(text) => kind == Kind::Run && names.name_matches(trace, slice, |n| n.to_lowercase().contains(text.as_str())),
        Selector::Op(text) => {
            if kind != Kind::Cpu || slice == NONE {
                return false;
            }
            trace.ancestors(slice).any(|at| names.name_matches(trace, at, |n| n.to_lowercase().contains(text.as_str())))
        }
        Selector::Slices { slices, classes } => {
            if slice == NONE || !(classes.is_empty() || classes.contains(&class)) {
                return false;
            }
            // Walked per edge, not remembered per slice: a memo would grow with every slice
            // of the trace, during the load (the findings' remedies), over its memory budget.
            let launch = trace.slices.launch.get(slice as usize).copied().unwrap_or(NONE);
            under(trace, slices, slice) || (launch != NONE && under(trace, slices, launch))
        }
    }
}

/// Whether `slice` or one of its ancestors on its lane is in `all` (sorted).
pub(crate) fn under(trace: &Trace, all: &[u32], slice: u32) -> bool {
    trace.ancestors(slice).any(|s| all.binary_search(&s).is_ok())
}
