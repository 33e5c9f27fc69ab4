//! Small edge-case inputs kept as files in `tests/edge/{valid,invalid,truncated}/`, each with
//! what loading it must give: valid files load whole; truncated files load what is complete and
//! name the byte where they stopped; invalid files are errors naming their kind and, when the
//! bytes are JSON-like, the byte offset (with line and column). Every file in the folders is
//! listed here, so a new one cannot go unchecked.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use std::path::PathBuf;

fn edge(dir: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/edge").join(dir)
}

/// File names in `tests/edge/DIR`, sorted.
fn files(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(edge(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn load(dir: &str, name: &str) -> Result<protocol::TraceSummary, protocol::LoadError> {
    common::load_bytes(name, std::fs::read(edge(dir).join(name)).unwrap()).1
}

/// (file, events loaded).
const VALID: [(&str, u64); 5] = [
    ("bare_array.json", 2),
    ("escapes.json", 1),
    ("no_events.json", 0),
    ("object_form.json", 2),
    ("ts_zero_string_ids.json", 2),
];

/// (file, events loaded, warning kind, byte offset the warning names).
const TRUNCATED: [(&str, u64, &str, u64); 3] = [
    ("mid_event.json", 2, "json_truncated", 129),
    ("no_closing_bracket.json", 1, "json_truncated", 54),
    ("syntax_error_after_events.json", 1, "json_syntax_stop", 62),
];

/// Byte offset, line and column of a malformed input.
type Position = Option<(u64, u64, u64)>;

/// (file, error kind, position) — no position where the bytes are not JSON at all.
const INVALID: [(&str, &str, Position); 8] = [
    ("bare_word_value.json", "malformed", Some((27, 2, 10))),
    ("blank.json", "empty", None),
    ("empty.json", "empty", None),
    ("gzip_header_only.gz", "gzip", None),
    ("no_trace_events.json", "malformed", Some((7, 1, 8))),
    ("not_json.txt", "malformed", Some((0, 1, 1))),
    ("png_bytes.bin", "malformed", Some((0, 1, 1))),
    ("trailing_comma.json", "malformed", Some((11, 1, 12))),
];

#[test]
fn every_edge_file_is_listed() {
    let names = |list: Vec<&str>| list.into_iter().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(files("valid"), names(VALID.iter().map(|v| v.0).collect()));
    assert_eq!(files("truncated"), names(TRUNCATED.iter().map(|v| v.0).collect()));
    assert_eq!(files("invalid"), names(INVALID.iter().map(|v| v.0).collect()));
}

#[test]
fn valid_files_load_whole() {
    for (name, events) in VALID {
        let s = load("valid", name).unwrap_or_else(|e| panic!("{name}: {}", e.message));
        assert_eq!((s.events, s.truncated), (events, false), "{name}: {:?}", s.warnings);
    }
}

#[test]
fn truncated_files_load_what_is_complete_and_say_where_they_stopped() {
    for (name, events, kind, offset) in TRUNCATED {
        let s = load("truncated", name).unwrap_or_else(|e| panic!("{name}: {}", e.message));
        assert_eq!((s.events, s.truncated), (events, true), "{name}");
        let w = s.warnings.iter().find(|w| w.starts_with(kind)).unwrap_or_else(|| panic!("{name}: {:?}", s.warnings));
        assert!(w.contains(&format!("byte {offset}")), "{name}: {w}");
    }
}

#[test]
fn invalid_files_are_errors_naming_kind_and_offset() {
    for (name, kind, at) in INVALID {
        let e = load("invalid", name).expect_err(name);
        assert_eq!(e.kind, kind, "{name}: {}", e.message);
        assert_eq!((e.offset, e.line, e.column), (at.map(|a| a.0), at.map(|a| a.1), at.map(|a| a.2)), "{name}: {}", e.message);
        if let Some((offset, line, column)) = at {
            assert!(e.message.contains(&format!("at byte {offset} (line {line}, column {column})")), "{name}: {}", e.message);
        }
    }
}
