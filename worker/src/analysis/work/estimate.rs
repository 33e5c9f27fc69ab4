//! FLOPs and bytes of one op call, from its name and recorded inputs.
//!
//! **Sources, in order.** The `flops` arg when the trace was recorded `with_flops=True`;
//! otherwise an estimate from the op name, `Input Dims`, `Input type` and `Concrete Inputs`
//! (stride, padding, dilation, groups) for the ops that carry the work. Anything else is
//! unknown (`None`), never 0.
//!
//! **FLOPs** follow PyTorch's own counts where PyTorch has one (torch/csrc/profiler/util.cpp
//! `computeFlops`: mm / addmm 2·M·K·N, bmm / baddbmm 2·B·M·K·N, conv2d 2·N·Hout·Wout·Cout·
//! (Cin/groups)·kh·kw, add / mul one per element of the first input; the bias of addmm is not
//! counted) and torch.utils.flop_counter elsewhere: matmul with broadcasting and linear as
//! their GEMM, conv1d/3d and transposed convolutions by the same rule, attention as its two
//! GEMMs (4·B·H·Sq·Sk·D for D = Dv; a causal mask is not halved, as flop_counter), attention
//! backward as 2x its forward. Other elementwise ops and reductions get bytes only.
//!
//! **Bytes** = tensor inputs read + outputs written, at the dtype's size. Outputs are derived
//! from the op's semantics (GEMM M×N, convolution output size, broadcast shape of elementwise
//! inputs, reductions over the dims in `Concrete Inputs`). In-place ops write their first input;
//! `copy_` reads its source and writes itself; `fill_` / `zero_` only write.
//!
//! **Why an innermost op wins** (see `super`): `aten::linear` -> `aten::addmm` -> kernel are the
//! same work; both rows show it (a row's FLOPs are its calls' work, inclusive like CPU total),
//! but kernels and step MFU count it once, from the innermost op with an estimate.

use super::dtype::{self, Dtype, PeakClass};
use crate::analysis::args::ArgKey;
use serde_json::Value;

/// What kind of work an op does (decides bytes-only ops' boundedness).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkKind {
    /// Matrix multiply (mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm).
    Gemm,
    /// Convolution, forward or transposed.
    Conv,
    /// Scaled dot-product / flash attention, forward or backward.
    Attention,
    /// Elementwise arithmetic, activations, copies.
    Elementwise,
    /// Reductions and normalizations (sum, mean, softmax, layer_norm, ...).
    Reduction,
    /// Counted by the profiler (`flops` arg) for an op not listed above.
    Recorded,
}

/// The work of one op call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpWork {
    /// Floating-point operations, when known.
    pub flops: Option<u64>,
    /// Bytes read and written, when known.
    pub bytes: Option<u64>,
    /// The peak class of its inputs' dtype (first tensor input), when known.
    pub peak: Option<PeakClass>,
    /// What it does.
    pub kind: WorkKind,
    /// `[batch, M, N, K]` of a GEMM (batch 1 for 2-D).
    pub gemm: Option<[u64; 4]>,
}

/// The arg lookups an estimate needs (build once, use per op).
pub struct WorkKeys {
    dims: ArgKey,
    types: ArgKey,
    concrete: ArgKey,
    flops: ArgKey,
}

impl Default for WorkKeys {
    fn default() -> Self {
        Self {
            dims: ArgKey::new("Input Dims"),
            types: ArgKey::new("Input type"),
            concrete: ArgKey::new("Concrete Inputs"),
            flops: ArgKey::new("flops"),
        }
    }
}

impl WorkKeys {
    /// Whether `args` holds a recorded `flops` (traces recorded `with_flops=True`).
    pub fn recorded(&self, args: &[u8]) -> bool {
        self.flops.raw(args).is_some()
    }

    /// Writes into `key` the raw texts an estimate reads from `args` (`Input Dims`,
    /// `Input type`, `Concrete Inputs`, `flops`), each with its presence and length: calls with
    /// equal keys and names have equal work, so callers cache estimates by them.
    pub fn inputs_key(&self, args: &[u8], key: &mut Vec<u8>) {
        for raw in [
            self.dims.raw(args),
            self.types.raw(args),
            self.concrete.raw(args),
            self.flops.raw(args),
        ] {
            match raw {
                Some(raw) => {
                    key.push(1);
                    key.extend_from_slice(&(raw.len() as u64).to_le_bytes());
                    key.extend_from_slice(raw);
                }
                None => key.push(0),
            }
        }
    }
}

/// The recorded inputs of one call.
struct Inputs {
    /// Per argument: a tensor's dims, or `None` (scalar, list, absent).
    dims: Vec<Option<Vec<u64>>>,
    /// Per argument: a tensor's dtype, or `None`.
    types: Vec<Option<Dtype>>,
    /// Per argument: the concrete value's text (`"[1, 1]"`, `"1"`, `"False"`), or `""`.
    concrete: Vec<String>,
}

impl Inputs {
    fn dims(&self, i: usize) -> Option<&[u64]> {
        self.dims.get(i)?.as_deref()
    }

    /// Bytes of tensor argument `i`, if its dims and dtype are known.
    fn tensor_bytes(&self, i: usize) -> Option<u64> {
        let dims = self.dims(i)?;
        numel(dims).checked_mul(self.types.get(i).copied().flatten()?.bytes)
    }

    /// Bytes of every tensor argument with dims (`None` when one of them has no dtype).
    fn all_tensor_bytes(&self) -> Option<u64> {
        let mut sum = 0u64;
        for i in 0..self.dims.len() {
            if self.dims(i).is_some_and(|d| !d.is_empty() || self.types.get(i).copied().flatten().is_some()) {
                sum = sum.checked_add(self.tensor_bytes(i)?)?;
            }
        }
        Some(sum)
    }

    /// The dtype of the first tensor argument.
    fn dtype(&self) -> Option<Dtype> {
        self.types.iter().flatten().next().copied()
    }

    /// Integers of concrete argument `i` (`"[1, 1]"` -> [1, 1], `"2"` -> [2]); `None` if absent.
    fn ints(&self, i: usize) -> Option<Vec<u64>> {
        let text = self.concrete.get(i)?.trim();
        let body = text.trim_start_matches('[').trim_end_matches(']');
        if body.trim().is_empty() {
            return if text.starts_with('[') { Some(Vec::new()) } else { None };
        }
        body.split(',').map(|v| v.trim().parse::<u64>().ok()).collect()
    }

    fn flag(&self, i: usize) -> Option<bool> {
        match self.concrete.get(i)?.trim() {
            "True" | "true" | "1" => Some(true),
            "False" | "false" | "0" => Some(false),
            _ => None,
        }
    }
}

fn numel(dims: &[u64]) -> u64 {
    dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).unwrap_or(u64::MAX)
}

/// The work of one call of op `name` with raw args `args`; `None` when neither FLOPs nor
/// bytes can be told.
pub fn estimate(keys: &WorkKeys, name: &str, args: &[u8]) -> Option<OpWork> {
    let recorded = keys.flops.raw(args).and_then(|raw| std::str::from_utf8(raw).ok()?.trim().parse::<u64>().ok());
    let inputs = read_inputs(keys, args);
    let short = name.strip_prefix("aten::").unwrap_or(name);
    let mut work = inputs.as_ref().and_then(|i| from_shapes(short, i));
    if let Some(flops) = recorded {
        match &mut work {
            Some(w) => w.flops = Some(flops),
            None => {
                work = Some(OpWork {
                    flops: Some(flops),
                    bytes: None,
                    peak: inputs.as_ref().and_then(Inputs::dtype).map(|d| d.peak),
                    kind: WorkKind::Recorded,
                    gemm: None,
                })
            }
        }
    }
    work.filter(|w| w.flops.is_some() || w.bytes.is_some())
}

fn read_inputs(keys: &WorkKeys, args: &[u8]) -> Option<Inputs> {
    let dims: Vec<Value> = serde_json::from_slice(keys.dims.raw(args)?).ok()?;
    let types: Vec<Value> = keys
        .types
        .raw(args)
        .and_then(|raw| serde_json::from_slice(raw).ok())
        .unwrap_or_default();
    let concrete: Vec<Value> = keys
        .concrete
        .raw(args)
        .and_then(|raw| serde_json::from_slice(raw).ok())
        .unwrap_or_default();
    let dims = dims
        .iter()
        .map(|d| {
            let list = d.as_array()?;
            list.iter().map(|v| v.as_u64()).collect::<Option<Vec<u64>>>()
        })
        .collect();
    let types = types.iter().map(|t| t.as_str().and_then(dtype::parse)).collect();
    let concrete = concrete.iter().map(|c| c.as_str().unwrap_or("").to_owned()).collect();
    Some(Inputs { dims, types, concrete })
}

/// How an op's work is estimated.
enum Rule {
    /// Operands `a`, `b` and an optional added input.
    Gemm(usize, usize, Option<usize>),
    Linear,
    Conv(ConvArgs),
    /// q at `.0`, its layout, 1 pass forward or 2 backward.
    Attention(usize, Layout, u64),
    /// FLOPs counted (one per element) or bytes only.
    Elementwise(bool),
    Reduction,
}

/// The rule for op `name` (without `aten::`), if we estimate it.
fn rule(name: &str) -> Option<Rule> {
    const CONV: ConvArgs =
        ConvArgs { stride: 3, padding: 4, dilation: 5, groups: 6, transposed: Transposed::Never, output_padding: None };
    Some(match name {
        "mm" | "_scaled_mm" | "bmm" | "matmul" => Rule::Gemm(0, 1, None),
        "addmm" | "baddbmm" => Rule::Gemm(1, 2, Some(0)),
        "linear" => Rule::Linear,
        "conv1d" | "conv2d" | "conv3d" => Rule::Conv(CONV),
        "conv_transpose1d" | "conv_transpose2d" | "conv_transpose3d" => Rule::Conv(ConvArgs {
            dilation: 7,
            transposed: Transposed::Always,
            output_padding: Some(5),
            ..CONV
        }),
        // Groups come after `transposed` and output_padding.
        "convolution" | "_convolution" => {
            Rule::Conv(ConvArgs { groups: 8, transposed: Transposed::Arg(6), output_padding: Some(7), ..CONV })
        }
        "cudnn_convolution" => Rule::Conv(ConvArgs { stride: 3, padding: 2, dilation: 4, groups: 5, ..CONV }),
        "mkldnn_convolution" | "miopen_convolution" => Rule::Conv(ConvArgs { stride: 4, padding: 3, ..CONV }),
        "scaled_dot_product_attention"
        | "_scaled_dot_product_flash_attention"
        | "_scaled_dot_product_efficient_attention"
        | "_scaled_dot_product_cudnn_attention"
        | "_scaled_dot_product_flash_attention_for_cpu" => Rule::Attention(0, Layout::Bhsd, 1),
        "_flash_attention_forward" => Rule::Attention(0, Layout::Bshd, 1),
        "_scaled_dot_product_flash_attention_backward"
        | "_scaled_dot_product_efficient_attention_backward"
        | "_scaled_dot_product_cudnn_attention_backward"
        | "_scaled_dot_product_flash_attention_for_cpu_backward" => Rule::Attention(1, Layout::Bhsd, 2),
        "_flash_attention_backward" => Rule::Attention(1, Layout::Bshd, 2),
        _ if COUNTED.contains(&name) => Rule::Elementwise(true),
        _ if ELEMENTWISE.contains(&name) => Rule::Elementwise(false),
        _ if REDUCTIONS.iter().any(|list| list.contains(&name)) => Rule::Reduction,
        _ => return None,
    })
}

/// Whether op `name` (without `aten::`) has an estimate rule: callers skip the args of others.
pub fn may_estimate(name: &str) -> bool {
    rule(name).is_some()
}

fn from_shapes(name: &str, i: &Inputs) -> Option<OpWork> {
    match rule(name)? {
        Rule::Gemm(a, b, add) => gemm(i, a, b, add),
        Rule::Linear => linear(i),
        Rule::Conv(at) => conv(i, at),
        Rule::Attention(first, layout, passes) => attention(i, first, layout, passes),
        Rule::Elementwise(counted) => elementwise(name, counted, i),
        Rule::Reduction => reduction(name, i),
    }
}

/// A GEMM with operands `a` and `b` (2-D, 3-D or, for matmul, broadcast N-D), plus an
/// optional added input (the bias of addmm / baddbmm, read but not counted as FLOPs).
fn gemm(i: &Inputs, a: usize, b: usize, add: Option<usize>) -> Option<OpWork> {
    let (da, db) = (i.dims(a)?, i.dims(b)?);
    // 1-D operands of matmul: a vector on the left is a row, on the right a column.
    let (m, k) = match da {
        [] => return None,
        [k] => (1, *k),
        [.., m, k] => (*m, *k),
    };
    let (k2, n) = match db {
        [] => return None,
        [k] => (*k, 1),
        [.., k, n] => (*k, *n),
    };
    if k != k2 {
        return None;
    }
    let batch_a = da.get(..da.len().saturating_sub(2)).unwrap_or(&[]);
    let batch_b = db.get(..db.len().saturating_sub(2)).unwrap_or(&[]);
    let batch_dims = broadcast(batch_a, batch_b)?;
    let batch = numel(&batch_dims);
    let flops = 2u64.checked_mul(batch)?.checked_mul(m)?.checked_mul(k)?.checked_mul(n)?;
    let dtype = i.types.get(a).copied().flatten();
    let out = dtype.map(|d| batch * m * n * d.bytes);
    let bytes = (|| {
        let mut sum = i.tensor_bytes(a)?.checked_add(i.tensor_bytes(b)?)?;
        if let Some(c) = add {
            sum = sum.checked_add(i.tensor_bytes(c).unwrap_or(0))?;
        }
        sum.checked_add(out?)
    })();
    Some(OpWork { flops: Some(flops), bytes, peak: dtype.map(|d| d.peak), kind: WorkKind::Gemm, gemm: Some([batch, m, n, k]) })
}

/// `linear(x[..., K], w[N, K], bias[N]?)`: the GEMM x · wᵀ.
fn linear(i: &Inputs) -> Option<OpWork> {
    let (x, w) = (i.dims(0)?, i.dims(1)?);
    let (&k, rows) = x.split_last()?;
    let [n, k2] = *w else { return None };
    if k != k2 {
        return None;
    }
    let m = numel(rows);
    let flops = 2u64.checked_mul(m)?.checked_mul(k)?.checked_mul(n)?;
    let dtype = i.types.first().copied().flatten();
    let bytes = (|| {
        let inputs = i.tensor_bytes(0)? + i.tensor_bytes(1)? + i.tensor_bytes(2).unwrap_or(0);
        Some(inputs + m * n * dtype?.bytes)
    })();
    Some(OpWork { flops: Some(flops), bytes, peak: dtype.map(|d| d.peak), kind: WorkKind::Gemm, gemm: Some([1, m, n, k]) })
}

/// Positions of a convolution's arguments in `Concrete Inputs`.
#[derive(Clone, Copy)]
struct ConvArgs {
    stride: usize,
    padding: usize,
    dilation: usize,
    groups: usize,
    /// Whether the convolution is transposed.
    transposed: Transposed,
    output_padding: Option<usize>,
}

/// Whether a convolution signature is transposed.
#[derive(Clone, Copy)]
enum Transposed {
    Never,
    Always,
    /// As the boolean argument at this position says (`convolution`, `_convolution`).
    Arg(usize),
}

/// A convolution: input [N, Cin, *spatial], weight [Cout, Cin/groups, *k] (transposed:
/// [Cin, Cout/groups, *k]).
fn conv(i: &Inputs, at: ConvArgs) -> Option<OpWork> {
    let (x, w) = (i.dims(0)?, i.dims(1)?);
    let nd = x.len().checked_sub(2).filter(|&d| d >= 1 && w.len() == d + 2)?;
    let per_dim = |v: Option<Vec<u64>>, default: u64| -> Option<Vec<u64>> {
        match v {
            None => Some(vec![default; nd]),
            Some(v) if v.is_empty() => Some(vec![default; nd]),
            Some(v) if v.len() == 1 => Some(vec![v[0]; nd]),
            Some(v) if v.len() == nd => Some(v),
            Some(_) => None,
        }
    };
    let stride = per_dim(i.ints(at.stride), 1)?;
    let dilation = per_dim(i.ints(at.dilation), 1)?;
    let groups = i.ints(at.groups).and_then(|g| g.first().copied()).unwrap_or(1).max(1);
    let transposed = match at.transposed {
        Transposed::Never => false,
        Transposed::Always => true,
        Transposed::Arg(k) => i.flag(k).unwrap_or(false),
    };
    let (batch, cin) = (x[0], x[1]);
    let spatial_in = &x[2..];
    let kernel = &w[2..];
    // conv2d also takes padding as a string: 'valid' is 0, 'same' keeps the size.
    let pad_text = i.concrete.get(at.padding).map(|s| s.trim().trim_matches('\'').trim_matches('"')).unwrap_or("");
    let padding = match pad_text {
        "valid" => Some(vec![0; nd]),
        "same" => None,
        _ => Some(per_dim(i.ints(at.padding), 0)?),
    };
    let spatial_out: Vec<u64> = if transposed {
        let out_pad = per_dim(at.output_padding.and_then(|p| i.ints(p)), 0)?;
        let padding = padding.unwrap_or(vec![0; nd]);
        (0..nd)
            .map(|d| {
                let full = (spatial_in[d].checked_sub(1)?) * stride[d] + dilation[d] * (kernel[d].checked_sub(1)?) + out_pad[d] + 1;
                full.checked_sub(2 * padding[d])
            })
            .collect::<Option<_>>()?
    } else {
        match padding {
            None => spatial_in.to_vec(),
            Some(padding) => (0..nd)
                .map(|d| {
                    let span = spatial_in[d] + 2 * padding[d];
                    let reach = dilation[d] * (kernel[d].checked_sub(1)?) + 1;
                    Some(span.checked_sub(reach)? / stride[d].max(1) + 1)
                })
                .collect::<Option<_>>()?,
        }
    };
    let (cout, macs_per_point) = if transposed {
        // Each input point is scattered through the whole kernel into Cout/groups channels.
        (w[1] * groups, numel(spatial_in) * w[1] * numel(kernel) * cin)
    } else {
        (w[0], numel(&spatial_out) * w[1] * numel(kernel) * w[0])
    };
    let flops = 2u64.checked_mul(batch)?.checked_mul(macs_per_point)?;
    let dtype = i.types.first().copied().flatten();
    let bytes = (|| {
        let inputs = i.tensor_bytes(0)? + i.tensor_bytes(1)? + i.tensor_bytes(2).unwrap_or(0);
        Some(inputs + batch * cout * numel(&spatial_out) * dtype?.bytes)
    })();
    Some(OpWork { flops: Some(flops), bytes, peak: dtype.map(|d| d.peak), kind: WorkKind::Conv, gemm: None })
}

/// How attention tensors lay out batch, heads, sequence and head dim.
#[derive(Clone, Copy)]
enum Layout {
    /// [B, H, S, D] (scaled_dot_product_attention and its backends).
    Bhsd,
    /// [B, S, H, D] (flash-attention's own entry points).
    Bshd,
}

/// Attention with q, k, v at `first`, `first + 1`, `first + 2`; `passes` 1 forward, 2 backward.
fn attention(i: &Inputs, first: usize, layout: Layout, passes: u64) -> Option<OpWork> {
    let (q, k, v) = (i.dims(first)?, i.dims(first + 1)?, i.dims(first + 2)?);
    let split = |t: &[u64]| -> Option<(u64, u64, u64, u64)> {
        let [b, x, y, d] = *t else { return None };
        Some(match layout {
            Layout::Bhsd => (b, x, y, d),
            Layout::Bshd => (b, y, x, d),
        })
    };
    let (b, h, sq, d) = split(q)?;
    let (_, _, sk, _) = split(k)?;
    let (_, _, _, dv) = split(v)?;
    let flops = passes.checked_mul(2 * b * h * sq * sk * (d + dv))?;
    let dtype = i.types.get(first).copied().flatten();
    let bytes = (|| {
        let mut sum = 0u64;
        for t in first..first + 3 {
            sum += i.tensor_bytes(t)?;
        }
        let out = b * h * sq * dv * dtype?.bytes;
        // Backward also reads grad_out and out, and writes dq, dk, dv.
        Some(if passes == 2 { sum + i.tensor_bytes(0).unwrap_or(0) + out + sum } else { sum + out })
    })();
    Some(OpWork { flops: Some(flops), bytes, peak: dtype.map(|d| d.peak), kind: WorkKind::Attention, gemm: None })
}

/// Elementwise arithmetic PyTorch counts one FLOP per element for (first input's numel).
const COUNTED: &[&str] = &["add", "mul", "add_", "mul_", "sub", "sub_", "div", "div_"];

/// Elementwise ops with bytes only (their FLOPs are trivial).
const ELEMENTWISE: &[&str] = &[
    "relu", "relu_", "gelu", "gelu_", "silu", "silu_", "sigmoid", "sigmoid_", "tanh", "tanh_", "exp", "exp_", "log",
    "neg", "pow", "sqrt", "rsqrt", "abs", "clamp", "clamp_", "clamp_min", "where", "masked_fill", "masked_fill_",
    "threshold_backward", "gelu_backward", "silu_backward", "sigmoid_backward", "tanh_backward", "addcmul_",
    "addcdiv_", "lerp_", "mul_scalar", "hardtanh", "leaky_relu", "elu", "erf", "reciprocal", "sign", "square",
    "maximum", "minimum", "native_dropout", "clone", "copy_", "fill_", "zero_", "_foreach_add_", "_foreach_mul_",
];

fn elementwise(name: &str, counted: bool, i: &Inputs) -> Option<OpWork> {
    let first = i.dims(0)?;
    let dtype = i.types.first().copied().flatten()?;
    // Broadcast shape of the tensor inputs of the same dtype family (scalars are `[]`).
    let mut out = first.to_vec();
    for t in 1..i.dims.len() {
        if let (Some(d), Some(_)) = (i.dims(t), i.types.get(t).copied().flatten()) {
            out = broadcast(&out, d)?;
        }
    }
    let written = numel(&out) * dtype.bytes;
    let bytes = match name {
        "fill_" | "zero_" => Some(written),
        "copy_" => i.tensor_bytes(1).map(|src| src + written),
        _ => i.all_tensor_bytes().map(|read| read + written),
    };
    Some(OpWork {
        flops: counted.then(|| numel(first)),
        bytes,
        peak: Some(dtype.peak),
        kind: WorkKind::Elementwise,
        gemm: None,
    })
}

/// Normalizations: the output has the input's shape.
const NORMALIZATIONS: &[&str] = &[
    "softmax", "_softmax", "log_softmax", "_log_softmax", "_softmax_backward_data", "layer_norm", "native_layer_norm",
    "rms_norm", "_fused_rms_norm", "group_norm", "native_group_norm", "batch_norm", "native_batch_norm",
    "_batch_norm_impl_index", "cudnn_batch_norm",
];

/// Reductions over the dims in `Concrete Inputs` argument 1 (all dims without it).
const REDUCING: &[&str] =
    &["sum", "mean", "amax", "amin", "max", "min", "norm", "var", "std", "argmax", "argmin", "linalg_vector_norm"];

/// Both kinds of reduction, for [`rule`].
const REDUCTIONS: &[&[&str]] = &[NORMALIZATIONS, REDUCING];

/// Reductions and normalizations: the input read once, the output written.
fn reduction(name: &str, i: &Inputs) -> Option<OpWork> {
    let first = i.dims(0)?;
    let dtype = i.types.first().copied().flatten()?;
    let out = if NORMALIZATIONS.contains(&name) {
        numel(first)
    } else {
        // Reduced dims may be negative (`-1`); no dims at all reduce everything to one value.
        let rank = first.len() as i64;
        let reduced: Vec<i64> = i
            .concrete
            .get(1)
            .map(|t| t.trim_matches(|c| c == '[' || c == ']' || c == ' '))
            .map(|t| t.split(',').filter_map(|v| v.trim().parse::<i64>().ok()).map(|d| d.rem_euclid(rank.max(1))).collect())
            .unwrap_or_default();
        if reduced.is_empty() {
            1
        } else {
            first.iter().enumerate().filter(|(d, _)| !reduced.contains(&(*d as i64))).map(|(_, &v)| v).product()
        }
    };
    let bytes = i.all_tensor_bytes().map(|read| read + out * dtype.bytes);
    Some(OpWork { flops: None, bytes, peak: Some(dtype.peak), kind: WorkKind::Reduction, gemm: None })
}

/// Numpy broadcasting of two shapes (`None` when they do not broadcast).
fn broadcast(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let n = a.len().max(b.len());
    let at = |s: &[u64], d: usize| if d + s.len() >= n { s[d + s.len() - n] } else { 1 };
    (0..n)
        .map(|d| match (at(a, d), at(b, d)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn est(name: &str, args: &str) -> Option<OpWork> {
        estimate(&WorkKeys::default(), name, args.as_bytes())
    }

    #[test]
    fn gemm_by_hand() {
        // [128, 32] x [32, 200] in fp32: 2·128·32·200 FLOPs; (128·32 + 32·200 + 128·200)·4 bytes.
        let w = est("aten::mm", r#"{"Input Dims":[[128,32],[32,200]],"Input type":["float","float"]}"#).unwrap();
        assert_eq!(w.flops, Some(1_638_400));
        assert_eq!(w.bytes, Some((128 * 32 + 32 * 200 + 128 * 200) * 4));
        assert_eq!(w.gemm, Some([1, 128, 200, 32]));
        // Intensity 1 638 400 / 144 384 = 11.35 FLOP/B.
        let intensity = w.flops.unwrap() as f64 / w.bytes.unwrap() as f64;
        assert!((intensity - 11.347_517_730_496_454).abs() < 1e-9);
        // bf16 linear over [1, 141, 512] x [512, 512]ᵀ + bias: M 141, N 512, K 512.
        let w = est(
            "aten::linear",
            r#"{"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16"],"Input Dims":[[1,141,512],[512,512],[512]]}"#,
        )
        .unwrap();
        assert_eq!(w.flops, Some(2 * 141 * 512 * 512));
        assert_eq!(w.bytes, Some((141 * 512 + 512 * 512 + 512 + 141 * 512) * 2));
        assert_eq!(w.peak, Some(PeakClass::Bf16));
    }

    #[test]
    fn matmul_broadcasts_and_vectors() {
        let w = est("aten::matmul", r#"{"Input Dims":[[4,1,8,16],[3,16,2]],"Input type":["float","float"]}"#).unwrap();
        assert_eq!(w.gemm, Some([12, 8, 2, 16]));
        assert_eq!(w.flops, Some(2 * 12 * 8 * 16 * 2));
        assert_eq!(w.bytes, Some((4 * 8 * 16 + 3 * 16 * 2 + 12 * 8 * 2) * 4));
        let w = est("aten::matmul", r#"{"Input Dims":[[16],[16,5]],"Input type":["float","float"]}"#).unwrap();
        assert_eq!(w.flops, Some(2 * 16 * 5));
        assert_eq!(est("aten::matmul", r#"{"Input Dims":[[4,3],[5,6]],"Input type":["float","float"]}"#), None);
    }

    #[test]
    fn convolutions() {
        // 3x3, stride 2, no padding on 28x28: 13x13 out.
        let args = r#"{"Concrete Inputs":["","","","[2, 2]","[0, 0]","[1, 1]","1"],"Input type":["float","float","","ScalarList","ScalarList","ScalarList","Scalar"],"Input Dims":[[2,3,28,28],[16,3,3,3],[],[],[],[],[]]}"#;
        let w = est("aten::conv2d", args).unwrap();
        assert_eq!(w.flops, Some(2 * 2 * 13 * 13 * 16 * 3 * 9));
        assert_eq!(w.bytes, Some((2 * 3 * 28 * 28 + 16 * 3 * 9 + 2 * 16 * 13 * 13) * 4));
        // conv_transpose1d doubling a length-10 signal: out (10-1)·2 + (4-1) + 0 + 1 - 2·1 = 20.
        let args = r#"{"Concrete Inputs":["","","","[2]","[1]","[0]","1","[1]"],"Input type":["float","float","","","","","",""],"Input Dims":[[1,8,10],[8,4,4],[],[],[],[],[],[]]}"#;
        let w = est("aten::conv_transpose1d", args).unwrap();
        assert_eq!(w.flops, Some(2 * 10 * 4 * 4 * 8));
        assert_eq!(w.bytes, Some((8 * 10 + 8 * 4 * 4 + 4 * 20) * 4));
        // Padding 'same' keeps the size.
        let args = r#"{"Concrete Inputs":["","","","[1]","'same'","[1]","1"],"Input type":["float","float"],"Input Dims":[[1,2,9],[3,2,3],[],[],[],[],[]]}"#;
        assert_eq!(est("aten::conv1d", args).unwrap().flops, Some(2 * 9 * 3 * 2 * 3));
    }

    #[test]
    fn attention_forward_and_backward() {
        let q = "[1,8,141,64]";
        let args = format!(r#"{{"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16"],"Input Dims":[{q},{q},{q}]}}"#);
        let w = est("aten::_scaled_dot_product_flash_attention", &args).unwrap();
        assert_eq!(w.flops, Some(4 * 8 * 141 * 141 * 64));
        assert_eq!(w.bytes, Some(4 * 8 * 141 * 64 * 2));
        // Flash's own entry takes [B, S, H, D].
        let q = "[1,141,8,64]";
        let args = format!(r#"{{"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16"],"Input Dims":[{q},{q},{q}]}}"#);
        assert_eq!(est("aten::_flash_attention_forward", &args).unwrap().flops, Some(4 * 8 * 141 * 141 * 64));
    }

    #[test]
    fn bytes_only_and_unknown() {
        let w = est("aten::gelu", r#"{"Input type":["c10::BFloat16",""],"Input Dims":[[1,141,2048],[]]}"#).unwrap();
        assert_eq!((w.flops, w.bytes), (None, Some(2 * 141 * 2048 * 2)));
        let w = est("aten::add", r#"{"Input type":["float","float","Scalar"],"Input Dims":[[64,48],[48],[]]}"#).unwrap();
        assert_eq!((w.flops, w.bytes), (Some(64 * 48), Some((64 * 48 + 48 + 64 * 48) * 4)));
        let w = est("aten::sum", r#"{"Concrete Inputs":["","[1]","False"],"Input type":["float","",""],"Input Dims":[[8,100],[],[]]}"#).unwrap();
        assert_eq!(w.bytes, Some((800 + 8) * 4));
        assert_eq!(est("aten::empty", r#"{"Input Dims":[[],[]],"Input type":["",""]}"#), None);
        assert_eq!(est("aten::mm", r#"{"Input type":["float","float"]}"#), None);
        // Dtype unknown: FLOPs known, bytes unknown.
        let w = est("aten::mm", r#"{"Input Dims":[[2,3],[3,4]]}"#).unwrap();
        assert_eq!((w.flops, w.bytes), (Some(48), None));
        // Recorded `flops` wins.
        let w = est("aten::mm", r#"{"Input Dims":[[2,3],[3,4]],"flops":50}"#).unwrap();
        assert_eq!(w.flops, Some(50));
        assert_eq!(est("my::op", r#"{"flops":7}"#).map(|w| w.kind), Some(WorkKind::Recorded));
    }
}
