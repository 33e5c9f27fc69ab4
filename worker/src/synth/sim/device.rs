//! The demo's timing model, device side: runtime calls and the GPU stream.
//!
//! Extends `Sim` with what CUDA does under an op: `launch` (a `cudaLaunchKernel` plus its kernel
//! on stream 7), `memcpy` (`cudaMemcpyAsync` plus a `gpu_memcpy`), `stream_sync` /
//! `device_sync` (the runtime call plus a `cuda_sync` activity) and runtime calls with no device
//! work. Memory (`alloc` / `free`) is in [`super::memory`].
//!
//! Rules that make the timeline consistent: an activity starts at
//! `max(stream free, call start + latency)` and the stream is busy until it ends; pageable
//! copies and syncs block the calling thread until the stream reaches them; every runtime call
//! gets a correlation id, and Kineto's flows: `ac2g` `s` on the call plus `f` on its activity,
//! or a lone `f` on the call when it has no device work (as real traces have). The first launch
//! of each kernel pays for lazy module loading, one reason the first step is slow.

use std::borrow::Cow;

use super::memory::Heaps;
use super::{Sim, CPU_PID, GPU_PID, STREAM, US};
use crate::synth::kineto::{Arg, Event, Id, Kind};

/// SMs on the demo's A100.
const NUM_SMS: i64 = 108;
/// Idle time between back-to-back activities on the stream, ns.
const KERNEL_GAP_NS: i64 = 1_800;
/// Extra cost of the first launch of a kernel (lazy module loading), ns.
const FIRST_LAUNCH_NS: i64 = 38 * US;

/// A kernel: name, duration and launch configuration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kernel {
    pub name: &'static str,
    pub dur_ns: i64,
    pub grid: [i64; 3],
    pub block: [i64; 3],
    pub regs: i64,
    pub smem: i64,
    pub occupancy_pct: i64,
}

/// Direction of a copy.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Memcpy {
    /// Host (pageable) to device; blocks the caller.
    HtoD,
    /// Device to device; asynchronous.
    DtoD,
    /// Device to host (pageable); blocks the caller.
    DtoH,
}

/// Device-side state: the allocator heaps and the kernels already loaded.
#[derive(Debug)]
pub(crate) struct DeviceState {
    pub(crate) heaps: Heaps,
    loaded: Vec<&'static str>,
}

impl DeviceState {
    /// State with the model's parameters (`cuda_allocated` bytes) already on the GPU.
    pub(crate) fn new(cuda_allocated: i64, cuda_reserved: i64) -> Self {
        DeviceState {
            heaps: Heaps::new(cuda_allocated, cuda_reserved),
            loaded: Vec::new(),
        }
    }
}

impl Sim {
    /// Scales a runtime cost by the cold-start factor and jitters it.
    fn cost(&mut self, ns: i64) -> i64 {
        let scaled = ns * self.slow_pct / 100;
        self.spread(scaled, 20)
    }

    fn push_runtime(
        &mut self,
        name: &'static str,
        cbid: i64,
        ts: i64,
        dur: i64,
        corr: i64,
        flow: Kind,
    ) {
        let mut args = Vec::with_capacity(3);
        if let Some(ext) = self.current_external() {
            args.push(("External id", Arg::Int(ext)));
        }
        args.push(("cbid", Arg::Int(cbid)));
        args.push(("correlation", Arg::Int(corr)));
        let (pid, tid) = (Id::Num(CPU_PID), Id::Num(self.tid));
        let kind = Kind::Complete {
            cat: "cuda_runtime",
            dur_ns: dur,
        };
        self.activities.push(Event {
            kind,
            name: Cow::Borrowed(name),
            pid,
            tid,
            ts_ns: ts,
            args,
        });
        let name = Cow::Borrowed("ac2g");
        self.activities.push(Event {
            kind: flow,
            name,
            pid,
            tid,
            ts_ns: ts,
            args: Vec::new(),
        });
    }

    /// Records a GPU activity and its `ac2g` flow end; `args` follow External id.
    #[allow(clippy::too_many_arguments)]
    fn push_activity(
        &mut self,
        cat: &'static str,
        name: &'static str,
        tid: i64,
        ts: i64,
        dur: i64,
        corr: i64,
        args: Vec<(&'static str, Arg)>,
    ) {
        let mut all = Vec::with_capacity(args.len() + 1);
        if let Some(ext) = self.current_external() {
            all.push(("External id", Arg::Int(ext)));
        }
        all.extend(args);
        let (pid, tid) = (Id::Num(GPU_PID), Id::Num(tid));
        let kind = Kind::Complete { cat, dur_ns: dur };
        self.activities.push(Event {
            kind,
            name: Cow::Borrowed(name),
            pid,
            tid,
            ts_ns: ts,
            args: all,
        });
        let flow = Kind::FlowEnd {
            cat: "ac2g",
            id: corr as u64,
        };
        let name = Cow::Borrowed("ac2g");
        self.activities.push(Event {
            kind: flow,
            name,
            pid,
            tid,
            ts_ns: ts,
            args: Vec::new(),
        });
    }

    /// A runtime call with no device work, costing about `ns`.
    pub(crate) fn runtime(&mut self, name: &'static str, cbid: i64, ns: i64) {
        let (ts, dur, corr) = (self.now, self.cost(ns), self.correlation());
        self.push_runtime(
            name,
            cbid,
            ts,
            dur,
            corr,
            Kind::FlowEnd {
                cat: "ac2g",
                id: corr as u64,
            },
        );
        self.now += dur + self.spread(600, 50);
    }

    /// The occupancy query cuBLAS makes before a GEMM launch.
    pub(crate) fn occupancy_query(&mut self) {
        self.runtime("cudaOccupancyMaxActiveBlocksPerMultiprocessor", 210, 1200);
    }

    /// `cudaLaunchKernel` for `k`, and `k` on the stream.
    pub(crate) fn launch(&mut self, k: &Kernel) {
        let (ts, corr) = (self.now, self.correlation());
        let mut call = self.cost(4200);
        if !self.dev.loaded.contains(&k.name) {
            self.dev.loaded.push(k.name);
            call += self.spread(FIRST_LAUNCH_NS, 25);
        }
        let gap = self.spread(KERNEL_GAP_NS, 40);
        let start = (self.stream_free + gap).max(ts + call * 3 / 4);
        let dur = self.spread(k.dur_ns, 3);
        self.stream_free = start + dur;
        let args = kernel_args(k, corr);
        self.push_activity("kernel", k.name, STREAM, start, dur, corr, args);
        self.push_runtime("cudaLaunchKernel", 211, ts, call, corr, flow_start(corr));
        self.now = ts + call + self.spread(700, 50);
    }

    /// `cudaGraphLaunch` of a captured graph: one runtime call whose correlation every node
    /// kernel shares, the kernels back to back on the stream with `graph id` / `graph node id`
    /// (node ids carry the graph id in their upper 32 bits, as CUPTI's do), and one dependency
    /// flow (`cat` [`GRAPH_DEP_CAT`]) from each node to the next. Node ids count from 1.
    pub(crate) fn graph_launch(&mut self, graph_id: i64, nodes: &[Kernel]) {
        let (ts, corr) = (self.now, self.correlation());
        let call = self.cost(9500);
        let mut start = (self.stream_free + self.spread(KERNEL_GAP_NS, 40)).max(ts + call / 2);
        let mut prev: Option<(i64, i64)> = None;
        for (n, k) in (1i64..).zip(nodes) {
            let dur = self.spread(k.dur_ns, 3);
            let mut args = kernel_args(k, corr);
            args.push(("graph id", Arg::Int(graph_id)));
            args.push(("graph node id", Arg::Int((graph_id << 32) | n)));
            self.push_activity("kernel", k.name, STREAM, start, dur, corr, args);
            if let Some((from_ts, from_node)) = prev {
                let id = ((graph_id << 32) | from_node) as u64;
                self.push_dep(Kind::FlowStart { cat: GRAPH_DEP_CAT, id }, from_ts);
                self.push_dep(Kind::FlowEnd { cat: GRAPH_DEP_CAT, id }, start);
            }
            prev = Some((start, n));
            // Graph nodes run back to back: the launch latency is paid once per graph.
            start += dur + self.spread(KERNEL_GAP_NS / 3, 40);
        }
        self.stream_free = start;
        self.push_runtime("cudaGraphLaunch", 311, ts, call, corr, flow_start(corr));
        self.now = ts + call + self.spread(700, 50);
    }

    /// A `cudaGraphLaunch` whose kernels the profiler did not record: the call alone.
    pub(crate) fn graph_launch_unrecorded(&mut self) {
        self.runtime("cudaGraphLaunch", 311, 9500);
    }

    /// A kernel that says it belongs to graph `graph_id` but whose launch call is not in the
    /// trace (its correlation id matches no runtime call): the kernel alone.
    pub(crate) fn graph_kernel_without_launch(&mut self, graph_id: i64, node: i64, k: &Kernel) {
        let corr = self.correlation();
        let start = self.stream_free + self.spread(KERNEL_GAP_NS, 40);
        let dur = self.spread(k.dur_ns, 3);
        let mut args = kernel_args(k, corr);
        args.push(("graph id", Arg::Int(graph_id)));
        args.push(("graph node id", Arg::Int((graph_id << 32) | node)));
        self.push_activity("kernel", k.name, STREAM, start, dur, corr, args);
        self.stream_free = start + dur;
    }

    /// One endpoint of a graph dependency flow on the stream at `ts`.
    fn push_dep(&mut self, kind: Kind, ts: i64) {
        self.activities.push(Event {
            kind,
            name: Cow::Borrowed("graph_dep"),
            pid: Id::Num(GPU_PID),
            tid: Id::Num(STREAM),
            ts_ns: ts,
            args: Vec::new(),
        });
    }

    /// `cudaMemcpyAsync` of `bytes` and the copy on the stream.
    pub(crate) fn memcpy(&mut self, kind: Memcpy, bytes: i64) {
        let (ts, corr) = (self.now, self.correlation());
        // Bandwidths in GB/s, which is bytes per ns.
        let (name, gbps, blocking) = match kind {
            Memcpy::HtoD => ("Memcpy HtoD (Pageable -> Device)", 6.5, true),
            Memcpy::DtoD => ("Memcpy DtoD (Device -> Device)", 1300.0, false),
            Memcpy::DtoH => ("Memcpy DtoH (Device -> Pageable)", 5.0, true),
        };
        let gap = self.spread(KERNEL_GAP_NS, 40);
        let start = (self.stream_free + gap).max(ts + self.cost(3500));
        let dur = self.spread((bytes as f64 / gbps) as i64 + 1400, 4);
        self.stream_free = start + dur;
        let call = if blocking {
            start + dur - ts + self.cost(2500)
        } else {
            self.cost(4800)
        };
        let args = vec![
            ("device", Arg::Int(GPU_PID)),
            ("context", Arg::Int(1)),
            ("stream", Arg::Int(STREAM)),
            ("correlation", Arg::Int(corr)),
            ("bytes", Arg::Int(bytes)),
            (
                "memory bandwidth (GB/s)",
                Arg::Float(bytes as f64 / dur as f64),
            ),
        ];
        self.push_activity("gpu_memcpy", name, STREAM, start, dur, corr, args);
        self.push_runtime("cudaMemcpyAsync", 41, ts, call, corr, flow_start(corr));
        self.now = ts + call + self.spread(700, 50);
    }

    /// `cudaStreamSynchronize` on stream 7: waits for the stream to drain.
    pub(crate) fn stream_sync(&mut self) {
        self.sync("cudaStreamSynchronize", 131, "Stream Sync", STREAM, STREAM);
    }

    /// `cudaDeviceSynchronize`: waits for all device work.
    pub(crate) fn device_sync(&mut self) {
        self.sync(
            "cudaDeviceSynchronize",
            165,
            "Context Sync",
            -1,
            4_294_967_295,
        );
    }

    fn sync(
        &mut self,
        call_name: &'static str,
        cbid: i64,
        kind: &'static str,
        tid: i64,
        stream: i64,
    ) {
        let (ts, corr) = (self.now, self.correlation());
        let start = self.stream_free.max(ts + self.cost(1500));
        let dur = self.spread(1600, 30);
        let call = start + dur - ts + self.cost(1200);
        let args = vec![
            ("cuda_sync_kind", Arg::Str(Cow::Borrowed(kind))),
            ("stream", Arg::Int(stream)),
            ("correlation", Arg::Int(corr)),
            ("device", Arg::Int(GPU_PID)),
            ("context", Arg::Int(1)),
        ];
        self.push_activity("cuda_sync", kind, tid, start, dur, corr, args);
        self.push_runtime(call_name, cbid, ts, call, corr, flow_start(corr));
        self.now = ts + call + self.spread(700, 50);
    }
}

/// Category of the synthetic graph dependency flows (see `super::graphs`).
pub(crate) const GRAPH_DEP_CAT: &str = "graph_dep";

/// Kineto's kernel args for `k` launched under correlation `corr`.
fn kernel_args(k: &Kernel, corr: i64) -> Vec<(&'static str, Arg)> {
    let blocks = k.grid.iter().product::<i64>() as f64 / NUM_SMS as f64;
    let warps = blocks * (k.block.iter().product::<i64>() as f64 / 32.0);
    vec![
        ("queued", Arg::Int(0)),
        ("device", Arg::Int(GPU_PID)),
        ("context", Arg::Int(1)),
        ("stream", Arg::Int(STREAM)),
        ("correlation", Arg::Int(corr)),
        ("registers per thread", Arg::Int(k.regs)),
        ("shared memory", Arg::Int(k.smem)),
        ("blocks per SM", Arg::Fixed6(blocks)),
        ("warps per SM", Arg::Fixed6(warps)),
        ("grid", Arg::Raw(format!("{:?}", k.grid))),
        ("block", Arg::Raw(format!("{:?}", k.block))),
        ("est. achieved occupancy %", Arg::Int(k.occupancy_pct)),
    ]
}

/// The `ac2g` flow start that binds a runtime call to its device activity.
fn flow_start(corr: i64) -> Kind {
    Kind::FlowStart {
        cat: "ac2g",
        id: corr as u64,
    }
}
