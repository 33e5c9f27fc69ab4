//! The demo's training step, written as the ops `torch.profiler` would record for an
//! autoencoder `Linear(1024, 4096) -> ReLU -> Linear(4096, 1024)` trained to reproduce its input
//! (MSE loss), fused AdamW, batch 256:
//!
//! ```text
//! ProfilerStep#N
//! ├─ enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__   collate on CPU, HtoD copy
//! ├─ Optimizer.zero_grad#AdamW.zero_grad                           frees last step's grads
//! ├─ ## forward ##      linear (t, addmm), relu, linear (DtoD + addmm), mse_loss (mean)
//! ├─ ## backward ##     ones_like; the autograd thread runs evaluate_function: ... nodes
//! ├─ Optimizer.step#AdamW.step                    _foreach_add_ (step counts), _fused_adamw_
//! └─ aten::item         DtoH copy + stream sync: the CPU waits for the GPU here
//! ```
//!
//! The first step is the cold one: slow collate (file cache), slow runtime calls, first-launch
//! module loading, `cudaMalloc` as the caching allocator grows, optimizer state creation.
//! Sequence numbers link forward ops to backward nodes (`fwdbwd` flows use them as ids).

use super::device::{Buf, Device, Memcpy};
use super::kernels::*;
use super::sim::{In, Op, Sim, BWD_TID, US};

const X: &[i64] = &[256, 1024];
const H: &[i64] = &[256, 4096];
const W1: &[i64] = &[4096, 1024];
const W1T: &[i64] = &[1024, 4096];
const B1: &[i64] = &[4096];
const W2: &[i64] = &[1024, 4096];
const W2T: &[i64] = &[4096, 1024];
const B2: &[i64] = &[1024];
const SCALAR: &[i64] = &[];
const MIB: i64 = 1 << 20;
/// Bytes of each parameter, in `model.parameters()` order (w1, b1, w2, b2).
const PARAM_BYTES: [i64; 4] = [16 * MIB, 16 << 10, 16 * MIB, 4 << 10];

/// State carried across steps: autograd sequence numbers and live gradients.
#[derive(Debug, Default)]
pub(crate) struct Loop {
    next_seq: i64,
    grads: Vec<Buf>,
    optimizer_ready: bool,
}

impl Loop {
    /// A loop whose first autograd sequence number is `first_seq`.
    pub(crate) fn new(first_seq: i64) -> Self {
        Loop {
            next_seq: first_seq,
            ..Loop::default()
        }
    }

    /// Total bytes of the model's parameters.
    pub(crate) fn param_bytes() -> i64 {
        PARAM_BYTES.iter().sum()
    }

    /// Records the body of one `ProfilerStep#N`.
    pub(crate) fn step(&mut self, s: &mut Sim, cold: bool) {
        let x = data(s, cold);
        s.annotation("Optimizer.zero_grad#AdamW.zero_grad", |s| {
            s.work(9 * US);
            for g in self.grads.drain(..) {
                s.free(g);
            }
        });
        s.work(14 * US);
        let seq = self.next_seq;
        self.next_seq += 6;
        let mut saved = s.annotation("## forward ##", |s| forward(s, seq));
        s.work(11 * US);
        s.annotation("## backward ##", |s| {
            s.op(
                Op::new("aten::ones_like", 3.0).inputs(&[
                    In::F(SCALAR),
                    In::N,
                    In::N,
                    In::N,
                    In::S,
                    In::S,
                ]),
                |s| {
                    s.op(
                        Op::new("aten::empty_like", 2.0).inputs(&[
                            In::F(SCALAR),
                            In::N,
                            In::N,
                            In::N,
                            In::S,
                        ]),
                        |s| {
                            let empty = [In::Sl, In::Sl, In::S, In::S, In::N, In::S];
                            let seed = s
                                .op(Op::new("aten::empty_strided", 2.0).inputs(&empty), |s| {
                                    s.alloc(Device::Cuda, 512)
                                });
                            saved.push(seed);
                        },
                    );
                    s.op(
                        Op::new("aten::fill_", 2.0).inputs(&[In::F(SCALAR), In::S]),
                        |s| s.launch(&FILL),
                    );
                },
            );
            let start = s.now + s.spread(24 * US, 20);
            let (grads, end) = s.on_thread(BWD_TID, start, |s| backward(s, seq, &mut saved));
            self.grads = grads;
            s.now = end + s.spread(18 * US, 20);
        });
        s.work(9 * US);
        s.annotation("Optimizer.step#AdamW.step", |s| self.optimizer(s));
        s.work(6 * US);
        s.op(Op::new("aten::item", 3.0).inputs(&[In::F(SCALAR)]), |s| {
            s.op(
                Op::new("aten::_local_scalar_dense", 4.0).inputs(&[In::F(SCALAR)]),
                |s| {
                    s.memcpy(Memcpy::DtoH, 4);
                    s.stream_sync();
                },
            );
        });
        for buf in saved.into_iter().chain([x]) {
            s.free(buf);
        }
        s.work(21 * US);
    }

    fn optimizer(&mut self, s: &mut Sim) {
        s.work(35 * US);
        if !self.optimizer_ready {
            // First step: AdamW creates exp_avg and exp_avg_sq for every parameter.
            self.optimizer_ready = true;
            for bytes in PARAM_BYTES.iter().flat_map(|&b| [b, b]) {
                let zeros_like = [In::F(W1), In::N, In::N, In::N, In::S, In::N];
                s.op(Op::new("aten::zeros_like", 6.0).inputs(&zeros_like), |s| {
                    let _state = s.alloc(Device::Cuda, bytes);
                    s.launch(&FILL);
                });
                s.work(6 * US);
            }
        }
        // Fused AdamW: the step counters live on the device, then one kernel updates everything.
        s.op(
            Op::new("aten::_foreach_add_", 12.0).inputs(&[In::Tl, In::S]),
            |s| s.launch(&FOREACH_ADD),
        );
        s.work(21 * US);
        let mut inputs = vec![In::Tl; 6];
        inputs.extend([In::S; 7]);
        inputs.extend([In::N; 2]);
        s.op(Op::new("aten::_fused_adamw_", 19.0).inputs(&inputs), |s| {
            s.launch(&FUSED_ADAMW)
        });
    }
}

/// The DataLoader's `__next__`: collate on the CPU, then copy the batch to the GPU.
/// Returns the batch's device buffer (the autoencoder's input and target).
fn data(s: &mut Sim, cold: bool) -> Buf {
    let collate_ns = if cold { 9_400 * US } else { 2_500 * US };
    let batch = s.annotation(
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        |s| {
            let inputs = collate(s, collate_ns);
            to_device(s, inputs)
        },
    );
    s.work(12 * US);
    batch
}

/// `torch.stack` of 256 samples into one CPU tensor.
fn collate(s: &mut Sim, collate_ns: i64) -> Buf {
    s.work(collate_ns / 2);
    s.op(Op::new("aten::stack", 6.0).inputs(&[In::Tl, In::S]), |s| {
        s.op(Op::new("aten::cat", 9.0).inputs(&[In::Tl, In::S]), |s| {
            let buf = s.alloc(Device::Cpu, MIB);
            s.work(collate_ns / 12);
            buf
        })
    })
}

/// `.to("cuda")` of a pageable CPU tensor: allocate, copy, synchronize; frees the CPU copy.
fn to_device(s: &mut Sim, cpu_buf: Buf) -> Buf {
    let to = [In::F(X), In::N, In::S, In::N, In::N, In::S, In::S, In::N];
    let buf = s.op(Op::new("aten::to", 3.0).inputs(&to), |s| {
        s.op(Op::new("aten::_to_copy", 5.0).inputs(&to), |s| {
            let empty = [In::Sl, In::Sl, In::S, In::N, In::S, In::S];
            let buf = s.op(Op::new("aten::empty_strided", 3.0).inputs(&empty), |s| {
                s.alloc(Device::Cuda, MIB)
            });
            s.op(
                Op::new("aten::copy_", 6.0).inputs(&[In::F(X), In::F(X), In::S]),
                |s| {
                    s.memcpy(Memcpy::HtoD, MIB);
                    s.stream_sync();
                },
            );
            buf
        })
    });
    s.free(cpu_buf);
    buf
}

/// `nn.Linear` forward: `aten::linear` -> `aten::t`, `aten::addmm`. Returns the output buffer.
fn linear(
    s: &mut Sim,
    seq: i64,
    shapes: [&[i64]; 4],
    kernel: &super::device::Kernel,
    bias_copy: bool,
) -> Buf {
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
fn forward(s: &mut Sim, seq: i64) -> Vec<Buf> {
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
    dgrad: Option<&super::device::Kernel>,
    wgrad: &super::device::Kernel,
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
fn backward(s: &mut Sim, seq: i64, saved: &mut Vec<Buf>) -> Vec<Buf> {
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
