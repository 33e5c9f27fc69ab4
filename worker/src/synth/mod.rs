//! Synthetic traces: the built-in demo and large benchmark inputs.
//!
//! Two producers, both pure functions over bytes (no files, clocks or environment):
//!
//! - [`demo`] writes a small, deterministic Kineto trace of a five-step training loop (an MLP
//!   trained with AdamW on one A100), shaped like what `torch.profiler` exports: CPU ops with
//!   shapes, runtime calls, kernels, memcpys, `ac2g` / `fwdbwd` flows, `[memory]` instants,
//!   GPU-side step annotations and the profiler span. The app opens it from `public/` as the demo.
//! - [`inflate`] repeats the events of a real trace along time, renumbering every linking id, to
//!   make inputs of any size (hundreds of MB to GB) for benchmarks and stress tests.
//!
//! Inside, [`kineto`] serializes events in Kineto's own layout and [`sim`] is the small CPU/GPU
//! timing model the demo script runs on (host side; [`device`] adds
//! the GPU stream, runtime calls and the caching allocator); [`scan`] is the raw JSON scanner `inflate` uses so it can
//! copy event text byte for byte.
//!
//! Time is kept as `i64` nanoseconds everywhere and printed as microseconds with three decimals,
//! exactly as Kineto prints it; no float ever touches a timestamp, so values near `4.4e12` µs stay
//! exact (an `f64` would drift by up to a nanosecond per operation there).

pub mod demo;
mod device;
pub mod inflate;
mod kernels;
mod kineto;
mod scan;
mod sim;
mod train;

/// Appends `ns` as microseconds with exactly three decimals (`4412345678901.234`).
pub(crate) fn push_us(out: &mut Vec<u8>, ns: i64) {
    use std::io::Write as _;
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    // Writing into a Vec never fails.
    let _ = write!(out, "{sign}{}.{:03}", abs / 1000, abs % 1000);
}

#[cfg(test)]
mod tests {
    use super::push_us;

    #[test]
    fn push_us_prints_three_decimals() {
        let mut out = Vec::new();
        for ns in [4_412_345_678_901_234, 5, -1_500, 0] {
            push_us(&mut out, ns);
            out.push(b' ');
        }
        assert_eq!(out, b"4412345678901.234 0.005 -1.500 0.000 ");
    }
}
