//! Estimated peaks for an NVIDIA GPU the peak table does not know, from what `deviceProperties`
//! says of it: compute capability (the architecture), SM count, and the clocks when present.
//!
//! **Inputs and outputs.** A [`DeviceProps`] -> [`Peaks`] whose `source` says "estimate" and
//! names every figure it used, or `None` when the trace does not say enough (no compute
//! capability or SM count, an architecture we have no rates for, an AMD GPU: ROCm's
//! `computeMajor` is not an NVIDIA architecture).
//!
//! **Rule.** Peak TFLOP/s = SMs x dense FLOPs per SM per clock of the architecture x clock.
//! The per-SM rates are the datasheet peaks of a known GPU of that architecture divided by its
//! SM count and the clock its datasheet figures use (V100: 80 SMs at 1.53 GHz, 125 TFLOP/s fp16
//! -> 1024; A100: 108 at 1.41, 312 -> 2048; A10: 72 at 1.695, 125 -> 1024; L40S: 142 at 2.52,
//! 362 -> 1024; H100 SXM: 132 at 1.83, 989 -> 4096; B200: 148 at 1.85, 2250 -> 8192). The clock
//! is `clockRate` when the trace has it, else that reference GPU's. Memory GB/s only from
//! `memoryClockRate` x `memoryBusWidth` (x2, double data rate), else unknown (no bound then).
//! GeForce parts halve tensor rates with fp32 accumulate: an estimate for one reads high.
//!
//! **Why** an estimate rather than nothing: MFU and %-of-peak on a new or renamed part
//! (`NVIDIA H800`-style export names, engineering samples) are still worth reading, labelled
//! as estimates; a datasheet row, when added, wins. References: docs/definitions.md §8.

use super::peaks::Peaks;
use crate::analysis::device::DeviceProps;

/// Dense FLOPs per SM per clock for fp32, tf32, bf16/fp16, fp8, fp4, and the reference clock in
/// GHz, for one architecture (compute capability major, minor or any minor).
struct Arch {
    major: i64,
    minor: Option<i64>,
    name: &'static str,
    per_sm_clk: [Option<f64>; 5],
    ghz: f64,
}

/// Most specific first (8.6 / 8.9 before 8.x; 10.3 before 10.x).
const ARCHS: &[Arch] = &[
    Arch { major: 7, minor: Some(5), name: "Turing (T4)", per_sm_clk: [Some(128.0), None, Some(1024.0), None, None], ghz: 1.59 },
    Arch { major: 7, minor: None, name: "Volta (V100)", per_sm_clk: [Some(128.0), None, Some(1024.0), None, None], ghz: 1.53 },
    Arch { major: 8, minor: Some(6), name: "Ampere GA10x (A10)", per_sm_clk: [Some(256.0), Some(512.0), Some(1024.0), None, None], ghz: 1.695 },
    Arch { major: 8, minor: Some(9), name: "Ada (L40S)", per_sm_clk: [Some(256.0), Some(512.0), Some(1024.0), Some(2048.0), None], ghz: 2.52 },
    Arch { major: 8, minor: None, name: "Ampere GA100 (A100)", per_sm_clk: [Some(128.0), Some(1024.0), Some(2048.0), None, None], ghz: 1.41 },
    Arch { major: 9, minor: None, name: "Hopper (H100 SXM)", per_sm_clk: [Some(256.0), Some(2048.0), Some(4096.0), Some(8192.0), None], ghz: 1.83 },
    Arch { major: 10, minor: None, name: "Blackwell (B200)", per_sm_clk: [Some(256.0), Some(4096.0), Some(8192.0), Some(16384.0), Some(32768.0)], ghz: 1.85 },
];

/// Estimated peaks of the NVIDIA GPU `d`, labelled as such; `None` when `d` does not say enough.
pub fn estimate(d: &DeviceProps) -> Option<Peaks> {
    let upper = d.name.to_ascii_uppercase();
    if upper.contains("AMD") || upper.contains("INSTINCT") || upper.contains("RADEON") {
        return None;
    }
    let (major, sms) = (d.major?, d.num_sms.filter(|&n| n > 0)?);
    let arch = ARCHS.iter().find(|a| a.major == major && a.minor.is_none_or(|m| Some(m) == d.minor))?;
    let (ghz, clock_from) = match d.clock_khz.filter(|&k| k > 0) {
        Some(khz) => (khz as f64 / 1e6, format!("clockRate {:.3} GHz", khz as f64 / 1e6)),
        None => (arch.ghz, format!("{} GHz, the {} datasheet clock", arch.ghz, arch.name)),
    };
    let tflops = arch.per_sm_clk.map(|r| r.map(|r| sms as f64 * r * ghz / 1e3));
    let gbps = d.memory.filter(|&(k, w)| k > 0 && w > 0).map(|(khz, bits)| 2.0 * khz as f64 * 1e3 * bits as f64 / 8.0 / 1e9);
    let memory = if gbps.is_some() { "memory from memoryClockRate x memoryBusWidth" } else { "memory bandwidth unknown" };
    let minor = d.minor.map_or(String::new(), |m| format!(".{m}"));
    Some(Peaks {
        model: format!("{} (estimated)", if d.name.is_empty() { "unknown NVIDIA GPU" } else { &d.name }),
        tflops,
        gbps,
        source: format!(
            "estimate, not a datasheet: compute capability {major}{minor} ({}), {sms} SMs x its dense FLOPs per SM per clock x {clock_from}; {memory}",
            arch.name
        ),
    })
}
