//! The `kinetoscope` binary: info and report outputs, exit codes, 120-column text.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope")).args(args).output().unwrap();
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
    for extra in [&[][..], &["--by-shape"][..], &["--step", "3"][..], &["--sort", "calls", "--top", "5"][..]] {
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

#[test]
fn version_help_per_command_and_completions() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!((code, out.trim()), (0, concat!("kinetoscope ", env!("CARGO_PKG_VERSION"))));
    for command in ["info", "report", "diff", "run", "bench", "demo", "demo-run", "inflate", "completions"] {
        let (code, out, _) = run(&[command, "--help"]);
        assert_eq!(code, 0, "{command}");
        assert!(out.contains("Usage: kinetoscope"), "{command}: {out}");
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

/// `demo-run` writes a run whose designed straggler `run` finds.
#[test]
fn demo_run_writes_ranks_whose_straggler_run_names() {
    let dir = std::env::temp_dir().join(format!("ks_demo_run_{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (code, _, err) = run(&["demo-run", d, "--ranks", "4", "--straggler", "2"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["run", "--json", d]);
    let _ = std::fs::remove_dir_all(&dir);
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
