//! A [`Builder`] as packed bytes and back ([`crate::codec`]), so a part parsed in another worker
//! can be merged by the one that holds the rest (`load::Part::encode`).
//!
//! What travels: the string pool (one byte buffer plus end offsets), the slice / instant /
//! counter / flow-point columns, the args buffer, processes and lanes, metadata maps (sorted by
//! key so the encoding is deterministic), open begins, deferred ends, counts and diagnostics.
//! What does not: lookup maps rebuilt from their vectors (`proc_map`, `lane_map`, the pool's
//! hash map) and per-event caches (last lane, last category, `ph` ids), which only speed up
//! `add` and never change its result.
//!
//! Invariants checked by [`Builder::decode`], so a bad buffer is an error, never a panic in
//! `merge`: every string id is below the pool's length, every lane and process index in range,
//! the columns of a table have equal lengths.
//!
//! The slice columns (most of the bytes) are written last: [`Builder::decode_later`] reads the
//! rest and leaves them where they are ([`SlicesAt`]), and `merge_later` appends them from there
//! into the joined builder's columns, so a part sent between workers is not decoded into columns
//! of its own first (1 GB posted: 0.1 s less in the page).
//!
//! Cost: O(bytes + rows) each way; rebuilding the pool's map is O(distinct strings).

use super::{Builder, FlowPoint, Open, PendingEnd, ProcMeta};
use crate::codec::{CodecError, Column, Reader, Word, Writer};
use crate::diag::{DiagKind, Diagnostics, Sample};
use crate::model::strings::{StrId, Strings};
use crate::model::{Args, ArgsRef, Counters, Instants, LaneId, Slices, NONE};
use std::ops::Range;

/// Ids written as their `u32`.
macro_rules! id_words {
    ($($t:ident),*) => {$(
        impl Word for $t {
            const SIZE: usize = 4;
            fn put(self, out: &mut Vec<u8>) {
                self.0.put(out);
            }
            fn get(bytes: &[u8]) -> Self {
                $t(u32::get(bytes))
            }
        }
    )*};
}

id_words!(StrId, LaneId);

impl Word for ArgsRef {
    const SIZE: usize = 12;
    fn put(self, out: &mut Vec<u8>) {
        [self.block, self.at, self.len].into_iter().for_each(|v| v.put(out));
    }
    fn get(bytes: &[u8]) -> Self {
        ArgsRef { block: u32::get(&bytes[..4]), at: u32::get(&bytes[4..8]), len: u32::get(&bytes[8..]) }
    }
}

/// The slice columns of a later part a builder merges ([`Builder::merge_later`]): its own,
/// or as encoded by [`Builder::encode`] ([`SlicesAt::of`]), whose ids were checked.
#[derive(Clone, Copy)]
pub struct LaterSlices<'a> {
    pub(super) start_ns: Column<'a, i64>,
    pub(super) dur_ns: Column<'a, i64>,
    pub(super) lane: Column<'a, LaneId>,
    pub(super) name: Column<'a, StrId>,
    pub(super) cat: Column<'a, StrId>,
    pub(super) args: Column<'a, ArgsRef>,
    pub(super) correlation: Column<'a, u32>,
    pub(super) external_id: Column<'a, u32>,
    pub(super) offset: Column<'a, u64>,
}

impl<'a> LaterSlices<'a> {
    /// A builder's own slice columns.
    pub(super) fn of(s: &'a Slices) -> Self {
        use Column::Values as V;
        LaterSlices {
            start_ns: V(&s.start_ns),
            dur_ns: V(&s.dur_ns),
            lane: V(&s.lane),
            name: V(&s.name),
            cat: V(&s.cat),
            args: V(&s.args),
            correlation: V(&s.correlation),
            external_id: V(&s.external_id),
            offset: V(&s.offset),
        }
    }

    /// The columns as a builder's slices (before `finish`, which adds the nesting columns).
    fn to_slices(self) -> Slices {
        Slices {
            start_ns: self.start_ns.to_vec(),
            dur_ns: self.dur_ns.to_vec(),
            lane: self.lane.to_vec(),
            name: self.name.to_vec(),
            cat: self.cat.to_vec(),
            args: self.args.to_vec(),
            correlation: self.correlation.to_vec(),
            external_id: self.external_id.to_vec(),
            offset: self.offset.to_vec(),
            ..Slices::default()
        }
    }
}

fn write_open(w: &mut Writer, o: &Open) {
    w.i64(o.start_ns);
    w.u32(o.name.0);
    w.u32(o.cat.0);
    w.u32(o.args.block);
    w.u32(o.args.at);
    w.u32(o.args.len);
    w.u64(o.offset);
}

/// Where a part's slice columns lie in its encoding, checked by [`Builder::decode_later`]
/// (equal lengths, every lane and string id in range): [`SlicesAt::of`] reads them there.
#[derive(Clone, Debug)]
pub struct SlicesAt([Range<usize>; 9]);

/// The bytes of the next column of `T`s.
fn range<T: Word + 'static>(r: &mut Reader<'_>) -> Result<Range<usize>, CodecError> {
    let bytes = r.encoded::<T>()?.len() * T::SIZE;
    Ok(r.position() - bytes..r.position())
}

impl SlicesAt {
    /// Reads past the columns [`Builder::encode`] writes last, checking them against `c`.
    fn read(r: &mut Reader<'_>, c: &Check) -> Result<Self, CodecError> {
        let at = SlicesAt([
            range::<i64>(r)?,
            range::<i64>(r)?,
            range::<LaneId>(r)?,
            range::<StrId>(r)?,
            range::<StrId>(r)?,
            range::<ArgsRef>(r)?,
            range::<u32>(r)?,
            range::<u32>(r)?,
            range::<u64>(r)?,
        ]);
        let s = at.of(r.buffer());
        let n = s.start_ns.len();
        for len in [s.dur_ns.len(), s.lane.len(), s.name.len(), s.cat.len(), s.args.len(), s.correlation.len(), s.external_id.len(), s.offset.len()] {
            c.same_len(n, len, "slice")?;
        }
        if !s.lane.all(|l| l.0 < c.lanes) {
            return Err(bad("lane out of range"));
        }
        if !s.name.all(|id| id.0 < c.strings) || !s.cat.all(|id| id.0 < c.strings) {
            return Err(bad("string id out of range"));
        }
        Ok(at)
    }

    /// The columns in `bytes`, the encoding they were read from.
    pub fn of<'a>(&self, bytes: &'a [u8]) -> LaterSlices<'a> {
        let col = |i: usize| bytes.get(self.0[i].clone()).unwrap_or_default();
        use Column::Encoded as E;
        LaterSlices {
            start_ns: E(col(0)),
            dur_ns: E(col(1)),
            lane: E(col(2)),
            name: E(col(3)),
            cat: E(col(4)),
            args: E(col(5)),
            correlation: E(col(6)),
            external_id: E(col(7)),
            offset: E(col(8)),
        }
    }
}

impl Builder {
    /// Roughly the bytes [`Builder::encode`] writes (to reserve once).
    pub fn encoded_size_hint(&self) -> usize {
        let (bytes, ends) = self.strings.raw_parts();
        bytes.len()
            + ends.len() * 4
            + self.args.heap_bytes()
            + self.slices.len() * 56
            + self.instants.ts_ns.len() * 32
            + self.counters.ts_ns.len() * 28
            + self.flow_points.len() * 26
            + 4096
    }

    /// Appends this builder's state to `w`; [`Builder::decode`] reads it back.
    pub fn encode(&self, w: &mut Writer) {
        let (bytes, ends) = self.strings.raw_parts();
        w.bytes(bytes);
        w.u32s(ends);
        w.u64(self.stats.events);
        w.u64s(&self.stats.by_phase);
        w.u64s(&self.stats.by_category);
        self.encode_diagnostics(w);
        w.column(&self.procs);
        let mut procs: Vec<_> = self.proc_meta.iter().collect();
        procs.sort_by_key(|(k, _)| **k);
        w.len(procs.len());
        for (pid, m) in procs {
            w.u32(pid.0);
            w.opt_u32(m.name.map(|s| s.0));
            w.opt_u32(m.labels.map(|s| s.0));
            w.opt_i64(m.sort_index);
        }
        let mut threads: Vec<_> = self.thread_meta.iter().collect();
        threads.sort_by_key(|(k, _)| **k);
        w.len(threads.len());
        for ((pid, tid), (name, sort)) in threads {
            w.u32(pid.0);
            w.u32(tid.0);
            w.opt_u32(name.map(|s| s.0));
            w.opt_i64(*sort);
        }
        w.u32s(&self.lanes.iter().map(|l| l.0).collect::<Vec<_>>());
        w.u32s(&self.lanes.iter().map(|l| l.1 .0).collect::<Vec<_>>());
        for stack in &self.open_b {
            w.len(stack.len());
            stack.iter().for_each(|o| write_open(w, o));
        }
        let mut open_async: Vec<_> = self.open_async.iter().collect();
        open_async.sort_by_key(|(k, _)| **k);
        w.len(open_async.len());
        for ((cat, id, p), stack) in open_async {
            w.u32(cat.0);
            w.u32(id.0);
            w.u32(*p);
            w.len(stack.len());
            stack.iter().for_each(|o| write_open(w, o));
        }
        self.encode_tables(w);
        w.i64(self.min_ts);
        w.i64(self.max_end);
        w.len(self.top_level.len());
        for (k, v) in &self.top_level {
            w.str(k);
            w.str(v);
        }
        w.bool(self.defer_ends);
        w.len(self.pending_ends.len());
        for p in &self.pending_ends {
            match *p {
                PendingEnd::Thread { lane, ts_ns, offset } => {
                    w.u8(0);
                    w.u32(lane.0);
                    w.i64(ts_ns);
                    w.u64(offset);
                }
                PendingEnd::Async { key: (cat, id, proc), pid, ts_ns, offset } => {
                    w.u8(1);
                    w.u32(cat.0);
                    w.u32(id.0);
                    w.u32(proc);
                    w.u32(pid.0);
                    w.i64(ts_ns);
                    w.u64(offset);
                }
            }
        }
        self.encode_slices(w);
    }

    fn encode_diagnostics(&self, w: &mut Writer) {
        let entries = self.diag.raw_entries();
        w.len(entries.len());
        for (kind, count, samples) in entries {
            // A fieldless enum's discriminant is its index in `DiagKind::ALL`.
            w.u8(*kind as u8);
            w.u64(*count);
            w.len(samples.len());
            for s in samples {
                w.opt_u64(s.offset);
                w.str(&s.detail);
            }
        }
    }

    /// The slice columns a builder fills (the nesting columns come with `finish`), written last
    /// so [`Builder::decode_later`] can leave them encoded.
    fn encode_slices(&self, w: &mut Writer) {
        let s = &self.slices;
        w.column(&s.start_ns);
        w.column(&s.dur_ns);
        w.column(&s.lane);
        w.column(&s.name);
        w.column(&s.cat);
        w.column(&s.args);
        w.column(&s.correlation);
        w.column(&s.external_id);
        w.column(&s.offset);
    }

    fn encode_tables(&self, w: &mut Writer) {
        let i = &self.instants;
        w.column(&i.ts_ns);
        w.column(&i.lane);
        w.column(&i.name);
        w.column(&i.cat);
        w.column(&i.args);
        let c = &self.counters;
        w.column(&c.ts_ns);
        w.column(&c.process);
        w.column(&c.name);
        w.column(&c.args);
        let f = &self.flow_points;
        w.i64s(&f.iter().map(|p| p.ts_ns).collect::<Vec<_>>());
        w.u32s(&f.iter().map(|p| p.lane.0).collect::<Vec<_>>());
        w.u32s(&f.iter().map(|p| p.cat.0).collect::<Vec<_>>());
        w.u64s(&f.iter().map(|p| p.id).collect::<Vec<_>>());
        w.bytes(&f.iter().map(|p| p.kind).collect::<Vec<_>>());
        w.bytes(&f.iter().map(|p| u8::from(p.enclosing)).collect::<Vec<_>>());
        self.args.encode(w);
    }

    /// Reads a builder written by [`Builder::encode`].
    ///
    /// # Errors
    /// When the buffer is short, or an id, index or column length is inconsistent.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        let (mut b, at) = Self::decode_later(r)?;
        b.adopt_slices(at.of(r.buffer()));
        Ok(b)
    }

    /// Gives a builder read by [`Builder::decode_later`] its slice columns, decoded.
    pub fn adopt_slices(&mut self, slices: LaterSlices<'_>) {
        self.slices = slices.to_slices();
    }

    /// Reads a builder written by [`Builder::encode`] but its slice columns, which are left as
    /// encoded (checked) for [`Builder::merge_later`] to append straight from `r`'s buffer:
    /// where they lie in it.
    ///
    /// # Errors
    /// As [`Builder::decode`].
    pub fn decode_later(r: &mut Reader<'_>) -> Result<(Self, SlicesAt), CodecError> {
        let bytes = r.bytes()?.to_vec();
        let strings = Strings::from_raw_parts(bytes, r.u32s()?).ok_or_else(|| bad("string pool"))?;
        let mut c = Check { strings: strings.len() as u32, lanes: 0, procs: 0 };
        let mut b = Builder { strings, ..Builder::new() };
        b.stats.events = r.u64()?;
        b.stats.by_phase = r.u64s()?;
        b.stats.by_category = r.u64s()?;
        b.diag = decode_diagnostics(r)?;
        b.procs = c.strs(r.u32s()?)?;
        c.procs = b.procs.len() as u32;
        b.proc_map = b.procs.iter().enumerate().map(|(i, &p)| (p, i as u32)).collect();
        for _ in 0..r.count(13)? {
            let pid = c.str(r.u32()?)?;
            let name = r.opt_u32()?.map(|s| c.str(s)).transpose()?;
            let labels = r.opt_u32()?.map(|s| c.str(s)).transpose()?;
            b.proc_meta.insert(pid, ProcMeta { name, labels, sort_index: r.opt_i64()? });
        }
        for _ in 0..r.count(10)? {
            let key = (c.str(r.u32()?)?, c.str(r.u32()?)?);
            let name = r.opt_u32()?.map(|s| c.str(s)).transpose()?;
            b.thread_meta.insert(key, (name, r.opt_i64()?));
        }
        let (lane_procs, lane_tids) = (r.u32s()?, c.strs(r.u32s()?)?);
        c.same_len(lane_procs.len(), lane_tids.len(), "lanes")?;
        for (&p, &tid) in lane_procs.iter().zip(&lane_tids) {
            c.proc(p)?;
            b.lane_map.insert((b.procs[p as usize], tid), LaneId(b.lanes.len() as u32));
            b.lanes.push((p, tid));
        }
        c.lanes = b.lanes.len() as u32;
        b.open_b = (0..b.lanes.len()).map(|_| read_opens(r, &c)).collect::<Result<_, _>>()?;
        for _ in 0..r.count(20)? {
            let key = (c.str(r.u32()?)?, c.str(r.u32()?)?, c.proc(r.u32()?)?);
            b.open_async.insert(key, read_opens(r, &c)?);
        }
        decode_tables(&mut b, r, &c)?;
        b.min_ts = r.i64()?;
        b.max_end = r.i64()?;
        for _ in 0..r.count(16)? {
            b.top_level.push((r.string()?, r.string()?));
        }
        b.defer_ends = r.bool()?;
        for _ in 0..r.count(21)? {
            let pending = match r.u8()? {
                0 => PendingEnd::Thread { lane: c.lane(r.u32()?)?, ts_ns: r.i64()?, offset: r.u64()? },
                1 => PendingEnd::Async {
                    key: (c.str(r.u32()?)?, c.str(r.u32()?)?, c.proc(r.u32()?)?),
                    pid: c.str(r.u32()?)?,
                    ts_ns: r.i64()?,
                    offset: r.u64()?,
                },
                t => return Err(bad(&format!("pending end tag {t}"))),
            };
            b.pending_ends.push(pending);
        }
        let at = SlicesAt::read(r, &c)?;
        Ok((b, at))
    }
}

fn bad(what: &str) -> CodecError {
    CodecError(format!("inconsistent part encoding: {what}"))
}

/// Bounds of the ids a decoded builder may hold.
struct Check {
    strings: u32,
    lanes: u32,
    procs: u32,
}

impl Check {
    fn str(&self, id: u32) -> Result<StrId, CodecError> {
        if id < self.strings { Ok(StrId(id)) } else { Err(bad("string id out of range")) }
    }

    fn strs(&self, ids: Vec<u32>) -> Result<Vec<StrId>, CodecError> {
        ids.into_iter().map(|id| self.str(id)).collect()
    }

    fn lane(&self, id: u32) -> Result<LaneId, CodecError> {
        if id < self.lanes { Ok(LaneId(id)) } else { Err(bad("lane out of range")) }
    }

    fn lanes(&self, ids: Vec<u32>) -> Result<Vec<LaneId>, CodecError> {
        ids.into_iter().map(|id| self.lane(id)).collect()
    }

    /// Lanes that may be [`NONE`] (global instants).
    fn lanes_or_none(&self, ids: Vec<u32>) -> Result<Vec<LaneId>, CodecError> {
        ids.into_iter().map(|id| if id == NONE { Ok(LaneId(NONE)) } else { self.lane(id) }).collect()
    }

    fn proc(&self, p: u32) -> Result<u32, CodecError> {
        if p < self.procs { Ok(p) } else { Err(bad("process out of range")) }
    }

    fn same_len(&self, a: usize, b: usize, table: &str) -> Result<(), CodecError> {
        if a == b { Ok(()) } else { Err(bad(&format!("{table} columns of unequal length"))) }
    }
}

fn read_opens(r: &mut Reader<'_>, c: &Check) -> Result<Vec<Open>, CodecError> {
    (0..r.count(36)?)
        .map(|_| {
            Ok(Open {
                start_ns: r.i64()?,
                name: c.str(r.u32()?)?,
                cat: c.str(r.u32()?)?,
                args: ArgsRef { block: r.u32()?, at: r.u32()?, len: r.u32()? },
                offset: r.u64()?,
            })
        })
        .collect()
}

fn decode_diagnostics(r: &mut Reader<'_>) -> Result<Diagnostics, CodecError> {
    let mut entries = Vec::new();
    for _ in 0..r.count(17)? {
        let code = r.u8()?;
        let kind = *DiagKind::ALL.get(usize::from(code)).ok_or_else(|| bad("diagnostic kind"))?;
        let count = r.u64()?;
        let samples = (0..r.count(9)?)
            .map(|_| Ok(Sample { offset: r.opt_u64()?, detail: r.string()? }))
            .collect::<Result<Vec<_>, CodecError>>()?;
        entries.push((kind, count, samples));
    }
    Ok(Diagnostics::from_raw_entries(entries))
}

fn decode_tables(b: &mut Builder, r: &mut Reader<'_>, c: &Check) -> Result<(), CodecError> {
    let i = Instants { ts_ns: r.i64s()?, lane: c.lanes_or_none(r.u32s()?)?, name: c.strs(r.u32s()?)?, cat: c.strs(r.u32s()?)?, args: r.column()? };
    for len in [i.lane.len(), i.name.len(), i.cat.len(), i.args.len()] {
        c.same_len(i.ts_ns.len(), len, "instant")?;
    }
    b.instants = i;
    let k = Counters { ts_ns: r.i64s()?, process: r.u32s()?, name: c.strs(r.u32s()?)?, args: r.column()? };
    for len in [k.process.len(), k.name.len(), k.args.len()] {
        c.same_len(k.ts_ns.len(), len, "counter")?;
    }
    k.process.iter().try_for_each(|&p| c.proc(p).map(drop))?;
    b.counters = k;
    let (ts, lanes, cats, ids, kinds, enclosing) = (r.i64s()?, c.lanes(r.u32s()?)?, c.strs(r.u32s()?)?, r.u64s()?, r.bytes()?, r.bytes()?);
    for len in [lanes.len(), cats.len(), ids.len(), kinds.len(), enclosing.len()] {
        c.same_len(ts.len(), len, "flow")?;
    }
    b.flow_points = (0..ts.len())
        .map(|j| {
            let id = ids[j];
            // String flow ids carry the top bit and an interned id (see `Builder::flow_id`).
            if id >> 63 == 1 {
                c.str((id & !(1 << 63)) as u32)?;
            }
            Ok(FlowPoint { ts_ns: ts[j], lane: lanes[j], cat: cats[j], id, kind: kinds[j], enclosing: enclosing[j] != 0 })
        })
        .collect::<Result<_, CodecError>>()?;
    b.args = Args::decode(r)?;
    Ok(())
}
