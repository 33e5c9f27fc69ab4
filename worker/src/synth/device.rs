//! The demo's timing model, device side: runtime calls, the GPU stream, memory.
//!
//! Extends `Sim` with what CUDA does under an op: `launch` (a `cudaLaunchKernel` plus its kernel
//! on stream 7), `memcpy` (`cudaMemcpyAsync` plus a `gpu_memcpy`), `stream_sync` /
//! `device_sync` (the runtime call plus a `cuda_sync` activity), runtime calls with no device
//! work, and `alloc` / `free` (the caching allocator's `[memory]` instants, with `cudaMalloc`
//! when reserved memory must grow).
//!
//! Rules that make the timeline consistent: an activity starts at
//! `max(stream free, call start + latency)` and the stream is busy until it ends; pageable
//! copies and syncs block the calling thread until the stream reaches them; every runtime call
//! gets a correlation id, and Kineto's flows: `ac2g` `s` on the call plus `f` on its activity,
//! or a lone `f` on the call when it has no device work (as real traces have).
//! Addresses come from a first-fit heap per device, so a steady-state step reuses the
//! addresses of the previous one, as PyTorch's caching allocator does.

use std::borrow::Cow;

use super::kineto::{Arg, Event, Id, Kind};
use super::sim::{Sim, CPU_PID, GPU_PID, STREAM, US};

/// SMs on the demo's A100.
const NUM_SMS: i64 = 108;
/// Growth step of the CUDA caching allocator's reserved memory, bytes.
const SEGMENT_BYTES: i64 = 20 << 20;
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

/// Where an allocation lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Device {
    Cpu,
    Cuda,
}

/// A live allocation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Buf {
    device: Device,
    addr: u64,
    bytes: i64,
}

/// One device's allocator: live blocks sorted by address, totals in bytes.
#[derive(Debug)]
struct Heap {
    base: u64,
    live: Vec<(u64, i64)>,
    allocated: i64,
    reserved: i64,
}

impl Heap {
    /// First-fit placement of `bytes` (512-byte aligned); records the block.
    fn place(&mut self, bytes: i64) -> u64 {
        let size = (bytes.max(1) as u64).div_ceil(512) * 512;
        let mut addr = self.base;
        let mut at = self.live.len();
        for (i, &(start, len)) in self.live.iter().enumerate() {
            if addr + size <= start {
                at = i;
                break;
            }
            addr = start + (len.max(1) as u64).div_ceil(512) * 512;
        }
        self.live.insert(at, (addr, bytes));
        addr
    }
}

/// Device-side state: the two heaps and the kernels already loaded.
#[derive(Debug)]
pub(crate) struct DeviceState {
    cpu: Heap,
    cuda: Heap,
    loaded: Vec<&'static str>,
}

impl DeviceState {
    /// Heaps with the model's parameters already on the GPU.
    pub(crate) fn new(cuda_allocated: i64, cuda_reserved: i64) -> Self {
        DeviceState {
            cpu: Heap {
                base: 0x5581_2a40_0000,
                live: Vec::new(),
                allocated: 0,
                reserved: 0,
            },
            cuda: Heap {
                base: 0x7f3a_1c00_0000 + cuda_allocated as u64,
                live: Vec::new(),
                allocated: cuda_allocated,
                reserved: cuda_reserved,
            },
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
        let start = self.stream_free.max(ts + call * 3 / 4);
        let dur = self.spread(k.dur_ns, 3);
        self.stream_free = start + dur;
        let blocks = k.grid.iter().product::<i64>() as f64 / NUM_SMS as f64;
        let warps = blocks * (k.block.iter().product::<i64>() as f64 / 32.0);
        let args = vec![
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
        ];
        self.push_activity("kernel", k.name, STREAM, start, dur, corr, args);
        self.push_runtime("cudaLaunchKernel", 211, ts, call, corr, flow_start(corr));
        self.now = ts + call + self.spread(700, 50);
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
        let start = self.stream_free.max(ts + self.cost(3500));
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

    /// Allocates `bytes` on `device` (a `[memory]` instant; `cudaMalloc` first if the CUDA
    /// cache must grow).
    pub(crate) fn alloc(&mut self, device: Device, bytes: i64) -> Buf {
        let heap = match device {
            Device::Cpu => &self.dev.cpu,
            Device::Cuda => &self.dev.cuda,
        };
        if device == Device::Cuda && heap.allocated + bytes > heap.reserved {
            let grow = (heap.allocated + bytes - heap.reserved + SEGMENT_BYTES - 1) / SEGMENT_BYTES
                * SEGMENT_BYTES;
            self.runtime("cudaStreamIsCapturing", 317, 1100);
            self.runtime("cudaMalloc", 20, 190 * US);
            self.dev.cuda.reserved += grow;
        }
        let heap = match device {
            Device::Cpu => &mut self.dev.cpu,
            Device::Cuda => &mut self.dev.cuda,
        };
        let addr = heap.place(bytes);
        let buf = Buf {
            device,
            addr,
            bytes,
        };
        self.memory_event(buf, bytes);
        buf
    }

    /// Frees `buf` (a `[memory]` instant with negative `Bytes`).
    pub(crate) fn free(&mut self, buf: Buf) {
        let heap = match buf.device {
            Device::Cpu => &mut self.dev.cpu,
            Device::Cuda => &mut self.dev.cuda,
        };
        heap.live.retain(|&(addr, _)| addr != buf.addr);
        self.memory_event(buf, -buf.bytes);
    }

    fn memory_event(&mut self, buf: Buf, delta: i64) {
        let heap = match buf.device {
            Device::Cpu => &mut self.dev.cpu,
            Device::Cuda => &mut self.dev.cuda,
        };
        heap.allocated += delta;
        let (device_type, device_id) = match buf.device {
            Device::Cpu => (0, -1),
            Device::Cuda => (1, 0),
        };
        let args = vec![
            ("Total Reserved", Arg::Int(heap.reserved)),
            ("Total Allocated", Arg::Int(heap.allocated)),
            ("Bytes", Arg::Int(delta)),
            ("Addr", Arg::Int(buf.addr as i64)),
            ("Device Id", Arg::Int(device_id)),
            ("Device Type", Arg::Int(device_type)),
        ];
        let kind = Kind::Instant {
            cat: Some("cpu_instant_event"),
            scope: "t",
        };
        let (pid, tid) = (Id::Num(CPU_PID), Id::Num(self.tid));
        let name = Cow::Borrowed("[memory]");
        self.memory.push(Event {
            kind,
            name,
            pid,
            tid,
            ts_ns: self.now,
            args,
        });
        self.now += self.spread(400, 50);
    }
}

fn flow_start(corr: i64) -> Kind {
    Kind::FlowStart {
        cat: "ac2g",
        id: corr as u64,
    }
}
