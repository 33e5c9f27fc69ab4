//! The Summary tab's glance (issue 45): `info --json`'s `about` read independently from each
//! real fixture's top-level keys, and the glance's steps and bound-by on real traces.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::{for_each_real_fixture, json_bytes, load_real};
use protocol::{Answer, Query};
use serde_json::Value;
use std::collections::BTreeSet;

#[test]
fn about_says_what_the_top_level_keys_say_on_every_real_fixture() {
    for_each_real_fixture(|path| {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (_, summary) = common::load(path);
        let about = &summary.about;
        let top: Value = serde_json::from_slice(&json_bytes(path)).unwrap_or(Value::Null);
        let listed: Vec<&Value> = top.get("deviceProperties").and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default();
        // Every GPU shown is listed, with its name and memory as written.
        for d in &about.devices {
            let entry = listed.iter().find(|e| e.get("id").and_then(Value::as_i64) == Some(d.id));
            let entry = entry.unwrap_or_else(|| panic!("{name}: device {} is not in deviceProperties", d.id));
            assert_eq!(entry.get("name").and_then(Value::as_str), Some(d.name.as_str()), "{name}");
            assert_eq!(entry.get("totalGlobalMem").and_then(Value::as_i64), d.memory_bytes, "{name}");
        }
        assert_eq!(about.devices.is_empty(), listed.is_empty(), "{name}: devices shown iff listed");
        // The rank and world size are distributedInfo's.
        let info = top.get("distributedInfo");
        assert_eq!(about.distributed.is_some(), info.is_some(), "{name}");
        if let (Some(d), Some(info)) = (&about.distributed, info) {
            let field = |k: &str| info.get(k).and_then(Value::as_u64).map(|v| v as u32);
            assert_eq!(d.world_size, field("world_size"), "{name}");
            assert_eq!(d.rank, field("rank"), "{name}");
        }
        // The options listed are exactly the profiler options set to a non-zero number.
        let on: BTreeSet<&str> = ["record_shapes", "profile_memory", "with_stack", "with_flops", "with_modules"]
            .into_iter()
            .filter(|k| top.get(*k).and_then(Value::as_f64).is_some_and(|v| v != 0.0))
            .collect();
        let options = about.recording.iter().find(|(k, _)| k == "options").map(|(_, v)| v.as_str()).unwrap_or("");
        let shown: BTreeSet<&str> = options.split(", ").filter(|o| *o != "none recorded").collect();
        assert_eq!(shown, on, "{name}");
    });
}

#[test]
fn the_glance_counts_the_profiler_steps_and_names_what_bounds_them() {
    for (name, steps, class, pct) in [
        // dlrm rank 0: one ProfilerStep#; CPU ops hold 6,366 of its 14,455 µs path (report
        // --critical-path), more than any other class.
        ("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json", 1, "cpu_op", 44.04),
        // resnet50: 6 complete steps; CPU ops hold 1,009.0 ms of the 1,037.9 ms of paths.
        ("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz", 6, "cpu_op", 97.2),
    ] {
        let mut engine = load_real(name);
        let Ok((Answer::Glance(g), _)) = engine.query(&Query::Glance) else {
            panic!("{name}: no glance");
        };
        let st = g.steps.as_ref().unwrap_or_else(|| panic!("{name}: no steps"));
        assert_eq!(st.count, steps, "{name}");
        assert!(st.p95_ns >= st.mean_ns * 0.5 && st.mean_ns > 0.0, "{name}");
        let b = g.bound_by.as_ref().unwrap_or_else(|| panic!("{name}: no bound-by"));
        assert_eq!(b.class, class, "{name}");
        assert!((b.share_pct - pct).abs() < 0.05, "{name}: {}", b.share_pct);
        assert_eq!(b.steps, steps as u32, "{name}");
        assert!(!g.gpus.is_empty(), "{name}");
    }
}
