//! Feeds arbitrary bytes to the engine (sequential and split parse); only checks it never panics.
#![no_main]

use kinetoscope::engine::Engine;
use kinetoscope::load::{assemble, parse_part, plan};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut engine = Engine::new();
    let _ = engine.load("fuzz.json", data.to_vec(), &mut |_, _, _| {});
    if let Ok(plan) = plan(data, 3) {
        let parts = (0..plan.parts.len()).map(|i| parse_part(data, &plan, i, &mut |_| {})).collect();
        let _ = assemble(data, &plan, parts);
    }
});
