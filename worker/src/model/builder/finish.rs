//! Finishing a build: sort slices per lane, shift times to the origin, nest, link, and put
//! processes and lanes in display order (sort index metadata, else numeric id, else first
//! slice start and id text: never creation order, which depends on how the input was split).

use super::{Builder, Open, PendingEnd};
use crate::diag::DiagKind;
use crate::fork::{Fork, Sequential};
use crate::json::{Form, RawEvent};
use crate::model::category::CatClass;
use crate::model::strings::{StrId, Strings};
use crate::model::{Counters, Instants, Lane, LaneId, Process, ProcessKind, Slices, Trace, NONE};

/// An async end no begin written before it matched: (key (cat, id, process), pid, ts ns, byte
/// offset).
type LateEnd = ((StrId, StrId, u32), StrId, i64, u64);

impl Builder {
    /// Sorts, nests, links and orders everything; see the module docs.
    pub fn finish(self, form: Form, truncated: bool) -> Trace {
        self.finish_with(form, truncated, &Sequential)
    }

    /// [`Builder::finish`], `fork` running its independent steps at once: the slices' sort
    /// beside everything else's, each half of the columns' reordering, launches beside flows.
    pub fn finish_with(mut self, form: Form, truncated: bool, fork: &impl Fork) -> Trace {
        let origin = if self.min_ts == i64::MAX { 0 } else { self.min_ts };
        let end = if self.max_end == i64::MIN { origin } else { self.max_end };
        self.close_open(end);
        let cat_class = self.classify_categories();
        let (slices, instants, counters) = (std::mem::take(&mut self.slices), std::mem::take(&mut self.instants), std::mem::take(&mut self.counters));
        let (mut args, mut points) = (std::mem::take(&mut self.args), std::mem::take(&mut self.flow_points));
        let (slices, (instants, counters, flow_order)) = fork.join(
            || sort_slices(slices, origin, fork),
            || {
                args.finish();
                for p in &mut points {
                    p.ts_ns -= origin;
                }
                (sort_instants(instants, origin), sort_counters(counters, origin), crate::model::link::flow_order(&points))
            },
        );
        let mut lanes = self.lane_table(&slices);
        let mut trace = Trace {
            strings: std::mem::take(&mut self.strings),
            cat_class,
            processes: Vec::new(),
            lanes: Vec::new(),
            slices,
            instants,
            counters,
            flows: Vec::new(),
            flows_unlinked: 0,
            args,
            origin_ns: origin,
            end_ns: end - origin,
            top_level: std::mem::take(&mut self.top_level),
            stats: std::mem::take(&mut self.stats),
            diagnostics: std::mem::take(&mut self.diag),
            truncated,
            form,
            step_marker: None,
        };
        crate::model::nest::nest(&mut trace, &mut lanes);
        trace.lanes = lanes;
        crate::model::link::link(&mut trace, &points, &flow_order, fork);
        self.order(&mut trace);
        trace
    }

    fn close_open(&mut self, end: i64) {
        let mut late: Vec<LateEnd> = Vec::new();
        for pending in std::mem::take(&mut self.pending_ends) {
            match pending {
                PendingEnd::Thread { offset, .. } => self.diag.report(DiagKind::ModelUnmatchedEnd, Some(offset), String::new),
                PendingEnd::Async { key, pid, ts_ns, offset } => late.push((key, pid, ts_ns, offset)),
            }
        }
        self.match_late_async(late);
        let mut unclosed: Vec<(LaneId, Open)> = Vec::new();
        for (lane, stack) in self.open_b.iter_mut().enumerate() {
            unclosed.extend(stack.drain(..).map(|open| (LaneId(lane as u32), open)));
        }
        let mut open_async: Vec<((StrId, StrId, u32), Vec<Open>)> = self.open_async.drain().collect();
        open_async.sort_by_key(|(key, _)| *key);
        for ((_, _, process), stack) in open_async {
            let pid = self.procs[process as usize];
            for open in stack {
                let lane = self.async_lane_of(pid, open.name);
                unclosed.push((lane, open));
            }
        }
        for (lane, open) in unclosed {
            self.diag.report(DiagKind::ModelUnclosedBegin, Some(open.offset), String::new);
            self.push_slice(lane, open.start_ns, end - open.start_ns, open.name, open.cat, open.args, &RawEvent::default(), open.offset);
        }
    }

    /// Async ends that found no earlier-written begin (`close_async`) against the begins
    /// still open, key by key, by time as the Trace Event Format orders them (catapult sorts
    /// async events by timestamp, then input order): an `F` written before its `S` still
    /// closes it. Ends left over are unmatched; begins left over stay open.
    fn match_late_async(&mut self, mut late: Vec<LateEnd>) {
        late.sort_by_key(|l| (l.0, l.2, l.3));
        let mut i = 0;
        while i < late.len() {
            let key = late[i].0;
            let n = late[i..].iter().take_while(|l| l.0 == key).count();
            let opens = self.open_async.remove(&key).unwrap_or_default();
            // (ts, offset, begin): one time line of this key's begins and ends.
            let mut events: Vec<(i64, u64, Option<Open>)> = opens.into_iter().map(|o| (o.start_ns, o.offset, Some(o))).collect();
            events.extend(late[i..i + n].iter().map(|l| (l.2, l.3, None)));
            events.sort_by_key(|e| (e.0, e.1));
            let pid = late[i].1;
            let mut stack: Vec<Open> = Vec::new();
            for (ts, offset, open) in events {
                if let Some(o) = open {
                    stack.push(o);
                } else if let Some(o) = stack.pop() {
                    let lane = self.async_lane_of(pid, o.name);
                    self.push_slice(lane, o.start_ns, ts - o.start_ns, o.name, o.cat, o.args, &RawEvent::default(), o.offset);
                } else {
                    self.diag.report(DiagKind::ModelUnmatchedEnd, Some(offset), String::new);
                }
            }
            if !stack.is_empty() {
                self.open_async.insert(key, stack);
            }
            i += n;
        }
    }

    fn classify_categories(&self) -> Vec<CatClass> {
        let mut classes = vec![CatClass::Other; self.strings.len()];
        for (i, &n) in self.stats.by_category.iter().enumerate() {
            if n > 0 {
                classes[i] = CatClass::of(self.strings.bytes_of(StrId(i as u32)));
            }
        }
        classes
    }

    fn lane_table(&self, slices: &Slices) -> Vec<Lane> {
        let mut lanes: Vec<Lane> = self
            .lanes
            .iter()
            .map(|&(process, tid)| Lane { process, tid, name: tid, sort_index: None, slices: 0..0, rows: 0, python_rows: 0 })
            .collect();
        let mut i = 0;
        while i < slices.len() {
            let lane = slices.lane[i];
            let start = i;
            while i < slices.len() && slices.lane[i] == lane {
                i += 1;
            }
            lanes[lane.0 as usize].slices = start as u32..i as u32;
        }
        lanes
    }

    /// Names processes and lanes and puts both in display order.
    fn order(&self, trace: &mut Trace) {
        let mut gpu = vec![false; self.procs.len()];
        for i in 0..trace.slices.len() {
            if trace.class(trace.slices.cat[i]).is_gpu_side() {
                gpu[trace.lanes[trace.slices.lane[i].0 as usize].process as usize] = true;
            }
        }
        for lane in &mut trace.lanes {
            let pid = self.procs[lane.process as usize];
            let (name, sort_index) = self.thread_meta.get(&(pid, lane.tid)).copied().unwrap_or_default();
            lane.sort_index = sort_index;
            lane.name = match name {
                Some(n) => {
                    let text = trace.strings.get(n);
                    let trimmed = text.trim();
                    if trimmed.len() == text.len() { n } else { let t = trimmed.to_owned(); trace.strings.intern(t.as_bytes()) }
                }
                None => {
                    let tid = trace.strings.get(lane.tid).into_owned();
                    let text = match (tid.strip_prefix("async:"), gpu[lane.process as usize]) {
                        (Some(name), _) => name.to_owned(),
                        (None, true) => format!("stream {tid}"),
                        (None, false) => format!("thread {tid}"),
                    };
                    trace.strings.intern(text.as_bytes())
                }
            };
        }
        let mut procs: Vec<Process> = Vec::with_capacity(self.procs.len());
        for (i, &pid) in self.procs.iter().enumerate() {
            let meta = self.proc_meta.get(&pid).cloned().unwrap_or_default();
            let kind = if gpu[i] { ProcessKind::Gpu } else { ProcessKind::Cpu };
            // Kineto names every device process after the host program and labels it
            // "GPU N": the label is what tells devices apart.
            let gpu_label = meta.labels.filter(|_| kind == ProcessKind::Gpu);
            let name = gpu_label.or(meta.name).unwrap_or_else(|| {
                let pid_text = trace.strings.get(pid).into_owned();
                let text = match kind {
                    ProcessKind::Gpu => format!("GPU {pid_text}"),
                    ProcessKind::Cpu => format!("process {pid_text}"),
                };
                trace.strings.intern(text.as_bytes())
            });
            let mut lanes: Vec<LaneId> =
                (0..trace.lanes.len() as u32).map(LaneId).filter(|l| trace.lanes[l.0 as usize].process == i as u32).collect();
            // Never by lane id: ids follow creation order, which depends on how the input
            // was split; the first slice's start and the tid text do not.
            lanes.sort_by_key(|l| {
                let lane = &trace.lanes[l.0 as usize];
                let is_async = trace.strings.bytes_of(lane.tid).starts_with(b"async:");
                let first = trace.slices.start_ns.get(lane.slices.start as usize).filter(|_| !lane.slices.is_empty());
                let index = lane.sort_index.or_else(|| numeric(&trace.strings, lane.tid)).unwrap_or(i64::MAX);
                (is_async, index, first.copied().unwrap_or(i64::MAX), trace.strings.bytes_of(lane.tid))
            });
            procs.push(Process { pid, name, labels: meta.labels, sort_index: meta.sort_index, kind, lanes });
        }
        let mut order: Vec<u32> = (0..procs.len() as u32).collect();
        order.sort_by_key(|&i| {
            let p = &procs[i as usize];
            (p.sort_index.or_else(|| numeric(&trace.strings, p.pid)).unwrap_or(i64::MAX), trace.strings.bytes_of(p.pid))
        });
        let mut new_index = vec![0u32; procs.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old as usize] = new as u32;
        }
        for lane in &mut trace.lanes {
            lane.process = new_index[lane.process as usize];
        }
        for p in &mut trace.counters.process {
            *p = new_index[*p as usize];
        }
        let mut slots: Vec<Option<Process>> = procs.into_iter().map(Some).collect();
        trace.processes = order.iter().filter_map(|&i| slots[i as usize].take()).collect();
    }
}

/// The numeric value of an id string, if it is an integer.
fn numeric(strings: &Strings, id: StrId) -> Option<i64> {
    std::str::from_utf8(strings.bytes_of(id)).ok()?.parse().ok()
}

/// Sorts slice columns by (lane, start, longer first, input order of the begin event: its byte
/// offset, which no parse path changes) and shifts times to origin.
///
/// Cost: a counting pass groups slices by lane (keeping input order, which is mostly time
/// order), then each lane's indexes are sorted in place by `model::nearly`: reading the columns
/// nearly in sequence when the lane is nearly in order, else by packed keys. With `fork`, the
/// lanes are sorted in two halves of about as many slices, and the columns reordered in two
/// groups.
fn sort_slices(s: Slices, origin: i64, fork: &impl Fork) -> Slices {
    let lanes = s.lane.iter().map(|l| l.0 as usize + 1).max().unwrap_or(0);
    let mut starts = vec![0usize; lanes + 1];
    for l in &s.lane {
        starts[l.0 as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut order = vec![0u32; s.len()];
    let mut next = starts.clone();
    for (i, l) in s.lane.iter().enumerate() {
        let at = &mut next[l.0 as usize];
        order[*at] = i as u32;
        *at += 1;
    }
    // The lane boundary nearest the middle: each half is sorted on its own.
    let mid = order.len() / 2;
    let above = starts.partition_point(|&at| at < mid).min(starts.len() - 1);
    let half = if above > 0 && mid - starts[above - 1] < starts[above] - mid { above - 1 } else { above };
    let (low, high) = order.split_at_mut(starts[half]);
    fork.join(|| sort_lanes(&s, low, &starts[..=half], 0), || sort_lanes(&s, high, &starts[half..], starts[half]));
    // One column at a time per group, each old one freed as its sorted copy is made: the sort
    // then needs a column or two more than the model, not a second model.
    let Slices { start_ns, dur_ns, lane, name, cat, args, correlation, external_id, offset, .. } = s;
    let by = &order;
    let ((start_ns, dur_ns, lane, name), (cat, args, correlation, external_id, offset)) = fork.join(
        || {
            let start_ns = {
                let sorted = by.iter().map(|&i| start_ns[i as usize] - origin).collect();
                drop(start_ns);
                sorted
            };
            (start_ns, permute_owned(dur_ns, by), permute_owned(lane, by), permute_owned(name, by))
        },
        || {
            let (cat, args) = (permute_owned(cat, by), permute_owned(args, by));
            (cat, args, permute_owned(correlation, by), permute_owned(external_id, by), permute_owned(offset, by))
        },
    );
    let n = order.len();
    drop(order);
    Slices {
        start_ns,
        dur_ns,
        lane,
        name,
        cat,
        depth: vec![0; n],
        row: vec![0; n],
        parent: vec![NONE; n],
        args,
        correlation,
        external_id,
        // Filled by `link`, which builds the column whole.
        launch: Vec::new(),
        offset,
    }
}

/// Sorts each lane of `group` (the slices of the lanes whose starts, offset by `base`, are
/// `starts`) by (start, longer first, offset).
fn sort_lanes(s: &Slices, group: &mut [u32], starts: &[usize], base: usize) {
    let key = |i: u32| {
        let j = i as usize;
        (s.start_ns[j], std::cmp::Reverse(s.dur_ns[j]), s.offset[j])
    };
    let mut aside = Vec::new();
    for w in starts.windows(2) {
        crate::model::nearly::sort_by_key(&mut group[w[0] - base..w[1] - base], &mut aside, &key);
    }
}

/// `column` in `order`, the original freed.
fn permute_owned<T: Copy>(column: Vec<T>, order: &[u32]) -> Vec<T> {
    permute(&column, order)
}

fn sort_instants(t: Instants, origin: i64) -> Instants {
    let (order, ts_ns) = time_order(&t.ts_ns, origin);
    Instants {
        ts_ns,
        lane: permute(&t.lane, &order),
        name: permute(&t.name, &order),
        cat: permute(&t.cat, &order),
        args: permute(&t.args, &order),
    }
}

fn sort_counters(c: Counters, origin: i64) -> Counters {
    let (order, ts_ns) = time_order(&c.ts_ns, origin);
    Counters { ts_ns, process: permute(&c.process, &order), name: permute(&c.name, &order), args: permute(&c.args, &order) }
}

/// The stable time order of `ts` and the times in that order, shifted to `origin`.
fn time_order(ts: &[i64], origin: i64) -> (Vec<u32>, Vec<i64>) {
    let mut order: Vec<u32> = (0..ts.len() as u32).collect();
    // By time, then index: the stable order.
    let key = |i: u32| ts[i as usize];
    crate::model::nearly::sort_by_key(&mut order, &mut Vec::new(), &key);
    let shifted = order.iter().map(|&i| ts[i as usize] - origin).collect();
    (order, shifted)
}

/// `col` reordered by `order` (a permutation of its indexes).
fn permute<T: Copy>(col: &[T], order: &[u32]) -> Vec<T> {
    order.iter().map(|&i| col[i as usize]).collect()
}
