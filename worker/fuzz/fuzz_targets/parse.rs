//! Feeds arbitrary bytes to the engine: the sequential parse, the split parse with every part
//! sent through its byte encoding (as the browser's parse workers do), and the part decoder
//! itself (a part arriving corrupted). Only checks that nothing panics.
#![no_main]

use kinetoscope::engine::Engine;
use kinetoscope::load::{assemble, parse_piece, plan, Part};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut engine = Engine::new();
    let _ = engine.load("fuzz.json", data.to_vec(), &mut |_, _, _| {});
    if let Ok(plan) = plan(data, 3) {
        let parts = (0..plan.parts.len())
            .filter_map(|i| plan.piece(i))
            .map(|(piece, range)| {
                let encoded = parse_piece(&data[range], piece, &mut |_| {}).encode();
                Part::decode(&encoded).unwrap_or_else(|e| panic!("a part's own encoding does not decode: {e}"))
            })
            .collect();
        let _ = assemble(data, &plan, parts);
    }
    let _ = Part::decode(data);
});
