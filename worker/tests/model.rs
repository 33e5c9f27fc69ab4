//! Model building on tiny traces: forms, B/E, nesting, overlap, ts 0, ids, metadata, gzip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::model::{Trace, NONE};

fn trace(text: &str) -> Trace {
    let (engine, _) = common::load_str(text);
    engine.trace().unwrap().clone()
}

fn names(t: &Trace) -> Vec<(String, i64, i64, u16, u16)> {
    let s = &t.slices;
    (0..s.len()).map(|i| (t.strings.get(s.name[i]).into_owned(), s.start_ns[i], s.dur_ns[i], s.depth[i], s.row[i])).collect()
}

#[test]
fn object_and_bare_array_forms_give_the_same_model() {
    let events = r#"[{"ph":"X","name":"a","pid":1,"tid":2,"ts":10,"dur":5},{"ph":"X","name":"b","pid":1,"tid":2,"ts":11,"dur":1}]"#;
    let a = trace(events);
    let o = trace(&format!(r#"{{"schemaVersion":1,"traceEvents":{events},"traceName":"x"}}"#));
    assert_eq!(names(&a), names(&o));
    assert_eq!(o.top_level.len(), 2);
    assert_eq!(names(&a), vec![("a".into(), 0, 5000, 0, 0), ("b".into(), 1000, 1000, 1, 1)]);
}

#[test]
fn begin_end_match_per_thread_stack() {
    let t = trace(
        r#"[{"ph":"B","name":"outer","pid":1,"tid":1,"ts":0},{"ph":"B","name":"other","pid":1,"tid":2,"ts":1},
        {"ph":"B","name":"inner","pid":1,"tid":1,"ts":2},{"ph":"E","pid":1,"tid":1,"ts":3},
        {"ph":"E","pid":1,"tid":2,"ts":4},{"ph":"E","pid":1,"tid":1,"ts":9},{"ph":"E","pid":1,"tid":1,"ts":10}]"#,
    );
    assert_eq!(
        names(&t),
        vec![("outer".into(), 0, 9000, 0, 0), ("inner".into(), 2000, 1000, 1, 1), ("other".into(), 1000, 3000, 0, 0)]
    );
    assert_eq!(t.diagnostics.count(kinetoscope::diag::DiagKind::ModelUnmatchedEnd), 1);
}

#[test]
fn overlapping_kernels_on_a_stream_go_to_an_overflow_row_never_dropped() {
    let t = trace(
        r#"[{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":0,"dur":10},
        {"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":5,"dur":10},
        {"ph":"X","cat":"kernel","name":"k3","pid":0,"tid":7,"ts":20,"dur":1}]"#,
    );
    assert_eq!(t.slices.len(), 3);
    assert_eq!(names(&t)[1], ("k2".into(), 5000, 10000, 0, 1));
    assert_eq!(t.lanes[0].rows, 2);
    assert_eq!(t.diagnostics.count(kinetoscope::diag::DiagKind::ModelPartialOverlap), 1);
}

#[test]
fn ts_zero_and_string_pids_are_kept() {
    let t = trace(r#"[{"ph":"X","name":"z","pid":"Spans","tid":"main","ts":0,"dur":1},{"ph":"X","name":"y","pid":"Spans","tid":"main","ts":5,"dur":1}]"#);
    assert_eq!(t.origin_ns, 0);
    assert_eq!(t.strings.get(t.processes[0].pid), "Spans");
    assert_eq!(t.strings.get(t.lanes[0].name), "thread main");
}

#[test]
fn metadata_names_and_orders_processes_and_lanes() {
    let t = trace(
        r#"[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1},
        {"ph":"X","cat":"cpu_op","name":"op","pid":42,"tid":43,"ts":0,"dur":5},
        {"ph":"M","name":"process_name","pid":0,"args":{"name":"python3"}},
        {"ph":"M","name":"process_labels","pid":0,"args":{"labels":"GPU 0"}},
        {"ph":"M","name":"process_sort_index","pid":0,"args":{"sort_index":5000000}},
        {"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7 "}},
        {"ph":"M","name":"process_name","pid":42,"args":{"name":"python3"}}]"#,
    );
    let procs: Vec<String> = t.processes.iter().map(|p| t.strings.get(p.name).into_owned()).collect();
    assert_eq!(procs, vec!["python3", "GPU 0"]);
    let gpu = &t.processes[1];
    assert_eq!(t.strings.get(t.lanes[gpu.lanes[0].0 as usize].name), "stream 7");
}

#[test]
fn escapes_and_control_characters_in_names() {
    let t = trace("[{\"ph\":\"X\",\"name\":\"a\\\"b\\u00e9\\n\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"name\":\"raw\u{1}ctl\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1}]");
    assert_eq!(t.strings.get(t.slices.name[0]), "a\"b\u{e9}\n");
    assert_eq!(t.strings.get(t.slices.name[1]), "raw\u{1}ctl");
}

#[test]
fn gzip_is_detected_by_magic_bytes_not_name() {
    use std::io::Write;
    let text = br#"[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]"#;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text).unwrap();
    let (_, r) = common::load_bytes("no-extension", gz.finish().unwrap());
    let s = r.unwrap();
    assert_eq!((s.events, s.format.as_str()), (1, "json-array+gzip"));
}

#[test]
fn flows_bind_to_enclosing_and_next_slices() {
    let t = trace(
        r#"[{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":7}},
        {"ph":"s","cat":"ac2g","id":7,"pid":1,"tid":1,"ts":10},
        {"ph":"f","cat":"ac2g","id":7,"pid":0,"tid":7,"ts":20,"bp":"e"},
        {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":20,"dur":3,"args":{"correlation":7}},
        {"ph":"s","cat":"x","id":"9","pid":1,"tid":1,"ts":11},
        {"ph":"f","cat":"x","id":"9","pid":0,"tid":7,"ts":19}]"#,
    );
    let launch = (0..t.slices.len()).find(|&i| t.strings.get(t.slices.name[i]) == "cudaLaunchKernel").unwrap() as u32;
    let kernel = (0..t.slices.len()).find(|&i| t.strings.get(t.slices.name[i]) == "k").unwrap() as u32;
    assert_eq!(t.flows.len(), 2);
    assert!(t.flows.iter().all(|f| f.from == launch && f.to == kernel));
    assert_eq!(t.slices.launch[kernel as usize], launch);
    assert_eq!(t.slices.launch[launch as usize], NONE);
}
