//! The `kinetoscope` binary: info and report outputs, exit codes, 120-column text.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    run_bin(env!("CARGO_BIN_EXE_kinetoscope"), args)
}

/// The generators' CLI (feature `synth`, which the tests enable).
fn synth(args: &[&str]) -> (i32, String, String) {
    run_bin(env!("CARGO_BIN_EXE_kinetoscope-synth"), args)
}

fn run_bin(exe: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(exe).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn info_json_matches_the_engine_summary() {
    let path = common::real("gpumodel__trace.json");
    let (code, out, _) = run(&["info", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    let printed: protocol::TraceSummary = serde_json::from_str(&out).unwrap();
    let (_, mut engine) = common::load(&path);
    engine.parse_ms = printed.parse_ms;
    engine.file_name = printed.file_name.clone();
    assert_eq!(printed, engine);
}

#[test]
fn unreadable_input_exits_non_zero_with_one_line() {
    let (code, out, err) = run(&["info", "/nonexistent/trace.json"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, _) = run(&["frobnicate"]);
    assert_eq!(code, 2);
}

#[test]
fn report_text_keeps_names_to_55_characters_and_json_has_the_stable_keys() {
    let path = common::shared().join("fixtures/torch-cpu/mlp_train.pt.trace.json");
    let path = path.to_str().unwrap();
    for extra in [&[][..], &["--by-shape"][..], &["--step", "3"][..], &["--sort", "calls", "--top", "5"][..], &["--by-shape", "--sort", "self_cpu_mem"][..]] {
        let mut args = vec!["report", path];
        args.extend_from_slice(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{extra:?}: {err}");
        assert!(out.contains("Self CPU time total:"), "{extra:?}");
        // Sections fit 120 columns; op and kernel tables are as wide as their names need.
        let widest = kinetoscope::report::NAME_WIDTH + 100;
        assert!(out.lines().all(|l| l.chars().count() <= widest), "{extra:?}:\n{out}");
        assert!(out.contains("==== Steps") || out.contains("Step "), "{extra:?}: steps section");
    }
    let (code, out, _) = run(&["report", path, "--json"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ops = doc["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 58, "PyTorch's by-name table of mlp_train has 58 rows");
    for key in ["name", "input_shapes", "calls", "self_cpu_us", "cpu_total_us", "self_device_us", "device_total_us"] {
        assert!(ops[0].get(key).is_some(), "{key}");
    }
    for key in ["kernels", "steps", "step_stats", "gpus", "memory", "idle", "launch", "findings"] {
        assert!(doc.get(key).is_some(), "report --json has {key}");
    }
    assert_eq!(doc["steps"].as_array().unwrap().len(), 4, "mlp_train has 4 active steps");
    let (code, _, err) = run(&["report", path, "--step", "999"]);
    assert_eq!(code, 1);
    assert!(err.contains("no ProfilerStep#999"), "{err}");
}

/// `report --sort self_cpu_mem` / `cpu_mem`: the memory columns are `key_averages()`'s own
/// (mlp_train's truth), in text and JSON, and order the table.
#[test]
fn report_sorts_by_the_memory_columns() {
    let dir = common::shared().join("fixtures/torch-cpu");
    let path = dir.join("mlp_train.pt.trace.json");
    let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("mlp_train.truth.json")).unwrap()).unwrap();
    let want = |name: &str, key: &str| {
        let rows = truth["key_averages"].as_array().unwrap();
        rows.iter().find(|r| r["key"] == name && r["is_user_annotation"] == false).unwrap()[key].as_i64().unwrap()
    };
    for (sort, key, truth_key) in [("self_cpu_mem", "self_cpu_mem_bytes", "self_cpu_memory_usage"), ("cpu_mem", "cpu_mem_bytes", "cpu_memory_usage")] {
        let (code, out, err) = run(&["report", path.to_str().unwrap(), "--json", "--sort", sort]);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let ops = doc["ops"].as_array().unwrap();
        let values: Vec<i64> = ops.iter().map(|o| o[key].as_i64().unwrap()).collect();
        assert!(values.windows(2).all(|w| w[0] >= w[1]), "{sort}: {values:?}");
        let top = ops[0]["name"].as_str().unwrap();
        assert_eq!(values[0], want(top, truth_key), "{sort}: {top}");
        assert!(values[0] > 0, "{sort}: {values:?}");
    }
    let (code, out, _) = run(&["report", path.to_str().unwrap(), "--sort", "self_cpu_mem", "--top", "3"]);
    assert_eq!(code, 0);
    assert!(out.contains("ops by self_cpu_mem") && out.contains("Self CPU Mem"), "{out}");
    let (code, _, err) = run(&["report", path.to_str().unwrap(), "--sort", "mem"]);
    assert_eq!(code, 2);
    assert!(err.contains("self_cuda_mem"), "{err}");
}

/// `report --memory` on PyTorch's leaking run: each step's peak by category, the live
/// allocations at the highest peak (equal to `--json`'s `memory[].peak_live`), the leak.
#[test]
fn report_memory_shows_what_holds_the_peak() {
    let path = common::shared().join("fixtures/torch-cpu-memory/transformer_leak.pt.trace.json");
    let path = path.to_str().unwrap();
    let (code, out, err) = run(&["report", path, "--memory", "--top", "3"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Memory by category"), "{out}");
    assert!(out.contains("Leak: allocated at step start grows 337.41 KB per step"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 120), "{out}");
    let (_, json, _) = run(&["report", path, "--json", "--top", "3"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let cpu = &doc["memory"][0];
    assert_eq!(cpu["steps"].as_array().unwrap().len(), 6);
    assert_eq!(cpu["leak"]["growth_bytes"], serde_json::json!([337_408, 337_408, 337_408, 337_408, 337_408]));
    assert_eq!(cpu["categories"]["activation"], 2_024_448, "PyTorch's own ACTIVATION at the run's peak");
    let live = cpu["peak_live"].as_array().unwrap();
    assert_eq!(live.len(), 3);
    let text_block = out.split("Live at the highest peak").nth(1).unwrap();
    for l in live {
        let size = kinetoscope::report::memory::bytes(l["bytes"].as_i64().unwrap());
        assert!(text_block.contains(&size) && text_block.contains(l["category"].as_str().unwrap()), "{l}");
    }
}

/// `--batch-size` / `--tokens-per-step`: the run's rate is the complete steps' work over their
/// summed spans (the `steps[].dur_us` the step tests check against the trace), each step's its
/// work over its span; the text says the same rounded; 0 is a usage error.
#[test]
fn report_throughput_from_the_batch_and_tokens_given() {
    let path = common::shared().join("fixtures/real/kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let path = path.to_str().unwrap();
    let (code, json, err) = run(&["report", path, "--json", "--batch-size", "32", "--tokens-per-step", "8192"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let t = &doc["throughput"];
    let complete: Vec<f64> =
        doc["steps"].as_array().unwrap().iter().filter(|s| s["incomplete"] == false).map(|s| s["dur_us"].as_f64().unwrap()).collect();
    assert_eq!(complete.len(), 6);
    assert_eq!(t["complete_steps"], 6);
    let secs: f64 = complete.iter().sum::<f64>() / 1e6;
    assert!((t["samples_per_s"].as_f64().unwrap() - 32.0 * 6.0 / secs).abs() < 1e-9, "{t}");
    assert!((t["tokens_per_s"].as_f64().unwrap() - 8192.0 * 6.0 / secs).abs() < 1e-6, "{t}");
    for (row, dur) in t["steps"].as_array().unwrap().iter().zip(&complete) {
        assert!((row["samples_per_s"].as_f64().unwrap() - 32.0 / (dur / 1e6)).abs() < 1e-9, "{row}");
    }
    let samples = t["samples_per_s"].as_f64().unwrap();
    let (_, text, _) = run(&["report", path, "--batch-size", "32"]);
    assert!(text.contains(&format!("Throughput (batch size 32)\n  over 6 complete steps: {samples:.0} samples/s\n")), "{text}");
    assert!(!text.contains("tokens/s"), "no tokens figure given, none shown");
    let (_, plain, _) = run(&["report", path, "--json"]);
    assert!(serde_json::from_str::<serde_json::Value>(&plain).unwrap().get("throughput").is_none(), "only when asked");
    let (code, _, err) = run(&["report", path, "--batch-size", "0"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn version_help_per_command_and_completions() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!((code, out.trim()), (0, concat!("kinetoscope ", env!("CARGO_PKG_VERSION"))));
    for command in ["info", "report", "diff", "run", "bench", "serve", "publish", "export", "completions"] {
        let (code, out, _) = run(&[command, "--help"]);
        assert_eq!(code, 0, "{command}");
        assert!(out.contains("Usage: kinetoscope"), "{command}: {out}");
    }
    // The generators are not in the shipped CLI, only in kinetoscope-synth.
    for command in ["demo", "demo-run", "inflate"] {
        assert_eq!(run(&[command, "--help"]).0, 2, "kinetoscope {command}");
        let (code, out, _) = synth(&[command, "--help"]);
        assert_eq!(code, 0, "{command}");
        assert!(out.contains("Usage: kinetoscope-synth"), "{command}: {out}");
    }
    let (_, out, _) = run(&["report", "--help"]);
    for flag in ["--step", "--range", "--by-shape", "--sort", "--top", "--json"] {
        assert!(out.contains(flag), "report --help lists {flag}");
    }
    let (code, out, _) = run(&["completions", "bash"]);
    assert_eq!(code, 0);
    assert!(out.contains("_kinetoscope()") && out.contains("--by-shape"), "bash completion script");
}

/// `kinetoscope run` over the four dlrm ranks: one run of world size 8, ranks 4-7 missing, each
/// rank's steps and GPU utilization equal to that rank's own `report --json`; NDJSON has a row
/// per rank x step.
#[test]
fn run_opens_the_dlrm_ranks_as_one_run() {
    let files: Vec<String> = common::real_fixtures()
        .iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("param__dlrm"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 4);
    let mut args = vec!["run", "--json"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["world_size"], 8);
    let ranks = doc["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    assert!(doc["diagnostics"].to_string().contains("4-7"), "{}", doc["diagnostics"]);
    for (rank, file) in ranks.iter().zip(&files) {
        let (_, report, _) = run(&["report", "--json", file]);
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        let util = report["gpus"][0]["utilization_pct"].as_f64().unwrap();
        assert!((rank["gpu_utilization_pct"].as_f64().unwrap() - util).abs() < 1e-9, "{rank}");
        let steps = report["steps"].as_array().unwrap();
        assert_eq!(rank["steps"].as_u64().unwrap() as usize, steps.len(), "{rank}");
    }
    let mut args = vec!["run", "--format", "ndjson"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, _) = run(&args);
    assert_eq!(code, 0);
    let rows: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.iter().filter(|r| r["kind"] == "step").count(), 4, "one step per dlrm rank");
    let (code, _, err) = run(&["run", "--format", "yaml", &files[0]]);
    assert_eq!(code, 2, "{err}");
}

/// `kinetoscope-synth demo-run` writes a run whose designed straggler `run` finds.
#[test]
fn demo_run_writes_ranks_whose_straggler_run_names() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().to_path_buf();
    let d = dir.to_str().unwrap();
    let (code, _, err) = synth(&["demo-run", d, "--ranks", "4", "--straggler", "2"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["run", "--json", d]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["world_size"], 4);
    assert_eq!(doc["stragglers"][0]["rank"], 2, "{}", doc["stragglers"]);
}

#[test]
fn report_names_are_whole_up_to_the_name_width_and_cut_at_it() {
    let path = common::real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let path = path.to_str().unwrap();
    let (_, out, _) = run(&["report", path, "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let long = "aten::cudnn_convolution_backward_weight";
    assert!(doc["ops"].as_array().unwrap().iter().any(|o| o["name"] == long));
    let (code, text, err) = run(&["report", path, "--sort", "self_cuda", "--top", "10"]);
    assert_eq!(code, 0, "{err}");
    assert!(text.lines().any(|l| l.starts_with(&format!("{long} "))), "{long} whole at the default width:\n{text}");
    let (_, narrow, _) = run(&["report", path, "--sort", "self_cuda", "--top", "10", "--name-width", "20"]);
    assert!(narrow.lines().any(|l| l.starts_with("aten::cudnn_convo... ")), "cut at 20 with ...:\n{narrow}");
    assert!(!narrow.lines().any(|l| l.starts_with(long)), "no row keeps the whole name");
}

#[test]
fn nonsense_values_are_usage_errors() {
    let path = common::real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let path = path.to_str().unwrap();
    for (args, says) in [
        (&["--range", "8000:5000"][..], "must be after T0"),
        (&["--range", "5000:5000"][..], "must be after T0"),
        (&["--range=-10:5000"][..], "starts at 0"),
        (&["--range", "1:nan"][..], "T0:T1"),
        (&["--top", "0"][..], "at least 1"),
        (&["--name-width", "3"][..], "too narrow"),
        (&["--step", "6", "--range", "1:2"][..], "cannot be used with"),
    ] {
        let mut all = vec!["report", path];
        all.extend_from_slice(args);
        let (code, out, err) = run(&all);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
        assert!(err.starts_with("error: ") && err.contains(says), "{args:?}: {err}");
    }
    let (code, _, err) = run(&["diff", path, path, "--top", "0"]);
    assert_eq!(code, 2, "{err}");
    // A window past the end (the trace spans 1086.6 ms) is refused with the span, not printed empty.
    let (code, out, err) = run(&["report", path, "--range", "2000000:2000100"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("starts after the trace ends (it spans 0:1086638 µs)"), "{err}");
}

#[test]
fn info_columns_line_up() {
    let path = common::real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let (_, out, _) = run(&["info", path.to_str().unwrap()]);
    for block in ["phases:", "categories:"] {
        let rows: Vec<&str> = out.lines().skip_while(|l| *l != block).skip(1).take_while(|l| !l.is_empty()).collect();
        assert!(rows.len() > 2, "{block}\n{out}");
        let ends: std::collections::BTreeSet<usize> = rows.iter().map(|l| l.chars().count()).collect();
        assert_eq!(ends.len(), 1, "{block} counts end in one column:\n{}", rows.join("\n"));
    }
}

/// `raw`'s complete events on the host (`cpu_op`, `user_annotation`) recounted by name from the
/// JSON itself, as `key_averages()` groups them (`ProfilerStep#N` all count as `ProfilerStep*`):
/// name -> (calls, summed duration in µs).
fn host_ops_by_name(raw: &serde_json::Value) -> std::collections::HashMap<String, (u64, f64)> {
    let mut ops = std::collections::HashMap::new();
    for e in raw["traceEvents"].as_array().unwrap() {
        let cat = e["cat"].as_str().unwrap_or("");
        if e["ph"] != "X" || !(cat == "cpu_op" || cat == "user_annotation") {
            continue;
        }
        let name = e["name"].as_str().unwrap();
        let name = if name.starts_with("ProfilerStep#") {
            "ProfilerStep*"
        } else {
            name
        };
        let entry = ops.entry(name.to_owned()).or_insert((0, 0.0));
        entry.0 += 1;
        entry.1 += e["dur"].as_f64().unwrap();
    }
    ops
}

/// The rows of the text report's first op table, in printed order: (name as printed, the
/// whitespace-separated cells after it).
fn printed_op_rows(text: &str) -> Vec<(String, Vec<String>)> {
    let mut rules = 0;
    let mut rows = Vec::new();
    for line in text.lines().skip_while(|l| !l.starts_with("==== ops")).skip(1) {
        if line.starts_with("----") {
            rules += 1;
            if rules == 3 {
                break;
            }
        } else if rules == 2 {
            let name = line.split("  ").next().unwrap().trim().to_owned();
            let cells = line[name.len()..].split_whitespace().map(str::to_owned).collect();
            rows.push((name, cells));
        }
    }
    rows
}

/// A printed time (`7.580ms`, `286.506us`, `1.2s`) in µs.
fn printed_us(cell: &str) -> f64 {
    let (number, scale) = if let Some(v) = cell.strip_suffix("ms") {
        (v, 1e3)
    } else if let Some(v) = cell.strip_suffix("us") {
        (v, 1.0)
    } else {
        (cell.strip_suffix('s').unwrap(), 1e6)
    };
    number.parse::<f64>().unwrap() * scale
}

/// `report --sort KEY --top K` prints the K ops with the largest KEY, largest first, and
/// `--json` lists every op in that order; the keys are recounted from the trace JSON (calls and
/// summed durations per name), not taken from the engine. Names are cut to `prefix...` in the
/// text, so each printed row must match a recounted name with that prefix and its value.
#[test]
fn report_sort_and_top_order_ops_by_a_recount_of_the_json() {
    let path = common::shared().join("fixtures/torch-cpu/mlp_train.pt.trace.json");
    let raw: serde_json::Value = serde_json::from_slice(&common::json_bytes(&path)).unwrap();
    let recount = host_ops_by_name(&raw);
    let path = path.to_str().unwrap();
    // (key, its value in the recount, its cell counted from the row's right end, 3-decimal µs).
    type Key = fn(&(u64, f64)) -> f64;
    // mlp_train allocates: each row ends with CPU Mem and Self CPU Mem (a number and a unit
    // each), and the derived columns (CPU avg, Self CUDA%, CUDA avg) made room for them.
    let keys: [(&str, Key, usize); 2] = [("calls", |v| v.0 as f64, 5), ("cpu_total", |v| v.1, 8)];
    for (key, value, from_right) in keys {
        let mut all: Vec<f64> = recount.values().map(value).collect();
        all.sort_by(|a, b| b.total_cmp(a));
        for top in [1usize, 5, 12] {
            let (code, out, err) = run(&["report", path, "--sort", key, "--top", &top.to_string()]);
            assert_eq!(code, 0, "{err}");
            let rows = printed_op_rows(&out);
            assert_eq!(rows.len(), top, "--sort {key} --top {top}:\n{out}");
            for (k, (name, cells)) in rows.iter().enumerate() {
                let cell = &cells[cells.len() - from_right];
                let shown = if key == "calls" { cell.parse().unwrap() } else { printed_us(cell) };
                // The k-th printed value is the k-th largest of the recount.
                // Half the last printed digit: 3 decimals of µs, ms or s.
                let half = if all[k] >= 1e6 { 500.0 } else if all[k] >= 1e3 { 0.5 } else { 5e-4 };
                assert!((shown - all[k]).abs() <= half + 1e-6, "--sort {key} row {k} {name}: {shown} vs {}", all[k]);
                let prefix = name.strip_suffix("...").unwrap_or(name);
                let exact = name.ends_with("...");
                let known = recount.iter().any(|(n, v)| {
                    (if exact { n.starts_with(prefix) } else { n == prefix }) && (value(v) - all[k]).abs() < 1e-6
                });
                assert!(known, "--sort {key}: {name} is an op with value {}", all[k]);
            }
        }
        let (code, out, _) = run(&["report", path, "--json", "--sort", key]);
        assert_eq!(code, 0);
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let ops = doc["ops"].as_array().unwrap();
        assert_eq!(ops.len(), recount.len(), "one row per recounted name");
        let listed: Vec<f64> = ops.iter().map(|o| value(&recount[o["name"].as_str().unwrap()])).collect();
        assert_eq!(listed, all, "--json --sort {key} is in recount order");
        for o in ops {
            let (calls, dur) = recount[o["name"].as_str().unwrap()];
            assert_eq!(o["calls"].as_u64().unwrap(), calls, "{o}");
            assert!((o["cpu_total_us"].as_f64().unwrap() - dur).abs() < 1e-3, "{o}");
        }
    }
}

/// `bench` prints one `parse_index` JSON line per run with the file's own event count and size,
/// then a `first_view` line; `--threads 2` parses the same events.
#[test]
fn bench_prints_a_line_per_run_with_the_files_events() {
    let path = common::shared().join("fixtures/torch-cpu/mlp_train.pt.trace.json");
    let raw: serde_json::Value = serde_json::from_slice(&common::json_bytes(&path)).unwrap();
    let events = raw["traceEvents"].as_array().unwrap().len() as u64;
    let bytes = std::fs::metadata(&path).unwrap().len();
    for threads in ["1", "2"] {
        let (code, out, err) = run(&[
            "bench",
            path.to_str().unwrap(),
            "--runs",
            "2",
            "--threads",
            threads,
        ]);
        assert_eq!(code, 0, "{err}");
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let runs: Vec<&serde_json::Value> = lines
            .iter()
            .filter(|l| l["bench"] == "parse_index")
            .collect();
        assert_eq!(runs.len(), 2, "{out}");
        for (i, r) in runs.iter().enumerate() {
            assert_eq!(r["run"], i as u64);
            assert_eq!(r["events"], events, "{r}");
            assert_eq!(r["file_bytes"], bytes, "{r}");
            assert_eq!(r["threads"].to_string(), threads);
            assert!(
                r["seconds"].as_f64().unwrap() > 0.0 && r["mb_per_s"].as_f64().unwrap() > 0.0,
                "{r}"
            );
        }
        let first_view = lines
            .iter()
            .find(|l| l["bench"] == "first_view")
            .expect("a first_view line");
        assert!(first_view["rects"].as_u64().unwrap() > 0, "{first_view}");
    }
    let (code, out, err) = run(&["bench", path.to_str().unwrap(), "--runs", "1", "--python", "python3"]);
    assert_eq!(code, 0, "{err}");
    let anchor: serde_json::Value = out.lines().map(|l| serde_json::from_str(l).unwrap()).find(|l: &serde_json::Value| l["bench"] == "python_json_load").expect("a python_json_load line");
    let (python, stream) = (anchor["seconds"].as_f64().unwrap(), anchor["stream_seconds"].as_f64().unwrap());
    assert!(python > 0.0 && stream > 0.0, "{anchor}");
    assert!((anchor["ratio"].as_f64().unwrap() - python / stream).abs() < 1e-9, "{anchor}");
}

/// `kinetoscope-synth demo OUT` writes exactly the committed demo trace, and `inflate` repeats a trace: every
/// event but the metadata once per copy, step numbers unique, the report's steps multiplied.
#[test]
fn demo_writes_the_committed_trace_and_inflate_repeats_one() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    let demo = dir.join("demo.pt.trace.json.gz");
    let (code, _, err) = synth(&["demo", demo.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let committed =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../public/demo.pt.trace.json.gz");
    assert!(
        std::fs::read(&demo).unwrap() == std::fs::read(committed).unwrap(),
        "demo writes public/demo.pt.trace.json.gz"
    );

    let input = common::shared().join("fixtures/torch-cpu/mlp_train.pt.trace.json");
    let out = dir.join("inflated.json");
    let (code, _, err) = synth(&[
        "inflate",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "--target-mb",
        "2",
    ]);
    let inflated = std::fs::read(&out);
    let (_, report, _) = run(&["report", out.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let inflated = inflated.unwrap();
    let size = inflated.len() as f64 / 1e6;
    assert!((1.5..3.0).contains(&size), "about 2 MB, got {size} MB");
    let events = |doc: &serde_json::Value| doc["traceEvents"].as_array().unwrap().clone();
    let source: serde_json::Value = serde_json::from_slice(&common::json_bytes(&input)).unwrap();
    let copy: serde_json::Value = serde_json::from_slice(&inflated).unwrap();
    let (src, big) = (events(&source), events(&copy));
    let metadata = src.iter().filter(|e| e["ph"] == "M").count();
    let copies = (big.len() - metadata) / (src.len() - metadata);
    assert!(copies >= 2, "{copies} copies");
    assert_eq!(
        big.len(),
        metadata + copies * (src.len() - metadata),
        "whole copies, metadata once"
    );
    let steps: Vec<&str> = big
        .iter()
        .filter_map(|e| {
            e["name"]
                .as_str()
                .filter(|n| n.starts_with("ProfilerStep#"))
        })
        .collect();
    let unique: std::collections::HashSet<&&str> = steps.iter().collect();
    assert_eq!(unique.len(), steps.len(), "step numbers unique");
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(
        report["steps"].as_array().unwrap().len(),
        copies * 4,
        "mlp_train's 4 steps per copy"
    );
}

/// A JSON file of 40 MB is read in parts on two threads (where two cores are) and gives the
/// summary a sequential streamed load of the same bytes gives.
#[test]
fn a_large_file_is_read_on_every_core_into_the_sequential_summary() {
    let scratch = tempfile::tempdir().unwrap();
    let big = scratch.path().join("big.json");
    let input = common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json");
    let (code, _, err) = synth(&["inflate", input.to_str().unwrap(), big.to_str().unwrap(), "--target-mb", "40"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["info", "--json", big.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let printed: protocol::TraceSummary = serde_json::from_str(&out).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(printed.parse_workers as usize, cores.min(2));
    let (_, sequential) = common::load_bytes("big.json", std::fs::read(&big).unwrap());
    let mut sequential = sequential.unwrap();
    sequential.parse_ms = printed.parse_ms;
    sequential.parse_workers = printed.parse_workers;
    assert_eq!(printed, sequential);
}

#[test]
fn report_modules_prints_the_tree_and_its_json() {
    let path = common::real("tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz");
    let p = path.to_str().unwrap();
    let (code, out, err) = run(&["report", p, "--modules", "--depth", "1", "--top", "1"]);
    assert_eq!(code, 0, "{err}");
    let section: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("==== Modules")).skip(2).take_while(|l| !l.starts_with("Backward")).collect();
    let names: Vec<&str> = section.iter().map(|l| l.split("  ").find(|w| !w.is_empty()).unwrap_or("").trim_start()).collect();
    assert_eq!(names, ["BertLMHeadModel_0", "BertModel_0", "BertOnlyMLMHead_0"], "depth 1, call order:\n{out}");
    assert!(section[1].starts_with("  BertModel_0 "), "indented by depth:\n{out}");
    assert!(section[0].contains("4.217ms") && section[0].contains("144.928us"), "host and device total:\n{out}");
    assert!(out.contains("Backward device time: not told (the trace has no fwdbwd flows"), "{out}");
    // --sort orders siblings: BertLayer_0 has the most host time of the four layers.
    let (_, sorted, _) = run(&["report", p, "--modules", "--sort", "cpu_total", "--depth", "3"]);
    let layers: Vec<&str> = sorted.lines().filter_map(|l| l.trim_start().strip_prefix("BertLayer_")).map(|l| &l[..1]).collect();
    assert_eq!(layers, ["0", "2", "3", "1"], "{sorted}");
    let (code, _, err) = run(&["report", p, "--depth", "2"]);
    assert!(code == 2 && err.contains("--modules"), "--depth needs --modules: {err}");
    let (_, json, _) = run(&["report", p, "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let nodes = doc["modules"]["nodes"].as_array().unwrap();
    assert_eq!((nodes.len(), &doc["modules"]["backward_tied"]), (84, &serde_json::json!(false)));
    assert_eq!(nodes[1]["path"], "BertLMHeadModel_0/BertModel_0");
    assert_eq!((&nodes[1]["host_us"], &nodes[1]["backward_device_us"]), (&serde_json::json!(3910.787), &serde_json::Value::Null));
}
