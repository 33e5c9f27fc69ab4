//! Synthetic traces: the demo's shape, determinism and committed copy; inflate's renumbering.
//! (One file for both generators, hence a little over the usual length.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::PathBuf;

use kinetoscope::synth::demo;
use kinetoscope::synth::inflate::{self, InflateStats};
use serde_json::Value;

/// A number as exact integer ns (µs text with up to three decimals; serde_json prints the
/// shortest round-trip form, which for Kineto's three-decimal values is the input text).
fn ns(v: &Value) -> i64 {
    let text = v.to_string();
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    assert!(frac.len() <= 3, "more than ns precision: {text}");
    let frac_ns: i64 = format!("{frac:0<3}").parse().unwrap();
    let int: i64 = int.parse().unwrap();
    int * 1000 + if int < 0 { -frac_ns } else { frac_ns }
}

fn end_ns(e: &Value) -> i64 {
    ns(&e["ts"]) + e.get("dur").map_or(0, ns)
}

fn events(doc: &Value) -> &[Value] {
    doc["traceEvents"].as_array().unwrap()
}

fn text<'a>(e: &'a Value, key: &str) -> &'a str {
    e[key].as_str().unwrap_or("")
}

fn with_cat<'a>(evs: &'a [Value], cats: &'a [&str]) -> impl Iterator<Item = &'a Value> + 'a {
    evs.iter().filter(move |e| cats.contains(&text(e, "cat")))
}

/// Complete events on GPU 0, stream 7 (step annotations excluded), by start.
fn stream_7(evs: &[Value]) -> Vec<&Value> {
    let mut on_stream: Vec<&Value> = evs
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 0 && e["tid"] == 7)
        .filter(|e| e["cat"] != "gpu_user_annotation")
        .collect();
    on_stream.sort_by_key(|e| ns(&e["ts"]));
    on_stream
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn demo_doc() -> Value {
    serde_json::from_slice(&demo::generate()).unwrap()
}

const BLESS: &str = "run KINETOSCOPE_BLESS=1 cargo test -p kinetoscope --test all synth::";

#[test]
fn demo_is_deterministic_and_small() {
    let json = demo::generate();
    assert_eq!(json, demo::generate());
    assert!(json.len() < 300_000, "demo is {} bytes", json.len());
    let gz = demo::generate_gzip();
    assert_eq!(gz, demo::generate_gzip());
    assert_eq!(&gz[4..8], &[0, 0, 0, 0], "gzip header carries no mtime");
    assert_eq!(gunzip(&gz), json);
    let mut written = Vec::new();
    demo::write(&mut written).unwrap();
    assert_eq!(written, json);
}

/// `public/demo.pt.trace.json.gz` is what `generate_gzip` makes; `KINETOSCOPE_BLESS=1` rewrites
/// it. Compared decompressed, so a different deflate implementation alone does not fail it.
#[test]
fn demo_is_committed_output() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../public/demo.pt.trace.json.gz");
    if std::env::var_os("KINETOSCOPE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, demo::generate_gzip()).unwrap();
    }
    let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}; {BLESS}"));
    assert!(
        gunzip(&committed) == demo::generate(),
        "{path:?} is stale; {BLESS}"
    );
}

#[test]
fn demo_top_level_and_timestamp_format() {
    let doc = demo_doc();
    for key in [
        "schemaVersion",
        "deviceProperties",
        "distributedInfo",
        "traceName",
    ] {
        assert!(doc.get(key).is_some(), "missing {key}");
    }
    assert_eq!(doc["displayTimeUnit"], "ms");
    assert!(doc["baseTimeNanoseconds"].as_u64().unwrap() > 1_700_000_000_000_000_000);
    assert_eq!(doc["deviceProperties"][0]["numSms"], 108);
    // Every ts and dur is written with exactly three decimals, as Kineto does.
    let json = String::from_utf8(demo::generate()).unwrap();
    for key in ["\"ts\": ", "\"dur\": "] {
        for (at, _) in json.match_indices(key) {
            let rest = &json[at + key.len()..];
            let number = &rest[..rest.find([',', '\n']).unwrap()];
            let (int, frac) = number.split_once('.').unwrap_or_else(|| panic!("{number}"));
            assert!(frac.len() == 3 && !int.is_empty(), "{key}{number}");
        }
    }
}

#[test]
fn demo_steps_cold_start_and_gpu_copies() {
    let doc = demo_doc();
    let steps: Vec<&Value> = with_cat(events(&doc), &["user_annotation"])
        .filter(|e| text(e, "name").starts_with("ProfilerStep#"))
        .collect();
    let names: Vec<&str> = steps.iter().map(|e| text(e, "name")).collect();
    let expected: Vec<String> = (1..=demo::STEPS)
        .map(|n| format!("ProfilerStep#{n}"))
        .collect();
    assert_eq!(names, expected);
    let durs: Vec<i64> = steps.iter().map(|e| ns(&e["dur"])).collect();
    assert!(
        durs[0] > 2 * durs[1..].iter().max().unwrap(),
        "cold first step: {durs:?}"
    );
    let gpu: Vec<&Value> = with_cat(events(&doc), &["gpu_user_annotation"]).collect();
    assert_eq!(gpu.len(), steps.len());
    for (g, s) in gpu.iter().zip(&steps) {
        assert_eq!(
            (&g["pid"], &g["tid"], &g["name"]),
            (&Value::from(0), &Value::from(7), &s["name"])
        );
        assert_eq!(g["args"]["External id"], s["args"]["External id"]);
    }
}

#[test]
fn demo_category_counts() {
    let doc = demo_doc();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for e in events(&doc) {
        *counts
            .entry(format!("{}/{}", text(e, "ph"), text(e, "cat")))
            .or_default() += 1;
    }
    let count = |key: &str| counts.get(key).copied().unwrap_or(0);
    for key in [
        "X/cpu_op",
        "X/user_annotation",
        "X/cuda_runtime",
        "X/kernel",
        "X/gpu_memcpy",
        "X/cuda_sync",
        "X/gpu_user_annotation",
        "s/fwdbwd",
        "f/fwdbwd",
        "i/cpu_instant_event",
        "M/",
        "i/",
    ] {
        assert!(count(key) > 0, "no {key}: {counts:?}");
    }
    assert_eq!((count("X/overhead"), count("X/Trace")), (1, 1));
    // A flow start per device activity; a flow end on each activity and on each runtime call
    // without device work (as Kineto writes them).
    assert_eq!(
        count("s/ac2g"),
        count("X/kernel") + count("X/gpu_memcpy") + count("X/cuda_sync")
    );
    assert_eq!(count("f/ac2g"), count("X/cuda_runtime"));
}

/// Each device activity has a runtime call with its correlation, started no later, and the
/// `ac2g` pair on both; stream 7 runs one activity at a time.
#[test]
fn demo_flows_and_launches_are_consistent() {
    let doc = demo_doc();
    let evs = events(&doc);
    let mut runtime = BTreeMap::new();
    for e in with_cat(evs, &["cuda_runtime"]) {
        assert!(runtime
            .insert(e["args"]["correlation"].as_i64().unwrap(), e)
            .is_none());
    }
    let mut flows: BTreeMap<(i64, &str), &Value> = BTreeMap::new();
    for e in with_cat(evs, &["ac2g"]) {
        let key = (e["id"].as_i64().unwrap(), text(e, "ph"));
        assert!(flows.insert(key, e).is_none(), "duplicate flow {key:?}");
    }
    for e in with_cat(evs, &["kernel", "gpu_memcpy", "cuda_sync"]) {
        let corr = e["args"]["correlation"].as_i64().unwrap();
        let call = runtime[&corr];
        assert!(
            ns(&e["ts"]) >= ns(&call["ts"]),
            "{} starts before its launch",
            e["name"]
        );
        assert_eq!(ns(&flows[&(corr, "s")]["ts"]), ns(&call["ts"]));
        assert_eq!(ns(&flows[&(corr, "f")]["ts"]), ns(&e["ts"]));
        assert_eq!(flows[&(corr, "f")]["bp"], "e");
    }
    for pair in stream_7(evs).windows(2) {
        let (a, b) = (pair[0], pair[1]);
        assert!(
            end_ns(a) <= ns(&b["ts"]),
            "{} overlaps {}",
            a["name"],
            b["name"]
        );
    }
}

/// CPU slices nest without partial overlaps per thread, and the details sit where PyTorch puts
/// them.
#[test]
fn demo_nesting_and_placement() {
    let doc = demo_doc();
    let evs = events(&doc);
    let mut by_thread: BTreeMap<i64, Vec<&Value>> = BTreeMap::new();
    for e in with_cat(evs, &["cpu_op", "user_annotation", "cuda_runtime"]) {
        by_thread
            .entry(e["tid"].as_i64().unwrap())
            .or_default()
            .push(e);
    }
    assert_eq!(by_thread.len(), 2, "main and autograd threads");
    let mut pairs: BTreeSet<(&str, &str)> = BTreeSet::new();
    for slices in by_thread.values_mut() {
        slices.sort_by_key(|e| (ns(&e["ts"]), -ns(&e["dur"])));
        let mut stack: Vec<&Value> = Vec::new();
        for &e in slices.iter() {
            while stack.last().is_some_and(|p| end_ns(p) <= ns(&e["ts"])) {
                stack.pop();
            }
            if let Some(p) = stack.last() {
                assert!(
                    end_ns(e) <= end_ns(p),
                    "{} partially overlaps {}",
                    e["name"],
                    p["name"]
                );
                pairs.insert((text(e, "name"), text(p, "name")));
            }
            stack.push(e);
        }
        // An occupancy query right before every GEMM launch.
        for pair in slices
            .windows(2)
            .filter(|p| p[1]["name"] == "cudaLaunchKernel")
        {
            let corr = &pair[1]["args"]["correlation"];
            let kernel = with_cat(evs, &["kernel"]).find(|k| &k["args"]["correlation"] == corr);
            if text(kernel.unwrap(), "name").contains("sgemm") {
                assert_eq!(
                    pair[0]["name"],
                    "cudaOccupancyMaxActiveBlocksPerMultiprocessor"
                );
            }
        }
    }
    for pair in [
        ("aten::t", "aten::linear"),
        ("aten::addmm", "aten::linear"),
        ("cudaMemcpyAsync", "aten::addmm"),
        (
            "aten::to",
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        ),
        ("cudaLaunchKernel", "aten::_fused_adamw_"),
        (
            "MseLossBackward0",
            "autograd::engine::evaluate_function: MseLossBackward0",
        ),
    ] {
        assert!(pairs.contains(&pair), "{pair:?}");
    }
    // The DtoD copy runs right before a GEMM on the same stream.
    let stream = stream_7(evs);
    let dtod = stream
        .iter()
        .position(|e| e["name"] == "Memcpy DtoD (Device -> Device)");
    assert!(text(stream[dtod.unwrap() + 1], "name").contains("sgemm"));
    let last_call = with_cat(evs, &["cuda_runtime"])
        .max_by_key(|e| ns(&e["ts"]))
        .unwrap();
    assert_eq!(last_call["name"], "cudaDeviceSynchronize");
}

#[test]
fn demo_memory_and_metadata() {
    let doc = demo_doc();
    let evs = events(&doc);
    for m in evs.iter().filter(|e| e["name"] == "[memory]") {
        assert_eq!((&m["ph"], &m["s"]), (&Value::from("i"), &Value::from("t")));
        let args = &m["args"];
        for key in [
            "Device Type",
            "Device Id",
            "Addr",
            "Bytes",
            "Total Allocated",
            "Total Reserved",
        ] {
            assert!(args.get(key).is_some(), "[memory] without {key}");
        }
        let allocated = args["Total Allocated"].as_i64().unwrap();
        let reserved = args["Total Reserved"].as_i64().unwrap();
        assert!(
            allocated >= 0 && (args["Device Type"] == 0 || allocated <= reserved),
            "{m}"
        );
    }
    let meta: BTreeSet<String> = evs
        .iter()
        .filter(|e| e["ph"] == "M")
        .map(|e| format!("{} {}", text(e, "name"), e["args"]))
        .collect();
    for expected in [
        r#"process_labels {"labels":"GPU 0"}"#,
        r#"thread_name {"name":"stream 7 "}"#,
        r#"thread_name {"name":"thread 48213 (python3)"}"#,
        r#"thread_name {"name":"thread 48391 (python3)"}"#,
        r#"process_sort_index {"sort_index":536870912}"#,
    ] {
        assert!(meta.contains(expected), "{expected}");
    }
}

/// The demo loads through the engine like a real trace.
#[test]
fn demo_loads_through_the_engine() {
    let (_, result) = common::load_bytes("demo.pt.trace.json.gz", demo::generate_gzip());
    let summary = result.unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(summary.events, events(&demo_doc()).len() as u64);
    assert!(!summary.truncated);
}

mod inflating {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        common::json_bytes(&common::real(name))
    }

    fn inflated(input: &[u8], copies: u64) -> (InflateStats, Vec<u8>, Value) {
        let mut out = Vec::new();
        let stats = inflate::inflate_copies(input, copies, &mut out).unwrap();
        assert_eq!(stats.bytes_written, out.len() as u64);
        let doc = serde_json::from_slice(&out).unwrap();
        (stats, out, doc)
    }

    fn non_meta(doc: &Value) -> Vec<&Value> {
        events(doc).iter().filter(|e| e["ph"] != "M").collect()
    }

    #[test]
    fn three_copies_of_a_real_trace() {
        let input = fixture("gpumodel__trace.json");
        let original: Value = serde_json::from_slice(&input).unwrap();
        let (stats, out, doc) = inflated(&input, 3);
        let (before, after) = (non_meta(&original), non_meta(&doc));
        let meta = |d: &Value| events(d).len() - non_meta(d).len();
        assert_eq!(
            (stats.copies, stats.events_per_copy),
            (3, before.len() as u64)
        );
        assert_eq!(
            (after.len(), meta(&doc)),
            (3 * before.len(), meta(&original))
        );
        assert_eq!(doc["deviceProperties"], original["deviceProperties"]);
        // Top-level members keep their order.
        let order = |json: &[u8]| {
            let json = std::str::from_utf8(json).unwrap();
            let mut at: Vec<(usize, &String)> = original
                .as_object()
                .unwrap()
                .keys()
                .map(|k| (json.find(&format!("\"{k}\":")).unwrap(), k))
                .collect();
            at.sort();
            at.into_iter().map(|(_, k)| k).collect::<Vec<_>>()
        };
        assert_eq!(order(&out), order(&input));

        let mut correlations = vec![BTreeSet::new(); 3];
        for (i, e) in after.iter().enumerate() {
            let (copy, orig) = (i / before.len(), before[i % before.len()]);
            assert_eq!(e["name"], orig["name"]);
            if let Some(ts) = orig.get("ts") {
                assert_eq!(ns(&e["ts"]), ns(ts) + copy as i64 * stats.period_us * 1000);
            }
            let shift = |v: &Value| v.as_i64().unwrap() + (copy as u64 * stats.id_stride) as i64;
            for key in ["correlation", "External id", "Ev Idx", "Record function id"] {
                if let Some(v) = orig["args"].get(key) {
                    assert_eq!(e["args"][key].as_i64().unwrap(), shift(v), "{key}");
                }
            }
            if let Some(id) = orig.get("id") {
                assert_eq!(e["id"].as_i64().unwrap(), shift(id));
            }
            correlations[copy].extend(e["args"].get("correlation").and_then(Value::as_i64));
        }
        assert!(correlations[0].is_disjoint(&correlations[1]));
        assert!(correlations[1].is_disjoint(&correlations[2]));
        // Copies follow each other in time: copy c + 1 starts after copy c ends.
        let span = |c: usize| {
            let copy = after[c * before.len()..(c + 1) * before.len()]
                .iter()
                .filter(|e| e.get("ts").is_some());
            let (starts, ends): (Vec<i64>, Vec<i64>) =
                copy.map(|e| (ns(&e["ts"]), end_ns(e))).unzip();
            (*starts.iter().min().unwrap(), *ends.iter().max().unwrap())
        };
        assert!(span(0).1 < span(1).0 && span(1).1 < span(2).0);
    }

    #[test]
    fn profiler_steps_are_renumbered() {
        let (stats, _, doc) = inflated(
            &fixture("qatut__dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json"),
            3,
        );
        assert_eq!(stats.steps_per_copy, 3);
        let steps: Vec<&str> = with_cat(events(&doc), &["user_annotation"])
            .map(|e| text(e, "name"))
            .filter(|name| name.starts_with("ProfilerStep#"))
            .collect();
        let expected: Vec<String> = (1..=9).map(|n| format!("ProfilerStep#{n}")).collect();
        assert_eq!(steps, expected);
    }

    #[test]
    fn gzip_fixture_to_a_target_size() {
        let input = fixture("hta__triton_example.json.gz");
        let mut out = Vec::new();
        let target = 10 * input.len() as u64;
        let stats = inflate::inflate(&input, target, &mut out).unwrap();
        assert!(out.len() as u64 >= target && stats.bytes_written == out.len() as u64);
        let doc: Value = serde_json::from_slice(&out).unwrap();
        assert!(stats.copies > 1);
        assert_eq!(events(&doc).len() as u64, stats.events_written);
        assert_eq!(
            stats.events_written,
            stats.copies * stats.events_per_copy + stats.metadata_events
        );
    }

    #[test]
    fn bare_array_string_ids_and_ts_zero() {
        let input = br#"[
            {"ph": "X", "name": "a", "pid": "p", "tid": 1, "ts": 0, "dur": 1},
            {"ph": "b", "cat": "c", "name": "x", "id": "0x1f", "pid": "p", "tid": 1, "ts": 100.5},
            {"ph": "e", "cat": "c", "name": "x", "id": "0x1f", "pid": "p", "tid": 1, "ts": 130.25,
             "args": {"Ev Idx": -1}},
            {"ph": "M", "name": "process_name", "pid": "p", "args": {"name": "P"}}
        ]"#;
        let (stats, _, doc) = inflated(input, 2);
        // The span ignores ts 0: 130.25 - 100.5 = 29.75 µs, rounded up, plus the gap.
        assert_eq!(stats.period_us, 30 + inflate::GAP_US);
        let evs = events(&doc);
        assert_eq!(evs.len(), 7);
        assert_eq!(evs[4]["ts"].as_i64(), Some(1030));
        assert_eq!(evs[5]["id"], "0x1f.1");
        assert_eq!(evs[6]["ts"].to_string(), "1160.25");
        assert_eq!(evs[6]["args"]["Ev Idx"], -1, "negative sentinels stay");
    }

    #[test]
    fn errors_name_the_byte() {
        let mut sink = Vec::new();
        for (input, expected) in [
            (
                &b"{\"traceEvents\": [{\"ts\": \"5\"}]}"[..],
                "not a plain decimal number at byte 24",
            ),
            (b"  nope", "expected a JSON object or array at byte 2"),
            (
                b"{\"traceEvents\": [{\"ts\": 1,}]}",
                "expected a member name at byte 26",
            ),
            (b"{\"x\": 1}", "no \"traceEvents\" member"),
        ] {
            let err = inflate::inflate(input, 1, &mut sink).unwrap_err();
            assert!(err.ends_with(expected), "{err}");
        }
    }

    /// Throughput on a ~200 MB output (`KINETOSCOPE_INFLATE_MB` to change): `cargo test
    /// --release -p kinetoscope --test all synth::inflating::throughput -- --ignored --nocapture`.
    #[test]
    #[ignore = "benchmark: writes ~200 MB to the temp directory"]
    fn throughput() {
        let input = fixture("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json");
        let path = std::env::temp_dir().join("kinetoscope_inflate_bench.json");
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let start = std::time::Instant::now();
        let mb: u64 = std::env::var("KINETOSCOPE_INFLATE_MB").map_or(200, |v| v.parse().unwrap());
        let stats = inflate::inflate(&input, mb << 20, &mut file).unwrap();
        drop(file);
        let secs = start.elapsed().as_secs_f64();
        let mb = stats.bytes_written as f64 / 1e6;
        let events = stats.events_written;
        println!(
            "{mb:.0} MB, {events} events in {secs:.2} s: {:.0} MB/s -> {path:?}",
            mb / secs
        );
    }
}
