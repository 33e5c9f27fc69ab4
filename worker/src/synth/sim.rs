//! The demo's timing model, host side: thread clocks, nested ops and annotations, ids.
//!
//! The demo script (`demo.rs`) calls `op` / `annotation` with closures for their children, and
//! the device calls of the children [`device`] and [`memory`] (`launch`, `memcpy`, syncs,
//! `alloc`), which extend `Sim` and whose state it holds (`dev`). `Sim` advances a clock per CPU
//! thread and one per GPU stream and records every event, then `into_events` returns them in the
//! order Kineto writes them:
//!
//! ```text
//! CPU ops + annotations (main thread, then backward thread; each by start) with fwdbwd flows
//! [memory] instants  ->  runtime calls + GPU activities by correlation  ->  GPU step annotations
//! ```
//!
//! Invariants: children start after and end before their parent (the clock only moves
//! forward inside an op); `External id` follows start order across threads; `Ev Idx` numbers
//! the CPU events then the memory instants in output order; correlations are increasing.
//! Durations get ±`JITTER_PCT` from a fixed-seed splitmix64, so the output is deterministic.
//! Why a simulation and not a template: kernel start = max(stream free, launch + latency) makes
//! the GPU gaps, queueing and syncs consistent with the CPU side by construction.

pub(super) mod device;
pub(super) mod memory;

use std::borrow::Cow;

use super::kineto::{Arg, Event, Id, Kind};

/// pid of the Python process.
pub(crate) const CPU_PID: i64 = 48213;
/// tid of the main (forward / optimizer) thread.
pub(crate) const MAIN_TID: i64 = 48213;
/// tid of the autograd device thread that runs backward.
pub(crate) const BWD_TID: i64 = 48391;
/// pid of GPU 0.
pub(crate) const GPU_PID: i64 = 0;
/// The CUDA stream everything runs on (PyTorch's default stream shows as 7).
pub(crate) const STREAM: i64 = 7;
/// One microsecond in ns.
pub(crate) const US: i64 = 1000;
/// Random spread applied to CPU durations, in percent either way.
const JITTER_PCT: i64 = 12;

/// An op input as `record_shapes=True` records it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum In<'a> {
    /// A float tensor of this shape.
    F(&'a [i64]),
    /// A Python scalar.
    S,
    /// A list of scalars (a size or stride argument).
    Sl,
    /// A list of tensors (the `_foreach_*` ops).
    Tl,
    /// An optional argument passed as `None`.
    N,
}

/// An op to record: name, self time, shapes, autograd ids.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    name: Cow<'static, str>,
    self_ns: i64,
    shapes: Option<(String, String)>,
    seq: Option<(i64, i64)>,
    evaluate: bool,
    flow: Option<Kind>,
}

impl Op {
    /// An op named `name` that spends about `self_us` µs outside its children.
    pub(crate) fn new(name: impl Into<Cow<'static, str>>, self_us: f64) -> Self {
        Op {
            name: name.into(),
            // Rounded to whole ns on purpose: jitter and the clock are integral.
            self_ns: (self_us * 1000.0) as i64,
            shapes: None,
            seq: None,
            evaluate: false,
            flow: None,
        }
    }

    /// Records `Input Dims` and `Input type` for these inputs.
    pub(crate) fn inputs(mut self, inputs: &[In<'_>]) -> Self {
        let dims: Vec<String> = inputs
            .iter()
            .map(|i| match i {
                In::F(d) => format!("{d:?}"),
                _ => "[]".to_owned(),
            })
            .collect();
        let types: Vec<&str> = inputs
            .iter()
            .map(|i| match i {
                In::F(_) => "\"float\"",
                In::S => "\"Scalar\"",
                In::Sl => "\"ScalarList\"",
                In::Tl => "\"TensorList\"",
                In::N => "\"\"",
            })
            .collect();
        self.shapes = Some((
            format!("[{}]", types.join(", ")),
            format!("[{}]", dims.join(", ")),
        ));
        self
    }

    /// A forward op that records autograd sequence number `seq` (`Fwd thread id` 0).
    pub(crate) fn seq(mut self, seq: i64) -> Self {
        self.seq = Some((seq, 0));
        self
    }

    /// The forward op that creates backward node `seq`: also starts the `fwdbwd` flow.
    pub(crate) fn creates_node(mut self, seq: i64) -> Self {
        self.seq = Some((seq, 0));
        self.flow = Some(Kind::FlowStart {
            cat: "fwdbwd",
            id: seq as u64,
        });
        self
    }

    /// A backward node (`XBackward0`) for forward sequence `seq`: ends the `fwdbwd` flow.
    pub(crate) fn node(mut self, seq: i64) -> Self {
        self.seq = Some((seq, 1));
        self.flow = Some(Kind::FlowEnd {
            cat: "fwdbwd",
            id: seq as u64,
        });
        self
    }

    /// The autograd engine's `evaluate_function:` wrapper around a node.
    pub(crate) fn evaluate(mut self, seq: Option<i64>) -> Self {
        self.seq = seq.map(|s| (s, 1));
        self.evaluate = true;
        self
    }
}

/// A recorded CPU event with its External id and an optional flow right after it.
struct CpuEvent {
    event: Event,
    external: i64,
    flow: Option<Event>,
}

/// The timing model; see the module header.
pub(crate) struct Sim {
    rng: u64,
    /// Current thread.
    pub(crate) tid: i64,
    /// Current thread's clock, ns.
    pub(crate) now: i64,
    /// Percent applied to launch and runtime costs (cold start > 100).
    pub(crate) slow_pct: i64,
    stack: Vec<usize>,
    cpu: Vec<CpuEvent>,
    pub(crate) memory: Vec<Event>,
    pub(crate) activities: Vec<Event>,
    pub(crate) gpu_annotations: Vec<Event>,
    /// When the stream finishes its queued work, ns.
    pub(crate) stream_free: i64,
    next_external: i64,
    next_correlation: i64,
    /// Allocator heaps and loaded kernels.
    pub(crate) dev: device::DeviceState,
}

impl Sim {
    /// A simulation whose main thread clock starts at `start_ns`.
    pub(crate) fn new(start_ns: i64, dev: device::DeviceState) -> Self {
        Sim {
            rng: 0x6b69_6e65_746f_7363,
            tid: MAIN_TID,
            now: start_ns,
            slow_pct: 100,
            stack: Vec::new(),
            cpu: Vec::new(),
            memory: Vec::new(),
            activities: Vec::new(),
            gpu_annotations: Vec::new(),
            stream_free: start_ns,
            next_external: 1,
            next_correlation: 1547,
            dev,
        }
    }

    /// The next splitmix64 value.
    fn next_u64(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `ns` spread by up to `pct` percent either way.
    pub(crate) fn spread(&mut self, ns: i64, pct: i64) -> i64 {
        let span = (2 * pct + 1) as u64;
        let offset = (self.next_u64() % span) as i64 - pct;
        (ns + ns * offset / 100).max(1)
    }

    /// `ns` with the usual CPU jitter.
    pub(crate) fn jitter(&mut self, ns: i64) -> i64 {
        self.spread(ns, JITTER_PCT)
    }

    /// Spends about `ns` of CPU time on the current thread.
    pub(crate) fn work(&mut self, ns: i64) {
        let d = self.jitter(ns);
        self.now += d;
    }

    /// A fresh correlation id.
    pub(crate) fn correlation(&mut self) -> i64 {
        let c = self.next_correlation;
        self.next_correlation += 1;
        c
    }

    /// External id of the innermost open op, if any.
    pub(crate) fn current_external(&self) -> Option<i64> {
        self.stack
            .last()
            .and_then(|&i| self.cpu.get(i))
            .map(|c| c.external)
    }

    /// Runs `body` on thread `tid` starting at `start_ns`; returns what `body` returns and that
    /// thread's end time. The current thread's clock is left where it was.
    pub(crate) fn on_thread<R>(
        &mut self,
        tid: i64,
        start_ns: i64,
        body: impl FnOnce(&mut Self) -> R,
    ) -> (R, i64) {
        let saved = (self.tid, self.now, std::mem::take(&mut self.stack));
        self.tid = tid;
        self.now = start_ns;
        let result = body(self);
        let end = self.now;
        (self.tid, self.now, self.stack) = saved;
        (result, end)
    }

    /// Records a `cpu_op` around `body`; returns what `body` returns.
    pub(crate) fn op<R>(&mut self, op: Op, body: impl FnOnce(&mut Self) -> R) -> R {
        let ext = self.next_external;
        let mut args = vec![("External id", Arg::Int(ext))];
        let seq_args = op.seq.map(|(seq, fwd)| {
            [
                ("Sequence number", Arg::Int(seq)),
                ("Fwd thread id", Arg::Int(fwd)),
            ]
        });
        if op.evaluate {
            args.push(("Record function id", Arg::Int(0)));
            args.extend(seq_args.into_iter().flatten());
        } else {
            args.extend(seq_args.into_iter().flatten());
            args.push(("Record function id", Arg::Int(0)));
        }
        if let Some((types, dims)) = &op.shapes {
            args.push(("Input type", Arg::Raw(types.clone())));
            args.push(("Input Dims", Arg::Raw(dims.clone())));
        }
        let self_ns = op.self_ns;
        self.record("cpu_op", op.name, args, op.flow, self_ns, body)
    }

    /// Records a `user_annotation` (a `record_function` range) around `body`; returns what
    /// `body` returns.
    pub(crate) fn annotation<R>(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        body: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let ext = self.next_external;
        let args = vec![
            ("External id", Arg::Int(ext)),
            ("Record function id", Arg::Int(0)),
        ];
        self.record("user_annotation", name.into(), args, None, 2 * US, body)
    }

    /// The External id the next op or annotation will get.
    pub(crate) fn next_external(&self) -> i64 {
        self.next_external
    }

    fn record<R>(
        &mut self,
        cat: &'static str,
        name: Cow<'static, str>,
        args: Vec<(&'static str, Arg)>,
        flow: Option<Kind>,
        self_ns: i64,
        body: impl FnOnce(&mut Self) -> R,
    ) -> R {
        self.next_external += 1;
        let external = self.next_external - 1;
        let ts_ns = self.now;
        let (pid, tid) = (Id::Num(CPU_PID), Id::Num(self.tid));
        let flow = flow.map(|kind| Event {
            kind,
            name: Cow::Borrowed(""),
            pid,
            tid,
            ts_ns,
            args: Vec::new(),
        });
        let event = Event {
            kind: Kind::Complete { cat, dur_ns: 0 },
            name,
            pid,
            tid,
            ts_ns,
            args,
        };
        let index = self.cpu.len();
        self.cpu.push(CpuEvent {
            event,
            external,
            flow,
        });
        self.stack.push(index);
        self.work(self_ns * 3 / 5);
        let result = body(self);
        self.work(self_ns * 2 / 5);
        self.stack.pop();
        let dur = self.now - ts_ns;
        if let Some(c) = self.cpu.get_mut(index) {
            c.event.set_dur_ns(dur);
        }
        self.now += self.spread(800, 50);
        result
    }

    /// All events in Kineto's output order, `Ev Idx` filled in.
    pub(crate) fn into_events(self) -> Vec<Event> {
        let Sim {
            mut cpu,
            memory,
            activities,
            gpu_annotations,
            ..
        } = self;
        // Stable: each thread keeps its start order, which is already Kineto's per-thread order.
        cpu.sort_by_key(|c| {
            if matches!(c.event.tid, Id::Num(MAIN_TID)) {
                0
            } else {
                1
            }
        });
        let mut out = Vec::with_capacity(cpu.len() * 2 + memory.len() + activities.len());
        let mut ev_idx = 0;
        for CpuEvent {
            mut event, flow, ..
        } in cpu
        {
            event.args.push(("Ev Idx", Arg::Int(ev_idx)));
            ev_idx += 1;
            out.push(event);
            if let Some(mut flow) = flow {
                flow.name = Cow::Borrowed("fwdbwd");
                out.push(flow);
            }
        }
        for mut event in memory {
            event.args.push(("Ev Idx", Arg::Int(ev_idx)));
            ev_idx += 1;
            out.push(event);
        }
        out.extend(activities);
        out.extend(gpu_annotations);
        out
    }
}
