//! The demo's memory model: `[memory]` instants from a caching-allocator-like heap per device.
//!
//! `Sim::alloc` / `Sim::free` record what `profile_memory=True` records: one instant per
//! allocation or free with `Bytes` (negative for frees), `Addr`, the device, and the running
//! `Total Allocated` / `Total Reserved`. When a CUDA allocation does not fit in reserved memory,
//! the cache grows by whole segments with a `cudaMalloc` (and the allocator's
//! `cudaStreamIsCapturing` check) first, which only happens while the first step warms up.
//!
//! Invariants: `Total Allocated` never goes below zero and stays within `Total Reserved` on the
//! GPU (CPU memory reports 0 reserved, as PyTorch does). Addresses come from first-fit
//! placement, so a steady-state step reuses the previous step's addresses, as the real cache does.

use std::borrow::Cow;

use super::{Sim, CPU_PID, US};
use crate::synth::kineto::{Arg, Event, Id, Kind};

/// Growth step of the CUDA cache's reserved memory, bytes.
const SEGMENT_BYTES: i64 = 20 << 20;
/// Placement granularity, bytes.
const ALIGN: u64 = 512;

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

fn aligned(bytes: i64) -> u64 {
    (bytes.max(1).unsigned_abs()).div_ceil(ALIGN) * ALIGN
}

impl Heap {
    /// First-fit placement of `bytes`; records the block and returns its address.
    fn place(&mut self, bytes: i64) -> u64 {
        let size = aligned(bytes);
        let mut addr = self.base;
        let mut at = self.live.len();
        for (i, &(start, len)) in self.live.iter().enumerate() {
            if addr + size <= start {
                at = i;
                break;
            }
            addr = start + aligned(len);
        }
        self.live.insert(at, (addr, bytes));
        addr
    }
}

/// The CPU and GPU heaps.
#[derive(Debug)]
pub(crate) struct Heaps {
    cpu: Heap,
    cuda: Heap,
}

impl Heaps {
    /// Heaps with `cuda_allocated` bytes (the model's parameters) already on the GPU.
    pub(crate) fn new(cuda_allocated: i64, cuda_reserved: i64) -> Self {
        let cpu = Heap {
            base: 0x5581_2a40_0000,
            live: Vec::new(),
            allocated: 0,
            reserved: 0,
        };
        let cuda = Heap {
            base: 0x7f3a_1c00_0000 + aligned(cuda_allocated),
            live: Vec::new(),
            allocated: cuda_allocated,
            reserved: cuda_reserved,
        };
        Heaps { cpu, cuda }
    }

    fn get(&mut self, device: Device) -> &mut Heap {
        match device {
            Device::Cpu => &mut self.cpu,
            Device::Cuda => &mut self.cuda,
        }
    }
}

impl Sim {
    /// Allocates `bytes` on `device`: a `[memory]` instant, after a `cudaMalloc` if the CUDA
    /// cache must grow.
    pub(crate) fn alloc(&mut self, device: Device, bytes: i64) -> Buf {
        let heap = self.dev.heaps.get(device);
        let missing = heap.allocated + bytes - heap.reserved;
        if device == Device::Cuda && missing > 0 {
            heap.reserved += (missing + SEGMENT_BYTES - 1) / SEGMENT_BYTES * SEGMENT_BYTES;
            self.runtime("cudaStreamIsCapturing", 317, 1100);
            self.runtime("cudaMalloc", 20, 190 * US);
        }
        let addr = self.dev.heaps.get(device).place(bytes);
        let buf = Buf {
            device,
            addr,
            bytes,
        };
        self.memory_event(buf, bytes);
        buf
    }

    /// Frees `buf`: a `[memory]` instant with negative `Bytes`.
    pub(crate) fn free(&mut self, buf: Buf) {
        self.dev
            .heaps
            .get(buf.device)
            .live
            .retain(|&(addr, _)| addr != buf.addr);
        self.memory_event(buf, -buf.bytes);
    }

    fn memory_event(&mut self, buf: Buf, delta: i64) {
        let heap = self.dev.heaps.get(buf.device);
        heap.allocated += delta;
        let (device_type, device_id) = match buf.device {
            Device::Cpu => (0, -1),
            Device::Cuda => (1, 0),
        };
        let args = vec![
            ("Total Reserved", Arg::Int(heap.reserved)),
            ("Total Allocated", Arg::Int(heap.allocated)),
            ("Bytes", Arg::Int(delta)),
            // Addresses are below 2^63 by construction (small bases plus model-sized offsets).
            (
                "Addr",
                Arg::Int(i64::try_from(buf.addr).unwrap_or(i64::MAX)),
            ),
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
