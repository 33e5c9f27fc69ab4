//! Nesting: depth, parent and display row of every slice, per lane.
//!
//! Input: slices grouped by lane, sorted by start ascending then duration descending (see the
//! builder). A slice is a child of the innermost open slice that fully contains it (ends
//! included: a zero-length child at its parent's end is inside). A slice that partially
//! overlaps the open slice it would nest under cannot be a child: it goes to the first
//! overflow layer where it nests cleanly, and the layer is drawn below the main one
//! (Perfetto does the same; dropping such slices lost real kernels on overlapping streams).
//!
//! Cost: O(n · layers) per lane; layers is 1 for well-formed threads, small for GPU streams.

use super::{Lane, Slices, Trace, NONE};
use crate::diag::DiagKind;

/// Fills `depth`, `parent` and `row` of every slice and `rows` / `python_rows` of every lane.
///
/// A thread's Python frames (`python_function`, recorded `with_stack=True`) nest among
/// themselves on rows below its other slices: mixed in, 20+ frames pushed the
/// `record_function` ranges and ops they call far down, away from each other and the GPU, and
/// an op's parent was a Python frame where PyTorch's tables count it under the op or range.
pub fn nest(trace: &mut Trace, lanes: &mut [Lane]) {
    let python = trace.strings.lookup("python_function");
    let s = &mut trace.slices;
    let mut overlaps: Vec<u64> = Vec::new();
    let mut members: Vec<u32> = Vec::new();
    for lane in lanes.iter_mut() {
        let range = lane.slices.start..lane.slices.end;
        members.clear();
        members.extend(range.clone().filter(|&i| Some(s.cat[i as usize]) != python));
        let rows = nest_layers(s, &members, 0, &mut overlaps);
        members.clear();
        members.extend(range.filter(|&i| Some(s.cat[i as usize]) == python));
        lane.python_rows = nest_layers(s, &members, rows, &mut overlaps);
        lane.rows = rows.saturating_add(lane.python_rows);
    }
    for offset in overlaps {
        trace.diagnostics.report(DiagKind::ModelPartialOverlap, Some(offset), String::new);
    }
}

/// Nests the slices `ids` (in lane order) among themselves with rows from `first_row`; returns
/// the rows used and adds the offsets of slices put on an overflow layer to `overlaps`.
fn nest_layers(s: &mut Slices, ids: &[u32], first_row: u16, overlaps: &mut Vec<u64>) -> u16 {
    if ids.is_empty() {
        return 0;
    }
    // One stack of open slice ids per layer.
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new()];
    let mut max_depth: Vec<u16> = vec![0];
    let mut layer_of: Vec<u16> = Vec::with_capacity(ids.len());
    for &id in ids {
        let i = id as usize;
        let start = s.start_ns[i];
        let end = start + s.dur_ns[i];
        let mut layer = 0;
        loop {
            if layer == stacks.len() {
                stacks.push(Vec::new());
                max_depth.push(0);
            }
            let stack = &mut stacks[layer];
            while let Some(&top) = stack.last() {
                let t = top as usize;
                if s.start_ns[t] + s.dur_ns[t] <= start && !(s.dur_ns[i] == 0 && s.start_ns[t] + s.dur_ns[t] == start) {
                    stack.pop();
                } else {
                    break;
                }
            }
            let fits = match stack.last() {
                None => true,
                Some(&top) => s.start_ns[top as usize] + s.dur_ns[top as usize] >= end,
            };
            if fits {
                let depth = u16::try_from(stack.len()).unwrap_or(u16::MAX);
                s.depth[i] = depth;
                s.parent[i] = stack.last().copied().unwrap_or(NONE);
                max_depth[layer] = max_depth[layer].max(depth);
                stack.push(id);
                break;
            }
            layer += 1;
        }
        if layer > 0 {
            overlaps.push(s.offset[i]);
        }
        layer_of.push(layer as u16);
    }
    let used = stacks.len().min(max_depth.len());
    let mut base = vec![first_row; used];
    for l in 1..used {
        base[l] = base[l - 1].saturating_add(max_depth[l - 1]).saturating_add(1);
    }
    for (&id, &layer) in ids.iter().zip(&layer_of) {
        let i = id as usize;
        s.row[i] = base[layer as usize].saturating_add(s.depth[i]);
    }
    (base[used - 1] - first_row).saturating_add(max_depth[used - 1]).saturating_add(1)
}
