//! Memory (`analysis::memory`, `report::memory`): peaks and counts on real traces (checked
//! against a direct read of the JSON), and hand-built traces for peaks, ranges, derived
//! totals, free matching and enclosing ops.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::memory::{analyze, device_label, DeviceMemory, Memory};
use kinetoscope::engine::Engine;
use kinetoscope::report::memory::{bytes, memory_json, memory_text};


/// (label, events, allocations, frees, peak allocated, peak reserved) of a device.
type Row<L> = (L, usize, u64, u64, i64, i64);

fn table(m: &Memory) -> Vec<Row<String>> {
    m.devices
        .iter()
        .map(|d| {
            (
                d.label.clone(),
                d.series.len(),
                d.allocations,
                d.frees,
                d.peak_allocated,
                d.peak_reserved,
            )
        })
        .collect()
}

#[test]
fn real_traces_peaks_and_counts() {
    // Expected values: max of `Total Allocated` / `Total Reserved` and counts of positive /
    // negative `Bytes` per (Device Type, Device Id), read from the JSON with Python:
    // `scripts/check/memory_counts.py TRACE` prints these rows.
    let cases: [(&str, Vec<Row<&str>>); 3] = [
        (
            "partx__profiler_trace_single_sample.json",
            vec![
                ("cpu", 46, 28, 18, 80, 0),
                ("cuda:0", 1134, 748, 386, 304_033_280, 337_641_472),
            ],
        ),
        (
            "qatut__dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json",
            vec![
                ("cpu", 6, 3, 3, 8, 0),
                ("cuda:0", 120, 60, 60, 94_398_464, 117_440_512),
            ],
        ),
        (
            "hta__df_index_resolver.json.gz",
            vec![
                ("cpu", 1240, 620, 620, 8, 0),
                ("cuda:1", 26770, 13385, 13385, 6_629_508_096, 12_782_141_440),
            ],
        ),
    ];
    for (name, expected) in cases {
        let engine = common::load_real(name);
        let m = analyze(engine.trace().unwrap(), None, 5);
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(l, a, b, c, d, e)| (l.to_owned(), a, b, c, d, e))
            .collect();
        assert_eq!(table(&m), expected, "{name}");
        for d in &m.devices {
            assert!(!d.allocated_derived);
            assert_eq!(
                d.series.iter().map(|s| s.allocated).max(),
                Some(d.peak_allocated)
            );
        }
    }
}

#[test]
fn real_trace_largest_allocations() {
    let engine = common::load_real("partx__profiler_trace_single_sample.json");
    let t = engine.trace().unwrap();
    let m = analyze(t, None, 3);
    let cuda = &m.devices[1];
    let sizes: Vec<i64> = cuda.largest.iter().map(|a| a.bytes).collect();
    assert_eq!(sizes, [15_491_584, 15_491_584, 7_745_536]);
    // First one: ts 4808593816760.363 µs in the file.
    let abs = |ns: i64| ns + t.origin_ns;
    assert_eq!(abs(cuda.largest[0].ts_ns), 4_808_593_816_760_363);
    let op = cuda.largest[0]
        .op
        .map(|o| t.strings.get(t.slices.name[o as usize]).into_owned());
    assert_eq!(op.as_deref(), Some("aten::cudnn_convolution"));
    assert!(cuda.largest[0].freed_ns.unwrap() > cuda.largest[0].ts_ns);
}

// -------------------------------------------------------------------------------------------
// Hand-built traces.

fn mem(
    ts: f64,
    dtype: i64,
    did: i64,
    addr: i64,
    b: i64,
    alloc: Option<i64>,
    reserved: Option<i64>,
) -> String {
    let mut args = format!(r#""Device Type":{dtype},"Device Id":{did},"Addr":{addr},"Bytes":{b}"#);
    if let Some(a) = alloc {
        args.push_str(&format!(r#","Total Allocated":{a}"#));
    }
    if let Some(r) = reserved {
        args.push_str(&format!(r#","Total Reserved":{r}"#));
    }
    format!(
        r#"{{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":{ts},"args":{{{args}}}}}"#
    )
}

fn op(name: &str, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":{dur},"args":{{}}}}"#
    )
}

fn trace_of(events: &[String]) -> Engine {
    common::load_str(&format!("{{\"traceEvents\":[\n{}\n]}}", events.join(",\n"))).0
}

/// cuda:0: +100 (A), +300 (B, peak 400), -100 (A freed), +50 (C) ; reserved 512 then 1024.
/// cuda:1: one +7. cpu: +8, -8. Ops: aten::empty [0, 5] holds A, aten::conv [9, 20] holds B
/// and its child aten::empty [10, 12] holds nothing (B at 10 is in both: innermost wins).
fn small() -> Vec<String> {
    vec![
        op("aten::empty", 0.0, 5.0),
        op("aten::conv", 9.0, 11.0),
        op("aten::empty", 10.0, 2.0),
        mem(1.0, 1, 0, 0xA, 100, Some(100), Some(512)),
        mem(10.0, 1, 0, 0xB, 300, Some(400), Some(1024)),
        mem(15.0, 1, 0, 0xA, -100, Some(300), Some(1024)),
        mem(16.0, 1, 1, 0xD, 7, Some(7), Some(7)),
        mem(18.0, 0, -1, 0xE, 8, Some(8), Some(0)),
        mem(19.0, 0, -1, 0xE, -8, Some(0), Some(0)),
        mem(30.0, 1, 0, 0xC, 50, Some(350), Some(1024)),
    ]
}

fn cuda0(m: &Memory) -> &DeviceMemory {
    m.devices.iter().find(|d| d.label == "cuda:0").unwrap()
}

#[test]
fn peaks_series_and_order() {
    let engine = trace_of(&small());
    let m = analyze(engine.trace().unwrap(), None, 10);
    let labels: Vec<&str> = m.devices.iter().map(|d| d.label.as_str()).collect();
    assert_eq!(
        labels,
        ["cpu", "cuda:0", "cuda:1"],
        "ordered by device type, then id"
    );
    let d = cuda0(&m);
    let series: Vec<(i64, i64, i64)> = d
        .series
        .iter()
        .map(|s| (s.ts_ns, s.allocated, s.reserved))
        .collect();
    assert_eq!(
        series,
        [
            (1_000, 100, 512),
            (10_000, 400, 1024),
            (15_000, 300, 1024),
            (30_000, 350, 1024)
        ]
    );
    assert_eq!(
        (
            d.peak_allocated,
            d.peak_allocated_ns,
            d.peak_reserved,
            d.peak_reserved_ns
        ),
        (400, 10_000, 1024, 10_000)
    );
    assert_eq!((d.allocations, d.frees), (3, 1));
}

#[test]
fn largest_with_op_and_free_time() {
    let engine = trace_of(&small());
    let t = engine.trace().unwrap();
    let m = analyze(t, None, 2);
    let d = cuda0(&m);
    let name = |o: Option<u32>| o.map(|o| t.strings.get(t.slices.name[o as usize]).into_owned());
    let got: Vec<(i64, i64, Option<String>, Option<i64>)> = d
        .largest
        .iter()
        .map(|a| (a.bytes, a.ts_ns, name(a.op), a.freed_ns))
        .collect();
    assert_eq!(
        got,
        [
            (300, 10_000, Some("aten::empty".to_owned()), None),
            (100, 1_000, Some("aten::empty".to_owned()), Some(15_000))
        ]
    );
    // The B allocation at 10 µs: aten::empty [10, 12] is inside aten::conv [9, 20].
    let b_op = d.largest[0].op.unwrap() as usize;
    assert_eq!(t.slices.start_ns[b_op], 10_000);
    // C at 30 µs is in no op.
    let all = analyze(t, None, 10);
    assert_eq!(
        cuda0(&all)
            .largest
            .iter()
            .find(|a| a.bytes == 50)
            .unwrap()
            .op,
        None
    );
}

#[test]
fn range_counts_memory_carried_in() {
    let engine = trace_of(&small());
    let t = engine.trace().unwrap();
    // [12, 40) µs: the free at 15 and C at 30; 400 allocated was held when the range began.
    let m = analyze(t, Some((12_000, 40_000)), 10);
    let d = cuda0(&m);
    assert_eq!(d.series.len(), 2);
    assert_eq!((d.peak_allocated, d.peak_allocated_ns), (400, 12_000));
    assert_eq!((d.allocations, d.frees), (1, 1));
    assert_eq!(d.largest.iter().map(|a| a.bytes).collect::<Vec<_>>(), [50]);
    // Devices without events in the range are left out.
    let m = analyze(t, Some((20_000, 25_000)), 10);
    assert!(m.devices.is_empty());
}

#[test]
fn allocated_derived_from_bytes_when_totals_are_missing() {
    let engine = trace_of(&[
        mem(0.0, 1, 0, 1, 10, None, None),
        mem(1.0, 1, 0, 2, 30, None, Some(64)),
        mem(2.0, 1, 0, 1, -10, None, None),
    ]);
    let m = analyze(engine.trace().unwrap(), None, 5);
    let d = cuda0(&m);
    assert!(d.allocated_derived);
    let series: Vec<(i64, i64)> = d.series.iter().map(|s| (s.allocated, s.reserved)).collect();
    assert_eq!(
        series,
        [(10, 0), (40, 64), (30, 64)],
        "missing reserved keeps the last value"
    );
    assert_eq!((d.peak_allocated, d.peak_reserved), (40, 64));
    assert!(memory_text(engine.trace().unwrap(), &m).contains("(from Bytes)"));
}

#[test]
fn no_memory_events() {
    let engine = trace_of(&[op("aten::add", 0.0, 1.0)]);
    let t = engine.trace().unwrap();
    let m = analyze(t, None, 5);
    assert!(m.devices.is_empty());
    assert!(memory_text(t, &m).contains("No [memory] events"));
    assert_eq!(memory_json(t, &m), serde_json::json!([]));
}

#[test]
fn labels_and_sizes() {
    assert_eq!(device_label(0, -1), "cpu");
    assert_eq!(device_label(1, 3), "cuda:3");
    assert_eq!(device_label(99, 0), "type99:0");
    assert_eq!(bytes(8), "8 B");
    assert_eq!(bytes(0), "0 B");
    assert_eq!(bytes(-4096), "-4.10 KB");
    assert_eq!(bytes(15_491_584), "15.49 MB");
    assert_eq!(bytes(12_782_141_440), "12.78 GB");
}

#[test]
fn report_fits_120_columns_and_json_keys() {
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (engine, result) = common::load_bytes(&name, common::json_bytes(&path));
        let Ok(_) = result else { continue };
        let t = engine.trace().unwrap();
        let m = analyze(t, None, 5);
        for line in memory_text(t, &m).lines() {
            assert!(line.chars().count() <= 120, "{name}: {line:?}");
        }
        for (d, j) in m.devices.iter().zip(memory_json(t, &m).as_array().unwrap()) {
            assert_eq!(j["device"], d.label.as_str());
            assert_eq!(j["peak_allocated_bytes"], d.peak_allocated);
            assert_eq!(j["peak_reserved_bytes"], d.peak_reserved);
            assert_eq!(j["largest"].as_array().unwrap().len(), d.largest.len());
        }
    }
}
