//! Truncated and malformed input: prefixes load with a warning; bad JSON names its offset.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

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
