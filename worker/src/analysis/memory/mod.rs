//! Memory from `[memory]` instants: allocated / reserved over time per device, peaks, and the
//! largest allocations with their time, enclosing op and free time.
//!
//! **Inputs.** The `[memory]` instants of a [`Trace`] (Kineto writes one per allocator event,
//! args `Device Type`, `Device Id`, `Addr`, `Bytes` (negative for a free), `Total Allocated`,
//! `Total Reserved`: the allocator's totals for that device right after the event).
//!
//! **Outputs.** [`Memory`]: per device (ordered by device type, then id), the series of
//! (time ns from origin, allocated bytes, reserved bytes), the peaks and their times, counts,
//! and the `top` largest allocations (by `Bytes`).
//!
//! **Rules.**
//! - Device = (`Device Type`, `Device Id`); labels `cpu`, `cuda:N`, `hip:N`, other types
//!   `type<T>:N` (c10::DeviceType numbering).
//! - When an event has no `Total Allocated` (older traces), allocated is the running sum of
//!   `Bytes` on that device from 0 ([`DeviceMemory::allocated_derived`] says so); a missing
//!   `Total Reserved` keeps the previous value (0 at first).
//! - With a range `[t0, t1)`: the series holds the events in the range; peaks also count the
//!   totals carried into the range (the last event before `t0`), since memory allocated
//!   earlier is still held.
//! - Enclosing op: the innermost `cpu_op` on the instant's thread whose interval contains its
//!   time (ends included, as PyTorch counts memory); overflow-layer ops are not searched.
//! - Free time: the first later event on the same device with the same `Addr` and negative
//!   `Bytes`.
//!
//! **Cost.** One args scan per `[memory]` instant (a few key lookups, no allocation); O(log n)
//! per top allocation for the op; one more pass over the instants for the free times.
//!
//! **Submodules.** What holds the memory: [`lifetime`] (each allocation paired with its
//! free), [`category`] (PyTorch's categories from the trace alone), [`steps`] (each step's
//! peak by category, leaks across steps), [`held`] (all of it, built once per trace),
//! [`stacked`] (bytes by category over time, bucketed, for the page's chart).
//!
//! **Why** series per event and not resampled: the counter track's level of detail is the
//! index's job; analyses keep exact values. References: docs/definitions.md §1–2.

pub mod category;
pub mod held;
pub mod lifetime;
pub mod stacked;
pub mod steps;

use super::args::ArgKey;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, LaneId, Trace, NONE};

/// One `[memory]` event as a point of a device's series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemorySample {
    /// Time, ns from origin.
    pub ts_ns: i64,
    /// Allocated bytes after the event.
    pub allocated: i64,
    /// Reserved bytes after the event.
    pub reserved: i64,
    /// The event's `Bytes` (negative: a free).
    pub bytes: i64,
}

/// One allocation among the largest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// Time, ns from origin.
    pub ts_ns: i64,
    /// Size in bytes.
    pub bytes: i64,
    /// Index of the instant in [`Trace::instants`].
    pub instant: u32,
    /// Innermost `cpu_op` slice containing it on its thread, if any.
    pub op: Option<u32>,
    /// When the same address was freed, if it was (ns from origin).
    pub freed_ns: Option<i64>,
}

/// Memory of one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceMemory {
    /// c10::DeviceType (0 CPU, 1 CUDA, ...).
    pub device_type: i64,
    /// Device index (-1 for CPU).
    pub device_id: i64,
    /// `cpu`, `cuda:0`, ...
    pub label: String,
    /// Allocated / reserved after each event, in time order.
    pub series: Vec<MemorySample>,
    /// Peak allocated bytes.
    pub peak_allocated: i64,
    /// First time the allocated peak was reached (ns; the range start when carried in).
    pub peak_allocated_ns: i64,
    /// Peak reserved bytes.
    pub peak_reserved: i64,
    /// First time the reserved peak was reached.
    pub peak_reserved_ns: i64,
    /// Events with `Bytes > 0`.
    pub allocations: u64,
    /// Events with `Bytes < 0`.
    pub frees: u64,
    /// Allocated was derived from `Bytes` (the trace has no `Total Allocated`).
    pub allocated_derived: bool,
    /// The largest allocations, largest first (ties: earlier first).
    pub largest: Vec<Allocation>,
}

/// The memory analysis: one entry per device seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// Devices ordered by (device type, id).
    pub devices: Vec<DeviceMemory>,
}

/// `cpu`, `cuda:0`, `hip:1`, `type12:0` for a c10::DeviceType and index.
pub fn device_label(device_type: i64, device_id: i64) -> String {
    match device_type {
        0 => "cpu".to_owned(),
        1 => format!("cuda:{device_id}"),
        2 => "mkldnn".to_owned(),
        5 => "ideep".to_owned(),
        6 => format!("hip:{device_id}"),
        12 => format!("xpu:{device_id}"),
        13 => format!("mps:{device_id}"),
        20 => format!("privateuse1:{device_id}"),
        t => format!("type{t}:{device_id}"),
    }
}

struct Keys {
    dtype: ArgKey,
    did: ArgKey,
    bytes: ArgKey,
    alloc: ArgKey,
    reserved: ArgKey,
    addr: ArgKey,
}

/// Per-device state while scanning.
struct Acc {
    dev: DeviceMemory,
    /// Totals carried into the range (last event before `t0`).
    carried: Option<(i64, i64)>,
    running: i64,
    last_reserved: i64,
    /// (bytes, instant index, ts) of every allocation in range; cut to `top` at the end.
    allocs: Vec<(i64, u32, i64)>,
}

/// Memory per device; `range`: events in `[t0, t1)` ns only; `top`: largest allocations kept
/// per device.
pub fn analyze(trace: &Trace, range: Option<(i64, i64)>, top: usize) -> Memory {
    let Some(mem_name) = trace.strings.lookup("[memory]") else {
        return Memory::default();
    };
    let k = Keys {
        dtype: ArgKey::new("Device Type"),
        did: ArgKey::new("Device Id"),
        bytes: ArgKey::new("Bytes"),
        alloc: ArgKey::new("Total Allocated"),
        reserved: ArgKey::new("Total Reserved"),
        addr: ArgKey::new("Addr"),
    };
    let (t0, t1) = range.unwrap_or((i64::MIN, i64::MAX));
    let ins = &trace.instants;
    let mut devices: FxHashMap<(i64, i64), Acc> = FxHashMap::default();
    let mut reader = trace.args.reader();
    for i in 0..ins.ts_ns.len() {
        let ts = ins.ts_ns[i];
        if ins.name[i] != mem_name || ts >= t1 {
            continue;
        }
        let args = reader.bytes(ins.args[i]);
        let key = (
            k.dtype.i64(args).unwrap_or(0),
            k.did.i64(args).unwrap_or(-1),
        );
        let acc = devices.entry(key).or_insert_with(|| new_acc(key));
        let bytes = k.bytes.i64(args).unwrap_or(0);
        acc.running += bytes;
        let allocated = match k.alloc.i64(args) {
            Some(v) => v,
            None => {
                acc.dev.allocated_derived = true;
                acc.running
            }
        };
        let reserved = k.reserved.i64(args).unwrap_or(acc.last_reserved);
        acc.last_reserved = reserved;
        if ts < t0 {
            acc.carried = Some((allocated, reserved));
            continue;
        }
        acc.dev.series.push(MemorySample {
            ts_ns: ts,
            allocated,
            reserved,
            bytes,
        });
        if bytes > 0 {
            acc.dev.allocations += 1;
            acc.allocs.push((bytes, i as u32, ts));
        } else if bytes < 0 {
            acc.dev.frees += 1;
        }
    }
    let mut out: Vec<DeviceMemory> = devices
        .into_values()
        .map(|mut acc| {
            peaks(&mut acc, t0);
            largest(trace, &k, &mut acc, top);
            acc.dev
        })
        .filter(|d| !d.series.is_empty())
        .collect();
    out.sort_by_key(|d| (d.device_type, d.device_id));
    Memory { devices: out }
}

fn new_acc((device_type, device_id): (i64, i64)) -> Acc {
    Acc {
        dev: DeviceMemory {
            device_type,
            device_id,
            label: device_label(device_type, device_id),
            series: Vec::new(),
            peak_allocated: 0,
            peak_allocated_ns: 0,
            peak_reserved: 0,
            peak_reserved_ns: 0,
            allocations: 0,
            frees: 0,
            allocated_derived: false,
            largest: Vec::new(),
        },
        carried: None,
        running: 0,
        last_reserved: 0,
        allocs: Vec::new(),
    }
}

/// Peaks over the series, counting totals carried into the range at its start.
fn peaks(acc: &mut Acc, t0: i64) {
    let d = &mut acc.dev;
    let first_ts = d.series.first().map_or(0, |s| s.ts_ns);
    let (mut pa, mut pa_ns, mut pr, mut pr_ns) = match acc.carried {
        Some((a, r)) => (a, t0, r, t0),
        None => (i64::MIN, first_ts, i64::MIN, first_ts),
    };
    for s in &d.series {
        if s.allocated > pa {
            (pa, pa_ns) = (s.allocated, s.ts_ns);
        }
        if s.reserved > pr {
            (pr, pr_ns) = (s.reserved, s.ts_ns);
        }
    }
    (d.peak_allocated, d.peak_allocated_ns) = (pa.max(0), pa_ns);
    (d.peak_reserved, d.peak_reserved_ns) = (pr.max(0), pr_ns);
}

/// Keeps the `top` largest allocations and finds their ops and free times.
fn largest(trace: &Trace, k: &Keys, acc: &mut Acc, top: usize) {
    acc.allocs
        .sort_unstable_by_key(|&(bytes, i, _)| (std::cmp::Reverse(bytes), i));
    acc.allocs.truncate(top);
    let ins = &trace.instants;
    // Address -> index in `largest` of allocations still waiting for their free.
    let mut waiting: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
    let mut reader = trace.args.reader();
    for &(bytes, i, ts) in &acc.allocs {
        let args = reader.bytes(ins.args[i as usize]);
        if let Some(addr) = k.addr.i64(args) {
            waiting.entry(addr).or_default().push(acc.dev.largest.len());
        }
        let op = enclosing_op_at(trace, ins.lane[i as usize], ts);
        acc.dev.largest.push(Allocation {
            ts_ns: ts,
            bytes,
            instant: i,
            op,
            freed_ns: None,
        });
    }
    if waiting.is_empty() {
        return;
    }
    let Some(mem_name) = trace.strings.lookup("[memory]") else {
        return;
    };
    let first = acc.dev.largest.iter().map(|a| a.instant).min().unwrap_or(0) as usize;
    for i in first..ins.ts_ns.len() {
        if ins.name[i] != mem_name {
            continue;
        }
        let args = reader.bytes(ins.args[i]);
        let Some(addr) = k.addr.i64(args) else {
            continue;
        };
        let Some(list) = waiting.get_mut(&addr) else {
            continue;
        };
        if k.bytes.i64(args).unwrap_or(0) >= 0
            || k.dtype.i64(args).unwrap_or(0) != acc.dev.device_type
            || k.did.i64(args).unwrap_or(-1) != acc.dev.device_id
        {
            continue;
        }
        // Frees the earliest allocation at that address that happened before it.
        let largest = &mut acc.dev.largest;
        if let Some(pos) = list
            .iter()
            .position(|&j| largest.get(j).is_some_and(|a| (a.instant as usize) < i))
        {
            let j = list.remove(pos);
            if let Some(a) = largest.get_mut(j) {
                a.freed_ns = Some(ins.ts_ns[i]);
            }
        }
    }
}

/// The innermost `cpu_op` on `lane` whose `[start, end]` contains `ts`, searching the main
/// layer (and overflow slices met on the way back), or `None`.
pub fn enclosing_op_at(trace: &Trace, lane: LaneId, ts: i64) -> Option<u32> {
    let l = trace.lanes.get(lane.0 as usize)?;
    let s = &trace.slices;
    let (lo, hi) = (l.slices.start as usize, l.slices.end as usize);
    let mut i = lo + s.start_ns.get(lo..hi)?.partition_point(|&st| st <= ts);
    let mut best: Option<u32> = None;
    while i > lo {
        i -= 1;
        let mut c = i as u32;
        while c != NONE {
            let cu = c as usize;
            if s.end_ns(cu) >= ts && trace.class(s.cat[cu]) == CatClass::CpuOp {
                if best.is_none_or(|b| s.depth[cu] > s.depth[b as usize]) {
                    best = Some(c);
                }
                break;
            }
            c = s.parent[cu];
        }
        // Every main-layer slice containing ts is an ancestor of the last main-layer slice
        // starting at or before ts (see model::link::enclosing).
        if s.row[i] == s.depth[i] {
            break;
        }
    }
    best
}
