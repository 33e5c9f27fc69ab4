//! Every threshold the cheatsheet rules use, in one place, each documented in docs/findings.md.
//! Times are ns, shares are fractions 0..=1.
//!
//! Where a number comes from another tool it says so (docs/definitions.md §4–5); the rest are ours,
//! chosen so a rule fires on a pattern a person would call a problem and stays silent on the
//! real fixtures where it is not one (see `worker/tests/findings.rs`).

/// Most slice ids one finding carries as evidence (the true count is kept beside them).
pub const EVIDENCE_CAP: usize = 100;

/// `overhead-bound`: Self CUDA time total below this share of Self CPU time total.
pub const OVERHEAD_DEVICE_SHARE: f64 = 0.10;
/// `overhead-bound`: a step whose GPU is idle more than this share of its span is overhead-bound.
pub const OVERHEAD_STEP_IDLE_SHARE: f64 = 0.50;
/// `overhead-bound`: and host wait (HTA's idle class: the launch came after the stream went
/// idle) is at least this share of the streams' idle time. Ours: below half, the
/// idle table itself says the GPU waited on something else (work queued ahead, other streams).
pub const OVERHEAD_HOST_WAIT_SHARE: f64 = 0.50;
/// `compute-bound`: GPU busy at least this share of the steps' time (tb_plugin-style window).
pub const COMPUTE_BOUND_BUSY_SHARE: f64 = 0.80;
/// `hotspot-op`: one op holds at least this share of Self CUDA time total.
pub const HOTSPOT_OP_SHARE: f64 = 0.40;
/// `many-small-calls`: at least this many calls of one op per step (per trace without steps).
pub const MANY_SMALL_CALLS_PER_STEP: f64 = 1000.0;
/// `many-small-calls`: and an average CPU total per call below this, ns (10 µs).
pub const MANY_SMALL_CALLS_MAX_AVG_NS: i64 = 10_000;
/// `many-small-calls`: and each such op takes at least this share of Self CPU time total (ours:
/// an op under 2% of CPU time is not where the time goes, however often it runs).
pub const MANY_SMALL_CALLS_MIN_CPU_SHARE: f64 = 0.02;
/// `cold-start-step`: first step at least this many times the median of the others.
pub const COLD_START_RATIO: f64 = 1.5;
/// `annotation-dispatch-gap`: first-step gap from a record_function's start to its first op, ns.
pub const DISPATCH_GAP_MIN_NS: i64 = 50_000;
/// `annotation-dispatch-gap`: and at least this many times the median gap in later steps.
pub const DISPATCH_GAP_RATIO: f64 = 10.0;
/// `occupancy-query`: how many launch calls after a query are looked at for the kernel it sizes.
pub const OCCUPANCY_LOOKAHEAD_CALLS: usize = 8;
/// `occupancy-query`: and how many slices after it at most (bounds the cost per query).
pub const OCCUPANCY_LOOKAHEAD_SLICES: usize = 64;
/// `long-device-sync`: a `cudaDeviceSynchronize` at least this long, ns (1 ms) ...
pub const LONG_SYNC_MIN_NS: i64 = 1_000_000;
/// ... during which the GPU is busy less than this share of the call.
pub const LONG_SYNC_MAX_BUSY_SHARE: f64 = 0.50;
/// `sync-heavy`: synchronizing calls take at least this share of Self CPU time total.
pub const SYNC_HEAVY_SHARE: f64 = 0.20;
/// `sync-heavy`: a synchronizing call during which the GPU is busy more than this share is
/// waiting for real work, not starving it (ours); such calls are not counted.
pub const SYNC_MAX_BUSY_SHARE: f64 = 0.90;
/// `launch-overhead`: at least this share of linked kernels is shorter than its launch call ...
pub const LAUNCH_OVERHEAD_SHARE: f64 = 0.50;
/// ... and at least this many such kernels (HTA's "short kernel" definition).
pub const LAUNCH_OVERHEAD_MIN_KERNELS: usize = 100;
/// `kernel-time-variance`: per-step time of a kernel (same name, grid, block) max / median.
pub const KERNEL_VARIANCE_RATIO: f64 = 1.5;
/// `kernel-time-variance`: only kernels holding at least this share of all kernel time.
pub const KERNEL_VARIANCE_MIN_SHARE: f64 = 0.05;
/// `fp32-gemm`: GEMM time without tensor cores at least this share of all GEMM time.
pub const FP32_GEMM_MIN_SHARE: f64 = 0.10;
/// `gpu-idle`: GPU Utilization below this (tb_plugin's 50%).
pub const GPU_IDLE_UTILIZATION: f64 = 0.50;
/// `gpu-idle`: or a gap without device work at least this long, ns (Nsight's 500 ms).
pub const GPU_IDLE_GAP_NS: i64 = 500_000_000;
/// `low-occupancy`: time-weighted Est. Achieved Occupancy below this, percent.
pub const LOW_OCCUPANCY_PCT: f64 = 25.0;
/// `low-occupancy`: only when kernels reporting occupancy run at least this long, ns (100 µs):
/// a handful of microseconds of tiny kernels is not worth a finding.
pub const LOW_OCCUPANCY_MIN_KERNEL_NS: i64 = 100_000;
/// `low-occupancy`: a kernel asking for more shared memory per block than this, bytes (the
/// 48 KiB a block gets without opting in), reads 0% occupancy in Kineto's estimate.
pub const DEFAULT_SHARED_MEMORY_BYTES: f64 = 49_152.0;
/// `pageable-memcpy`: copies under this many bytes are left out (64 KiB; ours: a staged copy
/// this small costs its latency, which pinning does not remove; `.item()` reads 8 bytes).
pub const PAGEABLE_MIN_BYTES: i64 = 65_536;
/// `compile-cpu-tax`: compiled-region CPU time at least this many times its GPU time.
pub const COMPILE_CPU_TAX_RATIO: f64 = 1.0;
/// `dataloader-bound`: DataLoader above this share of step time (tb_plugin's 5%).
pub const DATALOADER_SHARE: f64 = 0.05;
/// `comm-heavy`: communication above this share of step time (tb_plugin's 10%).
pub const COMM_HEAVY_SHARE: f64 = 0.10;
/// `comm-not-overlapped`: communication-kernel time not overlapped by compute kernels, share.
pub const COMM_EXPOSED_SHARE: f64 = 0.50;
/// `small-allreduces`: the median complete step launches at least this many all-reduce kernels.
/// DDP's default 25 MB buckets give a 1B-parameter fp32 model 160 per step and a 100M one 16:
/// this many means buckets far below the default or a per-tensor loop.
pub const SMALL_ALLREDUCE_PER_STEP: i64 = 50;
/// `small-allreduces`: and the median all-reduce kernel runs under this: a 25 MB ring
/// all-reduce at NVLink's ~150 GB/s bus bandwidth takes about 300 µs, so under 100 µs the
/// messages are a few MB or less and the call's fixed latency dominates.
pub const SMALL_ALLREDUCE_MAX_NS: i64 = 100_000;
/// `grad-scaler-skips`: GradScaler skipped the optimizer in at least this share of the
/// complete steps (ours: one step in four; a long calibration at the start of a capture is
/// rare since the profiler usually starts after some warm-up steps).
pub const SCALER_SKIP_MIN_SHARE: f64 = 0.25;
/// `comm-not-overlapped`: only when communication kernels take at least this share of the
/// device's kernel time (a few tiny collectives are not worth a finding).
pub const COMM_MIN_KERNEL_SHARE: f64 = 0.05;
/// `memory-near-limit`: peak reserved (else allocated) memory above this share of the device
/// memory (tb_plugin's 90%).
pub const MEMORY_NEAR_LIMIT_SHARE: f64 = 0.90;
/// `amp-opportunity` / `fp32-gemm`: tensor cores exist from this compute capability (Volta).
pub const TENSOR_CORE_MIN_MAJOR: i64 = 7;
/// `fp32-gemm` / `amp-opportunity`: TF32 exists from this compute capability (Ampere); on 7.x
/// the advice is autocast only.
pub const TF32_MIN_MAJOR: i64 = 8;
/// `slow-step`: a step at least this many times the median of its neighbours (ours, as
/// `cold-start-step`'s ratio; a real case: 425 ms among 210-220 ms steps).
pub const SLOW_STEP_RATIO: f64 = 1.5;
/// `slow-step`: neighbours are up to this many complete steps on each side (first step left out).
pub const SLOW_STEP_NEIGHBOURS: usize = 2;
/// `lazy-init`: host time before the first op or kernel at least this long, ns (0.5 s; ours:
/// CUDA context creation takes 0.3-2 s, a real case was about 1 s).
pub const LAZY_INIT_MIN_NS: i64 = 500_000_000;
/// `lazy-init`: or a runtime call that launches nothing, made before the first device activity
/// starts, at least this long, ns (100 ms; ours: CUDA context creation inside the first op or
/// the first launches, `cudaFree(0)`, `cudaGetDevice`, takes hundreds of ms to seconds, the same
/// calls later take microseconds).
pub const LAZY_INIT_CALL_MIN_NS: i64 = 100_000_000;
/// `device-query-loop`: at least this many device-property / attribute queries (ours: a
/// program needs a handful; thousands mean a query inside a loop).
pub const DEVICE_QUERY_MIN_CALLS: usize = 1000;
/// `partial-trace`: only judged with at least this many launch calls or device activities.
pub const PARTIAL_MIN_EVENTS: usize = 100;
/// `partial-trace`: median jump between consecutive correlation ids of launch calls at least
/// this (complete traces on the fixtures: 1-8, since other runtime calls take ids too;
/// the sampled HTA ranks: 36-37).
pub const PARTIAL_CORRELATION_GAP: u64 = 20;
/// `partial-trace`: or at least this share of device activities have no launch call.
pub const PARTIAL_UNLINKED_SHARE: f64 = 0.50;
/// `partial-trace`: or a synchronizing call waits at least this long, ns (1 ms; a sync on an
/// idle device returns in microseconds) ...
pub const PARTIAL_BLIND_WAIT_NS: i64 = 1_000_000;
/// ... while device activities are recorded for less than this share of it (ours: the device
/// must have run work the trace does not hold; sglang's decode trace waits 463 ms in
/// `hipMemcpyWithStream` with 4 µs recorded).
pub const PARTIAL_BLIND_MAX_RECORDED_SHARE: f64 = 0.10;
/// `health-unlinked`, `health-outside-window`: at least this many events checked (launch calls,
/// or device activities). Ours: below it one stray event makes a large share.
pub const HEALTH_MIN_EVENTS: u64 = 10;
/// `health-unlinked`: at least this share of launch calls without a device activity, or of
/// device activities without a launch call. Ours: complete real traces have none; the real
/// fixtures that cross it lose 8-98% (work queued before the capture, graph capture).
pub const HEALTH_UNLINKED_SHARE: f64 = 0.05;
/// `health-outside-window`: at least this share of device activities starting outside the
/// host's capture window. Ours: complete traces have none; a few stray activities at the edge
/// are not worth a finding, one in a hundred changes step and utilization numbers.
pub const HEALTH_OUTSIDE_SHARE: f64 = 0.01;
/// `low-mfu`: the median complete step's MFU below this, % (ours: large training runs reach
/// 35-55%; under 10% most of the GPU's compute is unused, whatever the cause).
pub const LOW_MFU_PCT: f64 = 10.0;
/// `low-mfu`: FLOPs must be known for at least this share of GEMM and attention kernel time,
/// or the MFU would only be a lower bound (ours).
pub const LOW_MFU_MIN_COVERAGE: f64 = 0.5;
/// `memory-bound-gemm`: memory-bound GEMM kernels hold at least this share of GEMM time (ours,
/// as `fp32-gemm`).
pub const MEMORY_BOUND_GEMM_MIN_SHARE: f64 = 0.10;
/// `memory-leak`: allocated bytes at step start grow by at least this share of the highest
/// step peak per step (ours: smaller growth is caches warming up, not a trend worth a warning).
pub const LEAK_MIN_SHARE_OF_PEAK: f64 = 0.01;
/// `activation-peak`: activations hold at least this share of the highest step peak ("most of
/// the peak", the issue's wording; ours).
pub const ACTIVATION_PEAK_SHARE: f64 = 0.5;
/// `optimizer-state-peak`: optimizer state holds at least this share of the highest step peak
/// (as `activation-peak`).
pub const OPTIMIZER_STATE_PEAK_SHARE: f64 = 0.5;
/// `memory-fragmentation`: reserved at least this many times allocated at the allocated peak
/// (ours: the caching allocator rounds blocks up, so 1.2x is normal; 1.5x is a third unused).
pub const FRAGMENTATION_RATIO: f64 = 1.5;
/// `memory-fragmentation`: and at least this many bytes reserved but unused (ours: 1 GiB, a
/// size worth acting on on any GPU).
pub const FRAGMENTATION_MIN_BYTES: i64 = 1 << 30;
/// `tf32-fp32`: TF32 GEMMs on fp32 inputs hold at least this share of GEMM time (ours, as
/// `fp32-gemm`'s share).
pub const TF32_FP32_MIN_GEMM_SHARE: f64 = 0.10;
/// `tf32-fp32`: a TF32 GEMM's time in bf16 / fp16, as a share: the datasheets' dense tensor
/// rates are twice TF32's (A100 312 vs 156 TFLOP/s, H100 SXM 989.4 vs 494.7, L40S 362 vs 181).
pub const TF32_TO_BF16_TIME: f64 = 0.5;
/// `gemm-alignment`: M, N and K of a bf16 / fp16 GEMM should be multiples of this (NVIDIA Deep
/// Learning Performance Guide, "Matrix Multiplication Background": 8 elements = 16 bytes).
pub const GEMM_ALIGN_16BIT: u64 = 8;
/// `gemm-alignment`: and of an fp8 / int8 GEMM, multiples of this (same guide: 16 for int8;
/// cuBLASLt's FP8 matmuls require 16).
pub const GEMM_ALIGN_8BIT: u64 = 16;
/// `gemm-alignment`: misaligned GEMMs hold at least this share of GEMM time (ours, as
/// `fp32-gemm`'s share).
pub const GEMM_ALIGN_MIN_SHARE: f64 = 0.10;
/// `unfused-attention`: matmul -> softmax -> matmul chains hold at least this share of device
/// time (ours: below it, fusing attention is not where the time goes).
pub const UNFUSED_ATTENTION_MIN_SHARE: f64 = 0.05;
/// `copy-overhead`: layout and dtype copies hold at least this share of device time (ours, as
/// `comm-heavy`'s tb_plugin 10%: a tenth of the GPU spent rewriting tensors is worth a look).
pub const COPY_OVERHEAD_MIN_SHARE: f64 = 0.10;
/// `copy-overhead`: and at least this much copy time, ns (100 µs, as `low-occupancy`'s
/// minimum: a few microseconds of copies in a graph-replayed decode step are not worth a finding).
pub const COPY_OVERHEAD_MIN_NS: i64 = 100_000;
/// `low-sm-efficiency`: kernels fill less than this share of the SMs while they run (SM
/// efficiency / utilization; ours: under half, most of the GPU idles under a busy timeline).
pub const LOW_SM_FILL: f64 = 0.5;
/// `low-sm-efficiency`: only when kernels reporting blocks per SM run at least this long, ns
/// (100 µs, as `low-occupancy`).
pub const LOW_SM_FILL_MIN_KERNEL_NS: i64 = 100_000;
/// `exposed-comm-tail`: the median complete step's communication after the backward pass with
/// no compute beside it holds at least this share of the step span (ours: the impact's
/// negligible mark, `impact::NEGLIGIBLE_PCT`; below it the finding would be told as info).
pub const EXPOSED_TAIL_MIN_SHARE: f64 = 0.02;
/// `exposed-comm-tail`: and at least this long, ns (100 µs, as `low-occupancy`'s minimum).
pub const EXPOSED_TAIL_MIN_NS: i64 = 100_000;
/// `h2d-not-overlapped`: the median complete step's host-to-device copies serialized with compute
/// (on the compute stream, or with no compute kernel running) hold at least this share of its
/// span (ours, as `exposed-comm-tail`: the impact's negligible mark).
pub const H2D_SERIAL_MIN_SHARE: f64 = 0.02;
/// `h2d-not-overlapped`: and at least this long, ns (100 µs, as `low-occupancy`'s minimum).
pub const H2D_SERIAL_MIN_NS: i64 = 100_000;
/// `h2d-not-overlapped`: or at least this many host-to-device copies per median step (ours: a
/// copy's call and DMA setup take ~5-10 µs, so 100 copies cost about a millisecond a step; the
/// real fixtures make 12-13)...
pub const H2D_MANY_PER_STEP: i64 = 100;
/// ... of a median size under this, bytes (64 KiB, `pageable-memcpy`'s floor: smaller copies
/// are latency-bound).
pub const H2D_SMALL_BYTES: i64 = PAGEABLE_MIN_BYTES;
/// `unfused-attention`'s remedy: a chain's device time with one fused kernel, as a share (Dao et
/// al. 2022, "FlashAttention": 2-4x faster than PyTorch's op-by-op attention, 7.6x on GPT-2's;
/// the low end, 2x).
pub const FUSED_ATTENTION_TIME: f64 = 0.5;

/// `allreduce-every-microstep`: at least this share of the complete steps all-reduce after two
/// or more of their backward passes (ours: most steps, so one step that accumulates by
/// accident, or a validation pass, does not speak for the loop).
pub const MICROSTEP_ALLREDUCE_MIN_SHARE: f64 = 0.5;
