//! Sorting keys that are nearly in order, as a trace's events mostly are: a lane's slices come in
//! time order, but as a few interleaved runs (a thread's operators, then its Python functions)
//! and with the odd parent written after its children.
//!
//! The standard library's stable sort uses only runs longer than about the square root of the
//! input. In the 500 MB dlrm trace (the fixture repeated along time) a lane's runs are a few
//! hundred slices long, so it sorted the two big lanes' 1.2 M slices from scratch: 88 ms. Here
//! one pass keeps the ascending run and sets aside the keys that break it (23% there), which are
//! sorted the same way and merged back in from the end: 9-11 ms there. The room set aside holds
//! items (a slice's index: 4 bytes), at most half of them at each level, where the stable sort's
//! scratch held half the packed keys (32 bytes each). When more than half would be set aside,
//! the items are sorted by packed keys instead; the worst case costs one pass more.

/// Sorts `items` by `key`, then by item (a total order: the result is the one any sort gives);
/// `aside` is scratch room, reused across calls.
pub fn sort_by_key<T: Ord + Copy, K: Ord + Copy>(items: &mut [T], aside: &mut Vec<T>, key: &impl Fn(T) -> K) {
    if !try_sort_by_key(items, aside, key) {
        // Keys packed beside their items: sorting items by a key read elsewhere missed the
        // cache on every comparison.
        let mut packed: Vec<(K, T)> = items.iter().map(|&t| (key(t), t)).collect();
        packed.sort_unstable();
        for (slot, (_, t)) in items.iter_mut().zip(packed) {
            *slot = t;
        }
    }
}

/// [`sort_by_key`] when `items` are nearly in order; false when they are not (more than half
/// would be set aside), with `items` left in some order, for the caller to sort its own way.
fn try_sort_by_key<T: Ord + Copy, K: Ord + Copy>(items: &mut [T], aside: &mut Vec<T>, key: &impl Fn(T) -> K) -> bool {
    // Ties between keys go by item, so the order is total.
    let full = |t: T| (key(t), t);
    aside.clear();
    let mut kept = 0;
    // The keys of items[kept - 1] and items[kept - 2], each computed once.
    let (mut last, mut before) = (None::<(K, T)>, None::<(K, T)>);
    for i in 0..items.len() {
        let t = items[i];
        let k = full(t);
        if last.is_none_or(|l| k >= l) {
            items[kept] = t;
            kept += 1;
            before = last.replace(k);
        } else if before.is_none_or(|b| k >= b) {
            // The last kept item is the outlier (written early), not this one: swap them.
            aside.push(items[kept - 1]);
            items[kept - 1] = t;
            last = Some(k);
        } else {
            aside.push(t);
        }
        if aside.len() > items.len() / 2 {
            // Not nearly in order: the items set aside fill the room they left.
            items[kept..=i].copy_from_slice(aside);
            aside.clear();
            return false;
        }
    }
    if aside.is_empty() {
        return true;
    }
    // What was set aside is often nearly in order too (the later of a few interleaved runs,
    // such as a thread's Python functions after its operators).
    sort_by_key(aside, &mut Vec::new(), key);
    // Merge from the end: items[..kept] and `aside` fill items[..len], never overwriting a kept
    // item before it is read (the write index stays at or past the kept one).
    let (mut a, mut b, mut out) = (kept, aside.len(), items.len());
    let mut kb = full(aside[b - 1]);
    let mut ka = (a > 0).then(|| full(items[a - 1]));
    while b > 0 {
        out -= 1;
        match ka {
            Some(k) if kb < k => {
                items[out] = items[a - 1];
                a -= 1;
                ka = (a > 0).then(|| full(items[a - 1]));
            }
            _ => {
                items[out] = aside[b - 1];
                b -= 1;
                if b > 0 {
                    kb = full(aside[b - 1]);
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{sort_by_key, try_sort_by_key};

    /// Deterministic xorshift.
    fn rng(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// `input` sorted by the key itself, and by a key out of step with it whose ties go by item,
    /// equals the standard sort's; given up or not, no item is lost.
    fn check(input: &[u32], aside: &mut Vec<u32>) {
        for key in [|k: u32| k, |k: u32| k % 5] {
            let mut want = input.to_vec();
            want.sort_unstable_by_key(|&k| (key(k), k));
            let mut got = input.to_vec();
            sort_by_key(&mut got, aside, &key);
            assert_eq!(got, want, "input {input:?}");
            let mut tried = input.to_vec();
            if !try_sort_by_key(&mut tried, aside, &key) {
                tried.sort_unstable_by_key(|&k| (key(k), k));
            }
            assert_eq!(tried, want, "input {input:?}");
        }
    }

    #[test]
    fn sorts_every_short_input() {
        let mut aside = Vec::new();
        // Every sequence of length 0..=6 over 0..4: ties, runs, reversals.
        for len in 0..=6u32 {
            for code in 0..4u32.pow(len) {
                let input: Vec<u32> = (0..len).map(|i| code / 4u32.pow(i) % 4).collect();
                check(&input, &mut aside);
            }
        }
    }

    #[test]
    fn sorts_nearly_ordered_and_random_inputs() {
        let mut next = rng(0x9E37_79B9_7F4A_7C15);
        let mut aside = Vec::new();
        for n in 0..2000usize {
            let len = n % 300;
            let mut input: Vec<u32> = match n % 4 {
                0 => (0..len).map(|_| next() as u32 % 50).collect(),
                1 => (0..len as u32).rev().collect(),
                _ => (0..len as u32).map(|i| i * 2).collect(),
            };
            // Nearly ordered: a few keys moved far back or far forward, as a late parent or an
            // early outlier.
            for _ in 0..(n % 5) {
                if len > 1 {
                    let from = next() as usize % len;
                    let to = next() as usize % len;
                    let k = input.remove(from);
                    input.insert(to, k);
                }
            }
            check(&input, &mut aside);
        }
    }
}
