//! Wire tables through `Engine::query`: the shapes the app relies on (row counts, column keys,
//! order) on PyTorch's own CPU trace and a real GPU trace.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::engine::Engine;
use protocol::{Answer, CellValue, Query, TableData, Workload};

fn engine(path: &std::path::Path) -> Engine {
    let bytes = common::json_bytes(path);
    let (engine, result) = common::load_bytes(&path.to_string_lossy(), bytes);
    result.unwrap_or_else(|e| panic!("{path:?}: {}", e.message));
    engine
}

fn column(t: &TableData, key: &str) -> usize {
    t.columns.iter().position(|c| c.key == key).unwrap()
}

/// The table answered to `q`.
fn table(e: &mut Engine, q: &Query) -> TableData {
    match e.query(q).unwrap() {
        (Answer::Table(t), None) => t,
        other => panic!("not a table: {other:?}"),
    }
}

fn num(c: &CellValue) -> f64 {
    match c {
        CellValue::Int(n) => *n as f64,
        CellValue::Float(x) => *x,
        _ => f64::NAN,
    }
}

#[test]
fn no_trace_is_an_error() {
    assert!(Engine::new().query(&Query::Steps { workload: Workload::default() }).is_err());
}

#[test]
fn ops_by_name_and_by_shape_on_matmul_add() {
    let mut e = engine(&common::shared().join("fixtures/torch-cpu/matmul_add.pt.trace.json"));
    let by_name = Query::Ops {
        by_shape: false,
        range_ns: None,
    };
    let t = table(&mut e, &by_name);
    assert_eq!(t.kind, "ops");
    assert_eq!(t.rows.len(), 6);
    let keys: Vec<&str> = t.columns.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "name",
            "self_cpu_pct",
            "self_cpu",
            "cpu_total_pct",
            "cpu_total",
            "cpu_avg",
            "self_cuda",
            "self_cuda_pct",
            "cuda_total",
            "cuda_avg",
            "calls",
            "flops",
            "bytes",
            "achieved_tflops",
            "achieved_gbps",
            "cpu_mem",
            "self_cpu_mem",
            "cuda_mem",
            "self_cuda_mem"
        ]
    );
    assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
    // The page's memory columns are key_averages()' own, row for row (same order: first
    // occurrence); 3 of the 6 rows allocate.
    let truth: serde_json::Value = serde_json::from_slice(
        &std::fs::read(common::shared().join("fixtures/torch-cpu/matmul_add.truth.json")).unwrap(),
    )
    .unwrap();
    let (cpu_mem, self_cpu_mem) = (column(&t, "cpu_mem"), column(&t, "self_cpu_mem"));
    let mut allocating = 0;
    for (row, want) in t.rows.iter().zip(truth["key_averages"].as_array().unwrap()) {
        assert_eq!(row[0], CellValue::Text(want["key"].as_str().unwrap().into()));
        assert_eq!(row[cpu_mem], CellValue::Int(want["cpu_memory_usage"].as_i64().unwrap()));
        assert_eq!(row[self_cpu_mem], CellValue::Int(want["self_cpu_memory_usage"].as_i64().unwrap()));
        allocating += usize::from(row[cpu_mem] != CellValue::Int(0));
    }
    assert_eq!(allocating, 3);
    let self_cpu = column(&t, "self_cpu");
    let top = t
        .rows
        .iter()
        .max_by(|a, b| num(&a[self_cpu]).total_cmp(&num(&b[self_cpu])))
        .unwrap();
    assert_eq!(top[0], CellValue::Text("aten::mm".into()));
    assert!(t.totals["self_cpu_total_ns"] > 0.0);

    let shaped = table(
        &mut e,
        &Query::Ops {
            by_shape: true,
            range_ns: None,
        },
    );
    assert_eq!(shaped.rows.len(), 10);
    assert_eq!(shaped.columns[1].key, "input_shapes");
    // Cached index: the same answer again.
    assert_eq!(table(&mut e, &by_name), t);
}

#[test]
fn kernels_and_steps_on_a_gpu_trace() {
    let mut e = engine(&common::real("partx__profiler_trace_single_sample.json"));
    let k = table(&mut e, &Query::Kernels { range_ns: None });
    assert!(!k.rows.is_empty());
    assert_eq!(k.columns.len(), 21, "15 + the roofline's flops, TFLOP/s, % of peak, GB/s, % of BW, bound");
    let total = column(&k, "total");
    assert!(k
        .rows
        .windows(2)
        .all(|w| num(&w[0][total]) >= num(&w[1][total])));
    // Class and precision are plain text columns: the page's table shows them as it shows any.
    let (name, class, precision) = (column(&k, "name"), column(&k, "class"), column(&k, "precision"));
    let gemm = k
        .rows
        .iter()
        .find(|r| r[name] == CellValue::Text("ampere_fp16_s16816gemm_fp16_128x64_ldg8_relu_f2f_stages_32x6_tn".into()))
        .unwrap();
    assert_eq!((&gemm[class], &gemm[precision]), (&CellValue::Text("gemm".into()), &CellValue::Text("fp16".into())));
    let s = table(&mut e, &Query::Steps { workload: Workload::default() });
    assert_eq!(s.columns.len(), 22, "12 + MFU % + the phases' CPU and GPU (4 x 2) and exposed communication");
    assert!(s.rows.iter().all(|r| r.len() == 22));
}

/// The Steps table with a workload (the page's batch size and tokens per step): Samples/s and
/// Tokens/s after MFU %, each step's equal to `report --batch-size --tokens-per-step --json`'s
/// `throughput.steps[]`, the run's rates in the totals.
#[test]
fn steps_throughput_equals_the_report() {
    let path = common::shared().join("fixtures/real/kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let mut e = engine(&path);
    let w = Workload { batch_size: Some(32), tokens_per_step: Some(8192) };
    let s = table(&mut e, &Query::Steps { workload: w });
    let (samples, tokens) = (column(&s, "samples_per_s"), column(&s, "tokens_per_s"));
    assert_eq!((samples, tokens), (column(&s, "mfu_pct") + 1, column(&s, "mfu_pct") + 2));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", path.to_str().unwrap(), "--json", "--batch-size", "32", "--tokens-per-step", "8192"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["throughput"].clone();
    let want = doc["steps"].as_array().unwrap();
    assert_eq!(s.rows.len(), want.len());
    assert_eq!(doc["complete_steps"], 6);
    let cell = |c: &CellValue| match c {
        CellValue::Float(x) => Some(*x),
        CellValue::Empty => None,
        other => panic!("not a rate: {other:?}"),
    };
    for (row, w) in s.rows.iter().zip(want) {
        assert_eq!(cell(&row[samples]), w["samples_per_s"].as_f64(), "{w}");
        assert_eq!(cell(&row[tokens]), w["tokens_per_s"].as_f64(), "{w}");
    }
    assert_eq!(s.totals["samples_per_s"], doc["samples_per_s"].as_f64().unwrap());
    assert_eq!(s.totals["tokens_per_s"], doc["tokens_per_s"].as_f64().unwrap());
    assert_eq!(s.totals["complete_steps"], 6.0);
    let only_batch = table(&mut e, &Query::Steps { workload: Workload { batch_size: Some(32), tokens_per_step: None } });
    assert!(only_batch.columns.iter().all(|c| c.key != "tokens_per_s") && !only_batch.totals.contains_key("tokens_per_s"));
    let none = table(&mut e, &Query::Steps { workload: Workload::default() });
    assert!(none.columns.iter().all(|c| c.key != "samples_per_s"), "no columns unless a figure is given");
}
