//! Robustness: thousands of mutated real traces (bit flips, cuts, splices, junk bytes) load or
//! fail with an error, never panic. A deterministic, always-on complement to fuzzing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

/// xorshift64*: deterministic so a failure reproduces from its case number.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len());
        match rng.below(5) {
            0 => v[at] ^= 1 << rng.below(8),
            1 => v.truncate(at),
            2 => {
                let junk: Vec<u8> = (0..rng.below(8) + 1).map(|_| rng.next() as u8).collect();
                v.splice(at..at, junk);
            }
            3 => {
                let tokens: [&[u8]; 8] = [b"{", b"}", b"[", b"]", b"\"", b",", b":", b"\\u12"];
                v.splice(at..at, tokens[rng.below(tokens.len())].iter().copied());
            }
            _ => {
                let end = (at + rng.below(64)).min(v.len());
                v.drain(at..end);
            }
        }
        if v.is_empty() {
            break;
        }
    }
    v
}

#[test]
fn mutated_traces_never_panic() {
    let bases: Vec<Vec<u8>> = ["gpumodel__trace.json", "catapult__simple_trace.json", "speedscope__simple-partial.json", "hta__triton_example.json.gz"]
        .iter()
        .map(|n| common::json_bytes(&common::real(n)))
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut loaded, mut failed) = (0, 0);
    for case in 0..3000 {
        let base = &bases[case % bases.len()];
        let input = mutate(&mut rng, base);
        let outcome = std::panic::catch_unwind(|| common::load_bytes("mutated.json", input.clone()).1);
        match outcome {
            Ok(Ok(_)) => loaded += 1,
            Ok(Err(e)) => {
                assert!(!e.message.is_empty(), "case {case}: empty error message");
                failed += 1;
            }
            Err(_) => panic!("case {case} panicked; input: {:?}", String::from_utf8_lossy(&input)),
        }
    }
    assert!(loaded > 0 && failed > 0, "loaded {loaded}, failed {failed}");
}
