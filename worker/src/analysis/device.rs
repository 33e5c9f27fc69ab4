//! The trace's top-level `deviceProperties`: one entry per GPU (id, name, memory, compute
//! capability, SM count, clocks when present), read once where a rule or the roofline needs it.

use crate::model::Trace;
use serde_json::Value;

/// One entry of `deviceProperties`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProps {
    /// `id` (the entry's position when absent).
    pub id: i64,
    /// `name` ("" when absent).
    pub name: String,
    /// `totalGlobalMem`, bytes.
    pub total_mem: Option<i64>,
    /// `computeMajor`.
    pub major: Option<i64>,
    /// `computeMinor`.
    pub minor: Option<i64>,
    /// `numSms` (multiprocessors).
    pub num_sms: Option<i64>,
    /// `clockRate`, kHz (cudaDeviceProp's; Kineto does not write it, other exporters may).
    pub clock_khz: Option<i64>,
    /// `memoryClockRate`, kHz, and `memoryBusWidth`, bits (likewise optional).
    pub memory: Option<(i64, i64)>,
}

/// The devices listed in `deviceProperties` (empty when absent or unreadable).
pub fn device_properties(trace: &Trace) -> Vec<DeviceProps> {
    let Some((_, raw)) = trace.top_level.iter().find(|(k, _)| k == "deviceProperties") else {
        return Vec::new();
    };
    // A few hundred bytes once per trace: serde is fine here.
    let Ok(Value::Array(list)) = serde_json::from_str::<Value>(raw) else {
        return Vec::new();
    };
    list.iter()
        .enumerate()
        .map(|(k, d)| DeviceProps {
            id: d.get("id").and_then(Value::as_i64).unwrap_or(k as i64),
            name: d.get("name").and_then(Value::as_str).unwrap_or("").to_owned(),
            total_mem: d.get("totalGlobalMem").and_then(Value::as_i64),
            major: d.get("computeMajor").and_then(Value::as_i64),
            minor: d.get("computeMinor").and_then(Value::as_i64),
            num_sms: d.get("numSms").and_then(Value::as_i64),
            clock_khz: d.get("clockRate").and_then(Value::as_i64),
            memory: d.get("memoryClockRate").and_then(Value::as_i64).zip(d.get("memoryBusWidth").and_then(Value::as_i64)),
        })
        .collect()
}
