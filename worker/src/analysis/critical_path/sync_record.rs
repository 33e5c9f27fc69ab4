//! What a trace's `cuda_sync` records say about waits (PyTorch >= 2.1 records them on
//! request): the stream a blocking call waited for, and the stream a `cudaStreamWaitEvent` made
//! wait for another.
//!
//! Each record sits on a GPU lane and shares its `correlation` with the runtime call that made
//! it: `Stream Sync` (`stream`), `Event Sync` (`wait_on_stream` when written), `Context Sync`
//! (stream -1: the whole device), `Stream Wait Event` (`stream` waits for `wait_on_stream` as it
//! was at the event record, `wait_on_cuda_event_record_corr_id`, else at the wait call). A
//! trace with records has them for every sync, so the graph then draws cross-stream edges only
//! from them, as HTA does, and never guesses.

use crate::analysis::args::ArgKey;
use crate::model::strings::FxHashMap;
use crate::model::{CatClass, Trace, NO_ID};

/// What a blocking call waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Waited {
    /// One stream's lane.
    Lane(u32),
    /// Every stream of a device (its process).
    Device(u32),
}

/// One `cudaStreamWaitEvent`: from its call on, `lane`'s next activity waits for the last
/// activity launched on `on` before `cutoff` (the event record's call, else the wait call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct StreamWait {
    /// Start of the wait call, ns.
    pub call: i64,
    /// Activities launched on `on` before this moment are waited for.
    pub cutoff: i64,
    /// The lane waited for.
    pub on: u32,
}

/// The trace's `cuda_sync` records, by the calls they explain.
#[derive(Debug, Default)]
pub(super) struct SyncRecords {
    /// True when the trace has any record: cross-stream waits then come only from them.
    pub recorded: bool,
    /// Blocking call slice -> what it waited for.
    calls: FxHashMap<u32, Waited>,
    /// Waiting lane -> its stream waits, by call time.
    waits: FxHashMap<u32, Vec<StreamWait>>,
}

impl SyncRecords {
    /// Reads the records of `trace` (one pass over its slices when it has any).
    pub fn new(trace: &Trace) -> Self {
        let Some(cat) = trace.strings.lookup("cuda_sync") else {
            return Self::default();
        };
        let s = &trace.slices;
        let records: Vec<usize> = (0..s.len()).filter(|&i| s.cat[i] == cat && s.correlation[i] != NO_ID).collect();
        if records.is_empty() {
            return Self::default();
        }
        let keys = Keys::new();
        let mut reader = trace.args.reader();
        let fields: Vec<Record> = records.iter().map(|&i| keys.read(reader.bytes(s.args[i]), &trace.strings.get(s.name[i]))).collect();
        // The calls the records name (and the event records they point at), by correlation.
        let mut wanted: FxHashMap<u32, u32> = FxHashMap::default();
        for (&i, f) in records.iter().zip(&fields) {
            wanted.insert(s.correlation[i], NO_ID);
            if let Some(c) = f.record_corr {
                wanted.insert(c, NO_ID);
            }
        }
        for i in 0..s.len() {
            if let Some(call) = wanted.get_mut(&s.correlation[i]) {
                if trace.class(s.cat[i]) == CatClass::Launch {
                    *call = i as u32;
                }
            }
        }
        let call_of = |corr: u32| wanted.get(&corr).copied().filter(|&c| c != NO_ID);
        let mut out = SyncRecords { recorded: true, ..Self::default() };
        for (&i, f) in records.iter().zip(&fields) {
            let Some(call) = call_of(s.correlation[i]) else {
                continue;
            };
            let own = s.lane[i].0;
            let process = trace.lanes[own as usize].process;
            let lane_of = |stream: Option<i64>| match stream {
                Some(n) if (0..i64::from(u32::MAX)).contains(&n) => stream_lane(trace, process, n),
                Some(_) => None,
                None => Some(own),
            };
            let start = s.start_ns[call as usize];
            if f.kind == Kind::StreamWaitEvent {
                let (Some(waiting), Some(Some(on))) = (lane_of(f.stream), f.wait_on.map(|n| lane_of(Some(n)))) else {
                    continue;
                };
                let cutoff = f.record_corr.and_then(call_of).map_or(start, |r| s.start_ns[r as usize].min(start));
                out.waits.entry(waiting).or_default().push(StreamWait { call: start, cutoff, on });
            } else {
                let waited = match lane_of(f.wait_on.or(f.stream)) {
                    Some(lane) if f.kind != Kind::ContextSync => Waited::Lane(lane),
                    _ => Waited::Device(process),
                };
                out.calls.insert(call, waited);
            }
        }
        out.waits.values_mut().for_each(|w| w.sort_unstable_by_key(|w| (w.call, w.on)));
        out
    }

    /// What blocking call `call` waited for, when a record says.
    pub fn waited(&self, call: u32) -> Option<Waited> {
        self.calls.get(&call).copied()
    }

    /// The stream waits on `lane` whose call started in `(after, at]`.
    pub fn waits(&self, lane: u32, after: i64, at: i64) -> &[StreamWait] {
        let Some(all) = self.waits.get(&lane) else {
            return &[];
        };
        let lo = all.partition_point(|w| w.call <= after);
        let hi = all.partition_point(|w| w.call <= at);
        &all[lo..hi.max(lo)]
    }
}

/// The lane of stream `n` on GPU process `process` (its `tid` is the stream number).
fn stream_lane(trace: &Trace, process: u32, n: i64) -> Option<u32> {
    let tid = trace.strings.lookup(&n.to_string())?;
    let p = trace.processes.get(process as usize)?;
    p.lanes.iter().map(|l| l.0).find(|&l| trace.lanes.get(l as usize).is_some_and(|lane| lane.tid == tid))
}

/// A record's kind (its name, as Kineto writes it; `cuda_sync_kind` repeats it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    StreamWaitEvent,
    ContextSync,
    /// `Stream Sync`, `Event Sync`: one stream.
    Stream,
}

/// The fields of one record.
struct Record {
    kind: Kind,
    stream: Option<i64>,
    wait_on: Option<i64>,
    record_corr: Option<u32>,
}

/// The argument lookups a record needs.
struct Keys {
    stream: ArgKey,
    wait_on: ArgKey,
    record_corr: ArgKey,
}

impl Keys {
    fn new() -> Self {
        Keys {
            stream: ArgKey::new("stream"),
            wait_on: ArgKey::new("wait_on_stream"),
            record_corr: ArgKey::new("wait_on_cuda_event_record_corr_id"),
        }
    }

    fn read(&self, args: &[u8], name: &str) -> Record {
        let kind = match name {
            "Stream Wait Event" => Kind::StreamWaitEvent,
            "Context Sync" => Kind::ContextSync,
            _ => Kind::Stream,
        };
        Record {
            kind,
            stream: self.stream.i64(args),
            wait_on: self.wait_on.i64(args),
            record_corr: self.record_corr.i64(args).and_then(|c| u32::try_from(c).ok()),
        }
    }
}
