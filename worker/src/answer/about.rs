//! How and where a trace was recorded, from its top-level keys: the GPUs that ran its work
//! (`deviceProperties`), its rank (`distributedInfo`), runtime versions and profiler options.
//!
//! Runtime versions are decoded as the runtimes encode them: CUDA's `1000 * major + 10 *
//! minor` (12080 -> 12.8), HIP's `HIP_VERSION` `10^7 * major + 10^5 * minor + patch`
//! (60443483 -> 6.4.43483). Kineto writes the profiler options (`record_shapes`, ...) only when
//! they are on.

use crate::analysis::device::device_properties;
use crate::model::{ProcessKind, Trace};
use crate::run::rank;
use protocol::{DeviceAbout, DistributedAbout, TraceAbout};
use serde_json::Value;

/// Profiler options Kineto writes at the top level when they are on, in `torch.profiler`'s
/// order.
const OPTIONS: [&str; 5] = ["record_shapes", "profile_memory", "with_stack", "with_flops", "with_modules"];

/// The recording facts of `trace` (`file_name` names a rank when `distributedInfo` does not).
pub fn about(trace: &Trace, file_name: &str) -> TraceAbout {
    TraceAbout {
        devices: devices(trace),
        distributed: distributed(trace, file_name),
        recording: recording(&trace.top_level),
    }
}

/// The listed GPUs that have a device lane in the trace; every listed one when none does
/// (a trace whose device processes are not named by id).
fn devices(trace: &Trace) -> Vec<DeviceAbout> {
    let listed: Vec<DeviceAbout> = device_properties(trace)
        .into_iter()
        .map(|d| DeviceAbout {
            id: d.id,
            name: d.name,
            memory_bytes: d.total_mem,
            compute_capability: d.major.map(|major| format!("{major}.{}", d.minor.unwrap_or(0))),
            sms: d.num_sms,
        })
        .collect();
    let used: Vec<i64> = trace
        .processes
        .iter()
        .filter(|p| p.kind == ProcessKind::Gpu)
        .filter_map(|p| trace.strings.get(p.pid).trim().parse().ok())
        .collect();
    let ran: Vec<DeviceAbout> = listed.iter().filter(|d| used.contains(&d.id)).cloned().collect();
    if ran.is_empty() {
        listed
    } else {
        ran
    }
}

/// `distributedInfo` (its rank from the file name when it has none); `None` without it: a
/// file name alone (`..._worker0.pt.trace.json`) may name a data-loader worker, not a rank.
fn distributed(trace: &Trace, file_name: &str) -> Option<DistributedAbout> {
    let listed = trace.top_level.iter().any(|(k, _)| k == "distributedInfo");
    let id = rank::identify(file_name, &trace.top_level);
    listed.then_some(DistributedAbout {
        rank: id.rank,
        world_size: id.world_size,
        backend: id.backend,
    })
}

/// How a version number reads.
type Decode = fn(f64) -> String;

/// Runtime versions and the options that were on, as (label, value).
fn recording(top: &[(String, String)]) -> Vec<(String, String)> {
    let number = |key: &str| {
        top.iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| serde_json::from_str::<Value>(v).ok())
            .and_then(|v| v.as_f64())
    };
    let mut out = Vec::new();
    let versions: [(&str, &str, Decode); 7] = [
        ("cuda_runtime_version", "CUDA runtime", cuda_version),
        ("cuda_driver_version", "CUDA driver", cuda_version),
        ("cupti_version", "CUPTI API", plain),
        ("hip_runtime_version", "HIP runtime", hip_version),
        ("hip_driver_version", "HIP driver", hip_version),
        ("roctracer_version", "roctracer", plain),
        ("schemaVersion", "trace schema", plain),
    ];
    for (key, label, decode) in versions {
        if let Some(v) = number(key) {
            out.push((label.to_owned(), decode(v)));
        }
    }
    let on: Vec<&str> = OPTIONS.into_iter().filter(|o| number(o).is_some_and(|v| v != 0.0)).collect();
    out.push(("options".to_owned(), if on.is_empty() { "none recorded".to_owned() } else { on.join(", ") }));
    out
}

/// CUDA's `1000 * major + 10 * minor`.
fn cuda_version(v: f64) -> String {
    let v = v as i64;
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// HIP's `10^7 * major + 10^5 * minor + patch`.
fn hip_version(v: f64) -> String {
    let v = v as i64;
    format!("{}.{}.{}", v / 10_000_000, (v / 100_000) % 100, v % 100_000)
}

/// A number as the trace writes it (`4.1`, `26`).
fn plain(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_versions_decode_as_the_runtimes_encode_them() {
        assert_eq!(cuda_version(12080.0), "12.8");
        assert_eq!(cuda_version(12040.0), "12.4");
        assert_eq!(hip_version(60443483.0), "6.4.43483");
        assert_eq!(hip_version(70253211.0), "7.2.53211");
        assert_eq!(plain(4.1), "4.1");
        assert_eq!(plain(26.0), "26");
    }

    #[test]
    fn options_that_are_on_are_listed_in_the_profilers_order() {
        let top = vec![
            ("with_stack".to_owned(), "1".to_owned()),
            ("record_shapes".to_owned(), "1".to_owned()),
            ("profile_memory".to_owned(), "0".to_owned()),
            ("cuda_runtime_version".to_owned(), "12080".to_owned()),
        ];
        assert_eq!(
            recording(&top),
            vec![
                ("CUDA runtime".to_owned(), "12.8".to_owned()),
                ("options".to_owned(), "record_shapes, with_stack".to_owned()),
            ]
        );
    }
}
