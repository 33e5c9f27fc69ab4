//! Synthetic traces: the demo's shape and determinism, and inflate's renumbering.

use kinetoscope::synth::demo;

#[test]
fn scratch_dump() {
    std::fs::write("/tmp/demo.json", demo::generate()).unwrap();
}
