//! The demo's training step: one `ProfilerStep#N` of an autoencoder trained to reproduce its
//! input with fused AdamW (the network's ops are in `network.rs`):
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

use super::sim::device::Memcpy;
use super::kernels::{FILL, FOREACH_ADD, FUSED_ADAMW};
use super::sim::memory::{Buf, Device};
use super::network::{backward, forward, MIB, SCALAR, W1, X};
use super::sim::{In, Op, Sim, BWD_TID, US};

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
