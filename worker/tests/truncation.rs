//! Truncated and malformed input: prefixes load with a warning; bad JSON names its offset.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

#[test]
fn every_fixture_cut_at_several_offsets_loads_a_prefix_and_warns() {
    for path in common::real_fixtures() {
        let json = common::json_bytes(&path);
        let (_, full) = common::load_bytes("full", json.clone());
        let full = full.unwrap();
        // Cut well inside the event array, at 5 spread offsets.
        for k in 1..=5u64 {
            let cut = (json.len() as u64 * k / 6) as usize;
            let (_, result) = common::load_bytes("cut", json[..cut].to_vec());
            let Ok(summary) = result else {
                // Only acceptable when no event is complete before the cut.
                continue;
            };
            assert!(summary.truncated, "{path:?} cut at {cut}");
            assert!(summary.events <= full.events, "{path:?} cut at {cut}");
            assert!(summary.warnings.iter().any(|w| w.starts_with("json_truncated")), "{path:?} cut at {cut}: {:?}", summary.warnings);
        }
    }
}

#[test]
fn truncated_mid_event_keeps_complete_events_and_names_the_offset() {
    let text = r#"{"traceEvents": [
 {"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},
 {"ph":"X","name":"b","pid":1,"tid":1,"ts":4,"dur":2},
 {"ph":"X","name":"c","pid":1,"ti"#;
    let (_, s) = common::load_str(text);
    assert_eq!(s.events, 2);
    assert!(s.truncated);
    let w = s.warnings.iter().find(|w| w.starts_with("json_truncated")).expect("truncation warning");
    let cut = text.find(r#"{"ph":"X","name":"c""#).unwrap();
    assert!(w.contains(&format!("byte {cut}")), "{w}");
}

#[test]
fn missing_closing_brackets_is_allowed() {
    let (_, s) = common::load_str(r#"[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},"#);
    assert_eq!(s.events, 1);
    assert!(s.truncated);
}

#[test]
fn malformed_input_is_an_error_naming_offset_line_and_column() {
    let cases: &[(&str, u64, u64, u64)] = &[
        ("hello world", 0, 1, 1),
        ("{\"traceEvents\": [\n  {\"ph\": X}\n]}", 27, 2, 10),
        ("{\"a\": 1}", 7, 1, 8),
        ("[{\"ph\":\"X\",}]", 11, 1, 12),
    ];
    for &(text, offset, line, column) in cases {
        let (_, result) = common::load_bytes("bad.json", text.as_bytes().to_vec());
        let e = result.expect_err(text);
        assert_eq!(e.kind, "malformed", "{text}");
        assert_eq!((e.offset, e.line, e.column), (Some(offset), Some(line), Some(column)), "{text}: {}", e.message);
        assert!(e.message.contains(&format!("at byte {offset} (line {line}, column {column})")), "{}", e.message);
    }
}

#[test]
fn syntax_error_after_events_keeps_them_and_warns() {
    let text = r#"[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}, {"ph": oops}]"#;
    let (_, s) = common::load_str(text);
    assert_eq!(s.events, 1);
    assert!(s.truncated);
    assert!(s.warnings.iter().any(|w| w.starts_with("json_syntax_stop") && w.contains("byte 62")), "{:?}", s.warnings);
}

#[test]
fn empty_and_binary_inputs_are_clear_errors() {
    let (_, r) = common::load_bytes("empty.json", Vec::new());
    assert_eq!(r.unwrap_err().kind, "empty");
    let (_, r) = common::load_bytes("blank.json", b"  \n ".to_vec());
    assert_eq!(r.unwrap_err().kind, "empty");
    let (_, r) = common::load_bytes("x.png", vec![0x89, b'P', b'N', b'G', 0, 1, 2]);
    assert_eq!(r.unwrap_err().kind, "malformed");
    let (_, r) = common::load_bytes("x.gz", vec![0x1f, 0x8b, 0, 0]);
    assert_eq!(r.unwrap_err().kind, "gzip");
}

#[test]
fn truncated_gzip_loads_what_decompressed() {
    let path = common::real("hta__benchmark_result_493459_1694039959_trace.json.gz");
    let raw = std::fs::read(&path).unwrap();
    let (_, r) = common::load_bytes("cut.gz", raw[..raw.len() / 2].to_vec());
    let s = r.unwrap();
    assert!(s.truncated && s.events > 0);
    assert!(s.warnings.iter().any(|w| w.starts_with("input_gzip_truncated")), "{:?}", s.warnings);
}

#[test]
fn deep_nesting_in_args_is_an_error_not_a_crash() {
    let deep = format!(r#"[{{"ph":"X","args":{}{}}}]"#, "[".repeat(200), "]".repeat(200));
    let (_, r) = common::load_bytes("deep.json", deep.into_bytes());
    assert!(r.unwrap_err().message.contains("nesting"));
}
