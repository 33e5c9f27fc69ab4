//! Allocation lifetimes: pairs each `[memory]` allocation with the free of the same address
//! on the same device, and gives each device's allocated curve.
//!
//! **Inputs.** The `[memory]` instants of a [`Trace`] in time order (`Addr`, `Bytes`,
//! `Device Type`, `Device Id`, `Total Allocated`).
//!
//! **Outputs.** [`Lifetimes`]: one column entry per allocation (`Bytes > 0`), in time order:
//! instant index, time (ns from origin), size, device and free time (`i64::MAX` when the trace
//! never frees it) and the
//! bytes freed that no allocation in the trace made (live before the capture started).
//!
//! **Rules.** A free (`Bytes < 0`) closes the latest open allocation at its address on its
//! device (the allocator reuses an address only after freeing it). Allocated is
//! `Total Allocated` when the event has it, else the running sum of `Bytes`.
//!
//! **Cost.** One args scan per `[memory]` instant, one hash map of open addresses; 36 bytes
//! per allocation. No per-event heap objects.

use crate::analysis::args::ArgKey;
use crate::model::strings::FxHashMap;
use crate::model::Trace;

/// `freed_ns` of an allocation the trace never frees.
pub const NEVER: i64 = i64::MAX;

/// Every allocation of a trace and its lifetime, columnar (equal-length columns, time order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lifetimes {
    /// Index of the allocating instant in [`Trace::instants`].
    pub instant: Vec<u32>,
    /// Allocation time, ns from origin.
    pub ts_ns: Vec<i64>,
    /// Size, bytes (> 0).
    pub bytes: Vec<i64>,
    /// Index into [`Lifetimes::devices`].
    pub device: Vec<u16>,
    /// Time of the matching free, ns; [`NEVER`] when the trace does not free it.
    pub freed_ns: Vec<i64>,
    /// (c10 device type, device index) of each device seen, in order of first event.
    pub devices: Vec<(i64, i64)>,
    /// Per device: bytes freed at addresses no allocation of the trace made (pre-existing).
    pub preexisting_freed: Vec<i64>,
}

impl Lifetimes {
    /// Number of allocations.
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }

    /// True when the trace has no allocation.
    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }

    /// True when allocation `i` is live right after the events at `t_ns`.
    pub fn live_at(&self, i: usize, t_ns: i64) -> bool {
        self.ts_ns[i] <= t_ns && self.freed_ns[i] > t_ns
    }
}

/// Each device's allocated bytes after every `[memory]` event: (time, allocated), in time order.
/// Only the step peaks read it, so it is not kept (16 bytes per event).
pub type Curves = Vec<Vec<(i64, i64)>>;

/// Pairs the allocations and frees of `trace`'s `[memory]` instants; also gives each device's
/// allocated curve.
pub fn lifetimes(trace: &Trace) -> (Lifetimes, Curves) {
    let mut out = Lifetimes::default();
    let mut curves: Curves = Vec::new();
    let Some(mem_name) = trace.strings.lookup("[memory]") else {
        return (out, curves);
    };
    let (dtype, did, bytes_key, addr_key, alloc_key) = (
        ArgKey::new("Device Type"),
        ArgKey::new("Device Id"),
        ArgKey::new("Bytes"),
        ArgKey::new("Addr"),
        ArgKey::new("Total Allocated"),
    );
    // (device, address) -> allocation index still open.
    let mut open: FxHashMap<(u16, i64), u32> = FxHashMap::default();
    let mut running: Vec<i64> = Vec::new();
    let ins = &trace.instants;
    let mut reader = trace.args.reader();
    for i in 0..ins.ts_ns.len() {
        if ins.name[i] != mem_name {
            continue;
        }
        let args = reader.bytes(ins.args[i]);
        let key = (dtype.i64(args).unwrap_or(0), did.i64(args).unwrap_or(-1));
        let device = match out.devices.iter().position(|&d| d == key) {
            Some(d) => d,
            None => {
                out.devices.push(key);
                curves.push(Vec::new());
                out.preexisting_freed.push(0);
                running.push(0);
                out.devices.len() - 1
            }
        };
        // At most u16::MAX devices: more device keys than that is not a real trace.
        let Ok(device16) = u16::try_from(device) else { continue };
        let (ts, bytes) = (ins.ts_ns[i], bytes_key.i64(args).unwrap_or(0));
        running[device] += bytes;
        let allocated = alloc_key.i64(args).unwrap_or(running[device]);
        curves[device].push((ts, allocated));
        let addr = addr_key.i64(args);
        if bytes > 0 {
            if let Some(addr) = addr {
                open.insert((device16, addr), out.ts_ns.len() as u32);
            }
            out.instant.push(i as u32);
            out.ts_ns.push(ts);
            out.bytes.push(bytes);
            out.device.push(device16);
            out.freed_ns.push(NEVER);
        } else if bytes < 0 {
            match addr.and_then(|a| open.remove(&(device16, a))) {
                Some(a) => out.freed_ns[a as usize] = ts,
                None => out.preexisting_freed[device] += -bytes,
            }
        }
    }
    (out, curves)
}
