//! `report --format html` (the page's Export report too): on every real fixture the file is
//! self-contained (no script, no external `src` / `href` / `url(` except links to the viewer URL
//! given), has its inline SVG charts, and its tables hold `report --json`'s numbers; names from
//! the trace are escaped. The module table equals `report --modules --json`, and the flame
//! graph's boxes hold the call tree's totals (`report --tree --json`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::report::html::flame;
use kinetoscope::report::trace::{ReportOptions, TraceReport};
use serde_json::Value;
use std::process::Command;

const VIEWER: &str = "https://viewer.example/?url=traces/t.json.gz";

fn options() -> ReportOptions {
    ReportOptions::default()
}

/// Every value of attribute `attr` inside the element starting at `<tag id="id"` (to its end tag).
fn values_in(html: &str, open: &str, close: &str, attr: &str) -> Vec<String> {
    let Some(start) = html.find(open) else { return Vec::new() };
    let body = &html[start..];
    let body = &body[..body.find(close).unwrap_or(body.len())];
    let key = format!("{attr}=\"");
    body.match_indices(&key)
        .map(|(i, _)| {
            let rest = &body[i + key.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .collect()
}

/// Undoes `report::html::escape` for comparing names.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// Asserts no resource outside the file is referenced: no script, no fetching element or CSS,
/// links only to `viewer`. Checks markup only: escaped text never holds a literal `<`, so every
/// `<...>` is a tag the file wrote.
fn assert_self_contained(html: &str, viewer: Option<&str>, what: &str) {
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("url(") && !lower.contains("@import"), "{what}: a CSS fetch");
    for tag in lower.split('<').skip(1).map(|t| &t[..t.find('>').unwrap_or(t.len())]) {
        let name = tag.split([' ', '/']).next().unwrap_or("");
        assert!(!["script", "link", "img", "iframe", "object", "embed", "image", "use"].contains(&name), "{what}: <{tag}>");
        // Attribute names only: values (titles hold whole names) are escaped text.
        let bare: String = tag.split('"').step_by(2).collect();
        assert!(!bare.contains(" src=") && !bare.contains(" on") && !bare.contains("style="), "{what}: <{tag}>");
        if let Some(i) = tag.find(" href=\"") {
            let target = &tag[i + 7..];
            let base = viewer.expect("no link without a viewer URL").to_ascii_lowercase().replace('&', "&amp;");
            assert!(target.starts_with(&base), "{what}: a link elsewhere: <{tag}>");
        }
    }
}

/// The flame graph's boxes in file order: (row, CPU total µs, width in user units).
fn flame_boxes(html: &str) -> Vec<(usize, f64, f64)> {
    html.match_indices("<g data-depth=\"")
        .map(|(i, _)| {
            // Titles are escaped, so every `"` is an attribute's: depth, µs, class, x, y, width.
            let attrs: Vec<&str> = html[i..].splitn(13, '"').collect();
            (attrs[1].parse().unwrap(), attrs[3].parse().unwrap(), attrs[11].parse().unwrap())
        })
        .collect()
}

/// The `data-us` values of the table `id`, as numbers.
fn us_column(html: &str, id: &str) -> Vec<f64> {
    values_in(html, &format!("<table id=\"{id}\">"), "</table>", "data-us").iter().map(|v| v.parse().unwrap()).collect()
}

#[test]
fn every_real_fixture_gives_a_self_contained_report_with_the_json_numbers() {
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let engine = common::load_real(&name);
        let session = engine.session().unwrap();
        let report = TraceReport::build(session, options());
        let json = report.json();
        let explanation = session.explain(kinetoscope::analysis::explain::Which::Slowest).ok();
        for viewer in [None, Some(VIEWER)] {
            let html = report.html(explanation.as_ref(), viewer);
            assert_self_contained(&html, viewer, &name);
            assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"), "{name}");
        }
        let html = report.html(explanation.as_ref(), Some(VIEWER));
        // Times read as the page writes them (`129 ms`, `4.56 µs`), never PyTorch's `128.500ms`.
        for (at, _) in html.match_indices("<td class=\"n\" data-us=\"") {
            let cell = &html[at..html[at..].find("</td>").map_or(html.len(), |e| at + e)];
            let shown = &cell[cell.find('>').map_or(0, |g| g + 1)..];
            let us: f64 = cell.split('"').nth(3).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN);
            // A difference is signed in front (`+15.7 ms`).
            assert_eq!(shown.trim_start_matches(['+', '-']), kinetoscope::text::span((us.abs() * 1000.0).round() as i64), "{name}: {cell}");
        }

        // Ops: the top 20 by Self CUDA (else Self CPU), five numbers a row, as --json has them.
        let ops = json["ops"].as_array().unwrap();
        let names: Vec<String> = values_in(&html, "<table id=\"ops-table\">", "</table>", "data-name").iter().map(|n| unescape(n)).collect();
        let cells = us_column(&html, "ops-table");
        assert_eq!(cells.len(), names.len() * 4, "{name}");
        let key = if json["self_device_time_total_us"].as_f64().unwrap() > 0.0 { "self_device_us" } else { "self_cpu_us" };
        let mut want: Vec<&Value> = ops.iter().collect();
        want.sort_by(|a, b| b[key].as_f64().unwrap().total_cmp(&a[key].as_f64().unwrap()));
        assert_eq!(names.len(), want.len().min(20), "{name}");
        for (row, op) in names.iter().zip(&want) {
            let found = ops.iter().find(|o| o["name"] == row.as_str()).unwrap_or_else(|| panic!("{name}: {row}"));
            assert_eq!(found[key], op[key], "{name}: {row} ranks where --json does");
        }
        for (i, row) in names.iter().enumerate() {
            let op = ops.iter().find(|o| o["name"] == row.as_str()).unwrap();
            let got = &cells[i * 4..i * 4 + 4];
            let want = ["self_cpu_us", "cpu_total_us", "self_device_us", "device_total_us"].map(|k| op[k].as_f64().unwrap());
            assert_eq!(got, want, "{name}: {row}");
        }

        // Kernels: names and totals in --json's order.
        let kernels = json["kernels"].as_array().unwrap();
        let knames = values_in(&html, "<table id=\"kernels-table\">", "</table>", "data-name");
        assert_eq!(knames.len(), kernels.len().min(20), "{name}");
        let ktimes = us_column(&html, "kernels-table");
        for (i, (n, k)) in knames.iter().zip(kernels).enumerate() {
            assert_eq!(unescape(n), k["name"].as_str().unwrap(), "{name}");
            assert_eq!(ktimes[i * 3], k["total_us"].as_f64().unwrap(), "{name}: total of {n}");
            assert_eq!(ktimes[i * 3 + 1], k["mean_us"].as_f64().unwrap(), "{name}: mean of {n}");
        }

        // Steps: one row each with the step span; the stacked bar chart whenever there are steps.
        let steps = json["steps"].as_array().unwrap();
        let spans = us_column(&html, "steps-table");
        assert_eq!(spans.len(), steps.len() * 11, "{name}");
        for (i, s) in steps.iter().enumerate() {
            assert_eq!(spans[i * 11 + 2], s["dur_us"].as_f64().unwrap(), "{name}: step {i}");
            assert_eq!(spans[i * 11 + 3], s["breakdown"]["kernel"].as_f64().unwrap(), "{name}: step {i} kernel");
        }
        let chart = |id: &str| values_in(&html, &format!("<figure id=\"{id}\">"), "</figure>", "class").iter().any(|c| c == "chart");
        assert_eq!(chart("chart-steps"), !steps.is_empty(), "{name}: step chart");
        assert_eq!(chart("chart-gpu"), !json["gpus"].as_array().unwrap().is_empty(), "{name}: GPU chart");
        assert_eq!(chart("chart-memory"), !json["memory"].as_array().unwrap().is_empty(), "{name}: memory chart");

        // Modules: one row per node of --json's tree (up to 200), its four times in order.
        let nodes = json["modules"]["nodes"].as_array().unwrap();
        let tied = json["modules"]["backward_tied"].as_bool().unwrap();
        let per_row = 4 + usize::from(tied);
        let cells = us_column(&html, "modules-table");
        assert_eq!(cells.len(), nodes.len().min(200) * per_row, "{name}: module rows");
        assert_eq!(html.contains("<section id=\"modules\">"), !nodes.is_empty(), "{name}");
        for (i, n) in nodes.iter().take(200).enumerate() {
            let want = ["host_us", "self_host_us", "device_us", "self_device_us"].map(|k| n[k].as_f64().unwrap());
            assert_eq!(cells[i * per_row..i * per_row + 4], want, "{name}: module {}", n["path"]);
        }

        // Flame graph: the whole, then each thread as wide as its CPU total (narrow ones left out).
        let tree = kinetoscope::analysis::call_tree::build(session.trace(), None);
        let boxes = flame_boxes(&html);
        assert_eq!(html.contains("<section id=\"flame\">"), tree.nodes[0].total_ns > 0, "{name}");
        if tree.nodes[0].total_ns > 0 {
            let root = &tree.nodes[0];
            assert_eq!(boxes.first(), Some(&(0, root.total_ns as f64 / 1e3, flame::WIDTH)), "{name}: the whole first");
            let width = |ns: i64| ns as f64 * flame::WIDTH / root.total_ns as f64;
            let mut threads: Vec<i64> = root.children.iter().map(|&c| tree.nodes[c as usize].total_ns).filter(|&ns| width(ns) >= flame::MIN_WIDTH).collect();
            threads.sort_unstable_by(|a, b| b.cmp(a));
            let drawn: Vec<(f64, f64)> = boxes.iter().filter(|b| b.0 == 1).map(|b| (b.1, b.2)).collect();
            assert_eq!(drawn.len(), threads.len(), "{name}: threads");
            for (&(us, w), &ns) in drawn.iter().zip(&threads) {
                assert_eq!(us, ns as f64 / 1e3, "{name}: thread total");
                assert!((w - width(ns)).abs() < 0.01, "{name}: {w} wide for {ns} ns");
            }
            assert!(boxes.iter().all(|b| b.0 < flame::MAX_ROWS), "{name}: rows stop");
        }

        // Findings: one article each, rule and evidence count as --json has them.
        let findings = json["findings"].as_array().unwrap();
        let rules = values_in(&html, "<section id=\"findings\">", "</section>", "data-rule");
        let want: Vec<&str> = findings.iter().map(|f| f["rule"].as_str().unwrap()).collect();
        assert_eq!(rules, want, "{name}");
        let totals = values_in(&html, "<section id=\"findings\">", "</section>", "data-n");
        let want: Vec<String> = findings.iter().map(|f| f["evidence"]["total"].to_string()).collect();
        assert_eq!(totals, want, "{name}");
    }
}

#[test]
fn names_from_the_trace_are_text_not_markup() {
    let evil = "<script>alert(\\\"x\\\")</script><img src=https://evil.example/x>";
    let trace = format!(
        r#"{{"traceEvents":[
        {{"ph":"X","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100,"cat":"user_annotation"}},
        {{"ph":"X","name":"{evil}","pid":1,"tid":1,"ts":10,"dur":50,"cat":"cpu_op"}},
        {{"ph":"X","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"cat":"cuda_runtime","args":{{"correlation":7}}}},
        {{"ph":"X","name":"{evil}","pid":0,"tid":7,"ts":30,"dur":40,"cat":"kernel","args":{{"correlation":7,"device":0,"stream":7}}}}
        ]}}"#
    );
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html_evil.json");
    std::fs::write(&path, trace).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", path.to_str().unwrap(), "--format", "html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = String::from_utf8(out.stdout).unwrap();
    assert_self_contained(&html, None, "evil");
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=https://evil.example/x&gt;"), "{html}");
    assert!(html.contains("<table id=\"kernels-table\">"), "the kernel is in the report");
}

#[test]
fn the_page_s_export_is_the_cli_s_file() {
    let name = "kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz";
    let mut engine = common::load_real(name);
    let query = protocol::Query::Report { viewer_url: Some(VIEWER.into()) };
    let Ok((protocol::Answer::Report(page), None)) = engine.query(&query) else { panic!("no report answer") };
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", common::real(name).to_str().unwrap(), "--format", "html", "--viewer-url", VIEWER])
        .output()
        .unwrap();
    assert_eq!(page, String::from_utf8(out.stdout).unwrap());
}

#[test]
fn the_cli_links_back_to_the_viewer_when_given_its_url() {
    let path = common::real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let run = |extra: &[&str]| {
        let mut args = vec!["report", path.to_str().unwrap(), "--format", "html"];
        args.extend(extra);
        let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope")).args(&args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let plain = run(&[]);
    assert!(!plain.contains("href="), "no viewer URL, no link");
    assert!(plain.contains("<section id=\"explanation\"><h2>Why is ProfilerStep#10 slow</h2>"), "the slowest step by default");
    let linked = run(&["--viewer-url", VIEWER, "--explain-step", "7"]);
    assert!(linked.contains("<h2>Why is <a href=\"https://viewer.example/?url=traces/t.json.gz#tab=steps&amp;scope=step%3A7\">ProfilerStep#7</a> slow</h2>"), "--explain-step picks the step");
    assert!(linked.contains("#tab=findings&amp;finding=fp32-gemm\">"), "findings link to the finding");
    assert!(linked.contains("&amp;sel=2%2C88685000%2C0%2Cvoid%20implicit_convolve_sgemm"), "evidence links select the slice");
    assert_self_contained(&linked, Some(VIEWER), "resnet");
}
