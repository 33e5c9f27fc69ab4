//! Profiler steps: the host-side `ProfilerStep#N` annotations, in time order.
//!
//! GPU-side mirrors (`gpu_user_annotation` with the same name) are not steps: counting them
//! would list every step twice (REFERENCE.md §1).

use crate::model::{CatClass, Trace};

/// One `ProfilerStep#N` on the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// N.
    pub number: u64,
    /// The annotation slice.
    pub slice: u32,
    /// Start, ns from origin.
    pub start_ns: i64,
    /// End, ns from origin.
    pub end_ns: i64,
}

/// Every host `ProfilerStep#N`, ordered by start.
pub fn profiler_steps(trace: &Trace) -> Vec<Step> {
    let s = &trace.slices;
    let mut steps: Vec<Step> = (0..s.len())
        .filter(|&i| trace.class(s.cat[i]) == CatClass::Annotation)
        .filter_map(|i| {
            let name = trace.strings.get(s.name[i]);
            let number = name.strip_prefix("ProfilerStep#")?.parse().ok()?;
            Some(Step { number, slice: i as u32, start_ns: s.start_ns[i], end_ns: s.end_ns(i) })
        })
        .collect();
    steps.sort_by_key(|st| (st.start_ns, st.number));
    steps
}
