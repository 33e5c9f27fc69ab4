//! The DuckDB queries of docs/runs.md, run as written over `run --format ndjson` files
//! ("NDJSON") and over `run --format parquet` folders ("Parquet"), rebuild exactly the heatmap,
//! outliers, straggler table and diagnostics of `run --json` for the same inputs. Needs DuckDB's Python module in `<target>/venv`, which
//! scripts/setup installs; without it the test fails (a skipped test would leave the docs
//! unchecked).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::DLRM;
use kinetoscope::export::parquet::{run as parquet_run, Sink};
use kinetoscope::run::{self, ClockChoice, Diagnostic, Format};
use kinetoscope::synth::run::{write_dir, Delay, RunSpec};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs the docs' statements (split at `;` + newline, each led by a `-- name:` comment) with
/// their `out/` folder replaced by argv[1]; prints `{name: {columns, rows}}` for those
/// returning rows.
const RUNNER: &str = r#"
import json, re, sys
try:
    import duckdb
except ImportError as e:
    sys.exit(f"{e}: run scripts/setup (it installs duckdb into this venv)")
con = duckdb.connect()
out = {}
for stmt in sys.stdin.read().split(";\n"):
    stmt = stmt.strip()
    if not stmt:
        continue
    name = re.match(r"--\s*(\w+):", stmt).group(1)
    rel = con.sql(stmt.replace("'out/", "'" + sys.argv[1] + "/"))
    if rel is not None:
        out[name] = {"columns": rel.columns, "rows": rel.fetchall()}
print(json.dumps(out))
"#;

/// The venv's python: the test binary is `<target>/<profile>/deps/<name>`.
fn venv_python() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe
        .ancestors()
        .nth(3)
        .expect("target dir above the test binary");
    target.join("venv/bin/python")
}

/// The first ```sql block after the `heading` of docs/runs.md.
fn documented_sql(heading: &str) -> String {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/runs.md"))
            .unwrap();
    let section = &doc[doc.find(heading).expect("the section")..];
    let start = section.find("```sql\n").expect("sql block") + "```sql\n".len();
    let len = section[start..].find("```").expect("end of sql block");
    section[start..start + len].to_owned()
}

/// The queries documented under `heading`, over the files in `dir`, by name.
fn duckdb(dir: &Path, heading: &str) -> BTreeMap<String, Value> {
    let python = venv_python();
    let mut child = Command::new(&python)
        .args(["-c", RUNNER, &dir.to_string_lossy()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {python:?} ({e}): run scripts/setup (it installs duckdb there)")
        });
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), documented_sql(heading).as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the docs' DuckDB queries failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Rows of query `name` whose first column (`filename`, or the Parquet folder `job`) ends in
/// `file`, without that column.
fn rows_of(results: &BTreeMap<String, Value>, name: &str, file: &str) -> Vec<Vec<Value>> {
    results[name]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().clone())
        .filter(|r| r[0].as_str().unwrap().ends_with(file))
        .map(|r| r[1..].to_vec())
        .collect()
}

fn close(a: &Value, b: &Value) -> bool {
    (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-6
}

/// Every documented table of `file` equals the `--json` output `json` (an object or an array
/// of runs).
fn assert_rebuilt(results: &BTreeMap<String, Value>, file: &str, json: &Value) {
    let runs = json
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![json.clone()]);
    let columns = results["heatmap"]["columns"].as_array().unwrap();
    let mut cells = BTreeMap::new();
    for row in rows_of(results, "heatmap", file) {
        for (step, v) in columns[3..].iter().zip(&row[2..]) {
            if !v.is_null() {
                let step: u64 = step.as_str().unwrap().parse().unwrap();
                cells.insert(
                    (row[0].as_u64().unwrap(), row[1].as_u64().unwrap(), step),
                    v.as_f64().unwrap(),
                );
            }
        }
    }
    let mut want_cells = BTreeMap::new();
    let (mut outliers, mut stragglers, mut diags) = (Vec::new(), Vec::new(), Vec::new());
    for (i, run) in runs.iter().enumerate() {
        for s in run["steps"].as_array().unwrap() {
            let key = (
                i as u64,
                s["rank"].as_u64().unwrap(),
                s["step"].as_u64().unwrap(),
            );
            want_cells.insert(key, s["dur_us"].as_f64().unwrap());
            if s["outlier"] == true {
                outliers.push(vec![
                    i.into(),
                    s["rank"].clone(),
                    s["step"].clone(),
                    s["dur_us"].clone(),
                ]);
            }
        }
        for s in run["stragglers"].as_array().unwrap() {
            let keys = [
                "rank",
                "last_arrivals",
                "caused_wait_us",
                "waited_us",
                "delayed_count",
            ];
            stragglers.push([vec![i.into()], keys.map(|k| s[k].clone()).to_vec()].concat());
        }
        for d in run["diagnostics"].as_array().unwrap() {
            diags.push(vec![i.into(), d["kind"].clone(), d["message"].clone()]);
        }
    }
    assert_eq!(cells, want_cells, "{file}: heatmap");
    assert_eq!(
        rows_of(results, "outliers", file),
        outliers,
        "{file}: outliers"
    );
    let got = rows_of(results, "stragglers", file);
    assert_eq!(got.len(), stragglers.len(), "{file}: straggler rows");
    for (g, w) in got.iter().zip(&stragglers) {
        let same = g[..3] == w[..3] && close(&g[3], &w[3]) && close(&g[4], &w[4]) && g[5] == w[5];
        assert!(same, "{file}: straggler row {g:?}, --json says {w:?}");
    }
    let mut got = rows_of(results, "diagnostics", file);
    got.sort_by_key(|r| r.iter().map(ToString::to_string).collect::<Vec<_>>());
    diags.sort_by_key(|r| r.iter().map(ToString::to_string).collect::<Vec<_>>());
    assert_eq!(got, diags, "{file}: diagnostics");
}

/// Writes `runs` as `name.ndjson` into `out` and as the `parquet/name/` folder beside it
/// (what `run --format parquet` writes); returns their `--json` form.
fn write_all(out: &Path, name: &str, runs: &[run::RunAnalysis]) -> Value {
    std::fs::write(out.join(format!("{name}.ndjson")), run::render(runs, Format::Ndjson)).unwrap();
    let folder = out.with_file_name("parquet").join(name);
    let mut sink = Sink::create(&folder, &parquet_run::TABLES).unwrap();
    sink.append(&parquet_run::tables(runs)).unwrap();
    sink.finish().unwrap();
    serde_json::from_str(&run::render(runs, Format::Json)).unwrap()
}

/// Inputs: 8 synthetic ranks with a straggler, rank 2 missing, rank 3 twice and an unreadable
/// file, plus 4 ranks of another world size, one 1.5x slower (outliers): two runs in one
/// output; and the four real dlrm ranks through the CLI's entry.
#[test]
fn docs_duckdb_queries_rebuild_the_run_tables() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().to_path_buf();
    let (w8, w4, out) = (dir.join("w8"), dir.join("w4"), dir.join("out"));
    let slow = Delay {
        rank: 5,
        step: 2,
        collective: 1,
        extra_ns: 5_000_000,
    };
    write_dir(
        &RunSpec {
            delays: vec![slow],
            ..RunSpec::default()
        },
        &w8,
    )
    .unwrap();
    std::fs::remove_file(w8.join("rank-2.json")).unwrap();
    std::fs::copy(w8.join("rank-3.json"), w8.join("rank-3-again.json")).unwrap();
    std::fs::write(w8.join("rank-9.json"), "not a trace").unwrap();
    write_dir(
        &RunSpec {
            ranks: 4,
            world_size: 4,
            ..RunSpec::default()
        },
        &w4,
    )
    .unwrap();
    std::fs::create_dir_all(&out).unwrap();

    let (mut summaries, mut shared) = (Vec::new(), Vec::new());
    for r in run::load::summarize_files(&[w8, w4], 2).unwrap() {
        match r {
            Ok(s) => summaries.push(s),
            Err(e) => shared.push(Diagnostic::new("run_file_error", e.to_string())),
        }
    }
    for s in &mut summaries {
        if (s.identity.world_size, s.identity.rank) == (Some(4), Some(2)) {
            s.steps
                .iter_mut()
                .for_each(|st| st.dur_ns = st.dur_ns * 3 / 2);
        }
    }
    let runs = run::analyze(summaries, &shared, ClockChoice::Auto);
    let mixed = write_all(&out, "mixed", &runs);
    let dlrm_paths: Vec<PathBuf> = DLRM.iter().map(|n| common::real(n)).collect();
    let dlrm = write_all(&out, "dlrm", &run::load::analyze_files(&dlrm_paths, 2).unwrap());

    let results = duckdb(&out, "## NDJSON");
    // The inputs hold what the queries must carry: two runs, outliers, each diagnostic kind.
    // Runs come ordered by world size: the 4 ranks first.
    let (r4, r8) = (&mixed[0], &mixed[1]);
    assert_eq!(
        (r4["world_size"].as_u64(), r8["world_size"].as_u64()),
        (Some(4), Some(8))
    );
    let kinds: Vec<&str> = r8["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["run_file_error", "run_duplicate_rank", "run_missing_ranks"]
    );
    assert!(r4["steps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["outlier"] == true));
    assert_eq!(r8["stragglers"][0]["rank"], 5);
    assert_rebuilt(&results, "mixed.ndjson", &mixed);
    assert_rebuilt(&results, "dlrm.ndjson", &dlrm);

    // The Parquet recipe over the same runs' folders.
    let results = duckdb(&dir.join("parquet"), "## Parquet");
    assert_rebuilt(&results, "/mixed", &mixed);
    assert_rebuilt(&results, "/dlrm", &dlrm);
}
