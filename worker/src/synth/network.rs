//! The demo network's ops: forward and backward of the autoencoder
//! `Linear(1024, 4096) -> ReLU -> Linear(4096, 1024)` with MSE loss, batch 256, fp32.
//!
//! Forward runs on the main thread; backward on the autograd device thread, one
//! `autograd::engine::evaluate_function: XBackward0` wrapper per node, each node carrying the
//! `Sequence number` of the forward op that created it (the `fwdbwd` flows join the two).
//! Buffers are allocated where PyTorch allocates them and freed when autograd drops them, so
//! the `[memory]` instants rise through forward and fall through backward.
//! Left out to keep the demo under 300 KB: the `aten::transpose` / `aten::as_strided` children
//! of backward's `aten::t`, and `AccumulateGrad`'s `aten::detach`.

use super::sim::device::{Kernel, Memcpy};
use super::kernels::{
    MEAN, MSE, MSE_BACKWARD, RELU, RELU_BACKWARD, SGEMM_FC1, SGEMM_FC1_WGRAD, SGEMM_FC2,
    SGEMM_FC2_DGRAD, SGEMM_FC2_WGRAD, SUM,
};
use super::sim::memory::{Buf, Device};
use super::sim::{In, Op, Sim, US};

/// The batch: inputs, targets and outputs.
pub(crate) const X: &[i64] = &[256, 1024];
/// Hidden activations.
pub(crate) const H: &[i64] = &[256, 4096];
/// Weights and biases of the two layers, and the weights transposed.
pub(crate) const W1: &[i64] = &[4096, 1024];
pub(crate) const W1T: &[i64] = &[1024, 4096];
pub(crate) const B1: &[i64] = &[4096];
pub(crate) const W2: &[i64] = &[1024, 4096];
pub(crate) const W2T: &[i64] = &[4096, 1024];
pub(crate) const B2: &[i64] = &[1024];
/// A 0-d tensor (the loss).
pub(crate) const SCALAR: &[i64] = &[];
/// One MiB in bytes.
pub(crate) const MIB: i64 = 1 << 20;

/// `nn.Linear` forward: `aten::linear` -> `aten::t`, `aten::addmm`. Returns the output buffer.
fn linear(s: &mut Sim, seq: i64, shapes: [&[i64]; 4], kernel: &Kernel, bias_copy: bool) -> Buf {
    let [input, weight, bias, output] = shapes;
    let weight_t: Vec<i64> = weight.iter().rev().copied().collect();
    let linear = Op::new("aten::linear", 5.0).seq(seq);
    s.op(
        linear.inputs(&[In::F(input), In::F(weight), In::F(bias)]),
        |s| {
            transpose(s, Op::new("aten::t", 3.0).creates_node(seq), weight);
            let addmm = [In::F(bias), In::F(input), In::F(&weight_t), In::S, In::S];
            s.op(
                Op::new("aten::addmm", 10.0)
                    .creates_node(seq + 1)
                    .inputs(&addmm),
                |s| {
                    let bytes = output.iter().product::<i64>() * 4;
                    let out = s.alloc(Device::Cuda, bytes);
                    if bias_copy {
                        // The bias is broadcast into the output before the GEMM accumulates into it.
                        s.memcpy(Memcpy::DtoD, bytes);
                    }
                    s.occupancy_query();
                    s.launch(kernel);
                    out
                },
            )
        },
    )
}

/// `aten::t` (or a named variant) -> `aten::transpose` -> `aten::as_strided` on `shape`.
fn transpose(s: &mut Sim, op: Op, shape: &[i64]) {
    s.op(op.inputs(&[In::F(shape)]), |s| {
        s.op(
            Op::new("aten::transpose", 3.0).inputs(&[In::F(shape), In::S, In::S]),
            |s| {
                s.op(
                    Op::new("aten::as_strided", 2.0).inputs(&[In::F(shape), In::Sl, In::Sl, In::N]),
                    |_| {},
                );
            },
        );
    });
}

/// The forward pass; returns the buffers autograd keeps for backward.
pub(crate) fn forward(s: &mut Sim, seq: i64) -> Vec<Buf> {
    s.work(16 * US);
    let h = linear(s, seq, [X, W1, B1, H], &SGEMM_FC1, false);
    s.work(7 * US);
    let relu = Op::new("aten::relu", 4.0)
        .creates_node(seq + 2)
        .inputs(&[In::F(H)]);
    let relu_out = s.op(relu, |s| {
        s.op(
            Op::new("aten::clamp_min", 5.0).inputs(&[In::F(H), In::S]),
            |s| {
                let out = s.alloc(Device::Cuda, 4 * MIB);
                s.launch(&RELU);
                out
            },
        )
    });
    s.work(15 * US);
    let out = linear(s, seq + 3, [H, W2, B2, X], &SGEMM_FC2, true);
    s.work(9 * US);
    let mse = Op::new("aten::mse_loss", 6.0)
        .creates_node(seq + 5)
        .inputs(&[In::F(X), In::F(X), In::S]);
    let loss = s.op(mse, |s| {
        s.launch(&MSE);
        let loss = s.op(Op::new("aten::mean", 6.0).inputs(&[In::F(X), In::N]), |s| {
            let loss = s.alloc(Device::Cuda, 512);
            s.launch(&MEAN);
            loss
        });
        loss
    });
    vec![h, relu_out, out, loss]
}

/// A bare `aten::t` (its transpose / as_strided children left out to keep the demo small).
fn t(s: &mut Sim, shape: &[i64]) {
    s.op(Op::new("aten::t", 5.0).inputs(&[In::F(shape)]), |_| {});
}

/// One `evaluate_function:` wrapper plus its node, with `body` inside the node.
fn node<R>(
    s: &mut Sim,
    name: &'static str,
    seq: Option<i64>,
    grad: &[i64],
    body: impl FnOnce(&mut Sim) -> R,
) -> R {
    let eval = Op::new(format!("autograd::engine::evaluate_function: {name}"), 5.0).evaluate(seq);
    let result = s.op(eval, |s| {
        let inner = Op::new(name, 4.0).inputs(&[In::F(grad)]);
        let inner = match seq {
            Some(seq) => inner.node(seq),
            None => inner,
        };
        s.op(inner, body)
    });
    s.work(4 * US);
    result
}

/// `AccumulateGrad` for a parameter whose gradient was just produced (no previous grad).
fn accumulate(s: &mut Sim, shape: &[i64]) {
    node(s, "torch::autograd::AccumulateGrad", None, shape, |s| {
        s.work(2 * US)
    });
}

/// The GEMMs and bias sum of `AddmmBackward0`; returns (grad input, grad weight, grad bias).
fn addmm_backward(
    s: &mut Sim,
    shapes: [&[i64]; 3],
    dgrad: Option<&Kernel>,
    wgrad: &Kernel,
) -> Vec<Buf> {
    let [grad_out, input, weight] = shapes;
    let mut bufs = Vec::new();
    if let Some(dgrad) = dgrad {
        let buf = s.op(
            Op::new("aten::mm", 8.0).inputs(&[In::F(grad_out), In::F(weight)]),
            |s| {
                let buf = s.alloc(Device::Cuda, grad_out[0] * weight[1] * 4);
                s.occupancy_query();
                s.launch(dgrad);
                buf
            },
        );
        bufs.push(buf);
    }
    let grad_out_t: Vec<i64> = grad_out.iter().rev().copied().collect();
    t(s, grad_out);
    let wgrad_buf = s.op(
        Op::new("aten::mm", 8.0).inputs(&[In::F(&grad_out_t), In::F(input)]),
        |s| {
            let buf = s.alloc(Device::Cuda, grad_out[1] * input[1] * 4);
            s.occupancy_query();
            s.launch(wgrad);
            buf
        },
    );
    bufs.push(wgrad_buf);
    s.op(
        Op::new("aten::t", 3.0).inputs(&[In::F(&[grad_out[1], input[1]])]),
        |_| {},
    );
    let bias_buf = s.op(
        Op::new("aten::sum", 7.0).inputs(&[In::F(grad_out), In::Sl, In::S, In::N]),
        |s| {
            let buf = s.alloc(Device::Cuda, grad_out[1] * 4);
            s.launch(&SUM);
            buf
        },
    );
    bufs.push(bias_buf);
    bufs
}

/// Backward on the autograd thread; frees `saved` as nodes finish and returns the gradients
/// of (w2, b2, w1, b1).
pub(crate) fn backward(s: &mut Sim, seq: i64, saved: &mut Vec<Buf>) -> Vec<Buf> {
    let mut scratch = Vec::new();
    node(s, "MseLossBackward0", Some(seq + 5), SCALAR, |s| {
        let inputs = [In::F(SCALAR), In::F(X), In::F(X), In::S];
        let grad = s.op(
            Op::new("aten::mse_loss_backward", 6.0).inputs(&inputs),
            |s| {
                let grad = s.alloc(Device::Cuda, MIB);
                s.launch(&MSE_BACKWARD);
                grad
            },
        );
        scratch.push(grad);
    });
    let grads = node(s, "AddmmBackward0", Some(seq + 4), X, |s| {
        addmm_backward(s, [X, H, W2], Some(&SGEMM_FC2_DGRAD), &SGEMM_FC2_WGRAD)
    });
    node(s, "TBackward0", Some(seq + 3), W2T, |s| t(s, W2T));
    accumulate(s, B2);
    accumulate(s, W2);
    let relu_grad = node(s, "ReluBackward0", Some(seq + 2), H, |s| {
        let inputs = [In::F(H), In::F(H), In::S];
        s.op(
            Op::new("aten::threshold_backward", 6.0).inputs(&inputs),
            |s| {
                let grad = s.alloc(Device::Cuda, 4 * MIB);
                s.launch(&RELU_BACKWARD);
                grad
            },
        )
    });
    scratch.push(relu_grad);
    let fc1 = node(s, "AddmmBackward0", Some(seq + 1), H, |s| {
        addmm_backward(s, [H, X, W1T], None, &SGEMM_FC1_WGRAD)
    });
    node(s, "TBackward0", Some(seq), W1T, |s| t(s, W1T));
    accumulate(s, B1);
    accumulate(s, W1);
    // The FC2 input gradient (first of `grads`) is scratch; the rest are parameter grads.
    let mut grads = grads.into_iter();
    scratch.extend(grads.next());
    for buf in scratch.into_iter().chain(saved.drain(..)) {
        s.free(buf);
    }
    grads.chain(fc1).collect()
}
