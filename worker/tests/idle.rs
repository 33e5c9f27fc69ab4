//! Idle time and launch statistics (`analysis::idle`, `report::idle`): a hand-built stream
//! with every idle class, overlap, clipping, outliers and a multi-kernel launch; ranges;
//! invariants and report shape on the real traces.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::idle::{analyze, classify, IdleClass, KERNEL_WAIT_MAX_NS};
use kinetoscope::engine::Engine;
use kinetoscope::model::CatClass;
use kinetoscope::report::idle::{idle_json, idle_text, launch_json};

fn ev(cat: &str, name: &str, pid: u32, tid: u32, ts: f64, dur: f64, corr: Option<u32>) -> String {
    let args = corr.map_or(String::new(), |c| format!(r#""correlation":{c}"#));
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
    )
}

fn launch(tid: u32, ts: f64, dur: f64, corr: u32) -> String {
    ev(
        "cuda_runtime",
        "cudaLaunchKernel",
        1,
        tid,
        ts,
        dur,
        Some(corr),
    )
}

fn kernel(name: &str, ts: f64, dur: f64, corr: Option<u32>) -> String {
    ev("kernel", name, 0, 7, ts, dur, corr)
}

/// Stream 7 of GPU 0 (times in µs; origin 0):
///
/// | activity     | span        | launch call (tid) | gap before | class       | delay |
/// |--------------|-------------|-------------------|------------|-------------|-------|
/// | K1           | [100, 110)  | [90, 92) (1)      | -          | -           | 8     |
/// | K2           | [115, 120)  | [95, 96) (1)      | 5          | kernel wait | 19    |
/// | K3           | [200, 210)  | [150, 210) (1)    | 80         | host wait   | 0 (-10 clipped) |
/// | K4           | [260, 270)  | [205, 206) (2)    | 50         | other       | 54    |
/// | K5 (in K4)   | [265, 268)  | [20, 21) (1)      | none       | -           | 244   |
/// | K6           | [270, 275)  | [30, 31) (1)      | 0          | -           | 239   |
/// | K7           | [300, 301)  | none              | 25         | kernel wait | -     |
/// | memcpy       | [340, 345)  | none              | 39         | other       | -     |
/// | K8, K9       | [480, 482)  | graph [400, 470) (2) | 135     | host wait   | 10, 11 |
fn stream_events() -> Vec<String> {
    vec![
        ev("cpu_op", "main", 1, 3, 0.0, 1.0, None),
        launch(1, 90.0, 2.0, 1),
        kernel("K1", 100.0, 10.0, Some(1)),
        launch(1, 95.0, 1.0, 2),
        kernel("K2", 115.0, 5.0, Some(2)),
        launch(1, 150.0, 60.0, 3),
        kernel("K3", 200.0, 10.0, Some(3)),
        launch(2, 205.0, 1.0, 4),
        kernel("K4", 260.0, 10.0, Some(4)),
        launch(1, 20.0, 1.0, 5),
        kernel("K5", 265.0, 3.0, Some(5)),
        launch(1, 30.0, 1.0, 6),
        kernel("K6", 270.0, 5.0, Some(6)),
        kernel("K7", 300.0, 1.0, None),
        ev("gpu_memcpy", "Memcpy DtoD", 0, 7, 340.0, 5.0, None),
        ev(
            "cuda_runtime",
            "cudaGraphLaunch",
            1,
            2,
            400.0,
            70.0,
            Some(8),
        ),
        kernel("K8", 480.0, 1.0, Some(8)),
        kernel("K9", 481.0, 1.0, Some(8)),
        // GPU-side annotation on the stream: not work, makes no gap.
        ev(
            "gpu_user_annotation",
            "ProfilerStep#1",
            0,
            7,
            100.0,
            382.0,
            None,
        ),
    ]
}

fn trace_of(events: &[String]) -> Engine {
    common::load_str(&format!("{{\"traceEvents\":[\n{}\n]}}", events.join(",\n"))).0
}

const HOST: usize = IdleClass::HostWait as usize;
const KERNEL: usize = IdleClass::KernelWait as usize;
const OTHER: usize = IdleClass::Other as usize;

#[test]
fn classify_rule() {
    assert_eq!(classify(1_000_000, Some(11), 10), IdleClass::HostWait);
    assert_eq!(
        classify(KERNEL_WAIT_MAX_NS - 1, Some(10), 10),
        IdleClass::KernelWait
    );
    assert_eq!(classify(KERNEL_WAIT_MAX_NS, Some(9), 10), IdleClass::Other);
    assert_eq!(
        classify(5, None, 10),
        IdleClass::KernelWait,
        "no launch: never host wait"
    );
}

#[test]
fn idle_classes_on_one_stream() {
    let engine = trace_of(&stream_events());
    let idle = analyze(engine.trace().unwrap(), None);
    assert_eq!(idle.streams.len(), 1);
    let s = &idle.streams[0];
    assert_eq!(s.activities, 10);
    assert_eq!(s.idle_ns[HOST], 80_000 + 135_000);
    assert_eq!(s.idle_ns[KERNEL], 5_000 + 25_000);
    assert_eq!(s.idle_ns[OTHER], 50_000 + 39_000);
    assert_eq!(s.gaps, [2, 2, 2]);
    // Busy: [100,110) [115,120) [200,210) [260,275) [300,301) [340,345) [480,482).
    assert_eq!(s.busy_ns, 48_000);
    assert_eq!(s.busy_ns + s.idle_total_ns(), 482_000 - 100_000);
}

#[test]
fn launch_statistics() {
    let engine = trace_of(&stream_events());
    let t = engine.trace().unwrap();
    let l = analyze(t, None).launch;
    assert_eq!(l.kernels, 8, "K1-K6, K8, K9 have launch calls");
    let d = l.delay.unwrap();
    // Delays 8, 19, 0 (clipped), 54, 244, 239, 10, 11 µs.
    assert_eq!((d.min, d.max, d.median), (0, 244_000, 15_000.0));
    assert_eq!(l.delay_outliers, 2);
    let name = |id: u32| t.strings.get(t.slices.name[id as usize]).into_owned();
    let top: Vec<(String, i64)> = l.top_delays.iter().map(|&(k, v)| (name(k), v)).collect();
    assert_eq!(
        top,
        [("K5".to_owned(), 244_000), ("K6".to_owned(), 239_000)]
    );
    // Distinct calls: 2, 1, 60, 1, 1, 1, 70 µs; the graph launch counts once.
    assert_eq!(l.runtime.unwrap().count, 7);
    assert_eq!(l.runtime_outliers, 2);
    let top: Vec<(String, i64)> = l.top_runtimes.iter().map(|&(c, v)| (name(c), v)).collect();
    assert_eq!(
        top,
        [
            ("cudaGraphLaunch".to_owned(), 70_000),
            ("cudaLaunchKernel".to_owned(), 60_000)
        ]
    );
    // K3 (10 < 60), K8 and K9 (1 < 70).
    assert_eq!(l.short_kernels, 3);
}

#[test]
fn range_keeps_activities_starting_in_it() {
    let engine = trace_of(&stream_events());
    let idle = analyze(engine.trace().unwrap(), Some((195_000, 280_000)));
    let s = &idle.streams[0];
    // K3 (its gap reaches back to K2's end), K4, K5, K6.
    assert_eq!(s.activities, 4);
    assert_eq!((s.idle_ns, s.gaps), ([80_000, 0, 50_000], [1, 0, 1]));
    assert_eq!(s.busy_ns, 25_000);
    assert_eq!(idle.launch.kernels, 4);
    assert!(analyze(engine.trace().unwrap(), Some((600_000, 700_000)))
        .streams
        .is_empty());
}

#[test]
fn real_traces_invariants_and_report() {
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (engine, result) = common::load_bytes(&name, common::json_bytes(&path));
        let Ok(_) = result else { continue };
        let t = engine.trace().unwrap();
        let idle = analyze(t, None);
        for s in &idle.streams {
            // Busy and idle tile the stream from its first start to its last end.
            let lane = &t.lanes[s.lane.0 as usize];
            let acts = (lane.slices.start as usize..lane.slices.end as usize)
                .filter(|&i| t.class(t.slices.cat[i]).is_device_activity());
            let first = acts.clone().map(|i| t.slices.start_ns[i]).min().unwrap();
            let last = acts.map(|i| t.slices.end_ns(i)).max().unwrap();
            assert_eq!(
                s.busy_ns + s.idle_total_ns(),
                last - first,
                "{name} {}",
                s.stream
            );
        }
        let linked = (0..t.slices.len())
            .filter(|&i| {
                t.class(t.slices.cat[i]) == CatClass::Kernel && t.slices.launch[i] != u32::MAX
            })
            .count();
        assert_eq!(idle.launch.kernels, linked as u64, "{name}");
        if let Some(d) = &idle.launch.delay {
            assert!(d.min >= 0, "{name}: delays are clipped at 0");
        }
        for line in idle_text(t, &idle).lines() {
            assert!(line.chars().count() <= 120, "{name}: {line:?}");
        }
        let j = idle_json(&idle);
        assert_eq!(j.as_array().unwrap().len(), idle.streams.len());
        let l = launch_json(t, &idle);
        for key in [
            "kernels",
            "delay",
            "delay_outliers",
            "top_delays",
            "runtime_outliers",
            "top_runtimes",
            "short_kernels",
        ] {
            assert!(l.get(key).is_some(), "{name}: {key}");
        }
    }
}

/// One stream's idle time by the HTA definitions, recounted from the JSON:
/// (activities, busy ns, [host wait, kernel wait, other] ns).
type StreamOracle = (u64, i64, [i64; 3]);

/// µs in the JSON to whole ns, as the engine stores them. Integers stay exact (epoch µs near
/// 1.7e15 times 1000 is past f64's exact integers); fractions are scaled apart from the whole.
fn ns(v: &serde_json::Value) -> i64 {
    if let Some(us) = v.as_i64() {
        return us * 1000;
    }
    let us = v.as_f64().unwrap();
    let whole = us.trunc();
    whole as i64 * 1000 + ((us - whole) * 1000.0).round() as i64
}

/// The HTA idle oracle of `../shared/REFERENCE.md` §4 by brute force over the raw events, the
/// same steps as `scripts/check/idle_oracle.py`: per stream (pid, tid) the device activities
/// sorted by start, each gap from the latest end so far classed by its launch call (same
/// `correlation`) and the 30 µs threshold; then the launches (kernels with a launch call):
/// count, delays over 100 µs (delay clipped at 0), kernels shorter than their launch call.
fn hta_idle_oracle(raw: &serde_json::Value) -> (Vec<StreamOracle>, (u64, u64, u64)) {
    let events: Vec<&serde_json::Value> = match raw {
        serde_json::Value::Array(list) => list.iter(),
        _ => raw["traceEvents"].as_array().unwrap().iter(),
    }
    .filter(|e| e["ph"] == "X" && e["dur"].is_number())
    .collect();
    // 2020-era traces name the categories `Kernel`, `Memcpy`, `Memset`, `Runtime`.
    let cat = |e: &serde_json::Value| e["cat"].as_str().unwrap_or("").to_ascii_lowercase();
    let correlation = |e: &serde_json::Value| e["args"]["correlation"].as_i64();
    let launches: std::collections::HashMap<i64, &serde_json::Value> = events
        .iter()
        .filter(|e| matches!(cat(e).as_str(), "cuda_runtime" | "cuda_driver" | "runtime"))
        .filter_map(|e| Some((correlation(e)?, *e)))
        .collect();
    let mut streams: std::collections::BTreeMap<String, Vec<(i64, i64, Option<i64>)>> =
        Default::default();
    for e in &events {
        if matches!(
            cat(e).as_str(),
            "kernel" | "gpu_memcpy" | "gpu_memset" | "memcpy" | "memset"
        ) {
            let call = correlation(e)
                .and_then(|c| launches.get(&c))
                .map(|l| ns(&l["ts"]));
            let key = format!("{} {}", e["pid"], e["tid"]);
            streams.entry(key).or_default().push((
                ns(&e["ts"]),
                ns(&e["ts"]) + ns(&e["dur"]),
                call,
            ));
        }
    }
    let mut out: Vec<StreamOracle> = streams
        .into_values()
        .map(|mut acts| {
            acts.sort_by_key(|a| a.0);
            let (mut busy, mut idle) = (0, [0i64; 3]);
            let (mut first, mut end) = (acts[0].0, acts[0].1);
            for &(start, stop, call) in &acts[1..] {
                if start > end {
                    let gap = start - end;
                    let class = if call.is_some_and(|c| c > end) {
                        0
                    } else if gap < 30_000 {
                        1
                    } else {
                        2
                    };
                    idle[class] += gap;
                    busy += end - first;
                    first = start;
                }
                end = end.max(stop);
            }
            (acts.len() as u64, busy + end - first, idle)
        })
        .collect();
    out.sort();
    let linked: Vec<(i64, i64)> = events
        .iter()
        .filter(|e| cat(e) == "kernel")
        .filter_map(|k| {
            let call = launches.get(&correlation(k)?)?;
            let call_end = ns(&call["ts"]) + ns(&call["dur"]);
            Some((
                (ns(&k["ts"]) - call_end).max(0),
                ns(&k["dur"]) - ns(&call["dur"]),
            ))
        })
        .collect();
    let outliers = linked.iter().filter(|l| l.0 > 100_000).count() as u64;
    let short = linked.iter().filter(|l| l.1 < 0).count() as u64;
    (out, (linked.len() as u64, outliers, short))
}

/// Every real trace's idle time per stream and launch counts equal the HTA-definition oracle
/// recounted from its JSON (`hta_idle_oracle`, rerun with `scripts/check/idle_oracle.py`).
/// The traces with GPU activity are counted, so a fixture that stops matching the oracle's
/// categories cannot drop out silently.
#[test]
fn idle_matches_the_hta_definition_recounted_from_the_json() {
    let mut with_gpu = 0;
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = common::json_bytes(&path);
        // speedscope's partial file is not JSON; the engine reads what it can, the oracle cannot.
        let Ok(raw) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        let (engine, result) = common::load_bytes(&name, bytes);
        result.unwrap_or_else(|e| panic!("{name}: {}", e.message));
        let idle = analyze(engine.trace().unwrap(), None);
        let mut ours: Vec<StreamOracle> = idle
            .streams
            .iter()
            .map(|s| (s.activities, s.busy_ns, s.idle_ns))
            .collect();
        ours.sort();
        let (streams, launches) = hta_idle_oracle(&raw);
        assert_eq!(ours, streams, "{name}: per-stream idle");
        let l = &idle.launch;
        assert_eq!(
            (l.kernels, l.delay_outliers, l.short_kernels),
            launches,
            "{name}: launches"
        );
        with_gpu += usize::from(!streams.is_empty());
    }
    assert!(
        with_gpu >= 15,
        "{with_gpu} real traces with GPU streams checked"
    );
}
