//! Bytes live by category over time, bucketed: what the memory chart stacks.
//!
//! **Inputs.** [`Held`] (lifetimes and their categories), a device, a window and a bucket width.
//!
//! **Output.** Per bucket, the bytes live by [`Category`] at the bucket's peak: the moment
//! (right after all events at one time) when the total live in the trace's allocations is
//! highest; a bucket without events shows what was live at its start. So a spike narrower
//! than a bucket stays visible and the stack always adds up to a moment that happened, like
//! the counter series that keep each bucket's peak.
//!
//! **Cost.** O(a log a) for `a` allocations of the device (their frees sorted), one pass over
//! the buckets; 64 bytes per bucket out.

use super::category::Category;
use super::held::Held;
use super::lifetime::NEVER;

/// Bytes live by category ([`Category::index`]) at each bucket's peak over
/// `[start_ns, end_ns)`, buckets `bucket_ns` wide (at least 1 ns).
pub fn by_category(held: &Held, device: u16, (start_ns, end_ns): (i64, i64), bucket_ns: i64) -> Vec<[i64; 8]> {
    let lt = &held.lifetimes;
    // (time, signed bytes, category index): allocations and their frees.
    let mut events: Vec<(i64, i64, usize)> = Vec::new();
    for i in (0..lt.len()).filter(|&i| lt.device[i] == device) {
        let c = held.category.get(i).map_or(Category::Unknown, |c| *c).index();
        events.push((lt.ts_ns[i], lt.bytes[i], c));
        if lt.freed_ns[i] != NEVER {
            events.push((lt.freed_ns[i], -lt.bytes[i], c));
        }
    }
    events.sort_unstable_by_key(|e| e.0);
    let bucket_ns = bucket_ns.max(1);
    let mut live = [0i64; 8];
    let mut k = 0;
    // Everything before the window is carried in.
    while let Some(&(_, b, c)) = events.get(k).filter(|e| e.0 < start_ns) {
        live[c] += b;
        k += 1;
    }
    let mut out = Vec::new();
    let mut b0 = start_ns;
    while b0 < end_ns {
        let b1 = b0.saturating_add(bucket_ns).min(end_ns);
        let mut peak = live;
        let mut peak_total: i64 = live.iter().sum();
        while let Some(&(t, _, _)) = events.get(k).filter(|e| e.0 < b1) {
            // All events at one time, then the moment is compared.
            while let Some(&(_, b, c)) = events.get(k).filter(|e| e.0 == t) {
                live[c] += b;
                k += 1;
            }
            let total: i64 = live.iter().sum();
            if total > peak_total {
                (peak, peak_total) = (live, total);
            }
        }
        out.push(peak);
        b0 = b1;
    }
    out
}
