//! Trace health (docs/definitions.md, "Trace health"): each check on a small hand-written trace
//! with a near miss where it must stay silent, the `health-*` rules beside them, and every real
//! fixture's counts against an independent count read with serde_json.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::health::{self, Health};
use std::collections::{HashMap, HashSet};

/// Events of a small trace: the host is pid 1 tid 1, the device pid 0 with the stream as tid.
#[derive(Default)]
struct T {
    events: Vec<String>,
    correlation: u32,
}

impl T {
    /// A host slice (`cpu_op`) spanning `[ts, ts + dur)` µs: sets the capture window.
    fn host(&mut self, ts: f64, dur: f64) -> &mut Self {
        self.events.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"aten::op","pid":1,"tid":1,"ts":{ts},"dur":{dur}}}"#));
        self
    }

    /// A 5 µs launch call `call` at `ts` with the next correlation id; returns that id.
    fn call(&mut self, call: &str, ts: f64) -> u32 {
        self.correlation += 1;
        let c = self.correlation;
        self.events.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"{call}","pid":1,"tid":1,"ts":{ts},"dur":5,"args":{{"correlation":{c}}}}}"#
        ));
        c
    }

    /// A kernel with correlation `c` on `stream` at `[kts, kts + kdur)` µs.
    fn kernel(&mut self, c: u32, stream: u32, kts: f64, kdur: f64) -> &mut Self {
        self.events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":{stream},"ts":{kts},"dur":{kdur},"args":{{"device":0,"stream":{stream},"correlation":{c}}}}}"#
        ));
        self
    }

    /// `cudaLaunchKernel` at `ts` and its kernel on stream 7 at `kts` for `kdur` µs.
    fn launch(&mut self, ts: f64, kts: f64, kdur: f64) -> &mut Self {
        let c = self.call("cudaLaunchKernel", ts);
        self.kernel(c, 7, kts, kdur)
    }

    /// `n` launches 10 µs apart from `ts`, each kernel 5 µs after its call, 4 µs long.
    fn launches(&mut self, n: u32, ts: f64) -> &mut Self {
        for k in 0..n {
            let t = ts + 10.0 * f64::from(k);
            self.launch(t, t + 5.0, 4.0);
        }
        self
    }

    fn json(&self) -> String {
        format!("{{\"traceEvents\":[\n{}\n]}}", self.events.join(",\n"))
    }

    fn health(&self) -> Health {
        let (engine, _) = common::load_str(&self.json());
        health::analyze(engine.session().unwrap().trace())
    }

    fn fires(&self, rule: &str) -> bool {
        let (engine, _) = common::load_str(&self.json());
        engine.session().unwrap().findings().to_vec().iter().any(|f| f.rule == rule)
    }
}

/// A host span over 0..10 ms with `n` well-formed launches in it.
fn base(n: u32) -> T {
    let mut t = T::default();
    t.host(0.0, 10_000.0).launches(n, 100.0);
    t
}

#[test]
fn launches_without_activity() {
    let mut yes = base(18);
    yes.call("cudaLaunchKernel", 500.0);
    yes.call("cudaGraphLaunch", 510.0);
    let h = yes.health();
    assert_eq!((h.launches_without_activity.count(), h.launches_without_activity.of), (2, 20));
    assert!(yes.fires("health-unlinked"));
    // Near miss: 1 of 30 (3.3% < 5%), and calls that launch nothing by nature are not checked.
    let mut no = base(29);
    no.call("cudaLaunchKernel", 500.0);
    no.call("cudaStreamSynchronize", 510.0);
    no.call("cudaMemcpyAsync", 520.0);
    let h = no.health();
    assert_eq!((h.launches_without_activity.count(), h.launches_without_activity.of), (1, 30));
    assert!(!no.fires("health-unlinked"));
}

#[test]
fn activities_without_launch() {
    // Two kernels queued before the capture (correlation ids below every call's), one whose
    // call was filtered out (a high id).
    let mut yes = T { correlation: 100, ..T::default() };
    yes.host(0.0, 10_000.0).launches(17, 100.0);
    yes.kernel(3, 7, 20.0, 4.0).kernel(4, 7, 30.0, 4.0).kernel(900, 7, 800.0, 4.0);
    let h = yes.health();
    assert_eq!((h.activities_without_launch.count(), h.activities_without_launch.of), (3, 20));
    assert_eq!(h.launched_before_capture, 2);
    assert!(yes.fires("health-unlinked"));
    let mut no = T { correlation: 100, ..T::default() };
    no.host(0.0, 10_000.0).launches(29, 100.0);
    no.kernel(3, 7, 20.0, 4.0);
    let h = no.health();
    assert_eq!((h.activities_without_launch.count(), h.activities_without_launch.of), (1, 30));
    assert!(!no.fires("health-unlinked"));
}

#[test]
fn outside_the_capture_window() {
    let mut yes = base(20);
    yes.launch(9_000.0, 12_000.0, 4.0);
    let h = yes.health();
    assert_eq!(h.window_ns, Some((0, 10_000_000)));
    assert_eq!((h.outside_window.count(), h.outside_window.of), (1, 21));
    assert!(yes.fires("health-outside-window"));
    // Near miss: a kernel that starts inside the window and runs past its end.
    let mut no = base(20);
    no.launch(9_000.0, 9_990.0, 500.0);
    assert_eq!(no.health().outside_window.count(), 0);
    assert!(!no.fires("health-outside-window"));
}

#[test]
fn overlap_on_one_stream() {
    let mut yes = base(20);
    yes.launch(1_000.0, 1_010.0, 10.0).launch(1_006.0, 1_017.0, 10.0);
    let h = yes.health();
    assert_eq!(h.stream_overlaps.count(), 1);
    assert_eq!(h.max_overlap_ns, 3_000);
    assert!(yes.fires("health-stream-overlap"));
    // Near misses: 0.5 µs of overlap (timer rounding), and an overlap across two streams.
    let mut no = base(20);
    no.launch(1_000.0, 1_010.0, 10.0).launch(1_006.0, 1_019.5, 10.0);
    let c = no.call("cudaLaunchKernel", 1_012.0);
    no.kernel(c, 8, 1_012.0, 10.0);
    assert_eq!(no.health().stream_overlaps.count(), 0);
    assert!(!no.fires("health-stream-overlap"));
}

#[test]
fn kernel_before_its_launch() {
    let mut yes = base(20);
    yes.launch(2_000.0, 1_950.0, 4.0).launch(3_000.0, 2_980.0, 4.0);
    let h = yes.health();
    assert_eq!((h.before_launch.count(), h.before_launch.of), (2, 22));
    assert_eq!(h.clock_offset_ns, Some(50_000), "the shift that puts every kernel after its launch");
    assert!(yes.fires("health-clock-skew"));
    // Near miss: 0.5 µs early is timer rounding.
    let mut no = base(20);
    no.launch(2_000.0, 1_999.5, 4.0);
    let h = no.health();
    assert_eq!((h.before_launch.count(), h.clock_offset_ns), (0, None));
    assert!(!no.fires("health-clock-skew"));
}

#[test]
fn truncated_and_skipped() {
    let whole = base(20).json();
    // Cut inside the last event: the complete ones load, the file is truncated.
    let cut = &whole[..whole.len() - 40];
    let (engine, summary) = common::load_str(cut);
    let h = health::analyze(engine.session().unwrap().trace());
    assert!(h.truncated && summary.health.truncated);
    assert!(h.skipped.iter().any(|s| s.0 == "json_truncated"));
    assert!(engine.session().unwrap().findings().to_vec().iter().any(|f| f.rule == "health-data-loss"));
    // Skipped events: a non-object element and an `E` without its `B`.
    let mut skipped = base(20);
    skipped.events.push("42".into());
    skipped.events.push(r#"{"ph":"E","name":"x","pid":1,"tid":2,"ts":50}"#.into());
    let h = skipped.health();
    assert_eq!(h.skipped, vec![("json_non_object_event", 1), ("model_unmatched_end", 1)]);
    assert!(skipped.fires("health-data-loss"));
    // Near miss: an X without dur is an Info diagnostic (shown with zero length), not a loss.
    let mut no = base(20);
    no.events.push(r#"{"ph":"X","cat":"cpu_op","name":"n","pid":1,"tid":1,"ts":60}"#.into());
    let h = no.health();
    assert!(h.skipped.is_empty() && !h.truncated);
    assert!(!no.fires("health-data-loss"));
}

#[test]
fn info_shows_the_health_section() {
    let mut t = base(20);
    t.launch(2_000.0, 1_950.0, 4.0);
    let (_, summary) = common::load_str(&t.json());
    let h = &summary.health;
    assert_eq!((h.before_launch.count, h.before_launch.of, h.clock_offset_us), (1, 21, Some(50.0)));
    assert_eq!(h.before_launch.examples.len(), 1);
    let text = kinetoscope::answer::summary::text(&summary);
    assert!(text.contains("\nhealth:\n"), "{text}");
    assert!(text.contains("clock offset >= 50.000 µs"), "{text}");
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["health"]["before_launch"]["count"], 1);
    // Older summaries without the field still read.
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("health");
    let back: protocol::TraceSummary = serde_json::from_value(old).unwrap();
    assert_eq!(back.health, protocol::HealthSummary::default());
}

/// The health counts recomputed from the raw JSON, without the model.
#[derive(Debug, PartialEq)]
struct Recount {
    launches_without_activity: u64,
    activities_without_launch: u64,
    outside_window: u64,
    stream_overlaps: u64,
    before_launch: u64,
}

fn recount(events: &[serde_json::Value]) -> Recount {
    const DEVICE: [&str; 6] = ["kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"];
    const LAUNCH: [&str; 5] = ["cuda_runtime", "cuda_driver", "Runtime", "runtime", "hip_runtime"];
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
    let cat = |e: &serde_json::Value| e["cat"].as_str().unwrap_or("").to_string();
    let corr = |e: &serde_json::Value| e["args"]["correlation"].as_u64();
    let x: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    let gpu_cats: HashSet<&str> = DEVICE.iter().copied().chain(["gpu_user_annotation"]).collect();
    let gpu_pids: HashSet<String> =
        x.iter().filter(|e| gpu_cats.contains(cat(e).as_str())).map(|e| e["pid"].to_string()).collect();
    let device: Vec<&&serde_json::Value> = x.iter().filter(|e| DEVICE.contains(&cat(e).as_str())).collect();
    let calls: Vec<&&serde_json::Value> = x.iter().filter(|e| LAUNCH.contains(&cat(e).as_str())).collect();
    let mut call_start: HashMap<u64, i64> = HashMap::new();
    for c in &calls {
        if let Some(id) = corr(c) {
            call_start.entry(id).or_insert(ns(&c["ts"]));
        }
    }
    let ran: HashSet<u64> = device.iter().filter_map(|d| corr(d)).collect();
    let launches_without_activity = calls
        .iter()
        .filter(|c| health::is_launch_call(c["name"].as_str().unwrap_or("")))
        .filter(|c| corr(c).is_none_or(|id| !ran.contains(&id)))
        .count() as u64;
    let activities_without_launch =
        device.iter().filter(|d| corr(d).is_none_or(|id| !call_start.contains_key(&id))).count() as u64;
    let host: Vec<(i64, i64)> = x
        .iter()
        .filter(|e| !gpu_pids.contains(&e["pid"].to_string()))
        .map(|e| (ns(&e["ts"]), ns(&e["ts"]) + ns(&e["dur"]).max(0)))
        .collect();
    let w0 = host.iter().map(|h| h.0).min().unwrap_or(i64::MIN);
    let w1 = host.iter().map(|h| h.1).max().unwrap_or(i64::MAX);
    let outside_window = device.iter().filter(|d| ns(&d["ts"]) < w0 || ns(&d["ts"]) > w1).count() as u64;
    let before_launch = device
        .iter()
        .filter(|d| corr(d).and_then(|id| call_start.get(&id)).is_some_and(|&l| ns(&d["ts"]) - l < -1000))
        .count() as u64;
    let mut by_stream: HashMap<(String, String), Vec<(i64, i64)>> = HashMap::new();
    for d in &device {
        let start = ns(&d["ts"]);
        by_stream.entry((d["pid"].to_string(), d["tid"].to_string())).or_default().push((start, -ns(&d["dur"]).max(0)));
    }
    let mut stream_overlaps = 0;
    for list in by_stream.values_mut() {
        list.sort_unstable();
        let mut end: Option<i64> = None;
        for &(start, neg) in list.iter() {
            if end.is_some_and(|e| e.min(start - neg) - start > 1000) {
                stream_overlaps += 1;
            }
            end = Some(end.map_or(start - neg, |e| e.max(start - neg)));
        }
    }
    Recount { launches_without_activity, activities_without_launch, outside_window, stream_overlaps, before_launch }
}

#[test]
fn real_fixtures_match_an_independent_count() {
    let mut report = String::new();
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let raw: serde_json::Value = serde_json::from_slice(&common::json_bytes(&path)).unwrap_or_default();
        let events = match &raw {
            serde_json::Value::Array(a) => a.clone(),
            v => v["traceEvents"].as_array().cloned().unwrap_or_default(),
        };
        if events.is_empty() {
            continue; // truncated files do not read with serde_json: checked by hand above
        }
        let engine = common::load_real(&name);
        let h = health::analyze(engine.session().unwrap().trace());
        let got = Recount {
            launches_without_activity: h.launches_without_activity.count(),
            activities_without_launch: h.activities_without_launch.count(),
            outside_window: h.outside_window.count(),
            stream_overlaps: h.stream_overlaps.count(),
            before_launch: h.before_launch.count(),
        };
        let want = recount(&events);
        if got != want {
            report.push_str(&format!("{name}:\n  engine {got:?}\n  recount {want:?}\n"));
        }
    }
    assert!(report.is_empty(), "{report}");
}
