//! Findings on a truncated copy of a real trace: the data loss is said first, and no finding
//! that depends on the missing events is a warning (`finding::incomplete`); the complete file's
//! warnings stay as they were.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::finding::{Finding, Severity};

/// dlrm rank 1: its `traceEvents` cut at 70% of what follows the key, where the kernels of the
/// step's second half are lost but its host calls are kept (before the rule: a 51.8% idle
/// `overhead-bound` and a 48.2% utilization `gpu-idle` warning, above the data loss).
const FIXTURE: &str = "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json";

/// The findings of `bytes` loaded through the engine, and whether it read them as truncated.
fn findings(bytes: Vec<u8>) -> (bool, Vec<Finding>) {
    let (engine, summary) = common::load_bytes("cut.json", bytes);
    let truncated = summary.unwrap().truncated;
    (truncated, engine.session().unwrap().findings().to_vec())
}

/// Rule ids of the findings that are warnings or alerts.
fn warnings(fs: &[Finding]) -> Vec<&'static str> {
    fs.iter().filter(|f| f.severity > Severity::Info).map(|f| f.rule).collect()
}

#[test]
fn truncated_copy_says_data_loss_first_and_warns_of_nothing_it_lost() {
    let json = common::json_bytes(&common::real(FIXTURE));
    let key = json.windows(13).position(|w| w == b"\"traceEvents\"").unwrap();
    for tenths in [7, 9] {
        let cut = key + (json.len() - key) * tenths / 10;
        let (truncated, fs) = findings(json[..cut].to_vec());
        assert!(truncated, "cut at {cut}");
        assert_eq!(fs.first().map(|f| f.rule), Some("health-data-loss"), "cut at {cut}: {:?}", warnings(&fs));
        assert_eq!(warnings(&fs), ["health-data-loss"], "cut at {cut}");
        assert!(!fs.iter().any(|f| f.rule == "gpu-idle" || f.rule == "overhead-bound"), "cut at {cut}: idle time is the lost part");
        let told = fs.iter().find(|f| f.rule == "comm-heavy").expect("comm-heavy still said, as info");
        assert!(told.why.contains("Incomplete recording: the file is truncated"), "{}", told.why);
    }
}

#[test]
fn complete_file_keeps_its_warnings() {
    let (truncated, fs) = findings(common::json_bytes(&common::real(FIXTURE)));
    assert!(!truncated);
    assert_eq!(warnings(&fs), ["comm-heavy", "comm-not-overlapped"]);
    assert!(fs.iter().all(|f| !f.why.contains("Incomplete recording")));
}
