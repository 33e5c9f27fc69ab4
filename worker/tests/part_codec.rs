//! Parts crossing a worker boundary: each part parsed from its own bytes (`parse_piece`),
//! encoded, decoded and assembled gives the sequential parse, on every real fixture and on
//! truncated and malformed inputs; corrupt encodings are errors, never panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::fingerprint;
use kinetoscope::load::{assemble, parse, parse_piece, plan, Part};
use kinetoscope::model::Trace;

/// Parses `json` as the browser's workers do: each part from a copy of its bytes, sent back
/// encoded. Also checks that re-encoding a decoded part gives the same bytes.
fn worker_parse(json: &[u8], parts: usize) -> (Trace, Vec<Vec<u8>>) {
    let plan = plan(json, parts).unwrap();
    let mut encoded = Vec::new();
    let decoded = (0..plan.parts.len())
        .map(|i| {
            let (piece, range) = plan.piece(i).unwrap();
            let bytes = json[range].to_vec();
            let wire = parse_piece(&bytes, piece, &mut |_| {}).encode();
            let part = Part::decode(&wire).unwrap();
            assert_eq!(part.encode(), wire, "re-encoding part {i} of {parts}");
            encoded.push(wire);
            part
        })
        .collect();
    (assemble(json, &plan, decoded).unwrap(), encoded)
}

#[test]
fn encoded_parts_assemble_to_the_sequential_parse_on_every_fixture() {
    common::for_each_real_fixture(|path| {
        let json = common::json_bytes(path);
        let whole = fingerprint(&parse(&json, &mut |_| {}).unwrap());
        for parts in [1, 2, 3, 5] {
            let (trace, _) = worker_parse(&json, parts);
            assert_eq!(fingerprint(&trace), whole, "{path:?} in {parts} parts");
        }
    });
}

#[test]
fn truncated_and_malformed_inputs_through_encoded_parts() {
    let json = common::json_bytes(&common::real("param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json"));
    for cut in [json.len() / 2 + 17, json.len() * 3 / 4, json.len() - 3] {
        let cut = &json[..cut];
        let whole = parse(cut, &mut |_| {}).unwrap();
        assert!(whole.truncated);
        assert_eq!(fingerprint(&worker_parse(cut, 4).0), fingerprint(&whole), "cut at {}", cut.len());
    }
    let mut broken = json.clone();
    for at in [json.len() / 3, json.len() * 2 / 3] {
        let colon = at + broken[at..].iter().position(|&b| b == b':').unwrap();
        broken[colon] = b'!';
        let whole = fingerprint(&parse(&broken, &mut |_| {}).unwrap());
        assert!(whole.contains("json_syntax_stop"));
        assert_eq!(fingerprint(&worker_parse(&broken, 3).0), whole);
    }
}

#[test]
fn tiny_edge_cases_through_encoded_parts() {
    let mut text = String::from(r#"{"traceEvents":["#);
    for i in 0..300 {
        text.push_str(&format!(r#"{{"ph":"B","name":"b{i}","pid":"p","tid":1,"ts":{i},"args":{{"k":"\u00e9 {i}"}}}},"#));
        text.push_str(&format!(r#"{{"ph":"s","cat":"c","id":"s{i}","pid":"p","tid":1,"ts":{i}}},7,"#));
    }
    text.push_str(r#"{"ph":"b","cat":"a","id":1,"name":"async","pid":1,"ts":1},"#);
    text.push_str(r#"{"ph":"M","name":"process_name","pid":"p","args":{"name":"P"}},"#);
    text.push_str(&r#"{"ph":"E","pid":"p","tid":1,"ts":999},"#.repeat(150));
    text.push_str(r#"{"ph":"e","cat":"a","id":1,"pid":1,"ts":9},{"ph":"C","name":"mem","pid":"p","ts":5,"args":{"v":1}},"#);
    text.push_str(r#"{"ph":"X","name":"neg","pid":1,"tid":2,"ts":3,"dur":-1}],"displayTimeUnit":"ns","x":{"y":[1]}}"#);
    let whole = fingerprint(&parse(text.as_bytes(), &mut |_| {}).unwrap());
    for parts in [2, 4, 9] {
        assert_eq!(fingerprint(&worker_parse(text.as_bytes(), parts).0), whole, "{parts} parts");
    }
}

#[test]
fn corrupt_encodings_are_errors_not_panics() {
    let json = common::json_bytes(&common::real("partx__profiler_trace_single_sample.json"));
    let (_, encoded) = worker_parse(&json, 2);
    let wire = &encoded[1];
    for cut in (0..wire.len()).step_by(wire.len() / 997 + 1) {
        assert!(Part::decode(&wire[..cut]).is_err(), "cut at {cut}");
    }
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..400 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut bad = wire.clone();
        let at = (seed % bad.len() as u64) as usize;
        bad[at] = bad[at].wrapping_add((seed >> 32) as u8 | 1);
        // Either an error or a part; a decoded part must also assemble without panicking.
        if let Ok(part) = Part::decode(&bad) {
            let plan = plan(&json, 2).unwrap();
            let first = Part::decode(&encoded[0]).unwrap();
            let _ = assemble(&json, &plan, vec![first, part]);
        }
    }
}
