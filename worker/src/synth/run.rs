//! Synthetic distributed runs: one Kineto trace per rank of a data-parallel loop with a known
//! straggler, for the multi-rank analysis (`crate::run`) and its benchmark.
//!
//! **Script** (true time, the same for every rank): each step runs `collectives_per_step`
//! phases; in a phase every rank launches `kernels_per_collective` compute kernels back to back
//! on stream 7, then an all-reduce (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`) on stream 20.
//! A rank's all-reduce kernel starts when its compute ends (its **arrival**); every rank's
//! all-reduce ends together, `collective_ns` after the last arrival; the next phase starts
//! there. Each compute kernel has its cpu_op and `cudaLaunchKernel` (linked by `correlation`)
//! 5 µs before it; each all-reduce has `record_param_comms` / `nccl:all_reduce` on the host.
//!
//! **Ground truth.** A [`Delay`] makes one rank's last compute kernel of one phase longer by
//! `extra_ns`: that rank arrives last and every other rank waits `extra_ns` (plus the jitter,
//! at most [`JITTER_NS`] per kernel). `skew_ns[r]` is added to every timestamp rank `r` writes
//! (its clock is off by that much); collective ends then differ by exactly the skew.
//! With `dataloader_ns > 0`, each step starts with a DataLoader fetch
//! (`enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`) of that length, plus
//! `dataloader_delays`' extra in the steps they name; the GPU waits meanwhile.
//! With `process_group_args`, kernels and `record_param_comms` carry newer PyTorch's
//! `Process Group Name` / `Seq` / `Collective name`.
//!
//! **Output.** `distributedInfo {backend: nccl, rank, world_size}` and the events in Kineto's
//! layout (`kineto::push_event`); timestamps absolute µs with three decimals. Deterministic: a
//! pure function of the spec. Cost: O(events); about 0.75 KB per compute kernel.

use std::borrow::Cow;

use super::kineto::{push_event, Arg, Event, Id, Kind};

/// Absolute start of every rank's first step, ns (true time).
const T0_NS: i64 = 1_694_128_201_000_000_000;
/// Largest per-kernel jitter, ns (deterministic, per rank / step / phase / kernel).
pub const JITTER_NS: i64 = 2_000;
/// Host ops start this long before the device work they launch, ns.
const HOST_LEAD_NS: i64 = 5_000;
/// Gap between a step's last all-reduce end and the next step's first kernel, ns.
const STEP_GAP_NS: i64 = 80_000;
/// Compute stream and communication stream ids.
const COMPUTE_STREAM: i64 = 7;
const COMM_STREAM: i64 = 20;
/// Kernel and op names of a compute phase, cycled.
const KERNELS: [(&str, &str); 3] = [
    ("ampere_sgemm_128x64_nn", "aten::mm"),
    (
        "void at::native::vectorized_elementwise_kernel<4>",
        "aten::add_",
    ),
    ("void at::native::reduce_kernel<512, 1>", "aten::sum"),
];
/// The DataLoader fetch a step starts with (`dataloader_ns`).
const DATALOADER: &str = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
/// The all-reduce kernel.
pub const ALLREDUCE_KERNEL: &str = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

/// Extra compute on one rank before one collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delay {
    /// The slow rank.
    pub rank: u32,
    /// Step index (0-based; the trace names it `ProfilerStep#{first_step + step}`).
    pub step: u32,
    /// Collective index within the step (0-based).
    pub collective: u32,
    /// Extra compute, ns.
    pub extra_ns: i64,
}

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Ranks generated (0..ranks).
    pub ranks: u32,
    /// `world_size` written in `distributedInfo`.
    pub world_size: u32,
    /// Profiled steps per rank.
    pub steps: u32,
    /// Number of the first step (`ProfilerStep#N`).
    pub first_step: u32,
    /// All-reduces per step.
    pub collectives_per_step: u32,
    /// Compute kernels before each all-reduce.
    pub kernels_per_collective: u32,
    /// Duration of one compute kernel before jitter, ns.
    pub kernel_ns: i64,
    /// Duration of an all-reduce after the last arrival, ns.
    pub collective_ns: i64,
    /// Designed stragglers.
    pub delays: Vec<Delay>,
    /// Clock skew per rank, ns (missing entries: 0).
    pub skew_ns: Vec<i64>,
    /// Write `Process Group Name` / `Seq` args on collectives (newer PyTorch).
    pub process_group_args: bool,
    /// DataLoader fetch at the start of every step, ns (0: none).
    pub dataloader_ns: i64,
    /// Extra DataLoader time: (step index, extra ns).
    pub dataloader_delays: Vec<(u32, i64)>,
}

impl Default for RunSpec {
    fn default() -> Self {
        Self {
            ranks: 8,
            world_size: 8,
            steps: 4,
            first_step: 10,
            collectives_per_step: 4,
            kernels_per_collective: 6,
            kernel_ns: 50_000,
            collective_ns: 200_000,
            delays: Vec::new(),
            skew_ns: Vec::new(),
            process_group_args: false,
            dataloader_ns: 0,
            dataloader_delays: Vec::new(),
        }
    }
}

impl RunSpec {
    /// Extra compute of `rank` before collective `j` of step `s`, ns.
    fn extra_ns(&self, rank: u32, s: u32, j: u32) -> i64 {
        self.delays
            .iter()
            .filter(|d| d.rank == rank && d.step == s && d.collective == j)
            .map(|d| d.extra_ns)
            .sum()
    }

    /// Duration of kernel `k` of phase (s, j) on `rank`, ns.
    fn kernel_dur_ns(&self, rank: u32, s: u32, j: u32, k: u32) -> i64 {
        let mut dur = self.kernel_ns + jitter(rank, s, j, k);
        if k + 1 == self.kernels_per_collective {
            dur += self.extra_ns(rank, s, j);
        }
        dur
    }

    /// Compute time of phase (s, j) on `rank`, ns.
    fn phase_ns(&self, rank: u32, s: u32, j: u32) -> i64 {
        (0..self.kernels_per_collective)
            .map(|k| self.kernel_dur_ns(rank, s, j, k))
            .sum()
    }
}

/// Deterministic jitter in `[0, JITTER_NS)` (splitmix64 of the coordinates).
fn jitter(rank: u32, s: u32, j: u32, k: u32) -> i64 {
    let mut z =
        (u64::from(rank) << 48) ^ (u64::from(s) << 32) ^ (u64::from(j) << 16) ^ u64::from(k);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % JITTER_NS as u64) as i64
}

/// The traces of every rank, uncompressed JSON, index = rank.
pub fn generate(spec: &RunSpec) -> Vec<Vec<u8>> {
    (0..spec.ranks).map(|r| generate_rank(spec, r)).collect()
}

/// The trace of one rank as uncompressed JSON bytes.
pub fn generate_rank(spec: &RunSpec, rank: u32) -> Vec<u8> {
    let skew = spec.skew_ns.get(rank as usize).copied().unwrap_or(0);
    let mut w = Writer::new(rank, skew, spec.world_size);
    let mut t = T0_NS;
    let mut seq = 0i64;
    for s in 0..spec.steps {
        let step_start = t;
        let fetch = spec.dataloader_ns + spec.dataloader_delays.iter().filter(|d| d.0 == s).map(|d| d.1).sum::<i64>();
        if spec.dataloader_ns > 0 {
            w.host("user_annotation", DATALOADER, t, fetch, Vec::new());
            // The first launch's host op starts after the fetch ends.
            t += fetch + 2 * HOST_LEAD_NS;
        }
        for j in 0..spec.collectives_per_step {
            let last_arrival = t
                + (0..spec.ranks)
                    .map(|r| spec.phase_ns(r, s, j))
                    .max()
                    .unwrap_or(0);
            let mut k_start = t;
            for k in 0..spec.kernels_per_collective {
                let dur = spec.kernel_dur_ns(rank, s, j, k);
                // In bounds: the index is taken modulo the table's length.
                let (kernel, op) = KERNELS[k as usize % KERNELS.len()];
                w.launch(op, kernel, COMPUTE_STREAM, k_start, dur, Vec::new());
                k_start += dur;
            }
            let end = last_arrival + spec.collective_ns;
            let pg = if spec.process_group_args {
                vec![
                    ("Collective name", Arg::Str(Cow::Borrowed("allreduce"))),
                    ("Process Group Name", Arg::Str(Cow::Borrowed("0"))),
                    ("Seq", Arg::Int(seq)),
                ]
            } else {
                Vec::new()
            };
            w.collective(k_start, end - k_start, pg);
            seq += 1;
            t = end;
        }
        w.step(spec.first_step + s, step_start, t + HOST_LEAD_NS);
        t += STEP_GAP_NS;
    }
    w.finish()
}

/// Writes every rank's trace to `dir/rank-{r}.json`; returns the paths in rank order.
///
/// # Errors
/// The first I/O error, with the path.
#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::disallowed_methods)] // a benchmark's input writer, native only
pub fn write_dir(
    spec: &RunSpec,
    dir: &std::path::Path,
) -> std::io::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    (0..spec.ranks)
        .map(|r| {
            let path = dir.join(format!("rank-{r}.json"));
            std::fs::write(&path, generate_rank(spec, r))
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            Ok(path)
        })
        .collect()
}

/// Serializes one rank's events as they are made (no event list kept: ~25 MB ranks stay cheap).
struct Writer {
    out: Vec<u8>,
    events: usize,
    skew: i64,
    device: i64,
    host_pid: i64,
    correlation: i64,
    allocated: i64,
}

impl Writer {
    fn new(rank: u32, skew: i64, world_size: u32) -> Self {
        let mut out = Vec::with_capacity(1 << 20);
        out.extend_from_slice(
            format!(
                "{{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {rank}, \"world_size\": {world_size}}},\n  \"traceEvents\": [\n"
            )
            .as_bytes(),
        );
        Self {
            out,
            events: 0,
            skew,
            device: i64::from(rank),
            host_pid: 4000 + i64::from(rank),
            correlation: 1,
            allocated: 0,
        }
    }

    fn push(&mut self, mut e: Event) {
        e.ts_ns += self.skew;
        if self.events > 0 {
            self.out.extend_from_slice(b",\n");
        }
        push_event(&mut self.out, &e);
        self.events += 1;
    }

    fn host(
        &mut self,
        cat: &'static str,
        name: &str,
        ts_ns: i64,
        dur_ns: i64,
        args: Vec<(&'static str, Arg)>,
    ) {
        self.push(Event {
            kind: Kind::Complete { cat, dur_ns },
            name: Cow::Owned(name.to_owned()),
            pid: Id::Num(self.host_pid),
            tid: Id::Num(self.host_pid),
            ts_ns,
            args,
        });
    }

    /// A host op launching `kernel` on `stream` at `start` for `dur` ns.
    fn launch(
        &mut self,
        op: &str,
        kernel: &str,
        stream: i64,
        start: i64,
        dur: i64,
        kernel_args: Vec<(&'static str, Arg)>,
    ) {
        let corr = self.correlation;
        self.correlation += 1;
        let host_at = start - HOST_LEAD_NS;
        self.host("cpu_op", op, host_at, 4_000, Vec::new());
        self.host(
            "cuda_runtime",
            "cudaLaunchKernel",
            host_at + 500,
            3_000,
            vec![("correlation", Arg::Int(corr))],
        );
        let mut args = vec![
            ("device", Arg::Int(self.device)),
            ("stream", Arg::Int(stream)),
            ("correlation", Arg::Int(corr)),
        ];
        args.extend(kernel_args);
        self.push(Event {
            kind: Kind::Complete {
                cat: "kernel",
                dur_ns: dur,
            },
            name: Cow::Owned(kernel.to_owned()),
            pid: Id::Num(self.device),
            tid: Id::Num(stream),
            ts_ns: start,
            args,
        });
    }

    /// `record_param_comms` / `nccl:all_reduce` on the host and the all-reduce kernel.
    fn collective(&mut self, start: i64, dur: i64, pg: Vec<(&'static str, Arg)>) {
        let host_at = start - HOST_LEAD_NS - 1_000;
        self.host("cpu_op", "record_param_comms", host_at, 5_000, pg.clone());
        self.host(
            "user_annotation",
            "nccl:all_reduce",
            host_at + 200,
            4_500,
            Vec::new(),
        );
        self.launch(
            "c10d::allreduce_",
            ALLREDUCE_KERNEL,
            COMM_STREAM,
            start,
            dur,
            pg,
        );
    }

    /// `ProfilerStep#n` over `[start - lead, end]` and a gradient buffer held during the step.
    fn step(&mut self, n: u32, start: i64, end: i64) {
        let cpu_start = start - 2 * HOST_LEAD_NS;
        self.host(
            "user_annotation",
            &format!("ProfilerStep#{n}"),
            cpu_start,
            end - cpu_start,
            Vec::new(),
        );
        let bytes = 64 << 20;
        self.memory(cpu_start + 100, bytes);
        self.memory(end - 100, -bytes);
    }

    fn memory(&mut self, ts_ns: i64, bytes: i64) {
        self.allocated += bytes;
        let args = vec![
            ("Total Reserved", Arg::Int(256 << 20)),
            ("Total Allocated", Arg::Int(self.allocated)),
            ("Bytes", Arg::Int(bytes)),
            ("Addr", Arg::Int(0x7f00_0000_0000)),
            ("Device Id", Arg::Int(self.device)),
            ("Device Type", Arg::Int(1)),
        ];
        self.push(Event {
            kind: Kind::Instant {
                cat: Some("cpu_instant_event"),
                scope: "t",
            },
            name: Cow::Borrowed("[memory]"),
            pid: Id::Num(self.host_pid),
            tid: Id::Num(self.host_pid),
            ts_ns,
            args,
        });
    }

    fn finish(mut self) -> Vec<u8> {
        self.out.extend_from_slice(b"\n  ]\n}\n");
        self.out
    }
}
