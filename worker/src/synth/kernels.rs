//! The demo's kernels: names as CUDA and PyTorch print them, durations and launch shapes.
//!
//! Shapes are those of the demo model (batch 256, Linear 1024 -> 4096 -> 1024, fp32 on an
//! A100 with 108 SMs). GEMMs are cuBLAS SIMT `sgemm` kernels (fp32 without TF32 uses no tensor
//! cores, which the tensor-core rule should notice); the small-grid `64x32` GEMM leaves most SMs
//! idle. Durations are in ns and roughly what those sizes take on that GPU, so the step is
//! partly GPU bound and partly waiting on the data loader.

use super::sim::device::Kernel;
use super::sim::US;

const fn k(
    name: &'static str,
    dur_us: i64,
    grid: [i64; 3],
    block: [i64; 3],
    regs: i64,
    smem: i64,
    occ: i64,
) -> Kernel {
    Kernel {
        name,
        dur_ns: dur_us * US,
        grid,
        block,
        regs,
        smem,
        occupancy_pct: occ,
    }
}

/// Forward Linear(1024 -> 4096): `[256, 1024] x [1024, 4096]`.
pub(crate) const SGEMM_FC1: Kernel = k(
    "ampere_sgemm_128x64_tn",
    142,
    [32, 4, 1],
    [128, 1, 1],
    122,
    16384,
    10,
);
/// Forward Linear(4096 -> 1024): a small grid, most SMs idle.
pub(crate) const SGEMM_FC2: Kernel = k(
    "ampere_sgemm_64x32_sliced1x4_tn",
    188,
    [16, 8, 1],
    [128, 1, 1],
    126,
    32768,
    9,
);
/// Backward of FC2, gradient with respect to its input.
pub(crate) const SGEMM_FC2_DGRAD: Kernel = k(
    "ampere_sgemm_128x64_nn",
    139,
    [32, 4, 1],
    [128, 1, 1],
    122,
    16384,
    10,
);
/// Backward of FC2, weight gradient.
pub(crate) const SGEMM_FC2_WGRAD: Kernel = k(
    "ampere_sgemm_128x128_nt",
    156,
    [32, 8, 1],
    [256, 1, 1],
    128,
    32768,
    12,
);
/// Backward of FC1, weight gradient.
pub(crate) const SGEMM_FC1_WGRAD: Kernel = k(
    "ampere_sgemm_128x128_nt",
    151,
    [8, 32, 1],
    [256, 1, 1],
    128,
    32768,
    12,
);

/// `aten::relu` (via `clamp_min`) over `[256, 4096]`.
pub(crate) const RELU: Kernel = k(
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
    9,
    [2048, 1, 1],
    [128, 1, 1],
    16,
    0,
    91,
);
/// The squared error of `aten::mse_loss`.
pub(crate) const MSE: Kernel = k(
    "void at::native::vectorized_elementwise_kernel<4, at::native::mse_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, at::native::mse_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}, at::detail::Array<char*, 3>)",
    4,
    [512, 1, 1],
    [128, 1, 1],
    18,
    0,
    78,
);
/// The mean reduction of the loss.
pub(crate) const MEAN: Kernel = k(
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
    7,
    [64, 1, 1],
    [32, 16, 1],
    32,
    16,
    42,
);
/// `aten::fill_` on a small tensor (the seed gradient of backward, optimizer state init).
pub(crate) const FILL: Kernel = k(
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
    2,
    [1, 1, 1],
    [128, 1, 1],
    16,
    0,
    6,
);
/// Gradient of the squared error.
pub(crate) const MSE_BACKWARD: Kernel = k(
    "void at::native::vectorized_elementwise_kernel<4, at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float, float)#1}, at::detail::Array<char*, 4> >(int, at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float, float)#1}, at::detail::Array<char*, 4>)",
    6,
    [512, 1, 1],
    [128, 1, 1],
    20,
    0,
    80,
);
/// Bias gradient: a column sum.
pub(crate) const SUM: Kernel = k(
    "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
    9,
    [32, 2, 1],
    [32, 16, 1],
    40,
    16,
    38,
);
/// `aten::threshold_backward` (the ReLU gradient).
pub(crate) const RELU_BACKWARD: Kernel = k(
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3>)",
    12,
    [2048, 1, 1],
    [128, 1, 1],
    20,
    0,
    88,
);

/// `_foreach_add_` on the four device-side step counters.
pub(crate) const FOREACH_ADD: Kernel = k(
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::plus<float>, float)",
    3,
    [1, 1, 1],
    [512, 1, 1],
    32,
    0,
    2,
);
/// `_fused_adamw_` over the four parameters (8.4 M floats, seven passes over memory).
pub(crate) const FUSED_ADAMW: Kernel = k(
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*)",
    174,
    [320, 1, 1],
    [512, 1, 1],
    72,
    0,
    44,
);
