//! What holds memory, as text (`report --memory`: each step's peak by category, the live
//! allocations at the highest peak, leaks) and as the per-device keys `report --json` adds to
//! `memory[]`: `steps[]`, `categories`, `peak_live[]`, `leak`.

use super::{cut, printable, time, WIDTH};
use crate::analysis::memory::category::Category;
use crate::analysis::memory::held::Held;
use crate::analysis::memory::device_label;
use crate::analysis::ops::us;
use crate::model::Trace;
use crate::text::bytes;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// Short column heads of the categories, in [`Category::ALL`] order.
const HEADS: [&str; 8] = ["Param", "Opt state", "Gradient", "Activation", "Temporary", "Input", "Autograd", "Unknown"];

/// Steps whose start lies in `range` (all without one).
fn in_range(start_ns: i64, range: Option<(i64, i64)>) -> bool {
    range.is_none_or(|(t0, t1)| start_ns >= t0 && start_ns < t1)
}

/// Name of the innermost op that made allocation `a`, or `-`.
fn maker(trace: &Trace, held: &Held, a: usize) -> String {
    held.maker(trace, a)
        .map_or_else(|| "-".to_owned(), |o| printable(&trace.strings.get(trace.slices.name[o as usize])))
}

/// The `report --memory` text: per device, a row per step (start, peak, end, bytes by
/// category at the peak), the `top` largest live allocations at the highest peak, the leak.
pub fn held_text(trace: &Trace, held: &Held, range: Option<(i64, i64)>, top: usize) -> String {
    let mut out = String::new();
    let title = "Memory by category (allocations the trace shows; docs/definitions.md)";
    let _ = writeln!(out, "==== {title} {}", "=".repeat(WIDTH.saturating_sub(title.len() + 6)));
    if held.steps.is_empty() {
        let _ = writeln!(out, "No [memory] events in steps (profile with profile_memory=True and a schedule).\n");
        return out;
    }
    let rule = "-".repeat(WIDTH);
    for (d, &(dtype, did)) in held.lifetimes.devices.iter().enumerate() {
        let Ok(device) = u16::try_from(d) else { break };
        let _ = writeln!(out, "{}: bytes at each step's peak, by category", device_label(dtype, did));
        let mut head = format!("{:>6} {:>10} {:>10}", "Step", "Start", "Peak");
        for h in HEADS {
            let _ = write!(head, " {h:>10}");
        }
        let _ = writeln!(out, "{rule}\n{}\n{rule}", cut(&head, WIDTH));
        for s in held.steps.iter().filter(|s| s.device == device && in_range(s.start_ns, range)) {
            let mut row = format!("{:>6} {:>10} {:>10}", s.step, bytes(s.start_allocated), bytes(s.peak_allocated));
            for b in s.by_category {
                let _ = write!(row, " {:>10}", bytes(b));
            }
            let _ = writeln!(out, "{}", cut(&row, WIDTH));
        }
        let _ = writeln!(out, "{rule}");
        if let Some(peak) = held.peak_step(device) {
            let _ = writeln!(out, "Live at the highest peak (step {}, {} at {}):", peak.step, bytes(peak.peak_allocated), time(peak.peak_ns));
            let _ = writeln!(out, "  {:>12} {:<16} {:>13} {:>13}  Op", "Size", "Category", "at", "held for");
            for a in held.live_at(device, peak.peak_ns, top) {
                let a = a as usize;
                let lt = &held.lifetimes;
                let held_for = if lt.freed_ns[a] == i64::MAX { "not freed".to_owned() } else { time(lt.freed_ns[a] - lt.ts_ns[a]) };
                let category = held.category.get(a).map_or("unknown", |c| c.name());
                let op = maker(trace, held, a);
                let _ = writeln!(out, "  {:>12} {:<16} {:>13} {:>13}  {}", bytes(lt.bytes[a]), category, time(lt.ts_ns[a]), held_for, cut(&op, 50));
            }
        }
        for leak in held.leaks.iter().filter(|l| l.device == device) {
            let _ = writeln!(
                out,
                "Leak: allocated at step start grows {} per step; {} in {} allocations never freed",
                bytes(leak.slope_bytes_per_step.round() as i64),
                bytes(leak.never_freed_bytes),
                leak.never_freed.len()
            );
        }
        out.push('\n');
    }
    out
}

/// `{category: bytes}` of a by-category array.
fn categories_json(by: &[i64; 8]) -> Value {
    Value::Object(Category::ALL.iter().map(|c| (c.name().to_owned(), json!(by[c.index()]))).collect())
}

/// Adds `steps[]`, `categories`, `peak_live[]` and `leak` to each device of the `memory[]`
/// array (matched by its `device` label); `top`: live allocations listed.
pub fn extend_memory_json(memory: &mut Value, trace: &Trace, held: &Held, range: Option<(i64, i64)>, top: usize) {
    let Some(devices) = memory.as_array_mut() else { return };
    for entry in devices {
        let Some(obj) = entry.as_object_mut() else { continue };
        let label = obj.get("device").and_then(Value::as_str).unwrap_or("").to_owned();
        let found = held.lifetimes.devices.iter().position(|&(t, id)| device_label(t, id) == label);
        let Some(device) = found.and_then(|d| u16::try_from(d).ok()) else { continue };
        device_json(obj, trace, held, device, range, top);
    }
}

fn device_json(obj: &mut Map<String, Value>, trace: &Trace, held: &Held, device: u16, range: Option<(i64, i64)>, top: usize) {
    let steps: Vec<Value> = held
        .steps
        .iter()
        .filter(|s| s.device == device && in_range(s.start_ns, range))
        .map(|s| {
            json!({
                "step": s.step,
                "start_bytes": s.start_allocated,
                "peak_bytes": s.peak_allocated,
                "peak_at_us": us(s.peak_ns),
                "end_bytes": s.end_allocated,
                "categories": categories_json(&s.by_category),
            })
        })
        .collect();
    let peak = held.peak_step(device);
    let lt = &held.lifetimes;
    let live: Vec<Value> = peak
        .map(|p| held.live_at(device, p.peak_ns, top))
        .unwrap_or_default()
        .into_iter()
        .map(|a| {
            let a = a as usize;
            json!({
                "bytes": lt.bytes[a],
                "at_us": us(lt.ts_ns[a]),
                "freed_at_us": (lt.freed_ns[a] != i64::MAX).then(|| us(lt.freed_ns[a])),
                "category": held.category.get(a).map_or("unknown", |c| c.name()),
                "op": maker(trace, held, a),
            })
        })
        .collect();
    let leak = held.leaks.iter().find(|l| l.device == device).map(|l| {
        json!({
            "bytes_per_step": l.slope_bytes_per_step,
            "growth_bytes": l.growth,
            "never_freed_bytes": l.never_freed_bytes,
            "never_freed": l.never_freed.len(),
        })
    });
    obj.insert("steps".into(), Value::Array(steps));
    obj.insert("categories".into(), peak.map_or(Value::Null, |p| categories_json(&p.by_category)));
    obj.insert("peak_live".into(), Value::Array(live));
    obj.insert("leak".into(), leak.unwrap_or(Value::Null));
}
