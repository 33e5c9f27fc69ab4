//! `kinetoscope export --format parquet`: every real fixture's tables, stacked in one folder
//! (one row group per trace), read back by DuckDB and by polars (the pinned versions in
//! `<target>/venv`, installed by scripts/setup), add up to the numbers of `report --json` and
//! `info --json` for the same trace: row counts, sums of times and calls, kernel time per
//! class, what bounds each step, memory events and peaks. Without the venv the test fails (a
//! skipped test would leave the files unread by any other tool). And the CLI's entries:
//! `export` and `run --format parquet` write the files and say so, or refuse without DIR.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::export::parquet::{trace, Sink};
use kinetoscope::report::trace::{ReportOptions, TraceReport};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Per trace, per metric: the value (metrics named `table.what`).
type Metrics = BTreeMap<String, BTreeMap<String, Value>>;

/// DuckDB over DIR/*.parquet: `(trace, metric, value)` rows, as [`Metrics`].
const DUCKDB: &str = r#"
import json, sys, duckdb
d = sys.argv[1]
t = lambda name: f"read_parquet('{d}/{name}.parquet')"
queries = [
  f"SELECT trace, 'slices.rows', count(*)::DOUBLE FROM {t('slices')} GROUP BY trace",
  f"SELECT trace, 'kernels.rows', count(*)::DOUBLE FROM {t('kernels')} GROUP BY trace",
  f"SELECT trace, 'kernels.dur_us', sum(dur_ns) / 1000.0 FROM {t('kernels')} GROUP BY trace",
  f"SELECT trace, 'kernels.dur_us.' || class, sum(dur_ns) / 1000.0 FROM {t('kernels')} GROUP BY trace, class",
  f"SELECT trace, 'ops.rows', count(*)::DOUBLE FROM {t('ops')} GROUP BY trace",
  f"SELECT trace, 'ops.calls', sum(calls)::DOUBLE FROM {t('ops')} GROUP BY trace",
  f"SELECT trace, 'ops.self_cpu_us', sum(self_cpu_ns) / 1000.0 FROM {t('ops')} GROUP BY trace",
  f"SELECT trace, 'ops.cpu_total_us', sum(cpu_total_ns) / 1000.0 FROM {t('ops')} GROUP BY trace",
  f"SELECT trace, 'ops.self_device_us', sum(self_device_ns) / 1000.0 FROM {t('ops')} GROUP BY trace",
  f"SELECT trace, 'ops.device_total_us', sum(device_total_ns) / 1000.0 FROM {t('ops')} GROUP BY trace",
  f"SELECT trace, 'steps.rows', count(*)::DOUBLE FROM {t('steps')} GROUP BY trace",
  f"SELECT trace, 'steps.dur_us', sum(dur_ns) / 1000.0 FROM {t('steps')} GROUP BY trace",
  f"SELECT trace, 'steps.kernel_us', sum(kernel_ns) / 1000.0 FROM {t('steps')} GROUP BY trace",
  f"SELECT trace, 'steps.bound_by', string_agg(bound_by, ',' ORDER BY bound_by) FROM {t('steps')} WHERE bound_by IS NOT NULL GROUP BY trace",
  f"SELECT trace, 'flows.rows', count(*)::DOUBLE FROM {t('flows')} GROUP BY trace",
  f"SELECT trace, 'counters.samples', count(DISTINCT (pid, name, ts_ns))::DOUBLE FROM {t('counters')} GROUP BY trace",
  f"SELECT trace, 'memory.allocations', count(*) FILTER (WHERE bytes > 0)::DOUBLE FROM {t('memory')} GROUP BY trace",
  f"SELECT trace, 'memory.frees', count(*) FILTER (WHERE bytes < 0)::DOUBLE FROM {t('memory')} GROUP BY trace",
  f"SELECT trace, 'memory.peaks', sum(peak)::DOUBLE FROM (SELECT trace, device, max(allocated_bytes) AS peak FROM {t('memory')} GROUP BY ALL) GROUP BY trace",
]
out = {}
for q in queries:
    for trace, metric, value in duckdb.sql(q).fetchall():
        out.setdefault(trace, {})[metric] = value
print(json.dumps(out))
"#;

/// polars over the same files: kernel rows and time per trace (the dataframe reading).
const POLARS: &str = r#"
import json, sys, polars as pl
k = pl.read_parquet(sys.argv[1] + "/kernels.parquet")
per = k.group_by("trace").agg(pl.len().alias("rows"), (pl.col("dur_ns").sum() / 1000.0).alias("dur_us"))
print(json.dumps({r["trace"]: {"kernels.rows": float(r["rows"]), "kernels.dur_us": r["dur_us"]} for r in per.to_dicts()}))
"#;

/// The venv's python: the test binary is `<target>/<profile>/deps/<name>`.
fn venv_python() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).expect("target dir above the test binary").join("venv/bin/python")
}

fn python(script: &str, dir: &Path) -> Metrics {
    let python = venv_python();
    let out = Command::new(&python)
        .args(["-c", script, &dir.to_string_lossy()])
        .output()
        .unwrap_or_else(|e| panic!("cannot start {python:?} ({e}): run scripts/setup (it installs duckdb and polars there)"));
    assert!(out.status.success(), "{python:?} failed (run scripts/setup):\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What `report --json` and `info --json` say, as the same metrics.
fn expected(report: &Value, info: &Value) -> BTreeMap<String, Value> {
    let mut m = BTreeMap::new();
    let sum = |list: &Value, key: &str| list.as_array().unwrap().iter().map(|r| r[key].as_f64().unwrap_or(0.0)).sum::<f64>();
    let mut put = |k: &str, v: f64| {
        m.insert(k.to_owned(), Value::from(v));
    };
    let lanes = info["processes"].as_array().unwrap().iter().flat_map(|p| p["lanes"].as_array().unwrap());
    put("slices.rows", lanes.map(|l| l["slices"].as_f64().unwrap()).sum());
    let kernels = &report["kernels"];
    put("kernels.rows", sum(kernels, "calls"));
    put("kernels.dur_us", sum(kernels, "total_us"));
    let mut by_class = BTreeMap::<String, f64>::new();
    for k in kernels.as_array().unwrap() {
        *by_class.entry(k["class"].as_str().unwrap().to_owned()).or_default() += k["total_us"].as_f64().unwrap();
    }
    for (class, us) in by_class {
        put(&format!("kernels.dur_us.{class}"), us);
    }
    let ops = &report["ops"];
    put("ops.rows", ops.as_array().unwrap().len() as f64);
    for (metric, key) in [("calls", "calls"), ("self_cpu_us", "self_cpu_us"), ("cpu_total_us", "cpu_total_us"), ("self_device_us", "self_device_us"), ("device_total_us", "device_total_us")] {
        put(&format!("ops.{metric}"), sum(ops, key));
    }
    let steps = report["steps"].as_array().unwrap();
    put("steps.rows", steps.len() as f64);
    put("steps.dur_us", sum(&report["steps"], "dur_us"));
    put("steps.kernel_us", steps.iter().map(|s| s["breakdown"]["kernel"].as_f64().unwrap()).sum());
    let mut bound: Vec<&str> =
        report["critical_path"]["steps"].as_array().unwrap().iter().filter(|p| !p["step"].is_null()).map(|p| p["bound_by"].as_str().unwrap()).collect();
    bound.sort_unstable();
    put("flows.rows", info["flows"]["linked"].as_f64().unwrap());
    put("counters.samples", info["phases"]["C"].as_f64().unwrap_or(0.0));
    let memory = &report["memory"];
    put("memory.allocations", sum(memory, "allocations"));
    put("memory.frees", sum(memory, "frees"));
    put("memory.peaks", sum(memory, "peak_allocated_bytes"));
    if !bound.is_empty() {
        m.insert("steps.bound_by".into(), Value::from(bound.join(",")));
    }
    m
}

fn same(want: &Value, got: Option<&Value>) -> bool {
    match (want, got) {
        (Value::String(w), Some(Value::String(g))) => w == g,
        (Value::String(_), _) => false,
        // A table with no row for this trace has no metric: zero.
        (w, g) => {
            let (w, g) = (w.as_f64().unwrap(), g.and_then(Value::as_f64).unwrap_or(0.0));
            (w - g).abs() <= 1e-6 * w.abs().max(1.0)
        }
    }
}

#[test]
fn parquet_tables_add_up_to_report_json_on_every_real_fixture() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let mut sink = Sink::create(dir, &trace::TABLES).unwrap();
    let mut want = BTreeMap::new();
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (engine, summary) = common::load_bytes(&name, common::json_bytes(&path));
        let info = serde_json::to_value(summary.unwrap()).unwrap();
        let session = engine.session().unwrap();
        sink.append_each(|table| trace::table(session, table)).unwrap();
        let report = TraceReport::build(session, ReportOptions::default()).json();
        want.insert(name, expected(&report, &info));
    }
    let rows = sink.finish().unwrap();
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), trace::TABLES);
    // The fixtures exercise every table: none is empty.
    assert!(rows.iter().all(|r| r.1 > 0), "{rows:?}");

    let got = python(DUCKDB, dir);
    // Every difference at once: one broken column shows as all the metrics it feeds.
    let mut differ = Vec::new();
    for (trace, metrics) in &want {
        for (metric, value) in metrics {
            let seen = got.get(trace).and_then(|m| m.get(metric));
            if !same(value, seen) {
                differ.push(format!("{trace}: {metric} is {seen:?} in Parquet, {value} in report --json / info --json"));
            }
        }
    }
    assert!(differ.is_empty(), "{} differences:\n{}", differ.len(), differ.join("\n"));
    println!("{} metrics of {} traces equal", want.values().map(BTreeMap::len).sum::<usize>(), want.len());
    let by_polars = python(POLARS, dir);
    for (trace, metrics) in &by_polars {
        for (metric, value) in metrics {
            assert!(same(value, want[trace].get(metric)), "polars: {trace}: {metric} {value}");
        }
    }
    assert_eq!(by_polars.len(), want.values().filter(|m| m["kernels.rows"].as_f64() > Some(0.0)).count());
}

/// Runs the CLI: exit code, stderr.
fn cli(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope")).args(args).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_cli_writes_every_table_or_says_what_is_missing() {
    let scratch = tempfile::tempdir().unwrap();
    let dlrm = common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json");
    let (dlrm, out) = (dlrm.to_str().unwrap(), scratch.path().join("out"));
    let (code, err) = cli(&["export", dlrm, "--format", "parquet", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // info --json: 2,460 slices in its lanes; report --json: 245 kernel calls.
    assert!(err.starts_with(&format!("wrote {}: slices 2460 rows, kernels 245 rows", out.display())), "{err}");
    for table in trace::TABLES {
        assert!(out.join(format!("{table}.parquet")).is_file(), "{table}");
    }
    let (code, err) = cli(&["run", dlrm, "--format", "parquet", scratch.path().join("run").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("steps 1 rows, collectives 0 rows, diagnostics 1 rows"), "{err}");
    // Without the output folder: a sentence, not a folder named after the trace.
    let (code, err) = cli(&["export", dlrm, "--format", "parquet"]);
    assert_eq!((code, err.trim()), (1, "kinetoscope: give the traces, then the output folder: export TRACE... --format parquet DIR"));
    let (code, err) = cli(&["run", dlrm, "--format", "parquet"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("run PATHS... --format parquet DIR"), "{err}");
}
