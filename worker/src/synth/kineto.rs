//! Kineto's event layout: the `Event` record the demo builds and its serializer.
//!
//! Input: `Event`s with `i64` ns timestamps. Output: JSON text laid out the way
//! `torch.profiler`'s Kineto exporter lays it out (one event per `{ ... }` block, the common
//! fields on the first line, `ts` / `dur` on the second), so the demo looks like a file a user
//! would drop in and exercises the same tokenizer paths. One departure, for size: `args` sit on
//! one line (`"args": {...}`) where Kineto opens a nested block.
//!
//! Invariants: timestamps print as µs with exactly three decimals (`decimal::push_us`); strings
//! are escaped (quotes, backslashes, control characters); output is a pure function of the input.
//! Cost: one pass, no allocation beyond the output buffer.

use std::borrow::Cow;

use super::decimal::push_us;

/// A pid or tid: numbers for real processes and threads, strings for the profiler's own lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Id {
    Num(i64),
    Str(&'static str),
}

/// One `args` value.
#[derive(Clone, Debug)]
pub(crate) enum Arg {
    Int(i64),
    /// Printed like C's `%f` (six decimals), as CUPTI-derived floats are.
    Fixed6(f64),
    /// Printed with Rust's shortest round-trip form.
    Float(f64),
    Str(Cow<'static, str>),
    /// Pre-formatted JSON (shape lists, `grid` / `block` triples).
    Raw(String),
}

/// The phase-specific part of an event.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// `ph: "X"` with a category and a duration.
    Complete { cat: &'static str, dur_ns: i64 },
    /// `ph: "s"`: a flow start.
    FlowStart { cat: &'static str, id: u64 },
    /// `ph: "f"` with `bp: "e"`: a flow end bound to the enclosing slice.
    FlowEnd { cat: &'static str, id: u64 },
    /// `ph: "i"`: thread-scoped (`s: "t"`, with a category) or global (`s: "g"`, none).
    Instant {
        cat: Option<&'static str>,
        scope: &'static str,
    },
    /// `ph: "M"`: metadata (process / thread names and sort order).
    Meta,
}

/// One trace event, times in ns.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub kind: Kind,
    pub name: Cow<'static, str>,
    pub pid: Id,
    pub tid: Id,
    pub ts_ns: i64,
    pub args: Vec<(&'static str, Arg)>,
}

impl Event {
    /// The duration of a complete event, 0 for every other kind.
    pub fn dur_ns(&self) -> i64 {
        match self.kind {
            Kind::Complete { dur_ns, .. } => dur_ns,
            _ => 0,
        }
    }

    /// Sets the duration of a complete event; no effect on other kinds.
    pub fn set_dur_ns(&mut self, value: i64) {
        if let Kind::Complete { dur_ns, .. } = &mut self.kind {
            *dur_ns = value;
        }
    }
}

/// Appends `s` as a JSON string literal.
pub(crate) fn push_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if u32::from(c) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", u32::from(c)).as_bytes());
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn push_display(out: &mut Vec<u8>, value: impl std::fmt::Display) {
    use std::io::Write as _;
    // Writing into a Vec never fails.
    let _ = write!(out, "{value}");
}

fn push_id(out: &mut Vec<u8>, id: Id) {
    match id {
        Id::Num(n) => push_display(out, n),
        Id::Str(s) => push_str(out, s),
    }
}

fn push_arg(out: &mut Vec<u8>, arg: &Arg) {
    match arg {
        Arg::Int(n) => push_display(out, n),
        Arg::Fixed6(x) => push_display(out, format_args!("{x:.6}")),
        Arg::Float(x) => push_display(out, x),
        Arg::Str(s) => push_str(out, s),
        Arg::Raw(s) => out.extend_from_slice(s.as_bytes()),
    }
}

fn push_args(out: &mut Vec<u8>, args: &[(&'static str, Arg)]) {
    if args.is_empty() {
        out.extend_from_slice(b"\n  }");
        return;
    }
    out.extend_from_slice(b",\n    \"args\": {");
    for (i, (key, value)) in args.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        push_str(out, key);
        out.extend_from_slice(b": ");
        push_arg(out, value);
    }
    out.extend_from_slice(b"}\n  }");
}

/// Appends one event as a Kineto-style `{ ... }` block (no trailing comma).
pub(crate) fn push_event(out: &mut Vec<u8>, e: &Event) {
    out.extend_from_slice(b"  {\n    ");
    match &e.kind {
        Kind::Complete { cat, dur_ns } => {
            out.extend_from_slice(b"\"ph\": \"X\", \"cat\": ");
            push_str(out, cat);
            push_name_pid_tid(out, e);
            out.extend_from_slice(b",\n    \"ts\": ");
            push_us(out, e.ts_ns);
            out.extend_from_slice(b", \"dur\": ");
            push_us(out, *dur_ns);
            push_args(out, &e.args);
        }
        Kind::FlowStart { cat, id } | Kind::FlowEnd { cat, id } => {
            let ph = if matches!(e.kind, Kind::FlowStart { .. }) {
                "s"
            } else {
                "f"
            };
            push_display(
                out,
                format_args!("\"ph\": \"{ph}\", \"id\": {id}, \"pid\": "),
            );
            push_id(out, e.pid);
            out.extend_from_slice(b", \"tid\": ");
            push_id(out, e.tid);
            out.extend_from_slice(b", \"ts\": ");
            push_us(out, e.ts_ns);
            out.extend_from_slice(b",\n    \"cat\": ");
            push_str(out, cat);
            out.extend_from_slice(b", \"name\": ");
            push_str(out, cat);
            if ph == "f" {
                out.extend_from_slice(b", \"bp\": \"e\"");
            }
            out.extend_from_slice(b"\n  }");
        }
        Kind::Instant {
            cat: Some(cat),
            scope,
        } => {
            out.extend_from_slice(b"\"ph\": \"i\", \"cat\": ");
            push_str(out, cat);
            out.extend_from_slice(b", \"s\": ");
            push_str(out, scope);
            out.extend_from_slice(b", \"name\": ");
            push_str(out, &e.name);
            out.extend_from_slice(b",\n    \"pid\": ");
            push_id(out, e.pid);
            out.extend_from_slice(b", \"tid\": ");
            push_id(out, e.tid);
            out.extend_from_slice(b",\n    \"ts\": ");
            push_us(out, e.ts_ns);
            push_args(out, &e.args);
        }
        Kind::Instant { cat: None, scope } => {
            out.extend_from_slice(b"\"name\": ");
            push_str(out, &e.name);
            out.extend_from_slice(b", \"ph\": \"i\", \"s\": ");
            push_str(out, scope);
            out.extend_from_slice(b",\n    \"pid\": ");
            push_id(out, e.pid);
            out.extend_from_slice(b", \"tid\": ");
            push_id(out, e.tid);
            out.extend_from_slice(b", \"ts\": ");
            push_us(out, e.ts_ns);
            push_args(out, &e.args);
        }
        Kind::Meta => {
            out.extend_from_slice(b"\"name\": ");
            push_str(out, &e.name);
            out.extend_from_slice(b", \"ph\": \"M\", \"ts\": ");
            push_us(out, e.ts_ns);
            out.extend_from_slice(b", \"pid\": ");
            push_id(out, e.pid);
            out.extend_from_slice(b", \"tid\": ");
            push_id(out, e.tid);
            push_args(out, &e.args);
        }
    }
}

fn push_name_pid_tid(out: &mut Vec<u8>, e: &Event) {
    out.extend_from_slice(b", \"name\": ");
    push_str(out, &e.name);
    out.extend_from_slice(b", \"pid\": ");
    push_id(out, e.pid);
    out.extend_from_slice(b", \"tid\": ");
    push_id(out, e.tid);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn flow_end_has_binding_point() {
        let e = Event {
            kind: Kind::FlowEnd {
                cat: "ac2g",
                id: 13,
            },
            name: Cow::Borrowed("ac2g"),
            pid: Id::Num(0),
            tid: Id::Num(7),
            ts_ns: 573_720_835_217_394,
            args: Vec::new(),
        };
        let mut out = Vec::new();
        push_event(&mut out, &e);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "  {\n    \"ph\": \"f\", \"id\": 13, \"pid\": 0, \"tid\": 7, \"ts\": 573720835217.394,\n    \
             \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }"
        );
    }

    #[test]
    fn strings_are_escaped() {
        let mut out = Vec::new();
        push_str(&mut out, "a\"b\\c\u{1}");
        assert_eq!(out, b"\"a\\\"b\\\\c\\u0001\"");
    }
}
