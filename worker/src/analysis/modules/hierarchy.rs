//! The module hierarchy from the Python frame chain (`Python id` / `Python parent id`), as the
//! TensorBoard plugin builds it (`module_op.py`, `_build_module_hierarchy`).
//!
//! From every leaf frame, walk up the parent chain; each `nn.Module` frame met becomes the
//! parent of the module frame met before it. Each root module frame then gives a tree of
//! (name, module id) nodes; equal trees (same names, ids and children in order) are kept
//! once, so repeated calls of the same model make one tree while a module called with other
//! submodules stays apart.
//!
//! Cost: O(frames) hash look-ups; memory O(frames) for the id maps, O(module frames) for the trees.

use crate::model::strings::{FxHashMap, FxHashSet};
use crate::model::StrId;

/// One `python_function` slice's ids, in file order.
#[derive(Clone, Copy, Debug)]
pub(super) struct Frame {
    pub name: StrId,
    pub id: Option<i64>,
    pub parent: Option<i64>,
    /// `Python module id`: present on `nn.Module` frames only.
    pub module: Option<i64>,
}

/// A module tree node: name, module id, children (indices into [`Hierarchy::nodes`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Shape {
    pub name: StrId,
    pub module_id: i64,
    pub children: Vec<u32>,
}

/// Distinct module trees.
#[derive(Debug, Default)]
pub(super) struct Hierarchy {
    /// Every distinct subtree once.
    pub nodes: Vec<Shape>,
    /// The distinct root trees, in order of first appearance.
    pub roots: Vec<u32>,
}

type PyId = Option<i64>;

/// The distinct module trees of `frames` (file order).
pub(super) fn build(frames: &[Frame]) -> Hierarchy {
    // The last frame of an id stands for it (a dict keyed by id, as the plugin's).
    let by_id: FxHashMap<PyId, u32> = frames.iter().enumerate().map(|(k, f)| (f.id, k as u32)).collect();
    let parents = module_parents(frames, &by_id);
    let mut children: FxHashMap<PyId, Vec<PyId>> = FxHashMap::default();
    for &(c, p) in &parents {
        if let Some(p) = p {
            children.entry(p).or_default().push(c);
        }
    }
    let mut out = Hierarchy::default();
    let mut interned: FxHashMap<Shape, u32> = FxHashMap::default();
    let mut seen_roots: FxHashSet<u32> = FxHashSet::default();
    for &(root, p) in &parents {
        if p.is_some() {
            continue;
        }
        if let Some(shape) = intern(root, &by_id, frames, &children, &mut interned, &mut out.nodes) {
            if seen_roots.insert(shape) {
                out.roots.push(shape);
            }
        }
    }
    out
}

/// Module frame -> enclosing module frame (`None` for a root), in the plugin's insertion order.
fn module_parents(frames: &[Frame], by_id: &FxHashMap<PyId, u32>) -> Vec<(PyId, Option<PyId>)> {
    // Ids in order of first mention (as a frame or as a parent), with whether any frame names it parent.
    let (mut keys, mut at, mut has_child): (Vec<PyId>, FxHashMap<PyId, usize>, Vec<bool>) = Default::default();
    let mut touch = |id: PyId, keys: &mut Vec<PyId>, has_child: &mut Vec<bool>| -> usize {
        *at.entry(id).or_insert_with(|| {
            keys.push(id);
            has_child.push(false);
            keys.len() - 1
        })
    };
    for f in frames {
        touch(f.id, &mut keys, &mut has_child);
        let p = touch(f.parent, &mut keys, &mut has_child);
        has_child[p] = true;
    }
    let mut parents: Vec<(PyId, Option<PyId>)> = Vec::new();
    let mut parent_at: FxHashMap<PyId, usize> = FxHashMap::default();
    let mut seen: FxHashSet<(PyId, Option<PyId>)> = FxHashSet::default();
    for (key, _) in keys.iter().zip(&has_child).filter(|(_, &c)| !c) {
        let mut next = by_id.get(key).copied();
        let mut current: Option<PyId> = None;
        while let Some(k) = next {
            let f = frames[k as usize];
            if f.module.is_some() {
                if let Some(below) = current.and_then(|c| parent_at.get(&c).copied()) {
                    parents[below].1 = Some(f.id);
                }
                current = Some(f.id);
                parent_at.entry(f.id).or_insert_with(|| {
                    parents.push((f.id, None));
                    parents.len() - 1
                });
            }
            if !seen.insert((f.id, current)) {
                break;
            }
            next = by_id.get(&f.parent).copied();
        }
    }
    parents
}

/// The interned shape of the module tree under frame id `root` (post-order, no recursion).
fn intern(
    root: PyId,
    by_id: &FxHashMap<PyId, u32>,
    frames: &[Frame],
    children: &FxHashMap<PyId, Vec<PyId>>,
    interned: &mut FxHashMap<Shape, u32>,
    nodes: &mut Vec<Shape>,
) -> Option<u32> {
    let kids = |id: &PyId| children.get(id).map_or(&[][..], Vec::as_slice);
    // (frame id, next child to visit, shapes of the visited children)
    let mut stack: Vec<(PyId, usize, Vec<u32>)> = vec![(root, 0, Vec::new())];
    let mut done = None;
    while let Some((id, next, _)) = stack.last_mut() {
        if let Some(&child) = kids(id).get(*next) {
            *next += 1;
            // A corrupt chain could revisit a frame: a module is never its own ancestor.
            if stack.iter().any(|(a, ..)| *a == child) {
                continue;
            }
            stack.push((child, 0, Vec::new()));
            continue;
        }
        let Some((id, _, shapes)) = stack.pop() else { break };
        let f = frames[*by_id.get(&id)? as usize];
        let shape = Shape { name: f.name, module_id: f.module.unwrap_or(0), children: shapes };
        let k = *interned.entry(shape.clone()).or_insert_with(|| {
            nodes.push(shape);
            nodes.len() as u32 - 1
        });
        match stack.last_mut() {
            Some((.., parent_shapes)) => parent_shapes.push(k),
            None => done = Some(k),
        }
    }
    done
}
