//! Device activity -> launch call -> enclosing op, on real traces; counts checked independently.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use serde_json::Value;
use std::collections::HashSet;

/// (device activities with a correlation, of which a runtime/driver call carries it).
fn independent(name: &str) -> (u64, u64) {
    let doc: Value = serde_json::from_slice(&common::json_bytes(&common::real(name))).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let cat = |e: &Value| e["cat"].as_str().unwrap_or("").to_string();
    let corr = |e: &Value| e["args"]["correlation"].as_i64();
    let launches: HashSet<i64> =
        events.iter().filter(|e| matches!(cat(e).as_str(), "cuda_runtime" | "cuda_driver")).filter_map(corr).collect();
    let device: Vec<i64> =
        events.iter().filter(|e| matches!(cat(e).as_str(), "kernel" | "gpu_memcpy" | "gpu_memset")).filter_map(corr).collect();
    (device.len() as u64, device.iter().filter(|c| launches.contains(c)).count() as u64)
}

#[test]
fn kernels_link_to_launch_calls_and_enclosing_ops() {
    let expected = [
        ("partx__profiler_trace_single_sample.json", 642, 642),
        ("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json", 261, 261),
        // 64 elementwise kernels whose launches happened before the profiling window.
        ("param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json", 326, 262),
        ("param__dlrm_kineto__worker2_step_12.1694128201554.pt.trace.json", 262, 262),
        ("param__dlrm_kineto__worker3_step_12.1694128201557.pt.trace.json", 337, 273),
    ];
    for (name, device, linked) in expected {
        assert_eq!(independent(name), (device, linked), "{name}: independent count");
        let (_, s) = common::load(&common::real(name));
        assert_eq!(s.links.device_activities, device, "{name}");
        assert_eq!(s.links.with_launch, linked, "{name}");
        assert_eq!(s.links.with_op, linked, "{name}: every launch sits inside an op");
    }
}
