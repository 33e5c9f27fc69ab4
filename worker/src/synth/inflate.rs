//! Inflate: a large trace from a small one, by repeating its events along time.
//!
//! Input: a decompressed Chrome trace (object form or bare array). Output: object form with the
//! input's top-level members in their order (`deviceProperties`, `traceName`, ...) and
//! `traceEvents` holding copy 0, 1, 2, ... of the events. Copy `c`:
//!
//! - shifts every `ts` by `c × period`, `period` = the input's time span (over events with a
//!   non-zero `ts`; real traces carry stray `ts: 0` events) rounded up to whole µs, plus
//!   [`GAP_US`];
//! - adds `c × id_stride` to every linking id: top-level `id` / `bind_id` (flows, async
//!   events) and the args `correlation`, `External id`, `Ev Idx`, `Record function id`,
//!   `Sequence number`, `Python id`, `Python parent id` (non-negative integers; `id_stride` is
//!   one more than the largest of them, so links stay links and never cross copies); string ids
//!   get a `.c` suffix;
//! - renumbers `ProfilerStep#N` to `N + c × steps` (`steps` = max N - min N + 1);
//! - leaves `ph: "M"` metadata out: it is written once, in copy 0.
//!
//! Timestamps are patched as decimal text: the digits become an integer in units of the input's
//! own last decimal place and the shift is added in those units, so `4808593490886.558` stays
//! three decimals and integer `ts` stay integers. No float is involved, no error accumulates.
//!
//! Cost: the input is scanned once into per-event templates (literal byte ranges plus number
//! slots); each copy is then a sequence of `memcpy`s and integer formatting into a 1 MiB buffer
//! flushed to the writer. Rejected: re-serializing `serde_json::Value`s (reorders keys without
//! `preserve_order`, reformats floats, and is several times slower).

use std::io::Write;
use std::ops::Range;

use super::decimal::{parse_decimal, parse_u64, push_decimal, push_u64, to_ns};
use super::scan::{array_elements, object_members, skip_ws, Member, ScanError};

/// Idle time added between copies, µs.
pub const GAP_US: i64 = 1_000;
/// Argument names whose non-negative integer values are linking ids.
const ID_ARGS: [&[u8]; 7] = [
    b"correlation",
    b"External id",
    b"Ev Idx",
    b"Record function id",
    b"Sequence number",
    b"Python id",
    b"Python parent id",
];
const STEP_PREFIX: &[u8] = b"ProfilerStep#";
/// Output is handed to the writer in chunks of about this size.
const FLUSH_BYTES: usize = 1 << 20;

/// What `inflate` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InflateStats {
    /// Number of copies of the input's events.
    pub copies: u64,
    /// Non-metadata events in one copy.
    pub events_per_copy: u64,
    /// Metadata (`ph: "M"`) events, written once.
    pub metadata_events: u64,
    /// Total events written.
    pub events_written: u64,
    /// Total bytes written.
    pub bytes_written: u64,
    /// Time shift between consecutive copies, µs.
    pub period_us: i64,
    /// Offset added to every linking id per copy.
    pub id_stride: u64,
    /// Offset added to `ProfilerStep#N` numbers per copy.
    pub steps_per_copy: u64,
}

/// Writes copies of `input`'s events until at least `target_bytes` are written (one copy at
/// least) and returns what was written.
///
/// # Errors
/// The input is not a trace the scanner can walk, a `ts` is not a plain decimal number, a
/// shifted value overflows, or `out` fails; the message ends with the byte offset when there is
/// one.
pub fn inflate(
    input: &[u8],
    target_bytes: u64,
    out: &mut dyn Write,
) -> Result<InflateStats, String> {
    Plan::parse(input)?.write(out, Stop::Bytes(target_bytes))
}

/// Writes exactly `copies` copies (at least one) of `input`'s events.
///
/// # Errors
/// As [`inflate`].
pub fn inflate_copies(
    input: &[u8],
    copies: u64,
    out: &mut dyn Write,
) -> Result<InflateStats, String> {
    Plan::parse(input)?.write(out, Stop::Copies(copies.max(1)))
}

/// When to stop writing copies.
#[derive(Clone, Copy, Debug)]
enum Stop {
    Bytes(u64),
    Copies(u64),
}

/// A piece of an event template.
#[derive(Clone, Debug)]
enum Slot {
    /// Bytes copied from the input.
    Lit(Range<usize>),
    /// A timestamp: `value` in units of 10^-`digits` µs.
    Ts { value: i64, digits: u32 },
    /// A non-negative integer id.
    Id(u64),
    /// A string id's text (inside the quotes).
    StrId(Range<usize>),
    /// The `N` of `ProfilerStep#N`.
    Step(u64),
}

/// The parsed input: output framing plus one template per event.
struct Plan<'a> {
    input: &'a [u8],
    /// Top-level members before / after `traceEvents`, as `"key": value` ranges.
    before: Vec<Range<usize>>,
    after: Vec<Range<usize>>,
    slots: Vec<Slot>,
    /// Per event: its range in `slots` and whether it is metadata.
    events: Vec<(Range<usize>, bool)>,
    period_us: i64,
    id_stride: u64,
    steps: u64,
}

fn scan_err(e: ScanError) -> String {
    format!("inflate: malformed trace: {e}")
}

impl<'a> Plan<'a> {
    fn parse(input: &'a [u8]) -> Result<Plan<'a>, String> {
        let start = skip_ws(input, 0);
        let (before, after, events_at) = match input.get(start) {
            Some(b'[') => (Vec::new(), Vec::new(), start),
            Some(b'{') => {
                let (members, _) = object_members(input, start).map_err(scan_err)?;
                let at = members
                    .iter()
                    .position(|m| &input[m.key.clone()] == b"traceEvents");
                let Some(at) = at else {
                    return Err("inflate: the trace object has no \"traceEvents\" member".into());
                };
                let whole = |m: &Member| m.key.start - 1..m.value.end;
                let before = members[..at].iter().map(whole).collect();
                let after = members[at + 1..].iter().map(whole).collect();
                (before, after, members[at].value.start)
            }
            _ => {
                return Err(format!(
                    "inflate: expected a JSON object or array at byte {start}"
                ))
            }
        };
        let (elements, _) = array_elements(input, events_at).map_err(scan_err)?;
        let mut plan = Plan {
            input,
            before,
            after,
            slots: Vec::new(),
            events: Vec::new(),
            period_us: 0,
            id_stride: 1,
            steps: 0,
        };
        let mut span = Span::default();
        for element in elements {
            plan.add_event(element, &mut span)?;
        }
        plan.period_us = span.period_us();
        plan.id_stride = span.max_id + 1;
        plan.steps = span.steps();
        Ok(plan)
    }

    /// Builds the template of the event at `range` and folds it into `span`.
    fn add_event(&mut self, range: Range<usize>, span: &mut Span) -> Result<(), String> {
        let b = self.input;
        let first = self.slots.len();
        if b.get(range.start) != Some(&b'{') {
            // Not an object: copied as is (it has nothing to patch).
            self.slots.push(Slot::Lit(range.clone()));
            self.events.push((first..self.slots.len(), false));
            return Ok(());
        }
        let (members, _) = object_members(b, range.start).map_err(scan_err)?;
        let is_meta = members
            .iter()
            .any(|m| &b[m.key.clone()] == b"ph" && &b[m.value.clone()] == b"\"M\"");
        let mut patches: Vec<(Range<usize>, Slot)> = Vec::new();
        let (mut ts_ns, mut dur_ns) = (None, 0);
        for m in &members {
            let (key, value) = (&b[m.key.clone()], m.value.clone());
            match key {
                b"ts" => {
                    let (scaled, digits) = parse_decimal(&b[value.clone()]).ok_or_else(|| {
                        format!(
                            "inflate: \"ts\" is not a plain decimal number at byte {}",
                            value.start
                        )
                    })?;
                    ts_ns = Some(to_ns(scaled, digits));
                    patches.push((
                        value,
                        Slot::Ts {
                            value: scaled,
                            digits,
                        },
                    ));
                }
                b"dur" => dur_ns = parse_decimal(&b[value]).map_or(0, |(v, d)| to_ns(v, d)),
                b"id" | b"bind_id" => patches.extend(id_patch(b, value, span)),
                b"name" => patches.extend(step_patch(b, value, span)),
                b"args" if b.get(value.start) == Some(&b'{') => {
                    let (args, _) = object_members(b, value.start).map_err(scan_err)?;
                    for arg in args.iter().filter(|a| ID_ARGS.contains(&&b[a.key.clone()])) {
                        patches.extend(
                            id_patch(b, arg.value.clone(), span)
                                .filter(|p| matches!(p.1, Slot::Id(_))),
                        );
                    }
                }
                _ => {}
            }
        }
        if let (Some(ts), false) = (ts_ns, is_meta) {
            span.add(ts, dur_ns);
        }
        patches.sort_by_key(|p| p.0.start);
        let mut at = range.start;
        for (r, slot) in patches {
            self.slots.push(Slot::Lit(at..r.start));
            at = r.end;
            self.slots.push(slot);
        }
        self.slots.push(Slot::Lit(at..range.end));
        self.events.push((first..self.slots.len(), is_meta));
        Ok(())
    }

    fn write(&self, out: &mut dyn Write, stop: Stop) -> Result<InflateStats, String> {
        let mut w = Out {
            out,
            buf: Vec::with_capacity(FLUSH_BYTES + (64 << 10)),
            written: 0,
        };
        w.put(b"{\n");
        for r in &self.before {
            w.put(&self.input[r.clone()]);
            w.put(b",\n");
        }
        w.put(b"\"traceEvents\": [\n");
        let tail_len: u64 = 4 + self.after.iter().map(|r| (r.len() + 2) as u64).sum::<u64>();
        let metadata_events = self.events.iter().filter(|e| e.1).count() as u64;
        let events_per_copy = self.events.len() as u64 - metadata_events;
        let (mut copies, mut events_written) = (0u64, 0u64);
        loop {
            events_written += self.write_copy(&mut w, copies, events_written == 0)?;
            copies += 1;
            let done = match stop {
                Stop::Copies(n) => copies >= n,
                Stop::Bytes(target) => w.written + w.buf.len() as u64 + tail_len >= target,
            };
            if done || events_per_copy == 0 {
                break;
            }
        }
        w.put(b"\n]");
        for r in &self.after {
            w.put(b",\n");
            w.put(&self.input[r.clone()]);
        }
        w.put(b"\n}\n");
        w.flush()?;
        Ok(InflateStats {
            copies,
            events_per_copy,
            metadata_events,
            events_written,
            bytes_written: w.written,
            period_us: self.period_us,
            id_stride: self.id_stride,
            steps_per_copy: self.steps,
        })
    }

    /// Writes copy `c`; returns how many events it wrote.
    fn write_copy(&self, w: &mut Out<'_>, c: u64, first_in_array: bool) -> Result<u64, String> {
        let overflow = || format!("inflate: shifted values overflow at copy {c}");
        let id_shift = c.checked_mul(self.id_stride).ok_or_else(overflow)?;
        let step_shift = c.checked_mul(self.steps).ok_or_else(overflow)?;
        let ts_shift_us = i64::try_from(c)
            .ok()
            .and_then(|c| c.checked_mul(self.period_us))
            .ok_or_else(overflow)?;
        let mut need_comma = !first_in_array;
        let mut count = 0;
        for (slots, is_meta) in &self.events {
            if *is_meta && c > 0 {
                continue;
            }
            if need_comma {
                w.put(b",\n");
            }
            need_comma = true;
            count += 1;
            for slot in &self.slots[slots.clone()] {
                match slot {
                    Slot::Lit(r) => w.put(&self.input[r.clone()]),
                    Slot::Ts { value, digits } => {
                        let shifted = 10i64
                            .checked_pow(*digits)
                            .and_then(|unit| ts_shift_us.checked_mul(unit))
                            .and_then(|shift| value.checked_add(shift))
                            .ok_or_else(overflow)?;
                        push_decimal(&mut w.buf, shifted, *digits);
                    }
                    Slot::Id(id) => {
                        push_u64(&mut w.buf, id.checked_add(id_shift).ok_or_else(overflow)?)
                    }
                    Slot::Step(n) => {
                        push_u64(&mut w.buf, n.checked_add(step_shift).ok_or_else(overflow)?)
                    }
                    Slot::StrId(r) => {
                        w.put(&self.input[r.clone()]);
                        if c > 0 {
                            w.buf.push(b'.');
                            push_u64(&mut w.buf, c);
                        }
                    }
                }
            }
            if w.buf.len() >= FLUSH_BYTES {
                w.flush()?;
            }
        }
        Ok(count)
    }
}

/// The output writer: a buffer in front of `out`, counting bytes.
struct Out<'w> {
    out: &'w mut dyn Write,
    buf: Vec<u8>,
    written: u64,
}

impl Out<'_> {
    fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    fn flush(&mut self) -> Result<(), String> {
        self.out
            .write_all(&self.buf)
            .map_err(|e| format!("inflate: write failed: {e}"))?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

/// Time span, largest id and step range seen while building templates.
#[derive(Debug, Default)]
struct Span {
    min_ns: Option<i64>,
    max_ns: Option<i64>,
    max_id: u64,
    steps: Option<(u64, u64)>,
}

impl Span {
    fn add(&mut self, ts_ns: i64, dur_ns: i64) {
        // `ts: 0` events exist in real traces; counting them would make the span the whole epoch.
        if ts_ns == 0 {
            return;
        }
        let end = ts_ns.saturating_add(dur_ns.max(0));
        self.min_ns = Some(self.min_ns.map_or(ts_ns, |m| m.min(ts_ns)));
        self.max_ns = Some(self.max_ns.map_or(end, |m| m.max(end)));
    }

    fn period_us(&self) -> i64 {
        let span_ns = match (self.min_ns, self.max_ns) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        };
        // A span is never negative (max end >= min start), so rounding up is `(n + 999) / 1000`.
        (span_ns.saturating_add(999) / 1000).saturating_add(GAP_US)
    }

    fn steps(&self) -> u64 {
        self.steps.map_or(0, |(lo, hi)| hi - lo + 1)
    }
}

/// The slot for an id value: integers become `Id` (and raise `span.max_id`), strings `StrId`.
fn id_patch(b: &[u8], value: Range<usize>, span: &mut Span) -> Option<(Range<usize>, Slot)> {
    let text = &b[value.clone()];
    if let Some(id) = parse_u64(text) {
        span.max_id = span.max_id.max(id);
        return Some((value, Slot::Id(id)));
    }
    if text.len() >= 2 && text[0] == b'"' {
        let inner = value.start + 1..value.end - 1;
        return Some((inner.clone(), Slot::StrId(inner)));
    }
    None
}

/// The slot for the digits of a `"ProfilerStep#N"` name.
fn step_patch(b: &[u8], value: Range<usize>, span: &mut Span) -> Option<(Range<usize>, Slot)> {
    let text = b.get(value.start + 1..value.end.checked_sub(1)?)?;
    let digits = text.strip_prefix(STEP_PREFIX)?;
    let n = parse_u64(digits)?;
    span.steps = Some(span.steps.map_or((n, n), |(lo, hi)| (lo.min(n), hi.max(n))));
    let start = value.start + 1 + STEP_PREFIX.len();
    Some((start..value.end - 1, Slot::Step(n)))
}
