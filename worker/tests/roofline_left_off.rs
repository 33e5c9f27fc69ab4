//! The kernel names the roofline leaves off, each with its reason (`analysis::roofline`), on
//! the wire's point count, in `report --roofline` and in `report --json`'s `roofline`: the
//! largest (only) kernel of `gpumodel` is a GEMM whose `aten::mm` recorded no shapes, and was
//! missing from the chart without a word.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::roofline::{left_off, Reason};
use kinetoscope::report::trace::{ReportOptions, TraceReport};
use protocol::{Answer, Query};

#[test]
fn gpumodel_gemm_left_off_for_want_of_shapes() {
    let mut engine = common::load_real("gpumodel__trace.json");
    let Answer::Roofline(chart) = engine.query(&Query::Roofline).unwrap().0 else { panic!("no roofline") };
    let session = engine.session().unwrap();
    let table = session.kernels(None);
    let left = left_off(&table);
    assert_eq!((chart.points.len(), chart.left_off.len(), left.len()), (0, 1, 1));
    assert_eq!(left[0].row.name, "ampere_fp16_s16816gemm_fp16_128x256_ldg8_f2f_stages_64x3_nn");
    assert_eq!(left[0].reason, Reason::NoShapes("aten::mm".into()));
    let report = TraceReport::build(session, ReportOptions { top: 5, ..ReportOptions::default() });
    let json = &report.json()["roofline"];
    assert_eq!(json["plotted"], 0);
    assert_eq!(json["left_off"][0]["reason"], "no_shapes");
    assert_eq!(json["left_off"][0]["calls"], 5);
    assert_eq!(json["left_off"][0]["share"], 1.0);
    assert_wire_equals_report(&chart, json);
    let text = report.roofline_text();
    assert!(text.contains("Roofline: 0 of 1 kernel names plotted (0.0% of kernel time); 1 left off:"), "{text}");
    assert!(text.contains("78.588ms  100.0%  \"aten::mm\" recorded no shapes its estimate reads"), "{text}");
}

#[test]
fn h100_every_kernel_is_a_point_or_left_off_with_its_reason() {
    let mut engine = common::load_real("tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz");
    let Answer::Roofline(chart) = engine.query(&Query::Roofline).unwrap().0 else { panic!("no roofline") };
    let session = engine.session().unwrap();
    let report = TraceReport::build(session, ReportOptions::default());
    assert_wire_equals_report(&chart, &report.json()["roofline"]);
    let table = session.kernels(None);
    let left = left_off(&table);
    assert_eq!(chart.points.len() + left.len(), table.rows.len());
    assert_eq!(chart.left_off.len(), left.len());
    for row in &table.rows {
        let plotted = chart.points.iter().any(|p| p.name == row.name);
        assert_ne!(plotted, left.iter().any(|l| l.row.name == row.name), "{}", row.name);
    }
    let reasons: Vec<&Reason> = left.iter().map(|l| &l.reason).collect();
    assert_eq!(
        reasons,
        [
            &Reason::NoFlops,
            &Reason::NoRule("aten::index_select".into()),
            &Reason::NoFlops,
            &Reason::NoRule("aten::all".into()),
            &Reason::NoRule("aten::eq".into()),
        ]
    );
}

/// The wire's left-off list (the page's) is `report --json`'s `roofline.left_off[]`, in order.
fn assert_wire_equals_report(chart: &protocol::RooflineData, json: &serde_json::Value) {
    let want = json["left_off"].as_array().unwrap();
    assert_eq!(chart.left_off.len(), want.len());
    for (k, w) in chart.left_off.iter().zip(want) {
        assert_eq!(k.name, w["name"].as_str().unwrap());
        assert_eq!(k.calls, w["calls"].as_u64().unwrap());
        assert_eq!(k.total_ns as f64 / 1000.0, w["total_us"].as_f64().unwrap());
        assert_eq!(k.share, w["share"].as_f64().unwrap());
        assert_eq!(k.reason, w["reason"].as_str().unwrap());
        assert_eq!(k.why, w["why"].as_str().unwrap());
    }
    assert_eq!(json["plotted"].as_u64().unwrap() as usize, chart.points.len());
}
