//! The built-in demo trace: five profiled steps of a small training loop on one A100.
//!
//! Output: a Kineto trace in object form (`schemaVersion`, `deviceProperties`,
//! `distributedInfo`, CUPTI / CUDA versions, `displayTimeUnit`, `baseTimeNanoseconds`,
//! `traceEvents`, `traceName`), events in Kineto's order and layout. Timestamps are absolute µs
//! near `4.41e12` with three decimals, as recent PyTorch writes them (with `baseTimeNanoseconds`).
//!
//! What it shows (see `train.rs` for the step script): `ProfilerStep#1..5` with a slow cold first
//! step, `cpu_op`s with `Input Dims` / `Input type` nested as PyTorch nests them, backward on the
//! autograd thread, `cuda_runtime` calls with `ac2g` flows to kernels, memcpys and `cuda_sync`s,
//! `fwdbwd` flows, `[memory]` instants, GPU-side `ProfilerStep#N` (`gpu_user_annotation`), an
//! `Activity Buffer Request` overhead slice (on pid -1 as in real traces), a trailing
//! `cudaDeviceSynchronize`, metadata and the `PyTorch Profiler (0)` span. GPU utilization is
//! partial (about 35% in warm steps, 9% in the cold one): the data loader, which takes over half
//! of each step on the CPU, starves the GPU.
//!
//! Invariants: byte-identical output on every run and platform (no clock, no environment; a
//! fixed-seed PRNG; integer time), under 300 KB. The gzip form has no mtime or file name, so
//! `public/demo.pt.trace.json.gz` is reproducible (`worker/tests/synth.rs` checks it).
//! Cost: about 1,100 events (283 KB, 21 KB gzipped), built in milliseconds.

use std::borrow::Cow;
use std::io::{self, Write};

use flate2::{Compression, GzBuilder};

use super::sim::device::DeviceState;
use super::kineto::{push_event, push_str, Arg, Event, Id, Kind};
use super::sim::{Sim, BWD_TID, CPU_PID, GPU_PID, MAIN_TID, STREAM, US};
use super::train::Loop;

/// Number of profiled steps in the demo.
pub const STEPS: u32 = 5;
/// Start of the profiler span, ns (printed as µs: `4412345600012.345`).
const T0_NS: i64 = 4_412_345_600_012_345;
/// The trace's `baseTimeNanoseconds`.
const BASE_TIME_NS: i64 = 1_735_711_200_000_000_000;
/// Reserved CUDA memory before the first step (parameters live there), bytes.
const INITIAL_RESERVED: i64 = 40 << 20;

const HEADER: &str = r#"{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85095874560,
      "computeMajor": 8, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936,
      "numSms": 108, "sharedMemPerBlockOptin": 166912
    }
  ],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
  "cupti_version": 24,
  "cuda_runtime_version": 12040,
  "cuda_driver_version": 12040,
  "profile_memory": 1,
  "record_shapes": 1,
  "trace_id": "5D1E7A9C0B3F4E21A6C8D4F2B7E91A03",
"#;
const TRACE_NAME: &str = "./log/demo/kinetoscope-demo_48213.1735711234567.pt.trace.json";

/// The demo trace as uncompressed JSON bytes.
#[must_use]
pub fn generate() -> Vec<u8> {
    let events = events();
    let mut out = Vec::with_capacity(events.len() * 320);
    out.extend_from_slice(HEADER.as_bytes());
    out.extend_from_slice(b"  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
    out.extend_from_slice(BASE_TIME_NS.to_string().as_bytes());
    out.extend_from_slice(b",\n  \"traceEvents\": [\n");
    for (i, event) in events.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b",\n");
        }
        push_event(&mut out, event);
    }
    out.extend_from_slice(b"\n  ],\n  \"traceName\": ");
    push_str(&mut out, TRACE_NAME);
    out.extend_from_slice(b"\n}\n");
    out
}

/// Writes the demo trace (uncompressed) to `out`.
///
/// # Errors
/// Whatever `out` returns.
pub fn write(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(&generate())
}

/// The demo trace gzip-compressed, byte-identical on every run (no mtime, no file name).
#[must_use]
pub fn generate_gzip() -> Vec<u8> {
    let json = generate();
    let mut gz = Vec::with_capacity(json.len() / 4);
    let mut encoder = GzBuilder::new()
        .mtime(0)
        .write(&mut gz, Compression::best());
    let result = encoder.write_all(&json).and_then(|()| encoder.try_finish());
    drop(encoder);
    // There is no I/O underneath a Vec, so compression cannot fail.
    debug_assert!(result.is_ok(), "gzip into a Vec failed: {result:?}");
    gz
}

/// Runs the training loop and returns every event in output order.
fn events() -> Vec<Event> {
    let dev = DeviceState::new(Loop::param_bytes(), INITIAL_RESERVED);
    let mut sim = Sim::new(T0_NS + 412_711, dev);
    let mut train = Loop::new(14);
    for i in 0..STEPS {
        let cold = i == 0;
        sim.slow_pct = if cold { 350 } else { 100 };
        let external = sim.next_external();
        let first_activity = sim.activities.len();
        let name = format!("ProfilerStep#{}", i + 1);
        sim.annotation(name.clone(), |s| train.step(s, cold));
        if let Some(step) = gpu_step(&sim.activities[first_activity..], name, external) {
            sim.gpu_annotations.push(step);
        }
        sim.work(45 * US);
    }
    sim.slow_pct = 100;
    sim.work(60 * US);
    sim.device_sync();
    let end = sim.now + 210 * US;
    let buffer_request = Event {
        kind: Kind::Complete {
            cat: "overhead",
            dur_ns: 1_861_859,
        },
        name: Cow::Borrowed("Activity Buffer Request"),
        pid: Id::Num(-1),
        tid: Id::Num(0),
        ts_ns: T0_NS + 3_232_218,
        args: Vec::new(),
    };
    sim.activities.insert(0, buffer_request);
    let mut events = sim.into_events();
    events.extend(metadata(T0_NS + 108_354));
    events.extend(profiler_span(end));
    events
}

/// The GPU-side copy of a step: from its first to its last device activity on the stream.
fn gpu_step(activities: &[Event], name: String, external: i64) -> Option<Event> {
    let on_stream = activities.iter().filter(|e| {
        matches!(e.kind, Kind::Complete { .. })
            && e.pid == Id::Num(GPU_PID)
            && e.tid == Id::Num(STREAM)
    });
    let (start, end) = on_stream.fold(None, |span: Option<(i64, i64)>, e| {
        let (s, t) = (e.ts_ns, e.ts_ns + e.dur_ns());
        Some(span.map_or((s, t), |(a, b)| (a.min(s), b.max(t))))
    })?;
    Some(Event {
        kind: Kind::Complete {
            cat: "gpu_user_annotation",
            dur_ns: end - start,
        },
        name: Cow::Owned(name),
        pid: Id::Num(GPU_PID),
        tid: Id::Num(STREAM),
        ts_ns: start,
        args: vec![("External id", Arg::Int(external))],
    })
}

fn meta(name: &'static str, ts_ns: i64, pid: Id, tid: i64, key: &'static str, value: Arg) -> Event {
    Event {
        kind: Kind::Meta,
        name: Cow::Borrowed(name),
        pid,
        tid: Id::Num(tid),
        ts_ns,
        args: vec![(key, value)],
    }
}

/// Process and thread names and sort order, as Kineto writes them after the events.
fn metadata(ts: i64) -> Vec<Event> {
    let text = |s: &'static str| Arg::Str(Cow::Borrowed(s));
    let owned = |s: String| Arg::Str(Cow::Owned(s));
    let (cpu, gpu) = (Id::Num(CPU_PID), Id::Num(GPU_PID));
    let mut out = vec![
        meta("process_name", ts, cpu, 0, "name", text("python3")),
        meta("process_labels", ts, cpu, 0, "labels", text("CPU")),
        meta(
            "process_sort_index",
            ts,
            cpu,
            0,
            "sort_index",
            Arg::Int(CPU_PID),
        ),
        meta("process_name", ts, gpu, 0, "name", text("python3")),
        meta("process_labels", ts, gpu, 0, "labels", text("GPU 0")),
        meta(
            "process_sort_index",
            ts,
            gpu,
            0,
            "sort_index",
            Arg::Int(5_000_000),
        ),
        meta("thread_name", ts, gpu, -1, "name", text("Device 0")),
        meta("thread_sort_index", ts, gpu, -1, "sort_index", Arg::Int(-1)),
        meta("thread_name", ts, gpu, STREAM, "name", text("stream 7 ")),
        meta(
            "thread_sort_index",
            ts,
            gpu,
            STREAM,
            "sort_index",
            Arg::Int(STREAM),
        ),
    ];
    for tid in [MAIN_TID, BWD_TID] {
        out.push(meta(
            "thread_name",
            ts,
            cpu,
            tid,
            "name",
            owned(format!("thread {tid} (python3)")),
        ));
        out.push(meta(
            "thread_sort_index",
            ts,
            cpu,
            tid,
            "sort_index",
            Arg::Int(tid),
        ));
    }
    out
}

/// The profiler's own span and global instants, last in every Kineto trace.
fn profiler_span(end_ns: i64) -> Vec<Event> {
    let global = |name: &'static str, pid, tid, ts_ns| Event {
        kind: Kind::Instant {
            cat: None,
            scope: "g",
        },
        name: Cow::Borrowed(name),
        pid: Id::Str(pid),
        tid: Id::Str(tid),
        ts_ns,
        args: Vec::new(),
    };
    vec![
        Event {
            kind: Kind::Complete {
                cat: "Trace",
                dur_ns: end_ns - T0_NS,
            },
            name: Cow::Borrowed("PyTorch Profiler (0)"),
            pid: Id::Str("Spans"),
            tid: Id::Str("PyTorch Profiler"),
            ts_ns: T0_NS,
            args: vec![("Op count", Arg::Int(0))],
        },
        meta(
            "process_sort_index",
            T0_NS,
            Id::Str("Spans"),
            0,
            "sort_index",
            Arg::Int(536_870_912),
        ),
        global(
            "Iteration Start: PyTorch Profiler",
            "Traces",
            "Trace PyTorch Profiler",
            T0_NS,
        ),
        global("Record Window End", "", "", end_ns + 1_337 * US / 10),
    ]
}
