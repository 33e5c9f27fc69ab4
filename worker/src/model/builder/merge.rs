//! Merging builders of consecutive parts of one input (a split parse), in input order.
//!
//! Each part was built with its own string pool, processes and lanes; `merge` re-interns the
//! other part's strings (O(distinct strings)), maps its processes and lanes by (pid, tid) text,
//! appends its columns with ids remapped (its slice columns may still be as another worker
//! encoded them: `merge_later`), and closes the ends it deferred against this part's
//! open begins. The result equals building the concatenated input in one builder (a test in
//! `tests/chunking.rs` checks this on every real fixture).

use super::codec::LaterSlices;
use super::{Builder, FlowPoint, PendingEnd};
use crate::fork::Fork;
use crate::model::strings::StrId;
use crate::model::{Args, ArgsRef, LaneId, Slices, NONE};

impl Builder {
    /// Appends `later` (the builder of the part right after this one's) into `self`; `fork`
    /// appends the slices' columns in two groups at once, the other tables beside the second.
    pub fn merge(&mut self, mut later: Builder, fork: &impl Fork) {
        let slices = std::mem::take(&mut later.slices);
        self.merge_later(later, LaterSlices::of(&slices), fork);
    }

    /// [`Builder::merge`] with the later part's slice columns apart: `later` holds none, and
    /// `slices` may still be as encoded ([`Builder::decode_later`]), appended straight from
    /// those bytes into this builder's columns.
    pub fn merge_later(&mut self, mut later: Builder, slices: LaterSlices<'_>, fork: &impl Fork) {
        let strings: Vec<StrId> =
            (0..later.strings.len() as u32).map(|i| self.strings.intern(later.strings.bytes_of(StrId(i)))).collect();
        let s = |id: StrId| strings[id.0 as usize];
        let procs: Vec<u32> = later.procs.iter().map(|&pid| self.process(s(pid))).collect();
        let lanes: Vec<LaneId> = later.lanes.iter().map(|&(p, tid)| self.lane_for((self.procs[procs[p as usize] as usize], s(tid)))).collect();
        let lane = |l: LaneId| if l.0 == NONE { l } else { lanes[l.0 as usize] };
        self.last_lane = None;
        self.last_raw_lane = None;

        self.stats.events += later.stats.events;
        for (counts, theirs) in [(&mut self.stats.by_phase, &later.stats.by_phase), (&mut self.stats.by_category, &later.stats.by_category)] {
            for (i, &n) in theirs.iter().enumerate().filter(|(_, &n)| n > 0) {
                let id = s(StrId(i as u32)).0 as usize;
                if id >= counts.len() {
                    counts.resize(id + 1, 0);
                }
                counts[id] += n;
            }
        }
        for (pid, meta) in later.proc_meta.drain() {
            let entry = self.proc_meta.entry(s(pid)).or_default();
            entry.name = entry.name.or(meta.name.map(s));
            entry.labels = entry.labels.or(meta.labels.map(s));
            entry.sort_index = entry.sort_index.or(meta.sort_index);
        }
        for ((pid, tid), (name, sort)) in later.thread_meta.drain() {
            let entry = self.thread_meta.entry((s(pid), s(tid))).or_default();
            entry.0 = entry.0.or(name.map(s));
            entry.1 = entry.1.or(sort);
        }

        // Ends the later part could not match close this part's open begins, in input order.
        for pending in std::mem::take(&mut later.pending_ends) {
            match pending {
                PendingEnd::Thread { lane: l, ts_ns, offset } => self.close_thread(lane(l), ts_ns, offset),
                PendingEnd::Async { key: (cat, id, p), pid, ts_ns, offset } => {
                    self.close_async((s(cat), s(id), procs[p as usize]), s(pid), ts_ns, offset);
                }
            }
        }

        let blocks_before = self.args.append(std::mem::take(&mut later.args));
        let shift = |a: ArgsRef| Args::shifted(a, blocks_before);
        for (l, stack) in later.open_b.iter().enumerate() {
            let mine = lanes[l].0 as usize;
            self.open_b[mine].extend(stack.iter().map(|o| super::Open { name: s(o.name), cat: s(o.cat), args: shift(o.args), ..*o }));
        }
        for ((cat, id, p), stack) in later.open_async.drain() {
            let key = (s(cat), s(id), procs[p as usize]);
            let mine = self.open_async.entry(key).or_default();
            mine.extend(stack.iter().map(|o| super::Open { name: s(o.name), cat: s(o.cat), args: shift(o.args), ..*o }));
        }

        let b = slices;
        let Slices { start_ns, dur_ns, lane: lanes_of, name, cat, args, correlation, external_id, offset, .. } = &mut self.slices;
        let (instants, counters, flow_points) = (&mut self.instants, &mut self.counters, &mut self.flow_points);
        fork.join(
            || {
                b.start_ns.extend_into(start_ns);
                b.dur_ns.extend_into(dur_ns);
                b.lane.extend_mapped(lanes_of, lane);
                b.name.extend_mapped(name, s);
                b.cat.extend_mapped(cat, s);
            },
            || {
                b.args.extend_mapped(args, shift);
                b.correlation.extend_into(correlation);
                b.external_id.extend_into(external_id);
                b.offset.extend_into(offset);

                let (a, b) = (instants, &later.instants);
                a.ts_ns.extend_from_slice(&b.ts_ns);
                a.lane.extend(b.lane.iter().map(|&l| lane(l)));
                a.name.extend(b.name.iter().map(|&n| s(n)));
                a.cat.extend(b.cat.iter().map(|&c| s(c)));
                a.args.extend(b.args.iter().map(|&x| shift(x)));

                let (a, b) = (counters, &later.counters);
                a.ts_ns.extend_from_slice(&b.ts_ns);
                a.process.extend(b.process.iter().map(|&p| procs[p as usize]));
                a.name.extend(b.name.iter().map(|&n| s(n)));
                a.args.extend(b.args.iter().map(|&x| shift(x)));

                flow_points.extend(later.flow_points.iter().map(|p| FlowPoint {
                    lane: lane(p.lane),
                    cat: s(p.cat),
                    // String ids carry the top bit and an interned id (see `flow_id`).
                    id: if p.id >> 63 == 1 { (1 << 63) | u64::from(s(StrId((p.id & !(1 << 63)) as u32)).0) } else { p.id },
                    ..*p
                }));
            },
        );
        self.min_ts = self.min_ts.min(later.min_ts);
        self.max_end = self.max_end.max(later.max_end);
        self.top_level.append(&mut later.top_level);
        self.diag.absorb(&later.diag);
    }
}
