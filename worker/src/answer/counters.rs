//! Counter tracks: GPU utilization and SM efficiency per device (from the GPU analysis' sweep)
//! and allocated memory per device (from the `[memory]` series), bucketed over a window; and
//! the duration histogram of one kernel.

use crate::analysis::gpu::GpuIndex;
use crate::analysis::memory::{Memory, MemorySample};
use crate::model::{CatClass, Trace};
use protocol::{CounterSeries, CounterSet, Histogram};

/// Most buckets per series.
pub const MAX_BUCKETS: u32 = 4096;

/// The counter tracks over `[start_ns, end_ns)` in at most `buckets` buckets.
pub fn counters(
    gpu: &GpuIndex,
    memory: &Memory,
    (start_ns, end_ns): (i64, i64),
    buckets: u32,
) -> CounterSet {
    let n = i64::from(buckets.clamp(1, MAX_BUCKETS));
    let bucket_ns = ((end_ns.saturating_sub(start_ns)) / n).max(1);
    let mut series = Vec::new();
    for device in gpu.devices() {
        let samples = gpu.timeseries(device, (start_ns, end_ns), bucket_ns);
        let util: Vec<Option<f64>> = samples.iter().map(|s| Some(s.utilization)).collect();
        series.push(CounterSeries {
            device,
            metric: "utilization".into(),
            label: format!("GPU {device} utilization"),
            values: util,
            max: 1.0,
        });
        if samples.iter().any(|s| s.sm_efficiency.is_some()) {
            series.push(CounterSeries {
                device,
                metric: "sm_efficiency".into(),
                label: format!("GPU {device} SM efficiency"),
                values: samples.iter().map(|s| s.sm_efficiency).collect(),
                max: 1.0,
            });
        }
    }
    for dev in &memory.devices {
        series.push(CounterSeries {
            device: dev.device_id,
            metric: "memory".into(),
            label: format!("{} allocated", dev.label),
            values: bucket_peaks(&dev.series, |s| s.allocated, (start_ns, end_ns), bucket_ns),
            max: dev.peak_allocated as f64,
        });
    }
    CounterSet {
        start_ns,
        bucket_ns,
        series,
    }
}

/// The peak of `value` over each bucket of `[start_ns, end_ns)` (`bucket_ns` wide, at least 1),
/// counting the value carried in from the last sample before the bucket (`None` before the
/// first sample): a spike narrower than a bucket stays visible.
pub fn bucket_peaks(
    samples: &[MemorySample],
    value: impl Fn(&MemorySample) -> i64,
    (start_ns, end_ns): (i64, i64),
    bucket_ns: i64,
) -> Vec<Option<f64>> {
    let bucket_ns = bucket_ns.max(1);
    let mut values = Vec::new();
    let mut k = samples.partition_point(|s| s.ts_ns < start_ns);
    let mut last = k.checked_sub(1).and_then(|k| samples.get(k)).map(&value);
    let mut b0 = start_ns;
    while b0 < end_ns {
        let b1 = b0.saturating_add(bucket_ns).min(end_ns);
        let mut peak = last;
        while let Some(s) = samples.get(k).filter(|s| s.ts_ns < b1) {
            let v = value(s);
            peak = Some(peak.map_or(v, |p| p.max(v)));
            last = Some(v);
            k += 1;
        }
        values.push(peak.map(|v| v as f64));
        b0 = b1;
    }
    values
}

/// Durations of the kernels named `name` in `bins` (1..=MAX_BUCKETS) equal-width bins.
pub fn histogram(trace: &Trace, name: &str, bins: u32) -> Histogram {
    let s = &trace.slices;
    let mut durs: Vec<i64> = match trace.strings.lookup(name) {
        Some(id) => (0..s.len())
            .filter(|&i| s.name[i] == id && trace.class(s.cat[i]) == CatClass::Kernel)
            .map(|i| s.dur_ns[i])
            .collect(),
        None => Vec::new(),
    };
    durs.sort_unstable();
    let (Some(&min_ns), Some(&max_ns)) = (durs.first(), durs.last()) else {
        return Histogram {
            name: name.to_owned(),
            width_ns: 1,
            ..Histogram::default()
        };
    };
    let n = i64::from(bins.clamp(1, MAX_BUCKETS));
    let width_ns = ((max_ns - min_ns) / n + 1).max(1);
    let mut counts = vec![0u64; n as usize];
    for &d in &durs {
        let b = ((d - min_ns) / width_ns).clamp(0, n - 1) as usize;
        counts[b] += 1;
    }
    Histogram {
        name: name.to_owned(),
        min_ns,
        max_ns,
        width_ns,
        counts,
        total: durs.len() as u64,
        median_ns: durs[durs.len() / 2],
    }
}
