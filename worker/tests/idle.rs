//! Idle time and launch statistics (`analysis::idle`, `report::idle`): a hand-built stream
//! with every idle class, overlap, clipping, outliers and a multi-kernel launch; ranges;
//! invariants and report shape on the real traces.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

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

#[test]
fn dlrm_worker0_pinned() {
    // Pinned from this implementation (no oracle: tb_plugin has no idle view; HTA not run
    // here). Guards against regressions in linking and classification.
    let path = common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json");
    let (engine, _) = common::load(&path);
    let idle = analyze(engine.trace().unwrap(), None);
    let s7 = idle
        .streams
        .iter()
        .find(|s| s.stream == "stream 7")
        .unwrap();
    assert_eq!((s7.activities, s7.busy_ns), (225, 971_000));
    assert_eq!(s7.idle_ns, [11_448_000, 123_000, 0]);
    assert_eq!(
        (
            idle.launch.kernels,
            idle.launch.delay_outliers,
            idle.launch.short_kernels
        ),
        (245, 30, 164)
    );
}
