//! Trace summary: the model's headline numbers as the protocol's [`TraceSummary`].
//!
//! Shared by `kinetoscope info` and the page, so both always show the same numbers.

use crate::json::Form;
use crate::model::link::enclosing_op;
use crate::model::{ProcessKind, StrId, Trace, NONE};
use crate::analysis::health::{self, Check};
use protocol::{FlowSummary, HealthCheck, HealthSummary, LaneSummary, LinkSummary, ProcessSummary, TraceSummary};
use std::collections::BTreeMap;

/// Builds the summary of `trace`; file facts are the caller's.
pub fn summarize(trace: &Trace, file_name: &str, file_bytes: u64, json_bytes: u64, gzip: bool) -> TraceSummary {
    let form = match trace.form {
        Form::Object => "json-object",
        Form::Array => "json-array",
    };
    let processes: Vec<ProcessSummary> = trace
        .processes
        .iter()
        .map(|p| ProcessSummary {
            pid: trace.strings.get(p.pid).into_owned(),
            name: trace.strings.get(p.name).into_owned(),
            kind: match p.kind {
                ProcessKind::Cpu => "cpu".into(),
                ProcessKind::Gpu => "gpu".into(),
            },
            lanes: p
                .lanes
                .iter()
                .map(|l| {
                    let lane = &trace.lanes[l.0 as usize];
                    LaneSummary {
                        tid: trace.strings.get(lane.tid).into_owned(),
                        name: trace.strings.get(lane.name).into_owned(),
                        slices: u64::from(lane.slices.end - lane.slices.start),
                        depth: u32::from(lane.rows),
                    }
                })
                .collect(),
        })
        .collect();
    TraceSummary {
        file_name: file_name.to_string(),
        file_bytes,
        json_bytes,
        format: if gzip { format!("{form}+gzip") } else { form.to_string() },
        events: trace.stats.events,
        phases: counts(trace, &trace.stats.by_phase),
        categories: counts(trace, &trace.stats.by_category),
        lanes: trace.lanes.len() as u64,
        processes,
        flows: FlowSummary { linked: trace.flows.len() as u64, unlinked: trace.flows_unlinked },
        links: links(trace),
        span_us: trace.end_ns as f64 / 1000.0,
        warnings: trace.diagnostics.lines(),
        truncated: trace.truncated,
        parse_ms: 0.0,
        parse_workers: 1,
        read_wait_ms: 0.0,
        finish_ms: 0.0,
        health: health_summary(trace),
        about: super::about::about(trace, file_name),
    }
}

/// Example slice ids each health check keeps for the summary.
const HEALTH_EXAMPLES: usize = 5;

/// The health checks as wire types (µs, a few examples each).
fn health_summary(trace: &Trace) -> HealthSummary {
    let h = health::analyze(trace);
    let check = |c: &Check| HealthCheck {
        count: c.count(),
        of: c.of,
        examples: c.ids.iter().take(HEALTH_EXAMPLES).copied().collect(),
    };
    let us = |ns: i64| ns as f64 / 1000.0;
    HealthSummary {
        launches_without_activity: check(&h.launches_without_activity),
        activities_without_launch: check(&h.activities_without_launch),
        window_us: h.window_ns.map(|(a, b)| (us(a), us(b))),
        outside_window: check(&h.outside_window),
        stream_overlaps: check(&h.stream_overlaps),
        max_overlap_us: us(h.max_overlap_ns),
        before_launch: check(&h.before_launch),
        clock_offset_us: h.clock_offset_ns.map(us),
        truncated: h.truncated,
        skipped: h.skipped.iter().map(|&(k, n)| (k.to_string(), n)).collect(),
    }
}

fn counts(trace: &Trace, by_id: &[u64]) -> BTreeMap<String, u64> {
    by_id
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, &n)| (trace.strings.get(StrId(i as u32)).into_owned(), n))
        .collect()
}

fn links(trace: &Trace) -> LinkSummary {
    let s = &trace.slices;
    let mut out = LinkSummary::default();
    for i in 0..s.len() {
        if !trace.class(s.cat[i]).is_device_activity() {
            continue;
        }
        out.device_activities += 1;
        if s.launch[i] != NONE {
            out.with_launch += 1;
            out.with_op += u64::from(enclosing_op(trace, s.launch[i]).is_some());
        }
    }
    out
}

/// The recording facts, one line each: GPUs, rank, versions and options.
fn about_text(out: &mut String, a: &protocol::TraceAbout) {
    use std::fmt::Write as _;
    for d in &a.devices {
        let mut facts = vec![format!("{} {:?}", d.id, d.name)];
        facts.extend(d.memory_bytes.map(|b| format!("{:.1} GB", b as f64 / 1e9)));
        facts.extend(d.compute_capability.as_ref().map(|c| format!("compute {c}")));
        facts.extend(d.sms.map(|n| format!("{n} SMs")));
        let _ = writeln!(out, "gpu        {}", facts.join(", "));
    }
    if let Some(d) = &a.distributed {
        let or_unknown = |v: Option<u32>| v.map_or("?".to_owned(), |v| v.to_string());
        let backend = d.backend.as_deref().map(|b| format!(" ({b})")).unwrap_or_default();
        let _ = writeln!(out, "rank       {} of {}{backend}", or_unknown(d.rank), or_unknown(d.world_size));
    }
    for (label, value) in &a.recording {
        let _ = writeln!(out, "recorded   {label}: {value}");
    }
}

/// Human-readable rendering of a summary, as `kinetoscope info` prints it.
pub fn text(s: &TraceSummary) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mb = |b: u64| b as f64 / 1e6;
    let _ = writeln!(out, "{}  {:.2} MB ({}, {:.2} MB JSON)", s.file_name, mb(s.file_bytes), s.format, mb(s.json_bytes));
    let _ = writeln!(out, "events     {}", s.events);
    let _ = writeln!(out, "span       {:.3} ms", s.span_us / 1000.0);
    let _ = writeln!(out, "lanes      {} in {} processes", s.lanes, s.processes.len());
    let _ = writeln!(out, "flows      {} linked, {} endpoints unlinked", s.flows.linked, s.flows.unlinked);
    let l = &s.links;
    let _ = writeln!(out, "device     {} activities, {} with launch call, {} with enclosing op", l.device_activities, l.with_launch, l.with_op);
    if s.parse_ms > 0.0 {
        let _ = writeln!(out, "parse      {:.1} ms ({:.0} MB/s)", s.parse_ms, mb(s.json_bytes) / (s.parse_ms / 1000.0));
    }
    let _ = writeln!(out, "truncated  {}", s.truncated);
    about_text(&mut out, &s.about);
    counts_text(&mut out, "phases", &s.phases);
    counts_text(&mut out, "categories", &s.categories);
    let _ = writeln!(out, "\nprocesses:");
    for p in &s.processes {
        let _ = writeln!(out, "  [{}] pid {:?} {:?}", p.kind, p.pid, p.name);
        let tids: Vec<String> = p.lanes.iter().map(|l| format!("{:?}", l.tid)).collect();
        let names: Vec<String> = p.lanes.iter().map(|l| format!("{:?}", l.name)).collect();
        let (tid_w, name_w) = (widest(&tids), widest(&names));
        for ((lane, tid), name) in p.lanes.iter().zip(&tids).zip(&names) {
            let _ = writeln!(out, "      tid {tid:<tid_w$} {name:<name_w$} {:>9} slices, {} rows", lane.slices, lane.depth);
        }
    }
    health_text(&mut out, &s.health);
    if !s.warnings.is_empty() {
        let _ = writeln!(out, "\nwarnings:");
        for w in &s.warnings {
            let _ = writeln!(out, "  {w}");
        }
    }
    out
}

/// A "title:" block of quoted names and counts, the counts in one column.
fn counts_text<'a>(out: &mut String, title: &str, counts: impl IntoIterator<Item = (&'a String, &'a u64)>) {
    use std::fmt::Write as _;
    // `{:<w?}` does not pad a Debug string, so names are quoted first and padded as text.
    let rows: Vec<(String, u64)> = counts.into_iter().map(|(k, v)| (format!("{k:?}"), *v)).collect();
    let names: Vec<String> = rows.iter().map(|(k, _)| k.clone()).collect();
    let w = widest(&names);
    let _ = writeln!(out, "\n{title}:");
    for (k, v) in &rows {
        let _ = writeln!(out, "  {k:<w$} {v:>10}");
    }
}

/// The widest of `cells`, in characters.
fn widest(cells: &[String]) -> usize {
    cells.iter().map(|c| c.chars().count()).max().unwrap_or(0)
}

/// The "health" section of [`text`]: one line per check, count of checked, share, examples.
fn health_text(out: &mut String, h: &HealthSummary) {
    use std::fmt::Write as _;
    let line = |out: &mut String, label: &str, c: &HealthCheck, extra: String| {
        let share = if c.of == 0 { 0.0 } else { 100.0 * c.count as f64 / c.of as f64 };
        let _ = write!(out, "  {label:<34} {:>8} of {:<8} ({share:.1}%)", c.count, c.of);
        if !c.examples.is_empty() {
            let ids: Vec<String> = c.examples.iter().map(u32::to_string).collect();
            let _ = write!(out, "  e.g. slices {}", ids.join(", "));
        }
        let _ = writeln!(out, "{extra}");
    };
    let _ = writeln!(out, "\nhealth:");
    line(out, "launch calls without activity", &h.launches_without_activity, String::new());
    line(out, "device activities without launch", &h.activities_without_launch, String::new());
    let window = h.window_us.map_or(String::from("  (no host events)"), |(a, b)| format!("  window {a:.3}..{b:.3} µs"));
    line(out, "outside the capture window", &h.outside_window, window);
    let most = if h.stream_overlaps.count > 0 { format!("  largest {:.3} µs", h.max_overlap_us) } else { String::new() };
    line(out, "overlapping on their stream", &h.stream_overlaps, most);
    let offset = h.clock_offset_us.map_or(String::new(), |o| format!("  clock offset >= {o:.3} µs"));
    line(out, "starting before their launch call", &h.before_launch, offset);
    let _ = writeln!(out, "  {:<34} {}", "truncated", h.truncated);
    let skipped: Vec<String> = h.skipped.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let _ = writeln!(out, "  {:<34} {}", "skipped by the parse", if skipped.is_empty() { "none".to_string() } else { skipped.join(", ") });
}
