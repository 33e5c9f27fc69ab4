//! The `--json` contract (docs/schema/): every output carries `schema` / `schema_version` first
//! and validates against its JSON Schema, on every real fixture (info, report), a diff of two
//! real traces and a run of the four dlrm ranks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::report::diff::{DiffOptions, DiffReport};
use kinetoscope::report::schema::{to_json, Schema};
use kinetoscope::report::trace::{ReportOptions, TraceReport};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const DLRM0: &str = "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json";
const DLRM1: &str = "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json";

fn validator(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema").join(name);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::draft202012::meta::validate(&schema).unwrap_or_else(|e| panic!("{name} is not a draft 2020-12 schema: {e}"));
    jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Parses `text` and asserts it validates and opens with the contract keys.
fn check(v: &jsonschema::Validator, schema: Schema, what: &str, text: &str) -> Value {
    let first: Vec<&str> = text.lines().skip(1).take(2).map(str::trim).collect();
    assert_eq!(first, [format!("\"schema\": \"{}\",", schema.id()), format!("\"schema_version\": {},", schema.version())], "{what}");
    let doc: Value = serde_json::from_str(text).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).take(5).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} does not match its schema:\n{}", errors.join("\n"));
    doc
}

fn cli(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope")).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn report_options() -> ReportOptions {
    ReportOptions::default()
}

#[test]
fn info_and_report_of_every_real_fixture_match_their_schemas() {
    let (info, report) = (validator("info.schema.json"), validator("report.schema.json"));
    for path in common::real_fixtures() {
        let what = path.file_name().unwrap().to_string_lossy().into_owned();
        let (engine, summary) = common::load(&path);
        check(&info, Schema::Info, &what, &to_json(Schema::Info, &summary).unwrap());
        let session = engine.session().unwrap();
        let body = TraceReport::build(session, report_options()).json();
        check(&report, Schema::Report, &what, &to_json(Schema::Report, &body).unwrap());
    }
}

#[test]
fn the_cli_prints_the_stamped_documents() {
    let p = common::real(DLRM0);
    let p = p.to_str().unwrap();
    check(&validator("info.schema.json"), Schema::Info, "info", &cli(&["info", p, "--json"]));
    let report = validator("report.schema.json");
    check(&report, Schema::Report, "report", &cli(&["report", p, "--json"]));
    let doc = check(&report, Schema::Report, "report --range", &cli(&["report", p, "--format", "json", "--range", "0:5000", "--by-shape"]));
    assert_eq!(doc["range_us"], serde_json::json!([0.0, 5000.0]));
    let mlp = common::shared().join("fixtures/torch-cpu/mlp_train.pt.trace.json");
    let args = ["report", mlp.to_str().unwrap(), "--json", "--explain-step", "slowest"];
    let doc = check(&report, Schema::Report, "report --explain-step", &cli(&args));
    assert!(doc["explanation"].is_object(), "--explain-step adds the explanation");
    let q = common::real(DLRM1);
    check(&validator("diff.schema.json"), Schema::Diff, "diff", &cli(&["diff", p, q.to_str().unwrap(), "--json"]));
    let doc = check(&validator("diff.schema.json"), Schema::Diff, "diff --tree", &cli(&["diff", p, q.to_str().unwrap(), "--json", "--tree"]));
    assert!(doc["call_tree_diff"]["root"]["children"].as_array().is_some_and(|c| !c.is_empty()), "--tree adds the merged tree");
}

#[test]
fn a_diff_of_two_real_traces_matches_its_schema() {
    let v = validator("diff.schema.json");
    let pairs = [(DLRM0, DLRM1), (DLRM0, "kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz"), ("gpumodel__trace.json", "catapult__simple_trace.json")];
    for (a, b) in pairs {
        let (ea, _) = common::load(&common::real(a));
        let (eb, _) = common::load(&common::real(b));
        let (sa, sb) = (ea.session().unwrap(), eb.session().unwrap());
        for by_shape in [false, true] {
            let body = DiffReport::build(sa, sb, DiffOptions { by_shape, top: 20, ..DiffOptions::default() }).json();
            check(&v, Schema::Diff, &format!("{a} vs {b}"), &to_json(Schema::Diff, &body).unwrap());
        }
    }
}

#[test]
fn a_run_of_the_four_dlrm_ranks_matches_its_schema() {
    let dir = common::shared().join("fixtures/real");
    let ranks: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("param__dlrm_kineto__worker"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    assert_eq!(ranks.len(), 4);
    let mut args = vec!["run", "--json"];
    args.extend(ranks.iter().map(String::as_str));
    let doc = check(&validator("run.schema.json"), Schema::Run, "run", &cli(&args));
    assert_eq!(doc["ranks"].as_array().unwrap().len(), 4);
}

/// The Triton fixture's kernel row carries its source, and the source object is part of the
/// contract (a renamed key inside it is rejected).
#[test]
fn report_kernel_rows_carry_their_triton_source() {
    let v = validator("report.schema.json");
    let (engine, _) = common::load(&common::real("hta__triton_example.json.gz"));
    let body = TraceReport::build(engine.session().unwrap(), report_options()).json();
    let mut doc = check(&v, Schema::Report, "triton", &to_json(Schema::Report, &body).unwrap());
    let row = doc["kernels"].as_array_mut().unwrap().iter_mut().find(|r| r["name"] == "triton_poi_fused_add_cos_sin_0").unwrap();
    assert!(row["source"]["file"].as_str().unwrap().ends_with("cqaokwf2bph4egogzevc22vluasiyuui4i54zpemp6knbsggfbuu.py"));
    let source = row["source"].as_object_mut().unwrap();
    let file = source.remove("file").unwrap();
    source.insert("path".into(), file);
    assert!(!v.is_valid(&doc));
}

#[test]
fn schemas_reject_a_renamed_key() {
    let v = validator("diff.schema.json");
    let (e, _) = common::load(&common::real(DLRM0));
    let s = e.session().unwrap();
    let mut doc: Value = serde_json::from_str(&to_json(Schema::Diff, &DiffReport::build(s, s, DiffOptions::default()).json()).unwrap()).unwrap();
    assert!(v.is_valid(&doc));
    let verdict = doc["verdict"].as_object_mut().unwrap();
    let text = verdict.remove("text").unwrap();
    verdict.insert("headline".into(), text);
    assert!(!v.is_valid(&doc), "a renamed key breaks the contract");
}
