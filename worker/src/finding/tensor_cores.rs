//! How GEMMs use the tensor cores: fp32 data on TF32 tensor cores where bf16 /
//! fp16 would run twice as fast (`tf32-fp32`), and reduced-precision GEMMs whose M, N or K
//! cannot be tiled for the tensor cores (`gemm-alignment`).
//!
//! **Inputs.** The kernel table's GEMM rows (class, tensor cores, precision by name), each
//! kernel's work op and `[batch, M, N, K]` from the roofline's [`crate::analysis::work`], and the
//! recorded `Input type` of the op that launched it (read here, once per op slice: the work
//! index keeps the name's precision, not the op's dtype).
//!
//! **Cost.** One pass over the GEMM kernels; one `Input type` parse per distinct launching op
//! slice, in a map dropped when the rule returns (no state kept in the session).

use super::thresholds::*;
use super::{dur, finding, pct, Ctx, Finding, Severity};
use crate::analysis::args::ArgKey;
use crate::analysis::kernel_class::Precision;
use crate::analysis::work::dtype::{self, Dtype, PeakClass};
use crate::model::link::enclosing_op;
use crate::model::strings::FxHashMap;
use crate::model::CatClass;

pub(super) fn rules(ctx: &Ctx, out: &mut Vec<Finding>) {
    let mut types = OpTypes::new(ctx);
    tf32_fp32(ctx, &mut types, out);
    gemm_alignment(ctx, &mut types, out);
}

/// The first tensor dtype of the op that launched a kernel, read from `Input type` and
/// cached per op slice for one detect.
struct OpTypes<'c, 't> {
    ctx: &'c Ctx<'t>,
    reader: crate::model::args::Reader<'t>,
    key: ArgKey,
    by_op: FxHashMap<u32, Option<Dtype>>,
}

impl<'c, 't> OpTypes<'c, 't> {
    fn new(ctx: &'c Ctx<'t>) -> Self {
        Self { ctx, reader: ctx.trace.args.reader(), key: ArgKey::new("Input type"), by_op: FxHashMap::default() }
    }

    /// The dtype of kernel `k`'s data: the first tensor `Input type` of the innermost op
    /// enclosing its launch call that records one (`aten::linear` records it when its
    /// `aten::addmm` does not), or `None` when no enclosing op records a known dtype.
    fn of_kernel(&mut self, k: u32) -> Option<Dtype> {
        let trace = self.ctx.trace;
        let mut op = enclosing_op(trace, super::launch_of(trace, k)?);
        while let Some(o) = op {
            if let Some(d) = self.of_op(o) {
                return Some(d);
            }
            op = enclosing_op(trace, o);
        }
        None
    }

    fn of_op(&mut self, op: u32) -> Option<Dtype> {
        if let Some(&d) = self.by_op.get(&op) {
            return d;
        }
        let args = self.reader.bytes(*self.ctx.trace.slices.args.get(op as usize)?);
        let d = self
            .key
            .raw(args)
            .and_then(|raw| serde_json::from_slice::<Vec<serde_json::Value>>(raw).ok())
            .and_then(|list| list.iter().find_map(|t| t.as_str().and_then(dtype::parse)));
        self.by_op.insert(op, d);
        d
    }
}

/// `tf32-fp32`: tensor-core GEMM kernels on fp32 data (precision TF32 by name: `tf32f32`,
/// `tfloat32`, CUTLASS `s1688gemm` without a half type) launched by ops whose `Input type`
/// is `float` take >= [`TF32_FP32_MIN_GEMM_SHARE`] of GEMM time. bf16 / fp16 tensor cores run
/// twice the TF32 rate ([`TF32_TO_BF16_TIME`]), so autocast would halve these kernels. GEMMs
/// whose op records no dtype are not counted (silent rather than guess). Evidence: those
/// kernels, longest first.
fn tf32_fp32(ctx: &Ctx, types: &mut OpTypes, out: &mut Vec<Finding>) {
    let rows = &ctx.kernels.rows;
    let gemm_ns: i64 = rows.iter().filter(|r| r.gemm).map(|r| r.total_ns).sum();
    let tf32 = ctx.mask(|n| rows.iter().any(|r| r.name == n && r.gemm && r.tensor_cores && r.precision == Precision::Tf32));
    let s = &ctx.trace.slices;
    let ids: Vec<u32> = ctx
        .slices_named(&tf32, Some(CatClass::Kernel))
        .into_iter()
        .filter(|&k| types.of_kernel(k).is_some_and(|d| d.peak == PeakClass::Fp32 && d.bytes == 4))
        .collect();
    let tf32_ns: i64 = ids.iter().map(|&k| s.dur_ns[k as usize]).sum();
    if ids.is_empty() || gemm_ns <= 0 || (tf32_ns as f64) < TF32_FP32_MIN_GEMM_SHARE * gemm_ns as f64 {
        return;
    }
    let ids = ctx.longest_first(ids);
    let names = {
        let mut n: Vec<u32> = ids.iter().map(|&k| s.name[k as usize].0).collect();
        n.sort_unstable();
        n.dedup();
        n.len()
    };
    let saved_ns = (tf32_ns as f64 * (1.0 - TF32_TO_BF16_TIME)) as i64;
    out.push(finding(
        "tf32-fp32",
        Severity::Warn,
        format!(
            "TF32 tensor-core GEMMs on fp32 inputs take {} of GEMM time ({} in {} calls, {names} kernel names); bf16 would save ~{}",
            pct(tf32_ns as f64 / gemm_ns as f64),
            dur(tf32_ns),
            ids.len(),
            dur(saved_ns)
        ),
        format!(
            "TF32 GEMM kernels launched by ops with Input type float: {} / GEMM time {} = {} >= {}; bf16 / fp16 tensor \
             cores run at twice the TF32 rate (A100 312 vs 156, H100 SXM 989 vs 495 dense TFLOP/s), so autocast would \
             take them to ~{} (saving {})",
            dur(tf32_ns),
            dur(gemm_ns),
            pct(tf32_ns as f64 / gemm_ns as f64),
            pct(TF32_FP32_MIN_GEMM_SHARE),
            dur(tf32_ns - saved_ns),
            dur(saved_ns)
        ),
        "The model runs in fp32 with TF32 allowed: matmuls use the tensor cores at the TF32 rate, \
         half of what the same tensor cores do in bf16 or fp16, and every activation moves twice \
         the bytes.",
        "Run the forward pass under torch.autocast(\"cuda\", dtype=torch.bfloat16) (fp16 with a \
         GradScaler on GPUs without fast bf16); keep the loss and norms in fp32 as autocast does.",
        ctx.evidence(ids),
    ));
}

/// The multiple M, N and K should be of for a GEMM on `d` data to tile the tensor cores
/// ([`GEMM_ALIGN_16BIT`], [`GEMM_ALIGN_8BIT`]); `None` for fp32 / fp64 data (TF32 and SIMT
/// are `fp32-gemm`'s and `tf32-fp32`'s).
fn alignment(d: Dtype) -> Option<u64> {
    match (d.peak, d.bytes) {
        (PeakClass::Bf16, 2) => Some(GEMM_ALIGN_16BIT),
        (PeakClass::Fp8 | PeakClass::Fp4, _) | (PeakClass::Fp32, 1) => Some(GEMM_ALIGN_8BIT),
        _ => None,
    }
}

/// `gemm-alignment`: GEMM kernels on bf16 / fp16 (fp8 / int8) data whose op's M, N or K is not
/// a multiple of [`GEMM_ALIGN_16BIT`] ([`GEMM_ALIGN_8BIT`]) take >= [`GEMM_ALIGN_MIN_SHARE`] of
/// GEMM time. Shapes are the roofline's (`KernelWork::gemm`); GEMMs without a recorded shape
/// or dtype are not counted. The title names the longest misaligned shape. Evidence: those
/// kernels, longest first.
fn gemm_alignment(ctx: &Ctx, types: &mut OpTypes, out: &mut Vec<Finding>) {
    let rows = &ctx.kernels.rows;
    let gemm_ns: i64 = rows.iter().filter(|r| r.gemm).map(|r| r.total_ns).sum();
    let gemm = ctx.mask(|n| rows.iter().any(|r| r.name == n && r.gemm));
    let s = &ctx.trace.slices;
    // (kernel, [b, m, n, k], multiple)
    let mut hits: Vec<(u32, [u64; 4], u64)> = Vec::new();
    for k in ctx.slices_named(&gemm, Some(CatClass::Kernel)) {
        let Some(shape) = ctx.work.kernel(k).and_then(|w| w.gemm) else { continue };
        let Some(multiple) = types.of_kernel(k).and_then(alignment) else { continue };
        if shape[1..].iter().any(|&d| d % multiple != 0) {
            hits.push((k, shape, multiple));
        }
    }
    let bad_ns: i64 = hits.iter().map(|h| s.dur_ns[h.0 as usize]).sum();
    if hits.is_empty() || gemm_ns <= 0 || (bad_ns as f64) < GEMM_ALIGN_MIN_SHARE * gemm_ns as f64 {
        return;
    }
    hits.sort_by_key(|h| (std::cmp::Reverse(s.dur_ns[h.0 as usize]), h.0));
    let (_, [b, m, n, k], multiple) = hits[0];
    let odd: Vec<String> = [("M", m), ("N", n), ("K", k)]
        .iter()
        .filter(|d| d.1 % multiple != 0)
        .map(|d| format!("{}={} (pad to {})", d.0, d.1, d.1.div_ceil(multiple) * multiple))
        .collect();
    let mut shapes: Vec<[u64; 4]> = hits.iter().map(|h| h.1).collect();
    shapes.sort_unstable();
    shapes.dedup();
    let batch = if b > 1 { format!("{b} x ") } else { String::new() };
    out.push(finding(
        "gemm-alignment",
        Severity::Warn,
        format!(
            "{} GEMM calls in {} shapes have M, N or K off the tensor-core multiple ({} of GEMM time, {}; e.g. {batch}M={m} N={n} K={k})",
            hits.len(),
            shapes.len(),
            pct(bad_ns as f64 / gemm_ns as f64),
            dur(bad_ns)
        ),
        format!(
            "misaligned GEMM time {} / GEMM time {} = {} >= {}; multiples: {GEMM_ALIGN_16BIT} for bf16 / fp16, \
             {GEMM_ALIGN_8BIT} for fp8 / int8 (shapes from the ops' Input Dims, dtype from Input type); the longest: {}",
            dur(bad_ns),
            dur(gemm_ns),
            pct(bad_ns as f64 / gemm_ns as f64),
            pct(GEMM_ALIGN_MIN_SHARE),
            odd.join(", ")
        ),
        "Tensor cores work on tiles whose sides are multiples of 8 elements for 16-bit data (16 \
         for 8-bit): a GEMM with an odd dimension runs with padded or partial tiles, slower \
         kernels, or on the CUDA cores.",
        "Pad the odd dimension to the multiple: vocabulary sizes (e.g. 50257 -> 50304), hidden and \
         head sizes, batch x sequence (tokens per step); pad once at model build, not per call.",
        ctx.evidence(hits.iter().map(|h| h.0)),
    ));
}
