//! Memory as text (peaks per device, then each device's largest allocations) and as
//! `memory[]` JSON. Sizes use decimal units (`1.50 GB`, `12.00 MB`, `4.00 KB`, `8 B`), as the
//! page and `info` do, so the same peak reads the same everywhere.

use super::{cut, printable, time, WIDTH};
use crate::analysis::memory::Memory;
use crate::analysis::ops::us;
use crate::model::Trace;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Bytes with a decimal unit (formatting lives in `crate::text`, shared with the findings).
pub use crate::text::bytes;

/// The memory report as text (fits [`WIDTH`] columns); times are from the trace start.
pub fn memory_text(trace: &Trace, memory: &Memory) -> String {
    let mut out = String::new();
    let title = "Memory ([memory] events)";
    let _ = writeln!(
        out,
        "==== {title} {}",
        "=".repeat(WIDTH.saturating_sub(title.len() + 6))
    );
    if memory.devices.is_empty() {
        let _ = writeln!(
            out,
            "No [memory] events (profile with profile_memory=True).\n"
        );
        return out;
    }
    let rule = "-".repeat(WIDTH);
    let _ = writeln!(
        out,
        "{rule}\n{:<16} {:>9} {:>9} {:>9} {:>15} {:>13} {:>15} {:>13}\n{rule}",
        "Device", "Events", "Allocs", "Frees", "Peak allocated", "at", "Peak reserved", "at"
    );
    for d in &memory.devices {
        let derived = if d.allocated_derived {
            " (from Bytes)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:<16} {:>9} {:>9} {:>9} {:>15} {:>13} {:>15} {:>13}{derived}",
            cut(&d.label, 16),
            d.series.len(),
            d.allocations,
            d.frees,
            bytes(d.peak_allocated),
            time(d.peak_allocated_ns),
            bytes(d.peak_reserved),
            time(d.peak_reserved_ns)
        );
    }
    let _ = writeln!(out, "{rule}");
    for d in memory.devices.iter().filter(|d| !d.largest.is_empty()) {
        let _ = writeln!(out, "Largest allocations on {}:", d.label);
        let _ = writeln!(out, "  {:>12} {:>13} {:>13}  Op", "Size", "at", "held for");
        let op_w = WIDTH.saturating_sub(2 + 13 + 14 + 14 + 2);
        for a in &d.largest {
            let held = a
                .freed_ns
                .map_or_else(|| "not freed".to_owned(), |f| time(f - a.ts_ns));
            let op = a.op.map_or_else(
                || "-".to_owned(),
                |o| printable(&trace.strings.get(trace.slices.name[o as usize])),
            );
            let _ = writeln!(
                out,
                "  {:>12} {:>13} {:>13}  {}",
                bytes(a.bytes),
                time(a.ts_ns),
                held,
                cut(&op, op_w)
            );
        }
    }
    out.push('\n');
    out
}

/// The `memory[]` array of `report --json`: `device`, `peak_allocated_bytes`,
/// `peak_reserved_bytes` (stable), plus `peak_allocated_at_us`, `peak_reserved_at_us`,
/// `events`, `allocations`, `frees`, `allocated_derived` and `largest[]` {`bytes`, `at_us`,
/// `op`, `freed_at_us`}.
pub fn memory_json(trace: &Trace, memory: &Memory) -> Value {
    Value::Array(
        memory
            .devices
            .iter()
            .map(|d| {
                let largest: Vec<Value> = d
                    .largest
                    .iter()
                    .map(|a| {
                        json!({
                            "bytes": a.bytes,
                            "at_us": us(a.ts_ns),
                            "op": a.op.map(|o| trace.strings.get(trace.slices.name[o as usize]).into_owned()),
                            "freed_at_us": a.freed_ns.map(us),
                        })
                    })
                    .collect();
                json!({
                    "device": d.label,
                    "peak_allocated_bytes": d.peak_allocated,
                    "peak_reserved_bytes": d.peak_reserved,
                    "peak_allocated_at_us": us(d.peak_allocated_ns),
                    "peak_reserved_at_us": us(d.peak_reserved_ns),
                    "events": d.series.len(),
                    "allocations": d.allocations,
                    "frees": d.frees,
                    "allocated_derived": d.allocated_derived,
                    "largest": largest,
                })
            })
            .collect(),
    )
}
