//! Every parse path gives the same model: whole input vs split into parts at event boundaries
//! (the parallel parse), on every real fixture and on tiny edge cases.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::load::{assemble, parse, parse_part, plan};
use common::fingerprint;
use kinetoscope::model::Trace;

fn split_parse(json: &[u8], parts: usize) -> (Trace, usize) {
    let plan = plan(json, parts).unwrap();
    let n = plan.parts.len();
    let parsed = (0..n).map(|i| parse_part(json, &plan, i, &mut |_| {})).collect();
    (assemble(json, &plan, parsed).unwrap(), n)
}

#[test]
fn split_parse_equals_whole_parse_on_every_fixture() {
    common::for_each_real_fixture(|path| {
        let json = common::json_bytes(path);
        let whole = fingerprint(&parse(&json, &mut |_| {}).unwrap());
        for parts in [2, 3, 7] {
            let (trace, used) = split_parse(&json, parts);
            assert_eq!(fingerprint(&trace), whole, "{path:?} in {parts} parts ({used} used)");
        }
    });
}

#[test]
fn large_fixture_really_splits() {
    let json = common::json_bytes(&common::real("partx__profiler_trace_single_sample.json"));
    assert_eq!(plan(&json, 4).unwrap().parts.len(), 4);
}

#[test]
fn begin_and_end_in_different_parts_still_match() {
    let mut text = String::from("[");
    for i in 0..200 {
        text.push_str(&format!(r#"{{"ph":"B","name":"outer{i}","pid":1,"tid":1,"ts":{}}},"#, i * 10));
    }
    for i in (0..200).rev() {
        text.push_str(&format!(r#"{{"ph":"E","pid":1,"tid":1,"ts":{}}},"#, 5000 - i));
    }
    text.push_str(r#"{"ph":"b","cat":"a","id":1,"name":"async","pid":1,"ts":1},"#);
    text.push_str(&r#"{"ph":"X","name":"pad","pid":1,"tid":2,"ts":1,"dur":1},"#.repeat(100));
    text.push_str(r#"{"ph":"e","cat":"a","id":1,"pid":1,"ts":9}]"#);
    let whole = fingerprint(&parse(text.as_bytes(), &mut |_| {}).unwrap());
    for parts in [2, 5, 11] {
        let (trace, used) = split_parse(text.as_bytes(), parts);
        assert!(used > 1);
        assert_eq!(fingerprint(&trace), whole, "{parts} parts");
        assert_eq!(trace.diagnostics.count(kinetoscope::diag::DiagKind::ModelUnmatchedEnd), 0);
    }
}

#[test]
fn truncated_and_malformed_inputs_give_the_same_answer_split_or_not() {
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    let cut = &json[..json.len() * 3 / 4];
    let whole = fingerprint(&parse(cut, &mut |_| {}).unwrap());
    assert_eq!(fingerprint(&split_parse(cut, 4).0), whole);
    let mut broken = json.clone();
    let mid = json.len() / 3;
    let at = mid + broken[mid..].iter().position(|&b| b == b':').unwrap();
    broken[at] = b'!';
    let whole = fingerprint(&parse(&broken, &mut |_| {}).unwrap());
    assert_eq!(fingerprint(&split_parse(&broken, 4).0), whole);
}
