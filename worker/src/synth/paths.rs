//! Synthetic one-step traces whose critical path is known by construction, for the critical
//! path analysis (`crate::analysis::critical_path`).
//!
//! **Why synthetic.** No real fixture isolates one bound: each [`Case`] builds a step bound by
//! one thing (Python between launches, GPU compute, a device sync, a cross-stream wait, a
//! collective waiting for a late rank, a CUDA-graph replay); two more record their syncs as
//! `cuda_sync` events (PyTorch >= 2.1) beside a decoy kernel on a third stream that only the
//! record tells apart from what was waited for. A small timing model places
//! every event: a launch call takes [`CALL_NS`]; its activity starts at the latest of the
//! call's start + the launch latency, the previous activity's end on its stream + [`GAP_NS`],
//! and (cross-stream) the awaited activity's end + [`WAIT_NS`]; a blocking call returns
//! [`RETURN_NS`] after the later of its start and the GPU's last end. So a [`Knobs`] change
//! (kernels faster, launches free, the sync removed) re-run here is the ground truth a what-if
//! on the unchanged trace must reproduce. The paths and shares of each case are derived by
//! hand in `worker/tests/critical_path.rs`.

use super::kineto::{push_event, Arg, Event, Id, Kind};
use std::borrow::Cow;

/// A runtime call's duration.
pub const CALL_NS: i64 = 4_000;
/// Gap between an activity and the one queued behind it on a stream.
pub const GAP_NS: i64 = 1_000;
/// A blocking call's return after the GPU work it waited for.
pub const RETURN_NS: i64 = 2_000;
/// An all-reduce's time after the last rank arrived ([`generate_run`]).
pub const COLLECTIVE_NS: i64 = 400_000;
/// A stream's start after the awaited activity on another stream ends.
pub const WAIT_NS: i64 = 2_000;
/// Default launch latency (call start to activity start on an empty stream).
pub const LAUNCH_NS: i64 = 5_000;

const US: i64 = 1_000;
const T0_NS: i64 = 1_700_000_000_000_000;
const CPU_PID: i64 = 4242;
const GPU_PID: i64 = 0;
const MAIN_STREAM: i64 = 7;
const SIDE_STREAM: i64 = 20;
const DECOY_STREAM: i64 = 21;
/// The decoy kernel (launched at 19 µs, from 24 µs) ends 1 µs after the GEMM (16-216 µs)
/// that a stream waits for or the CPU synchronizes with: the latest end a guess would pick.
const DECOY_NS: i64 = 193_000;
const GEMM: &str = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel";
const ELEMENTWISE: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>";
const ALLREDUCE: &str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

/// Which bound a trace is built to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// Python between launches; tiny kernels.
    CpuBound,
    /// Long GEMMs queued back to back; the CPU is done early.
    GpuBound,
    /// The CPU waits in `cudaDeviceSynchronize`, then runs more ops.
    DeviceSync,
    /// A kernel on a second stream waits for a GEMM on the first.
    CrossStream,
    /// An all-reduce that waited for a late rank outlasts everything else.
    Collective,
    /// One `cudaGraphLaunch` replays five GEMMs.
    GraphReplay,
    /// A kernel on a second stream waits for a GEMM by `cudaStreamWaitEvent`, recorded as a
    /// `Stream Wait Event`; a decoy on a third stream ends between the two.
    EventWait,
    /// `cudaStreamSynchronize` of the GEMM's stream, recorded as a `Stream Sync`; a decoy on a
    /// third stream ends inside the call after the GEMM.
    StreamSync,
}

impl Case {
    /// Every case.
    pub const ALL: [Case; 8] = [
        Case::CpuBound,
        Case::GpuBound,
        Case::DeviceSync,
        Case::CrossStream,
        Case::Collective,
        Case::GraphReplay,
        Case::EventWait,
        Case::StreamSync,
    ];
}

/// What a re-run changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knobs {
    /// GEMM kernel durations are multiplied by this.
    pub gemm_scale: f64,
    /// Communication kernel durations are multiplied by this.
    pub comm_scale: f64,
    /// Time between ops is multiplied by this.
    pub python_scale: f64,
    /// Launch latency, ns.
    pub launch_ns: i64,
    /// False: blocking calls return without waiting for the GPU.
    pub sync: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs { gemm_scale: 1.0, comm_scale: 1.0, python_scale: 1.0, launch_ns: LAUNCH_NS, sync: true }
    }
}

/// The trace of `case` under `knobs`, as uncompressed JSON bytes.
pub fn generate(case: Case, knobs: Knobs) -> Vec<u8> {
    let mut sim = Sim::new(knobs, None);
    let start = sim.t;
    match case {
        Case::CpuBound => {
            for _ in 0..10 {
                sim.python(20 * US);
                sim.op("aten::mm", 5 * US, 6 * US, |s| {
                    s.launch(GEMM, MAIN_STREAM, 3 * US, None);
                });
            }
            sim.python(20 * US);
        }
        Case::GpuBound => {
            sim.python(10 * US);
            for _ in 0..10 {
                sim.op("aten::mm", US, US, |s| {
                    s.launch(GEMM, MAIN_STREAM, 100 * US, None);
                });
                sim.python(2 * US);
            }
        }
        Case::DeviceSync => {
            sim.python(10 * US);
            for _ in 0..5 {
                sim.op("aten::mm", US, US, |s| {
                    s.launch(GEMM, MAIN_STREAM, 100 * US, None);
                });
                sim.python(2 * US);
            }
            sim.device_sync();
            for _ in 0..3 {
                sim.python(5 * US);
                sim.op("aten::add", 20 * US, 0, |_| {});
            }
        }
        Case::CrossStream => {
            sim.python(10 * US);
            let awaited = sim.op("aten::mm", US, US, |s| s.launch(GEMM, MAIN_STREAM, 200 * US, None));
            sim.python(2 * US);
            sim.op("aten::add", US, US, |s| {
                s.launch(ELEMENTWISE, SIDE_STREAM, 100 * US, Some(awaited));
            });
            sim.python(3 * US);
        }
        Case::Collective => {
            sim.python(10 * US);
            sim.op("aten::mm", US, US, |s| {
                s.launch(GEMM, MAIN_STREAM, 100 * US, None);
            });
            sim.python(2 * US);
            sim.op("c10d::allreduce_", US, US, |s| {
                s.launch(ALLREDUCE, SIDE_STREAM, 400 * US, None);
            });
            sim.python(3 * US);
        }
        Case::GraphReplay => {
            sim.python(10 * US);
            sim.op("CUDAGraph::replay", 2 * US, 2 * US, |s| s.graph_launch(GEMM, MAIN_STREAM, 50 * US, 5, 10 * US));
            sim.python(3 * US);
        }
        Case::EventWait => {
            let awaited = sim.gemm_and_decoy();
            sim.stream_wait_event(SIDE_STREAM, MAIN_STREAM);
            sim.python(2 * US);
            sim.op("aten::add", US, US, |s| {
                s.launch(ELEMENTWISE, SIDE_STREAM, 100 * US, Some(awaited));
            });
            sim.python(3 * US);
        }
        Case::StreamSync => {
            sim.gemm_and_decoy();
            sim.stream_sync(MAIN_STREAM);
            sim.python(3 * US);
            sim.op("aten::add", 20 * US, 0, |_| {});
        }
    }
    sim.end_step(start)
}

/// The traces of a two-rank data-parallel step: each rank launches a GEMM on stream 7 and an
/// all-reduce on stream 20 that waits for it (its arrival), then `cudaDeviceSynchronize`.
/// Rank 1's GEMM is `late_ns` longer, so rank 0's all-reduce waits `late_ns` for it inside; both
/// end [`COLLECTIVE_NS`] after the last arrival. Rank 0's path, joined at the all-reduce, runs
/// through rank 1's GEMM for that wait.
pub fn generate_run(late_ns: i64) -> [Vec<u8>; 2] {
    let arrival = |rank: u32| 10 * US + US + LAUNCH_NS + 100 * US + if rank == 1 { late_ns } else { 0 } + WAIT_NS;
    let last_arrival = arrival(0).max(arrival(1));
    [0, 1].map(|rank| {
        let mut sim = Sim::new(Knobs::default(), Some(rank));
        let start = sim.t;
        sim.python(10 * US);
        let gemm_ns = 100 * US + if rank == 1 { late_ns } else { 0 };
        let awaited = sim.op("aten::mm", US, US, |s| s.launch(GEMM, MAIN_STREAM, gemm_ns, None));
        sim.python(2 * US);
        sim.op("c10d::allreduce_", US, US, |s| s.launch_collective(SIDE_STREAM, awaited, last_arrival));
        sim.python(2 * US);
        sim.device_sync();
        sim.python(3 * US);
        sim.end_step(start)
    })
}

/// The timing model: the main thread's clock, each stream's free time, the events so far.
struct Sim {
    t: i64,
    knobs: Knobs,
    events: Vec<Event>,
    corr: i64,
    /// (stream, time it is free).
    free: Vec<(i64, i64)>,
    last_launched_end: i64,
    /// The rank written in `distributedInfo` (world size 2), if any.
    rank: Option<u32>,
}

impl Sim {
    fn new(knobs: Knobs, rank: Option<u32>) -> Self {
        Sim { t: 0, knobs, events: Vec::new(), corr: 100, free: Vec::new(), last_launched_end: 0, rank }
    }

    /// The step annotation over the CPU's work since `start`, and the trace.
    fn end_step(mut self, start: i64) -> Vec<u8> {
        let cpu_end = self.t;
        self.complete("ProfilerStep#1", "user_annotation", CPU_PID, CPU_PID, start, cpu_end - start, Vec::new());
        self.into_json()
    }

    fn python(&mut self, ns: i64) {
        self.t += (ns as f64 * self.knobs.python_scale).round() as i64;
    }

    /// An op: `before` ns of its own, `body`, `after` ns of its own; returns `body`'s value.
    fn op<R>(&mut self, name: &'static str, before: i64, after: i64, body: impl FnOnce(&mut Sim) -> R) -> R {
        let start = self.t;
        self.t += before;
        let value = body(self);
        self.t += after;
        self.complete(name, "cpu_op", CPU_PID, CPU_PID, start, self.t - start, Vec::new());
        value
    }

    /// 10 Python, a 200 µs GEMM on the main stream (16-216 µs), 2 Python, the decoy on a
    /// third stream (24-217 µs); returns the GEMM's end.
    fn gemm_and_decoy(&mut self) -> i64 {
        self.python(10 * US);
        let gemm_end = self.op("aten::mm", US, US, |s| s.launch(GEMM, MAIN_STREAM, 200 * US, None));
        self.python(2 * US);
        self.op("aten::mul", US, US, |s| s.launch(ELEMENTWISE, DECOY_STREAM, DECOY_NS, None));
        gemm_end
    }

    fn stream_free(&self, stream: i64) -> Option<i64> {
        self.free.iter().find(|(s, _)| *s == stream).map(|(_, t)| *t)
    }

    fn set_free(&mut self, stream: i64, t: i64) {
        match self.free.iter_mut().find(|(s, _)| *s == stream) {
            Some(entry) => entry.1 = t,
            None => self.free.push((stream, t)),
        }
        self.last_launched_end = self.last_launched_end.max(t);
    }

    fn scaled(&self, name: &str, dur: i64) -> i64 {
        let factor = if name == GEMM {
            self.knobs.gemm_scale
        } else if name == ALLREDUCE {
            self.knobs.comm_scale
        } else {
            1.0
        };
        (dur as f64 * factor).round() as i64
    }

    /// A `cudaLaunchKernel` at the clock; its kernel waits for `after` (an activity's end) if
    /// given. Returns the kernel's end.
    fn launch(&mut self, kernel: &'static str, stream: i64, dur: i64, after: Option<i64>) -> i64 {
        let (call, corr) = (self.t, self.runtime_call("cudaLaunchKernel", CALL_NS));
        let mut start = call + self.knobs.launch_ns;
        if let Some(free) = self.stream_free(stream) {
            start = start.max(free + GAP_NS);
        }
        if let Some(awaited) = after {
            start = start.max(awaited + WAIT_NS);
        }
        let end = self.kernel(kernel, stream, start, dur, corr);
        self.t += CALL_NS;
        end
    }

    /// A `cudaLaunchKernel` of the all-reduce on `stream`: it starts (arrives) after `awaited`
    /// ends, and ends [`COLLECTIVE_NS`] after `last_arrival` (every rank's end together).
    fn launch_collective(&mut self, stream: i64, awaited: i64, last_arrival: i64) {
        let (call, corr) = (self.t, self.runtime_call("cudaLaunchKernel", CALL_NS));
        let start = (call + self.knobs.launch_ns).max(awaited + WAIT_NS);
        let end = start.max(last_arrival) + COLLECTIVE_NS;
        self.kernel(ALLREDUCE, stream, start, end - start, corr);
        self.t += CALL_NS;
    }

    /// One `cudaGraphLaunch` replaying `count` kernels in stream order.
    fn graph_launch(&mut self, kernel: &'static str, stream: i64, dur: i64, count: usize, call_ns: i64) {
        let (call, corr) = (self.t, self.runtime_call("cudaGraphLaunch", call_ns));
        for _ in 0..count {
            let mut start = call + self.knobs.launch_ns;
            if let Some(free) = self.stream_free(stream) {
                start = start.max(free + GAP_NS);
            }
            self.kernel(kernel, stream, start, dur, corr);
        }
        self.t += call_ns;
    }

    fn kernel(&mut self, name: &'static str, stream: i64, start: i64, dur: i64, corr: i64) -> i64 {
        let dur = self.scaled(name, dur);
        let args = vec![
            ("device", Arg::Int(0)),
            ("stream", Arg::Int(stream)),
            ("correlation", Arg::Int(corr)),
            ("grid", Arg::Raw("[132, 1, 1]".into())),
            ("block", Arg::Raw("[256, 1, 1]".into())),
        ];
        self.complete(name, "kernel", GPU_PID, stream, start, dur, args);
        self.set_free(stream, start + dur);
        start + dur
    }

    /// `cudaDeviceSynchronize`: returns after the GPU's last end (or at once without sync).
    fn device_sync(&mut self) {
        let call = self.t;
        let gpu_end = if self.knobs.sync { self.last_launched_end } else { call };
        let end = call.max(gpu_end) + RETURN_NS;
        self.complete("cudaDeviceSynchronize", "cuda_runtime", CPU_PID, CPU_PID, call, end - call, Vec::new());
        self.t = end;
    }

    /// `cudaEventRecord` on `on`, then `cudaStreamWaitEvent` making `waiting` wait for it, with
    /// the `Stream Wait Event` record on `waiting`'s lane. The caller passes the awaited end to
    /// the next launch on `waiting` (the timing model has no event objects).
    fn stream_wait_event(&mut self, waiting: i64, on: i64) {
        let record = self.runtime_call("cudaEventRecord", CALL_NS);
        self.t += CALL_NS;
        let corr = self.runtime_call("cudaStreamWaitEvent", CALL_NS);
        let args = vec![
            ("cuda_sync_kind", Arg::Str(Cow::Borrowed("Stream Wait Event"))),
            ("wait_on_stream", Arg::Int(on)),
            ("wait_on_cuda_event_record_corr_id", Arg::Int(record)),
            ("stream", Arg::Int(waiting)),
            ("correlation", Arg::Int(corr)),
            ("device", Arg::Int(0)),
        ];
        self.complete("Stream Wait Event", "cuda_sync", GPU_PID, waiting, self.t + US, 0, args);
        self.t += CALL_NS;
    }

    /// `cudaStreamSynchronize` of `stream`: returns after that stream's last end (or at once
    /// without sync), with the `Stream Sync` record inside the call.
    fn stream_sync(&mut self, stream: i64) {
        let call = self.t;
        let busy = if self.knobs.sync { self.stream_free(stream).unwrap_or(call) } else { call };
        let end = call.max(busy) + RETURN_NS;
        let corr = self.runtime_call("cudaStreamSynchronize", end - call);
        let args = vec![
            ("cuda_sync_kind", Arg::Str(Cow::Borrowed("Stream Sync"))),
            ("stream", Arg::Int(stream)),
            ("correlation", Arg::Int(corr)),
            ("device", Arg::Int(0)),
        ];
        self.complete("Stream Sync", "cuda_sync", GPU_PID, stream, end - RETURN_NS, 0, args);
        self.t = end;
    }

    /// A runtime call of `dur` ns at the clock with a new correlation id, which it returns
    /// (the clock does not move).
    fn runtime_call(&mut self, name: &'static str, dur: i64) -> i64 {
        let corr = self.next_corr();
        self.complete(name, "cuda_runtime", CPU_PID, CPU_PID, self.t, dur, vec![("correlation", Arg::Int(corr))]);
        corr
    }

    fn next_corr(&mut self) -> i64 {
        self.corr += 1;
        self.corr
    }

    #[allow(clippy::too_many_arguments)]
    fn complete(&mut self, name: &'static str, cat: &'static str, pid: i64, tid: i64, ts: i64, dur: i64, args: Vec<(&'static str, Arg)>) {
        self.events.push(Event {
            kind: Kind::Complete { cat, dur_ns: dur },
            name: Cow::Borrowed(name),
            pid: Id::Num(pid),
            tid: Id::Num(tid),
            ts_ns: T0_NS + ts,
            args,
        });
    }

    fn into_json(mut self) -> Vec<u8> {
        // Kineto writes CPU events in start order (parents first), then device activities.
        self.events.sort_by_key(|e| (e.pid == Id::Num(GPU_PID), e.ts_ns, std::cmp::Reverse(e.dur_ns())));
        let mut out = Vec::with_capacity(self.events.len() * 300);
        out.extend_from_slice(b"{\n  \"schemaVersion\": 1,\n");
        if let Some(rank) = self.rank {
            let info = format!("  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {rank}, \"world_size\": 2}},\n");
            out.extend_from_slice(info.as_bytes());
        }
        out.extend_from_slice(b"  \"traceEvents\": [\n");
        for (i, event) in self.events.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b",\n");
            }
            push_event(&mut out, event);
        }
        out.extend_from_slice(b"\n  ]\n}\n");
        out
    }
}
