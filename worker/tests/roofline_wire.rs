//! The roofline on the wire (`answer::roofline`, the work columns of `answer::tables`,
//! `Engine::set_peaks`): what the page's tables, chart and details panel receive, checked
//! against the session's work index on the H100 bert trace and the MI250 trace whose GPU the
//! peak table does not know.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use protocol::{Answer, CellValue, Query, TableData};

const H100: &str = "tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz";
const MI250: &str = "hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz";

fn table(engine: &mut kinetoscope::engine::Engine, q: Query) -> TableData {
    match engine.query(&q).unwrap().0 {
        Answer::Table(t) => t,
        other => panic!("{other:?}"),
    }
}

fn roofline(engine: &mut kinetoscope::engine::Engine) -> protocol::RooflineData {
    match engine.query(&Query::Roofline).unwrap().0 {
        Answer::Roofline(r) => *r,
        other => panic!("{other:?}"),
    }
}

fn cell<'a>(t: &'a TableData, row: usize, key: &str) -> &'a CellValue {
    let i = t.columns.iter().position(|c| c.key == key).unwrap_or_else(|| panic!("no column {key}"));
    &t.rows[row][i]
}

fn float(c: &CellValue) -> Option<f64> {
    match *c {
        CellValue::Float(x) => Some(x),
        CellValue::Int(n) => Some(n as f64),
        _ => None,
    }
}

/// Kernel rows carry the work index's achieved rates; the chart plots exactly the rows with
/// FLOPs and bytes, with the compute roof of the class most of their time runs at.
#[test]
fn h100_kernel_columns_and_roofline_points() {
    let mut engine = common::load_real(H100);
    let kernels = table(&mut engine, Query::Kernels { range_ns: None });
    let session = engine.session().unwrap().clone();
    let rows = session.kernels(None).rows;
    let mut with_flops = 0;
    for (i, r) in rows.iter().enumerate() {
        let a = r.achieved.filter(|a| a.has_flops);
        assert_eq!(float(cell(&kernels, i, "flops")), a.map(|a| a.flops), "{}", r.name);
        assert_eq!(float(cell(&kernels, i, "achieved_tflops")), r.achieved.and_then(|a| a.tflops), "{}", r.name);
        assert_eq!(float(cell(&kernels, i, "achieved_gbps")), r.achieved.and_then(|a| a.gbps), "{}", r.name);
        let bound = r.achieved.and_then(|a| a.bound).map(|b| CellValue::Text(b.key().into()));
        assert_eq!(cell(&kernels, i, "bound"), &bound.unwrap_or(CellValue::Empty), "{}", r.name);
        with_flops += usize::from(a.is_some());
    }
    assert!(with_flops > 0, "some kernels have FLOPs");
    let chart = roofline(&mut engine);
    assert!(chart.known, "{:?} is in the peak table", chart.device);
    assert_eq!(chart.peaks.as_ref().unwrap().model, "NVIDIA H100 SXM");
    assert!(!chart.points.is_empty());
    assert_eq!(chart.points.len() + chart.left_off.len(), rows.len());
    let (class, tflops) = chart.roof.clone().unwrap();
    assert!(tflops > 0.0, "{class}");
    for p in &chart.points {
        assert!((p.intensity - p.flops / p.bytes).abs() <= 1e-9 * p.intensity, "{}", p.name);
        assert!(p.tflops > 0.0 && p.gbps > 0.0, "{}", p.name);
    }
    let totals: Vec<i64> = chart.points.iter().map(|p| p.total_ns).collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "longest first");
    // A GEMM kernel slice's details carry its work over its own duration.
    let gemm = chart.points.iter().find(|p| p.bound.is_some()).unwrap();
    let trace = session.trace();
    let k = (0..trace.slices.len() as u32)
        .find(|&k| trace.strings.get(trace.slices.name[k as usize]) == gemm.name && session.work().kernel(k).is_some())
        .unwrap();
    let Answer::Details(Some(d)) = engine.query(&Query::Details { slice: k, trace: protocol::TraceRef::Current }).unwrap().0 else {
        panic!("no details");
    };
    let w = d.work.expect("a kernel with work");
    let dur_s = trace.slices.dur_ns[k as usize] as f64 / 1e9;
    let flops = w.flops.unwrap();
    assert!((w.tflops.unwrap() - flops / dur_s / 1e12).abs() <= 1e-9 * w.tflops.unwrap());
    assert!(w.op.is_some() && w.bound.is_some());
}

/// Steps carry their MFU; ops their summed FLOPs and bytes, rates over CUDA total.
#[test]
fn h100_step_mfu_and_op_work() {
    let mut engine = common::load_real(H100);
    let steps = table(&mut engine, Query::Steps { workload: Default::default() });
    let session = engine.session().unwrap().clone();
    let mfu = session.step_mfu(&session.steps(None));
    assert_eq!(mfu.len(), steps.rows.len());
    for (i, m) in mfu.iter().enumerate() {
        assert_eq!(float(cell(&steps, i, "mfu_pct")), *m);
    }
    let ops = table(&mut engine, Query::Ops { by_shape: false, range_ns: None });
    let rows = session.op_table(&kinetoscope::analysis::ops::OpOptions::default()).rows;
    let mut rated = 0;
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(float(cell(&ops, i, "flops")), r.flops.map(|f| f as f64), "{}", r.name);
        assert_eq!(float(cell(&ops, i, "bytes")), r.bytes.map(|f| f as f64), "{}", r.name);
        if let (Some(f), true) = (r.flops, r.device_total_ns > 0) {
            let want = f as f64 / r.device_total_ns as f64 * 1e-3;
            assert!((float(cell(&ops, i, "achieved_tflops")).unwrap() - want).abs() <= 1e-9 * want);
            rated += 1;
        } else {
            assert_eq!(cell(&ops, i, "achieved_tflops"), &CellValue::Empty, "{}", r.name);
        }
    }
    assert!(rated > 0);
}

/// An unknown GPU: no peaks, no roof, no bound; peaks given by hand add them, a bad spec
/// changes nothing, `None` goes back to the table's (none).
#[test]
fn mi250_peaks_given_by_hand() {
    let mut engine = common::load_real(MI250);
    let chart = roofline(&mut engine);
    assert_eq!(chart.device, "AMD Radeon Graphics");
    assert!(!chart.known && chart.peaks.is_none() && chart.roof.is_none());
    // Points without peaks: the kernels with FLOPs and bytes are plotted whatever the GPU, the
    // minitoy's two hipBLASLt GEMMs (`Cijk_*`, from their ops' shapes) among them.
    let rows = engine.session().unwrap().kernels(None).rows.len();
    assert_eq!(chart.points.len() + chart.left_off.len(), rows);
    let gemms = chart.points.iter().filter(|p| p.name.starts_with("Cijk_")).count();
    assert_eq!(gemms, 2, "{:?}", chart.points.iter().map(|p| &p.name).collect::<Vec<_>>());
    assert!(chart.points.iter().all(|p| p.bound.is_none() && p.peak_pct.is_none()));
    assert!(engine.set_peaks(Some("bf16=abc")).is_err());
    assert!(roofline(&mut engine).peaks.is_none(), "a bad spec keeps the session");
    engine.set_peaks(Some("bf16=362.1,fp32=45.3,gbps=3276.8")).unwrap();
    let given = roofline(&mut engine);
    let peaks = given.peaks.clone().unwrap();
    assert_eq!(peaks.gbps, Some(3276.8));
    assert!(peaks.tflops.contains(&("bf16".to_owned(), 362.1)));
    assert_eq!(given.points.len(), chart.points.len());
    assert!(given.roof.is_some());
    assert!(given.points.iter().all(|p| p.peak_pct.is_some()));
    engine.set_peaks(None).unwrap();
    assert!(roofline(&mut engine).peaks.is_none());
}
