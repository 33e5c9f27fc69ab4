//! Builder: tokenizer events (in input order) -> [`Trace`] columns.
//!
//! `add` is the per-event hot path: intern name and category, count, route by `ph`, append to
//! unsorted columns (absolute ns). `finish` sorts slices per lane (start ascending, duration
//! descending, input order: parents before children that start at the same time), subtracts
//! the origin, nests ([`super::nest`]), links ([`super::link`]) and orders processes and lanes
//! for display (`finish.rs`). Builders of consecutive parts of a split input combine with
//! `merge` (`merge.rs`); a part parsed in another worker travels as bytes (`codec.rs`).
//!
//! Phases: `X` and matched `B`/`E` -> slices on the thread lane; `b`/`e`, `S`/`F` -> slices on
//! an async lane of the process (one per async name); `i`/`I`/`n`/`T`/`p` -> instants; `C` ->
//! counters; `s`/`t`/`f` -> flow endpoints; `M` -> names and sort indexes; others are counted.

use super::strings::{FxHashMap, StrId, Strings};
use super::args::Side;
use super::{Args, ArgsRef, CatClass, Counters, EventStats, Instants, LaneId, Slices, NONE};
use crate::diag::{DiagKind, Diagnostics};
use crate::json::{bounded_value, unescape, JStr, RawEvent};

mod codec;
pub use codec::{LaterSlices, SlicesAt};
mod finish;
mod merge;

/// An open `B` (or async begin) waiting for its end.
#[derive(Clone, Copy, Debug)]
struct Open {
    start_ns: i64,
    name: StrId,
    cat: StrId,
    args: ArgsRef,
    offset: u64,
}

/// Per-process facts gathered while reading.
#[derive(Clone, Debug, Default)]
struct ProcMeta {
    name: Option<StrId>,
    labels: Option<StrId>,
    sort_index: Option<i64>,
}

/// A flow endpoint before binding.
#[derive(Clone, Copy, Debug)]
pub(super) struct FlowPoint {
    pub ts_ns: i64,
    pub lane: LaneId,
    pub cat: StrId,
    /// Numeric id, or an interned string id with the top bit set.
    pub id: u64,
    /// `b's'`, `b't'` or `b'f'`.
    pub kind: u8,
    /// `bp: "e"`: binds to the enclosing slice (else, for `f`, to the next slice).
    pub enclosing: bool,
}

/// Accumulates events; see the module docs.
pub struct Builder {
    strings: Strings,
    stats: EventStats,
    diag: Diagnostics,
    /// Process pid per index (creation order).
    procs: Vec<StrId>,
    proc_map: FxHashMap<StrId, u32>,
    proc_meta: FxHashMap<StrId, ProcMeta>,
    thread_meta: FxHashMap<(StrId, StrId), (Option<StrId>, Option<i64>)>,
    lanes: Vec<(u32, StrId)>,
    lane_map: FxHashMap<(StrId, StrId), LaneId>,
    last_lane: Option<((StrId, StrId), LaneId)>,
    last_raw_pid: Vec<u8>,
    last_raw_tid: Vec<u8>,
    last_raw_lane: Option<LaneId>,
    open_b: Vec<Vec<Open>>,
    open_async: FxHashMap<(StrId, StrId, u32), Vec<Open>>,
    slices: Slices,
    instants: Instants,
    counters: Counters,
    flow_points: Vec<FlowPoint>,
    args: Args,
    min_ts: i64,
    max_end: i64,
    top_level: Vec<(String, String)>,
    /// Interned id of each one-byte ASCII `ph`, once seen.
    ph_ids: [Option<StrId>; 128],
    last_cat_raw: Vec<u8>,
    last_cat_id: Option<StrId>,
    /// Part of a split parse that does not start the input: an `E` (or async end) with no
    /// open begin may close one from an earlier part, so it waits for [`Builder::merge`].
    defer_ends: bool,
    pending_ends: Vec<PendingEnd>,
}

/// An end event waiting for its begin from an earlier part.
#[derive(Clone, Copy, Debug)]
enum PendingEnd {
    /// `E` on a thread lane.
    Thread { lane: LaneId, ts_ns: i64, offset: u64 },
    /// Async end: key (cat, id, process index) and its pid.
    Async { key: (StrId, StrId, u32), pid: StrId, ts_ns: i64, offset: u64 },
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Self {
        Self {
            strings: Strings::default(),
            stats: EventStats::default(),
            diag: Diagnostics::default(),
            procs: Vec::new(),
            proc_map: FxHashMap::default(),
            proc_meta: FxHashMap::default(),
            thread_meta: FxHashMap::default(),
            lanes: Vec::new(),
            lane_map: FxHashMap::default(),
            last_lane: None,
            last_raw_pid: Vec::new(),
            last_raw_tid: Vec::new(),
            last_raw_lane: None,
            open_b: Vec::new(),
            open_async: FxHashMap::default(),
            slices: Slices::default(),
            instants: Instants::default(),
            counters: Counters::default(),
            flow_points: Vec::new(),
            args: Args::default(),
            min_ts: i64::MAX,
            max_end: i64::MIN,
            top_level: Vec::new(),
            ph_ids: [None; 128],
            last_cat_raw: Vec::new(),
            last_cat_id: None,
            defer_ends: false,
            pending_ends: Vec::new(),
        }
    }

    /// A builder for a later part of a split input (see `load::parse_parts`): unmatched ends
    /// are kept for [`Builder::merge`] instead of being reported.
    pub fn for_later_part() -> Self {
        Self { defer_ends: true, ..Self::new() }
    }

    /// Diagnostics reporter, for the caller's own reports (truncation, syntax stop).
    pub fn diagnostics(&mut self) -> &mut Diagnostics {
        &mut self.diag
    }

    /// Slices built so far.
    pub fn slice_count(&self) -> usize {
        self.slices.start_ns.len()
    }

    /// Makes room for `total` slices in all, so pushing up to that many never moves a column.
    pub fn reserve_slices(&mut self, total: usize) {
        let s = &mut self.slices;
        let more = total.saturating_sub(s.start_ns.len());
        s.start_ns.reserve_exact(more);
        s.dur_ns.reserve_exact(more);
        s.lane.reserve_exact(more);
        s.name.reserve_exact(more);
        s.cat.reserve_exact(more);
        s.args.reserve_exact(more);
        s.correlation.reserve_exact(more);
        s.external_id.reserve_exact(more);
        s.offset.reserve_exact(more);
    }

    /// Approximate heap bytes of what is built so far (columns, strings, args).
    pub fn heap_bytes(&self) -> usize {
        self.slices.start_ns.capacity() * 64
            + self.instants.ts_ns.capacity() * 32
            + self.counters.ts_ns.capacity() * 28
            + self.flow_points.capacity() * std::mem::size_of::<FlowPoint>()
            + self.args.heap_bytes()
            + self.strings.heap_bytes()
    }

    /// Records a top-level key (other than `traceEvents`) and its raw value (a long one
    /// minified, with its long strings cut: [`bounded_value`]).
    pub fn top_level(&mut self, key: JStr<'_>, raw: &[u8]) {
        self.top_level.push((unescape(key), String::from_utf8_lossy(&bounded_value(raw)).into_owned()));
    }

    #[inline]
    fn intern(&mut self, s: Option<JStr<'_>>) -> StrId {
        match s {
            None => super::strings::EMPTY,
            Some(s) if !s.escaped => self.strings.intern(s.raw),
            Some(s) => self.strings.intern(unescape(s).as_bytes()),
        }
    }

    /// Interns a category; consecutive events mostly share one, so the last is cached by text.
    #[inline]
    fn category(&mut self, cat: Option<JStr<'_>>) -> StrId {
        if let (Some(c), Some(id)) = (cat, self.last_cat_id) {
            if !c.escaped && c.raw == self.last_cat_raw.as_slice() {
                return id;
            }
        }
        let id = self.intern(cat);
        self.last_cat_raw.clear();
        if let Some(c) = cat.filter(|c| !c.escaped) {
            self.last_cat_raw.extend_from_slice(c.raw);
            self.last_cat_id = Some(id);
        } else {
            self.last_cat_id = None;
        }
        id
    }

    #[inline]
    fn bump(counts: &mut Vec<u64>, id: StrId) {
        let i = id.0 as usize;
        if i >= counts.len() {
            counts.resize(i + 1, 0);
        }
        counts[i] += 1;
    }

    /// Adds one event (input order).
    pub fn add(&mut self, ev: &RawEvent<'_>) {
        self.stats.events += 1;
        let ph = match ev.ph {
            Some(p) if p.raw.len() == 1 && p.raw[0] < 128 => {
                let slot = usize::from(p.raw[0]);
                match self.ph_ids[slot] {
                    Some(id) => id,
                    None => *self.ph_ids[slot].insert(self.strings.intern(p.raw)),
                }
            }
            other => self.intern(other),
        };
        let cat = self.category(ev.cat);
        Self::bump(&mut self.stats.by_phase, ph);
        Self::bump(&mut self.stats.by_category, cat);
        if ev.bad_time {
            self.diag.report(DiagKind::JsonBadTime, Some(ev.offset), String::new);
        }
        let phase = match ev.ph {
            Some(p) if p.raw.len() == 1 => p.raw[0],
            _ => 0,
        };
        if phase == b'M' {
            self.metadata(ev);
            return;
        }
        let Some(ts) = ev.ts_ns else {
            self.diag.report(DiagKind::ModelMissingTs, Some(ev.offset), String::new);
            return;
        };
        match phase {
            b'X' => self.complete(ev, ts, cat),
            b'B' => {
                let lane = self.lane(ev);
                let open = Open { start_ns: ts, name: self.intern(ev.name), cat, args: self.args(ev), offset: ev.offset };
                self.open_b[lane.0 as usize].push(open);
                self.extend(ts, ts);
            }
            b'E' => self.end(ev, ts),
            b'b' | b'S' => self.async_begin(ev, ts, cat),
            b'e' | b'F' => self.async_end(ev, ts, cat),
            b'i' | b'I' | b'n' | b'T' | b'p' => self.instant(ev, ts, cat),
            b'C' => self.counter(ev, ts),
            b's' | b't' | b'f' => self.flow(ev, ts, cat, phase),
            _ => {
                self.extend(ts, ts);
                self.diag.report(DiagKind::ModelUnknownPhase, Some(ev.offset), || {
                    format!("ph {:?}", ev.ph.map(unescape).unwrap_or_default())
                });
            }
        }
    }

    #[inline]
    fn extend(&mut self, start: i64, end: i64) {
        self.min_ts = self.min_ts.min(start);
        self.max_end = self.max_end.max(end);
    }

    /// Copies `args` minified (the tokenizer's `args_text`) into the args store, on the side its
    /// category names (read as written: the side only places the text).
    fn args(&mut self, ev: &RawEvent<'_>) -> ArgsRef {
        if ev.args.is_none() {
            return ArgsRef::default();
        }
        let side = match ev.cat.map(|c| CatClass::of(c.raw)) {
            Some(c) if c.is_device_activity() => Side::Device,
            _ => Side::Host,
        };
        self.args.push(ev.args_text.as_bytes(), side)
    }

    fn pid_tid(&mut self, ev: &RawEvent<'_>) -> (StrId, StrId) {
        let pid = self.strings.intern(ev.pid.unwrap_or(b""));
        let tid = self.strings.intern(ev.tid.unwrap_or(b""));
        (pid, tid)
    }

    fn process(&mut self, pid: StrId) -> u32 {
        if let Some(&p) = self.proc_map.get(&pid) {
            return p;
        }
        let p = self.procs.len() as u32;
        self.procs.push(pid);
        self.proc_map.insert(pid, p);
        p
    }

    fn lane_for(&mut self, key: (StrId, StrId)) -> LaneId {
        if let Some((k, l)) = self.last_lane {
            if k == key {
                return l;
            }
        }
        let lane = match self.lane_map.get(&key) {
            Some(&l) => l,
            None => {
                let p = self.process(key.0);
                let l = LaneId(self.lanes.len() as u32);
                self.lanes.push((p, key.1));
                self.open_b.push(Vec::new());
                self.lane_map.insert(key, l);
                l
            }
        };
        self.last_lane = Some((key, lane));
        lane
    }

    /// The thread lane of `ev`. Consecutive events mostly share a thread, so the raw pid/tid
    /// text of the last lookup is kept and compared before any interning.
    fn lane(&mut self, ev: &RawEvent<'_>) -> LaneId {
        let (pid, tid) = (ev.pid.unwrap_or(b""), ev.tid.unwrap_or(b""));
        if let Some(lane) = self.last_raw_lane {
            if self.last_raw_pid == pid && self.last_raw_tid == tid {
                return lane;
            }
        }
        let key = self.pid_tid(ev);
        let lane = self.lane_for(key);
        self.last_raw_pid.clear();
        self.last_raw_pid.extend_from_slice(pid);
        self.last_raw_tid.clear();
        self.last_raw_tid.extend_from_slice(tid);
        self.last_raw_lane = Some(lane);
        lane
    }

    #[allow(clippy::too_many_arguments)]
    fn push_slice(&mut self, lane: LaneId, start: i64, dur: i64, name: StrId, cat: StrId, args: ArgsRef, ev: &RawEvent<'_>, offset: u64) {
        let s = &mut self.slices;
        s.start_ns.push(start);
        s.dur_ns.push(dur);
        s.lane.push(lane);
        s.name.push(name);
        s.cat.push(cat);
        s.args.push(args);
        let id = |v: Option<i64>| v.and_then(|v| u32::try_from(v).ok()).unwrap_or(super::NO_ID);
        s.correlation.push(id(ev.correlation));
        s.external_id.push(id(ev.external_id));
        s.offset.push(offset);
        self.extend(start, start + dur);
    }

    fn complete(&mut self, ev: &RawEvent<'_>, ts: i64, cat: StrId) {
        let dur = match ev.dur_ns {
            Some(d) if d >= 0 => d,
            Some(_) => {
                self.diag.report(DiagKind::ModelNegativeDur, Some(ev.offset), String::new);
                0
            }
            None => {
                self.diag.report(DiagKind::ModelMissingDur, Some(ev.offset), String::new);
                0
            }
        };
        let lane = self.lane(ev);
        let name = self.intern(ev.name);
        let args = self.args(ev);
        self.push_slice(lane, ts, dur, name, cat, args, ev, ev.offset);
    }

    fn end(&mut self, ev: &RawEvent<'_>, ts: i64) {
        let lane = self.lane(ev);
        self.close_thread(lane, ts, ev.offset);
    }

    fn close_thread(&mut self, lane: LaneId, ts: i64, offset: u64) {
        let Some(open) = self.open_b[lane.0 as usize].pop() else {
            if self.defer_ends {
                self.pending_ends.push(PendingEnd::Thread { lane, ts_ns: ts, offset });
            } else {
                self.diag.report(DiagKind::ModelUnmatchedEnd, Some(offset), String::new);
            }
            return;
        };
        let dur = (ts - open.start_ns).max(0);
        self.push_slice(lane, open.start_ns, dur, open.name, open.cat, open.args, &RawEvent::default(), open.offset);
        self.extend(ts, ts);
    }

    fn async_lane_of(&mut self, pid: StrId, name: StrId) -> LaneId {
        let mut tid = b"async:".to_vec();
        tid.extend_from_slice(self.strings.bytes_of(name));
        let tid = self.strings.intern(&tid);
        self.lane_for((pid, tid))
    }

    fn async_key(&mut self, ev: &RawEvent<'_>, cat: StrId) -> (StrId, StrId, u32) {
        let pid = self.strings.intern(ev.pid.unwrap_or(b""));
        let id = self.strings.intern(ev.id.unwrap_or(b""));
        let p = self.process(pid);
        (cat, id, p)
    }

    fn async_begin(&mut self, ev: &RawEvent<'_>, ts: i64, cat: StrId) {
        let key = self.async_key(ev, cat);
        let open = Open { start_ns: ts, name: self.intern(ev.name), cat, args: self.args(ev), offset: ev.offset };
        self.open_async.entry(key).or_default().push(open);
        self.extend(ts, ts);
    }

    fn async_end(&mut self, ev: &RawEvent<'_>, ts: i64, cat: StrId) {
        let key = self.async_key(ev, cat);
        let pid = self.strings.intern(ev.pid.unwrap_or(b""));
        self.close_async(key, pid, ts, ev.offset);
    }

    /// Closes the latest open begin of `key` that starts no later than `ts`. An end with no
    /// such begin waits in `pending_ends`, in every part: its begin may come later in the
    /// file (written after its end), and `finish` matches what is left by time.
    fn close_async(&mut self, key: (StrId, StrId, u32), pid: StrId, ts: i64, offset: u64) {
        let stack = self.open_async.get_mut(&key);
        let Some(open) = stack.filter(|st| st.last().is_some_and(|o| o.start_ns <= ts)).and_then(Vec::pop) else {
            self.pending_ends.push(PendingEnd::Async { key, pid, ts_ns: ts, offset });
            // The slice it may close later ends here: the trace's extent must hold it.
            self.extend(ts, ts);
            return;
        };
        let lane = self.async_lane_of(pid, open.name);
        let dur = (ts - open.start_ns).max(0);
        self.push_slice(lane, open.start_ns, dur, open.name, open.cat, open.args, &RawEvent::default(), open.offset);
        self.extend(ts, ts);
    }

    fn instant(&mut self, ev: &RawEvent<'_>, ts: i64, cat: StrId) {
        // Global and process-scoped instants belong to no thread: they get no lane.
        let lane = match ev.scope {
            Some(s) if s.raw == b"g" || s.raw == b"p" => LaneId(NONE),
            _ => self.lane(ev),
        };
        let name = self.intern(ev.name);
        let args = self.args(ev);
        let t = &mut self.instants;
        t.ts_ns.push(ts);
        t.lane.push(lane);
        t.name.push(name);
        t.cat.push(cat);
        t.args.push(args);
        self.extend(ts, ts);
    }

    fn counter(&mut self, ev: &RawEvent<'_>, ts: i64) {
        let pid = self.strings.intern(ev.pid.unwrap_or(b""));
        let process = self.process(pid);
        let name = self.intern(ev.name);
        let args = self.args(ev);
        let c = &mut self.counters;
        c.ts_ns.push(ts);
        c.process.push(process);
        c.name.push(name);
        c.args.push(args);
        self.extend(ts, ts);
    }

    fn flow(&mut self, ev: &RawEvent<'_>, ts: i64, cat: StrId, kind: u8) {
        let lane = self.lane(ev);
        let id = self.flow_id(ev.id.unwrap_or(b""));
        let enclosing = kind != b'f' || ev.bp.is_some_and(|b| b.raw == b"e");
        self.flow_points.push(super::builder::FlowPoint { ts_ns: ts, lane, cat, id, kind, enclosing });
        self.extend(ts, ts);
    }

    /// Flow ids are mostly decimal numbers (Kineto uses the correlation): kept as the number;
    /// other ids are interned and tagged with the top bit so the two kinds never collide.
    fn flow_id(&mut self, raw: &[u8]) -> u64 {
        let numeric = !raw.is_empty() && raw.len() < 19 && raw.iter().all(u8::is_ascii_digit);
        if numeric {
            raw.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'))
        } else {
            (1 << 63) | u64::from(self.strings.intern(raw).0)
        }
    }

    fn metadata(&mut self, ev: &RawEvent<'_>) {
        let (pid, tid) = self.pid_tid(ev);
        let name = ev.name.map_or(&b""[..], |n| n.raw);
        match name {
            b"process_name" => {
                let v = ev.arg_name.map(|s| self.intern(Some(s)));
                self.proc_meta.entry(pid).or_default().name = v;
            }
            b"process_labels" => {
                let v = ev.arg_labels.map(|s| self.intern(Some(s)));
                self.proc_meta.entry(pid).or_default().labels = v;
            }
            b"process_sort_index" => self.proc_meta.entry(pid).or_default().sort_index = ev.arg_sort_index,
            b"thread_name" => {
                let v = ev.arg_name.map(|s| self.intern(Some(s)));
                self.thread_meta.entry((pid, tid)).or_default().0 = v;
            }
            b"thread_sort_index" => self.thread_meta.entry((pid, tid)).or_default().1 = ev.arg_sort_index,
            _ => {}
        }
    }
}
