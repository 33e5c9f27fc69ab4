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

use super::{Lane, Trace, NONE};
use crate::diag::DiagKind;

/// Fills `depth`, `parent` and `row` of every slice and `rows` of every lane.
pub fn nest(trace: &mut Trace, lanes: &mut [Lane]) {
    let s = &mut trace.slices;
    let mut layer_of: Vec<u16> = vec![0; s.len()];
    let mut overlaps: Vec<u64> = Vec::new();
    for lane in lanes.iter_mut() {
        let range = lane.slices.start as usize..lane.slices.end as usize;
        // One stack of open slice ids per layer.
        let mut stacks: Vec<Vec<u32>> = vec![Vec::new()];
        let mut max_depth: Vec<u16> = vec![0];
        for i in range.clone() {
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
                    stack.push(i as u32);
                    break;
                }
                layer += 1;
            }
            if layer > 0 {
                overlaps.push(s.offset[i]);
            }
            layer_of[i] = layer as u16;
        }
        let used = stacks.len().min(max_depth.len());
        let mut base = vec![0u16; used];
        for l in 1..used {
            base[l] = base[l - 1].saturating_add(max_depth[l - 1]).saturating_add(1);
        }
        for i in range.clone() {
            s.row[i] = base[layer_of[i] as usize].saturating_add(s.depth[i]);
        }
        lane.rows = if range.is_empty() { 0 } else { base[used - 1].saturating_add(max_depth[used - 1]).saturating_add(1) };
    }
    for offset in overlaps {
        trace.diagnostics.report(DiagKind::ModelPartialOverlap, Some(offset), String::new);
    }
}
