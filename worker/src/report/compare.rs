//! A [`Comparison`] as a short text report (`kinetoscope diff`) and as its `--json` form.
//!
//! Text, within [`WIDTH`] columns: the two files, the verdict (wrapped at its `; ` parts),
//! the summary table with deltas, the top op changes, the top kernel changes, the changed
//! modules in tree order, then the rows that appeared or disappeared. Tables show rows in the order given: the caller sorts them
//! ([`crate::compare::sort_rows`]). Times use `report`'s format; deltas carry a sign.
//!
//! JSON keys (stable API, README): `base` / `candidate` {`file`, `steps`}, `per_step`,
//! `by_shape`, `verdict` {`text`, `metric`, `base`, `candidate`, `rel_delta`, `base_bound`,
//! `candidate_bound`, `same_run`: null or {`base_rank`, `candidate_rank`, `world_size`,
//! `backend`}}, `summary[]` {`key`, `label`, `unit`, `base`, `candidate`, `delta`,
//! `rel_delta`}, `ops[]` {`name`, `input_shapes`, `is_annotation`, `status`, `calls`,
//! `self_cpu_us`, `self_device_us`, `device_total_us`}, `kernels[]` {`name`, `status`,
//! `tensor_cores`, `calls`, `total_us`, `mean_us`}, `modules[]` {`path`, `depth`, `status`,
//! `calls`, `host_us`, `device_us`, `backward_device_us`} in tree order; every column is
//! {`base`, `candidate`, `delta`, `ratio`}. Times are µs, rates percent, memory bytes.

use super::memory::bytes;
use super::{cut, printable, time, WIDTH};
use crate::compare::verdict::signed_time;
use crate::compare::{
    Comparison, DiffRow, KernelDiffRow, ModuleDiffRow, OpColumn, OpDiffRow, Pair, Status, SummaryRow, Unit,
};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Names and step counts of the two traces, for the report's head.
#[derive(Clone, Copy, Debug)]
pub struct Files<'a> {
    /// Baseline file name.
    pub base: &'a str,
    /// Candidate file name.
    pub cand: &'a str,
}

fn title(out: &mut String, title: &str) {
    let _ = writeln!(
        out,
        "==== {title} {}",
        "=".repeat(WIDTH.saturating_sub(title.chars().count() + 6))
    );
}

/// A count or a per-step count: integral values without decimals.
pub(super) fn count(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

pub(super) fn ratio(p: Pair) -> String {
    p.ratio()
        .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x"))
}

/// A value of `unit`; `-` when missing.
pub(super) fn value(unit: Unit, v: Option<f64>) -> String {
    match (unit, v) {
        (_, None) => "-".to_owned(),
        (Unit::Ns, Some(v)) => time(v.round() as i64),
        (Unit::Pct, Some(v)) => format!("{v:.2} %"),
        (Unit::Bytes, Some(v)) => bytes(v.round() as i64),
        (Unit::Count, Some(v)) => count(v),
    }
}

/// A delta of `unit` with its sign.
pub(super) fn delta(unit: Unit, d: Option<f64>) -> String {
    match (unit, d) {
        (_, None) => "-".to_owned(),
        (Unit::Ns, Some(d)) => signed_time(d),
        (Unit::Pct, Some(d)) => format!("{d:+.2} pp"),
        (Unit::Bytes, Some(d)) if d >= 0.0 => format!("+{}", bytes(d.round() as i64)),
        (Unit::Bytes, Some(d)) => bytes(d.round() as i64),
        (Unit::Count, Some(d)) if d >= 0.0 => format!("+{}", count(d)),
        (Unit::Count, Some(d)) => count(d),
    }
}

/// The verdict wrapped at its `; ` parts so lines fit [`WIDTH`].
fn verdict_lines(out: &mut String, text: &str) {
    let mut line = "Verdict: ".to_owned();
    let mut first = true;
    for part in text.split("; ") {
        let part = printable(part);
        let sep = if first { "" } else { "; " };
        if !first && line.chars().count() + sep.len() + part.chars().count() > WIDTH {
            let _ = writeln!(out, "{line};");
            line = " ".repeat(9);
        } else {
            line.push_str(sep);
        }
        line.push_str(&cut(&part, WIDTH - 9));
        first = false;
    }
    let _ = writeln!(out, "{line}\n");
}

fn summary_text(out: &mut String, rows: &[SummaryRow]) {
    title(out, "Summary");
    let rule = "-".repeat(WIDTH);
    let _ = writeln!(
        out,
        "{rule}\n{:<30} {:>16} {:>16} {:>16} {:>10}\n{rule}",
        "Metric", "Base", "Candidate", "Delta", "Change"
    );
    for r in rows {
        let unit = r.metric.unit();
        let rel = r
            .rel_delta
            .map_or_else(|| "-".to_owned(), |v| format!("{:+.1}%", v * 100.0));
        let _ = writeln!(
            out,
            "{:<30} {:>16} {:>16} {:>16} {:>10}",
            r.metric.label(),
            value(unit, r.base),
            value(unit, r.cand),
            delta(unit, r.delta),
            rel
        );
    }
    let _ = writeln!(out, "{rule}\n");
}

/// Cell filter for one side: the cell, or `-` when the row is missing from that side.
#[derive(Clone, Copy)]
struct Side(bool);

impl Side {
    fn cell(self, s: String) -> String {
        if self.0 {
            s
        } else {
            "-".to_owned()
        }
    }
}

/// The base and candidate [`Side`]s of a row with `status`.
fn sides(status: Status) -> (Side, Side) {
    (
        Side(status != Status::Appeared),
        Side(status != Status::Disappeared),
    )
}

/// Writes the name cell; a name longer than `w` goes on its own line first.
fn name_cell(out: &mut String, name: &str, w: usize) {
    let name = printable(name);
    if name.chars().count() > w {
        let _ = writeln!(out, "{}", cut(&name, WIDTH));
        let _ = write!(out, "{:<w$}", "");
    } else {
        let _ = write!(out, "{name:<w$}");
    }
}

/// The op rows with `headline`'s base / candidate / delta / ratio, calls and two more deltas.
fn ops_text(out: &mut String, c: &Comparison, rows: &[&OpDiffRow], o: &TextOptions) {
    let headline = o.headline;
    let others: Vec<OpColumn> = [
        OpColumn::SelfCpu,
        OpColumn::SelfDevice,
        OpColumn::DeviceTotal,
    ]
    .into_iter()
    .filter(|&k| k != headline)
    .take(2)
    .collect();
    let mut heads: Vec<(String, usize)> = vec![
        ("Status".into(), 11),
        ("Base".into(), 9),
        ("Cand".into(), 9),
        ("Delta".into(), 10),
        ("Ratio".into(), 6),
        ("Calls B".into(), 7),
        ("Calls C".into(), 7),
    ];
    heads.extend(others.iter().map(|k| (format!("Δ {}", k.label()), 12)));
    let shapes = if c.by_shape { ", by input shape" } else { "" };
    let unit = if c.per_step { "per step" } else { "totals" };
    let h = headline.label();
    let caption = format!("Top op changes ({unit}{shapes}; Base/Cand/Delta/Ratio: {h}; order: {})", o.op_order);
    let name_w = table_head(out, &caption, "Name", &heads);
    let cell = |k: OpColumn, v: f64| match k {
        OpColumn::Calls => count(v),
        _ => time(v.round() as i64),
    };
    let dcell = |k: OpColumn, d: f64| match k {
        OpColumn::Calls => delta(Unit::Count, Some(d)),
        _ => signed_time(d),
    };
    for r in rows {
        let p = r.pair(headline);
        let (on_base, on_cand) = sides(r.status);
        let mut cells = vec![
            r.status.key().to_owned(),
            on_base.cell(cell(headline, p.base)),
            on_cand.cell(cell(headline, p.cand)),
            dcell(headline, p.delta()),
            ratio(p),
            on_base.cell(count(r.calls.base)),
            on_cand.cell(count(r.calls.cand)),
        ];
        cells.extend(others.iter().map(|&k| dcell(k, r.pair(k).delta())));
        let label = if c.by_shape && !r.input_shapes.is_empty() {
            format!("{} {}", r.name, r.input_shapes)
        } else {
            r.name.clone()
        };
        name_cell(out, &label, name_w);
        table_cells(out, &cells, &heads);
    }
    table_end(out);
}

fn kernels_text(out: &mut String, rows: &[&KernelDiffRow], unit: &str, order: &str) {
    const HEADS: [(&str, usize); 10] = [
        ("Status", 11),
        ("Calls B", 7),
        ("Calls C", 7),
        ("Total B", 9),
        ("Total C", 9),
        ("Δ Total", 10),
        ("Ratio", 6),
        ("Mean B", 9),
        ("Mean C", 9),
        ("TC", 3),
    ];
    let name_w = table_head(out, &format!("Top kernel changes ({unit}; order: {order})"), "Name", &HEADS);
    for r in rows {
        let (b, c) = sides(r.status);
        let t = |v: f64| time(v.round() as i64);
        let cells = [
            r.status.key().to_owned(),
            b.cell(count(r.calls.base)),
            c.cell(count(r.calls.cand)),
            b.cell(t(r.total_ns.base)),
            c.cell(t(r.total_ns.cand)),
            signed_time(r.total_ns.delta()),
            ratio(r.total_ns),
            b.cell(t(r.mean_ns.base)),
            c.cell(t(r.mean_ns.cand)),
            if r.tensor_cores { "yes" } else { "no" }.to_owned(),
        ];
        name_cell(out, &r.name, name_w);
        table_cells(out, &cells, &HEADS);
    }
    table_end(out);
}

/// A fixed-width table's title, rule, header (`name` left, `heads` right-aligned in their widths)
/// and rule; returns the name column's width (what [`WIDTH`] leaves).
fn table_head<T: AsRef<str>>(out: &mut String, caption: &str, name: &str, heads: &[(T, usize)]) -> usize {
    let fixed: usize = heads.iter().map(|(_, w)| w + 1).sum();
    let name_w = WIDTH.saturating_sub(fixed).max(8);
    title(out, caption);
    let rule = "-".repeat(WIDTH);
    let mut header = format!("{name:<name_w$}");
    for (t, w) in heads {
        let _ = write!(header, " {:>w$}", t.as_ref());
    }
    let _ = writeln!(out, "{rule}\n{header}\n{rule}");
    name_w
}

/// One row's cells after its name, right-aligned in `heads`' widths, and the line's end.
fn table_cells<T>(out: &mut String, cells: &[String], heads: &[(T, usize)]) {
    for (v, (_, w)) in cells.iter().zip(heads) {
        let _ = write!(out, " {v:>w$}");
    }
    out.push('\n');
}

/// The closing rule of a [`table_head`] table.
fn table_end(out: &mut String) {
    let _ = writeln!(out, "{}\n", "-".repeat(WIDTH));
}

/// The value of a row's present side: the candidate's when it appeared, else the base's.
fn present(status: Status, p: Pair) -> f64 {
    if status == Status::Appeared {
        p.cand
    } else {
        p.base
    }
}

/// Lines `+ op aten::foo  calls 2, Self CPU ..., Self CUDA ...` for rows on one side only,
/// with the values of the side that has them.
fn appeared_text(out: &mut String, c: &Comparison, unit: &str, top: usize) {
    let one_side = |s: Status| matches!(s, Status::Appeared | Status::Disappeared);
    let t = |v: f64| time(v.round() as i64);
    let ops = c
        .ops
        .iter()
        .filter(|r| one_side(r.status))
        .take(top)
        .map(|r| {
            let v = |p: Pair| present(r.status, p);
            let values = format!(
                "calls {}{unit}, Self CPU {}{unit}, Self CUDA {}{unit}",
                count(v(r.calls)),
                t(v(r.self_cpu_ns)),
                t(v(r.self_device_ns))
            );
            (r.status, "op", r.name.as_str(), values)
        });
    let kernels = c
        .kernels
        .iter()
        .filter(|r| one_side(r.status))
        .take(top)
        .map(|r| {
            let v = |p: Pair| present(r.status, p);
            let values = format!(
                "calls {}{unit}, total {}{unit}, mean {}",
                count(v(r.calls)),
                t(v(r.total_ns)),
                t(v(r.mean_ns))
            );
            (r.status, "kernel", r.name.as_str(), values)
        });
    let lines: Vec<_> = ops.chain(kernels).collect();
    if lines.is_empty() {
        return;
    }
    title(out, "Appeared (+) and disappeared (-)");
    for (status, kind, name, values) in lines {
        let sign = if status == Status::Appeared { '+' } else { '-' };
        let name_w = WIDTH.saturating_sub(values.chars().count() + 10).max(8);
        let _ = writeln!(
            out,
            "{sign} {kind:<6} {:<name_w$} {values}",
            cut(&printable(name), name_w)
        );
    }
    out.push('\n');
}

/// How the text report shows the tables.
#[derive(Clone, Debug)]
pub struct TextOptions {
    /// The op column whose base / candidate / delta / ratio the op table shows.
    pub headline: OpColumn,
    /// How the op rows are ordered, for the title (`|Δ Self CUDA| descending`).
    pub op_order: String,
    /// How the kernel rows are ordered, for the title.
    pub kernel_order: String,
    /// At most this many rows per table and per appeared / disappeared list.
    pub top: usize,
}

/// The text report of `c`, rows in their current order (see [`TextOptions`]).
pub fn comparison_text(c: &Comparison, files: Files<'_>, o: &TextOptions) -> String {
    let mut out = String::new();
    title(&mut out, "kinetoscope diff");
    let _ = writeln!(
        out,
        "Base:      {} ({} steps)",
        printable(files.base),
        c.base_steps
    );
    let _ = writeln!(
        out,
        "Candidate: {} ({} steps)",
        printable(files.cand),
        c.cand_steps
    );
    let unit = if c.per_step { "per step" } else { "totals" };
    let _ = writeln!(out, "Op and kernel values: {unit}\n");
    verdict_lines(&mut out, &c.verdict.text);
    summary_text(&mut out, &c.summary);
    let ops: Vec<&OpDiffRow> = c.ops.iter().take(o.top).collect();
    ops_text(&mut out, c, &ops, o);
    let kernels: Vec<&KernelDiffRow> = c.kernels.iter().take(o.top).collect();
    if !kernels.is_empty() {
        kernels_text(&mut out, &kernels, unit, &o.kernel_order);
    }
    let changed: Vec<&ModuleDiffRow> = c.modules.iter().filter(|r| r.status != Status::Same).take(o.top).collect();
    if !changed.is_empty() {
        modules_text(&mut out, &changed, unit);
    }
    let suffix = if c.per_step { "/step" } else { "" };
    appeared_text(&mut out, c, suffix, o.top);
    out
}

/// The changed `nn.Module` rows in tree order, indented by depth: calls, host and device time.
fn modules_text(out: &mut String, rows: &[&ModuleDiffRow], unit: &str) {
    const HEADS: [(&str, usize); 8] = [
        ("Status", 11),
        ("Calls B", 7),
        ("Calls C", 7),
        ("Host B", 9),
        ("Host C", 9),
        ("Δ Host", 10),
        ("Device B", 9),
        ("Δ Device", 10),
    ];
    let name_w = table_head(out, &format!("Module changes ({unit}; tree order, changed rows)"), "Module", &HEADS);
    for r in rows {
        let (b, c) = sides(r.status);
        let t = |v: f64| time(v.round() as i64);
        let cells = [
            r.status.key().to_owned(),
            b.cell(count(r.calls.base)),
            c.cell(count(r.calls.cand)),
            b.cell(t(r.host_ns.base)),
            c.cell(t(r.host_ns.cand)),
            signed_time(r.host_ns.delta()),
            b.cell(t(r.device_ns.base)),
            signed_time(r.device_ns.delta()),
        ];
        let name = format!("{}{}", "  ".repeat(usize::from(r.depth)), r.name());
        let _ = write!(out, "{:<name_w$}", cut(&printable(&name), name_w));
        table_cells(out, &cells, &HEADS);
    }
    table_end(out);
}

fn pair_json(p: Pair, scale: f64) -> Value {
    json!({
        "base": p.base / scale,
        "candidate": p.cand / scale,
        "delta": p.delta() / scale,
        "ratio": p.ratio(),
    })
}

/// A summary value in its JSON unit (µs for times).
fn summary_value(unit: Unit, v: Option<f64>) -> Option<f64> {
    v.map(|v| if unit == Unit::Ns { v / 1000.0 } else { v })
}

/// The `--json` document of `kinetoscope diff` (keys in the module docs).
pub fn comparison_json(c: &Comparison, files: Files<'_>) -> Value {
    let unit_key = |u: Unit| match u {
        Unit::Ns => "us",
        Unit::Pct => "pct",
        Unit::Bytes => "bytes",
        Unit::Count => "count",
    };
    let summary: Vec<Value> = c
        .summary
        .iter()
        .map(|r| {
            let u = r.metric.unit();
            json!({
                "key": r.metric.key(),
                "label": r.metric.label(),
                "unit": unit_key(u),
                "base": summary_value(u, r.base),
                "candidate": summary_value(u, r.cand),
                "delta": summary_value(u, r.delta),
                "rel_delta": r.rel_delta,
            })
        })
        .collect();
    let v = &c.verdict;
    let mu = v.metric.unit();
    json!({
        "base": {"file": files.base, "steps": c.base_steps},
        "candidate": {"file": files.cand, "steps": c.cand_steps},
        "per_step": c.per_step,
        "by_shape": c.by_shape,
        "verdict": {
            "text": v.text,
            "metric": v.metric.key(),
            "base": summary_value(mu, v.base),
            "candidate": summary_value(mu, v.cand),
            "rel_delta": v.rel_delta,
            "base_bound": v.base_bound.kind.label(),
            "candidate_bound": v.cand_bound.kind.label(),
            "same_run": v.same_run.as_ref().map(|r| json!({
                "base_rank": r.base_rank,
                "candidate_rank": r.cand_rank,
                "world_size": r.world_size,
                "backend": r.backend,
            })),
        },
        "summary": summary,
        "ops": c.ops.iter().map(|r| json!({
            "name": r.name,
            "input_shapes": r.input_shapes,
            "is_annotation": r.is_annotation,
            "status": r.status.key(),
            "calls": pair_json(r.calls, 1.0),
            "self_cpu_us": pair_json(r.self_cpu_ns, 1000.0),
            "self_device_us": pair_json(r.self_device_ns, 1000.0),
            "device_total_us": pair_json(r.device_total_ns, 1000.0),
        })).collect::<Vec<_>>(),
        "kernels": c.kernels.iter().map(|r| json!({
            "name": r.name,
            "status": r.status.key(),
            "tensor_cores": r.tensor_cores,
            "calls": pair_json(r.calls, 1.0),
            "total_us": pair_json(r.total_ns, 1000.0),
            "mean_us": pair_json(r.mean_ns, 1000.0),
        })).collect::<Vec<_>>(),
        "modules": c.modules.iter().map(|r| json!({
            "path": r.path,
            "depth": r.depth,
            "status": r.status.key(),
            "calls": pair_json(r.calls, 1.0),
            "host_us": pair_json(r.host_ns, 1000.0),
            "device_us": pair_json(r.device_ns, 1000.0),
            "backward_device_us": pair_json(r.backward_device_ns, 1000.0),
        })).collect::<Vec<_>>(),
    })
}
