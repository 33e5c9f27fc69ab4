//! GPU idle time per stream and kernel launch statistics as text and as `idle[]` / `launch{}`
//! JSON (HTA's definitions, see `analysis::idle`).

use super::{cut, printable, time, WIDTH};
use crate::analysis::idle::{
    Idle, IdleClass, LaunchStats, LAUNCH_DELAY_OUTLIER_NS, RUNTIME_OUTLIER_NS,
};
use crate::analysis::ops::us;
use crate::analysis::stats::Summary;
use crate::model::Trace;
use serde_json::{json, Value};
use std::fmt::Write as _;

const HOST: usize = IdleClass::HostWait as usize;
const KERNEL: usize = IdleClass::KernelWait as usize;
const OTHER: usize = IdleClass::Other as usize;

/// Idle time per stream and launch statistics as text (fits [`WIDTH`] columns).
pub fn idle_text(trace: &Trace, idle: &Idle) -> String {
    let mut out = String::new();
    let title = "GPU idle time per stream (HTA: host wait / kernel wait < 30us / other)";
    let _ = writeln!(
        out,
        "==== {title} {}",
        "=".repeat(WIDTH.saturating_sub(title.len() + 6))
    );
    if idle.streams.is_empty() {
        let _ = writeln!(out, "No device activity in this trace.\n");
        return out;
    }
    let rule = "-".repeat(WIDTH);
    let name_w = 40;
    let _ = writeln!(
        out,
        "{rule}\n{:<name_w$} {:>8} {:>11} {:>11} {:>6} {:>11} {:>11} {:>11}\n{rule}",
        "Device / stream", "Kernels", "Busy", "Idle", "Idle%", "Host wait", "Kernel wait", "Other"
    );
    for s in &idle.streams {
        let name = printable(&format!("{} / {}", s.device, s.stream));
        let _ = writeln!(
            out,
            "{:<name_w$} {:>8} {:>11} {:>11} {:>6} {:>11} {:>11} {:>11}",
            cut(&name, name_w),
            s.activities,
            time(s.busy_ns),
            time(s.idle_total_ns()),
            format!("{:.1}%", s.idle_pct()),
            time(s.idle_ns[HOST]),
            time(s.idle_ns[KERNEL]),
            time(s.idle_ns[OTHER])
        );
    }
    let _ = writeln!(out, "{rule}");
    launch_text(&mut out, trace, &idle.launch);
    out.push('\n');
    out
}

fn summary_line(s: &Summary) -> String {
    format!(
        "mean {}  median {}  p95 {}  p99 {}  max {}",
        time(s.mean.round() as i64),
        time(s.median.round() as i64),
        time(s.p95.round() as i64),
        time(s.p99.round() as i64),
        time(s.max)
    )
}

fn launch_text(out: &mut String, trace: &Trace, l: &LaunchStats) {
    let name = |id: u32| printable(&trace.strings.get(trace.slices.name[id as usize]));
    let _ = writeln!(
        out,
        "Kernel launches: {} kernels with a launch call",
        l.kernels
    );
    let Some(delay) = &l.delay else { return };
    let _ = writeln!(out, "  Launch delay:  {}", summary_line(delay));
    if let Some(rt) = &l.runtime {
        let _ = writeln!(out, "  Launch call:   {}", summary_line(rt));
    }
    let _ = writeln!(
        out,
        "  Launch delay outliers (> {}): {}",
        time(LAUNCH_DELAY_OUTLIER_NS),
        l.delay_outliers
    );
    for &(k, d) in &l.top_delays {
        let _ = writeln!(
            out,
            "    {:>11} at {:>11}  {}",
            time(d),
            time(trace.slices.start_ns[k as usize]),
            cut(&name(k), WIDTH - 32)
        );
    }
    let _ = writeln!(
        out,
        "  Launch call outliers (> {}): {}",
        time(RUNTIME_OUTLIER_NS),
        l.runtime_outliers
    );
    for &(c, d) in &l.top_runtimes {
        let _ = writeln!(
            out,
            "    {:>11} at {:>11}  {}",
            time(d),
            time(trace.slices.start_ns[c as usize]),
            cut(&name(c), WIDTH - 32)
        );
    }
    let pct = l.short_kernels as f64 * 100.0 / l.kernels.max(1) as f64;
    let _ = writeln!(
        out,
        "  Short kernels (shorter than their launch call): {} ({pct:.1}%)",
        l.short_kernels
    );
    if let Some(per) = l.kernels_per_graph_launch() {
        let _ = writeln!(
            out,
            "  Graph launches: {} launching {} kernels ({per:.1} kernels per graph launch)",
            l.graph_launches, l.graph_kernels
        );
    }
}

/// The `idle[]` array of `report --json`, one object per stream: `device`, `stream`,
/// `kernels` (device activities counted), `busy_us`, `idle_us`, `idle_pct`, `host_wait_us`,
/// `kernel_wait_us`, `other_us`, `gaps{host_wait, kernel_wait, other}`.
pub fn idle_json(idle: &Idle) -> Value {
    Value::Array(
        idle.streams
            .iter()
            .map(|s| {
                json!({
                    "device": s.device,
                    "stream": s.stream,
                    "kernels": s.activities,
                    "busy_us": us(s.busy_ns),
                    "idle_us": us(s.idle_total_ns()),
                    "idle_pct": s.idle_pct(),
                    "host_wait_us": us(s.idle_ns[HOST]),
                    "kernel_wait_us": us(s.idle_ns[KERNEL]),
                    "other_us": us(s.idle_ns[OTHER]),
                    "gaps": {"host_wait": s.gaps[HOST], "kernel_wait": s.gaps[KERNEL], "other": s.gaps[OTHER]},
                })
            })
            .collect(),
    )
}

fn summary_json(s: Option<&Summary>) -> Value {
    s.map_or(Value::Null, |s| {
        json!({
            "mean_us": s.mean / 1000.0, "std_us": s.std / 1000.0, "median_us": s.median / 1000.0,
            "p95_us": s.p95 / 1000.0, "p99_us": s.p99 / 1000.0, "min_us": us(s.min), "max_us": us(s.max),
        })
    })
}

/// The `launch{}` object of `report --json`: `kernels`, `delay{mean_us, std_us, median_us,
/// p95_us, p99_us, min_us, max_us}`, `delay_outliers`, `top_delays[]` {`name`, `start_us`,
/// `delay_us`}, `runtime{...}` (launch call durations), `runtime_outliers`, `top_runtimes[]`
/// {`name`, `start_us`, `dur_us`}, `short_kernels`, `graph_launches`, `graph_kernels`,
/// `kernels_per_graph_launch` (null without graph launches).
pub fn launch_json(trace: &Trace, idle: &Idle) -> Value {
    let l = &idle.launch;
    let item = |&(id, v): &(u32, i64), key: &str| {
        let mut m = serde_json::Map::new();
        m.insert(
            "name".into(),
            json!(trace.strings.get(trace.slices.name[id as usize])),
        );
        m.insert(
            "start_us".into(),
            json!(us(trace.slices.start_ns[id as usize])),
        );
        m.insert(key.into(), json!(us(v)));
        Value::Object(m)
    };
    json!({
        "kernels": l.kernels,
        "delay": summary_json(l.delay.as_ref()),
        "delay_outliers": l.delay_outliers,
        "top_delays": l.top_delays.iter().map(|d| item(d, "delay_us")).collect::<Vec<_>>(),
        "runtime": summary_json(l.runtime.as_ref()),
        "runtime_outliers": l.runtime_outliers,
        "top_runtimes": l.top_runtimes.iter().map(|d| item(d, "dur_us")).collect::<Vec<_>>(),
        "short_kernels": l.short_kernels,
        "graph_launches": l.graph_launches,
        "graph_kernels": l.graph_kernels,
        "kernels_per_graph_launch": l.kernels_per_graph_launch(),
    })
}
