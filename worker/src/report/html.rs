//! `kinetoscope report --format html` and the page's **Export report**: one self-contained HTML
//! file (inline stylesheet, inline SVG charts, no script, no fetch) with the summary, the
//! explanation of a step, the findings with their evidence, charts, the op, kernel, step and
//! module tables of a [`TraceReport`], and a flame graph of the call tree.
//!
//! Output: a `String` of HTML5. Numbers are the ones `report --json` holds: every number cell
//! carries its JSON value in `data-us` (µs) or `data-n` (counts), so tests and scripts compare
//! exactly while people read PyTorch's units.
//!
//! **Untrusted text.** Op, kernel, step and lane names come from the trace; every one goes
//! through [`escape`] (text and attribute values alike) and links are built only from the
//! caller's viewer URL plus a percent-encoded fragment, so a name holding `<script>` is text.
//!
//! **Links back.** With a viewer URL (the address that opens this trace in the viewer,
//! `?url=...`), findings, evidence slices and steps link to that view, using the share-link
//! fragment keys of docs/deploy.md#share-links (`t`, `sel`, `tab`, `scope`, `finding`).
//! Without one the file has no link at all.
//!
//! Styling: CSS variables for a light palette, swapped under `prefers-color-scheme: dark` and
//! forced back to black on white under `@media print` (tables keep their rows whole on a page).
//! The charts are [`svg`]'s and the flame graph [`flame`]'s, styled by the same classes.

pub mod flame;
pub mod svg;

use super::trace::TraceReport;
use super::{cut, SortKey};
use crate::text::span;
use crate::analysis::breakdown::CATEGORIES;
use crate::analysis::explain::{sentences, Explanation};
use crate::analysis::ops::us;
use crate::analysis::steps::step_name;
use crate::finding::Finding;
use crate::index::details::stable_key;
use std::fmt::Write as _;

/// Longest name in a table cell, in characters; the full name is the cell's `title`.
const NAME_CHARS: usize = 120;
/// Evidence slices listed per finding.
const EVIDENCE_ROWS: usize = 5;
/// Module rows listed (pre-order; the rest are counted).
const MODULE_ROWS: usize = 200;
/// Buckets of the GPU utilization and memory curves.
const CURVE_BUCKETS: u32 = 240;

/// `s` as HTML text or a quoted attribute value: `& < > " '` as entities, control characters
/// other than tab and newline as spaces.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encodes a fragment value (RFC 3986 unreserved characters kept), as the page's
/// share links do.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Builds links into the viewer: the viewer URL (without any fragment) plus a view fragment.
struct Links<'a> {
    base: Option<&'a str>,
}

impl Links<'_> {
    /// `<a href="BASE#PAIRS">text</a>` (text already escaped), or the text alone without a base.
    fn to(&self, pairs: &[(&str, String)], text: &str) -> String {
        let Some(base) = self.base else {
            return text.to_owned();
        };
        let fragment: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
        let hash = if fragment.is_empty() { "" } else { "#" };
        format!("<a href=\"{}{hash}{}\">{text}</a>", escape(base), escape(&fragment.join("&")))
    }
}

/// The stylesheet: light palette, dark palette, print.
const STYLE: &str = "
:root{--bg:#fff;--fg:#1d2330;--muted:#5b6475;--line:#d9dde5;--card:#f5f7fa;--link:#1f5fbf;
--alert:#b42318;--warn:#a15c00;--info:#2f6f4f;
--k0:#4e79a7;--k1:#f28e2b;--k2:#edc948;--k3:#e15759;--k4:#76b7b2;--k5:#b07aa1;--k6:#59a14f;--k7:#bab0ac}
@media (prefers-color-scheme:dark){:root{--bg:#15181e;--fg:#e4e7ee;--muted:#9aa3b5;--line:#343a46;
--card:#1e222b;--link:#7fb0ff;--alert:#ff8a80;--warn:#ffc46b;--info:#8fd6a8;
--k0:#6d9bd1;--k1:#ffa552;--k2:#f5d76e;--k3:#ff7b7d;--k4:#8fd3cc;--k5:#cf9ac3;--k6:#7cc36f;--k7:#a39b97}}
@media print{:root{--bg:#fff;--fg:#000;--muted:#333;--line:#999;--card:#fff;--link:#000}
a{text-decoration:none}tr,figure,.finding{break-inside:avoid}h2{break-after:avoid}}
body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;
margin:0 auto;max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:0 0 6px}section{overflow-x:auto}a{color:var(--link)}.muted,.legend{color:var(--muted)}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{padding:3px 8px;border-bottom:1px solid var(--line);
text-align:left;vertical-align:top}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{word-break:break-all;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.finding{background:var(--card);border-left:4px solid var(--muted);padding:8px 12px;margin:8px 0}
.finding.alert{border-color:var(--alert)}.finding.warn{border-color:var(--warn)}.finding.info{border-color:var(--info)}
.sev{font-weight:600;text-transform:uppercase;font-size:12px}.alert .sev{color:var(--alert)}
.warn .sev{color:var(--warn)}.info .sev{color:var(--info)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0}dt{color:var(--muted)}dd{margin:0}
figure{margin:12px 0}figcaption{font-weight:600}svg.chart{width:100%;height:auto;display:block}
svg text{font-size:11px}.ink{fill:var(--muted)}.grid{stroke:var(--line);stroke-width:1}
.line{fill:none;stroke-width:1.5}
.flame rect{stroke:var(--bg);stroke-width:.5}.flame text{fill:#111;font-size:11px}
.legend span{margin-right:12px;white-space:nowrap}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
";

/// Category and series colors: `.kN` fills bars and legend boxes, `.sN` strokes lines.
fn palette_css() -> String {
    let mut css = String::new();
    for n in 0..8 {
        let _ = write!(css, ".k{n}{{fill:var(--k{n});background:var(--k{n})}}.s{n}{{stroke:var(--k{n});background:var(--k{n})}}");
    }
    css
}

/// A number cell: the text people read, and the JSON value in `data-us`.
fn us_cell(ns: i64) -> String {
    format!("<td class=\"n\" data-us=\"{}\">{}</td>", us(ns), span(ns))
}

/// A count cell.
fn n_cell(n: impl std::fmt::Display) -> String {
    format!("<td class=\"n\" data-n=\"{n}\">{n}</td>")
}

/// A name cell, cut for the eye, whole in `title` and `data-name`.
fn name_cell(name: &str) -> String {
    let full = escape(name);
    format!("<td class=\"name\" title=\"{full}\" data-name=\"{full}\">{}</td>", escape(&cut(name, NAME_CHARS)))
}

/// A header row; number columns are right-aligned.
fn head(cells: &[(&str, bool)]) -> String {
    let mut out = String::from("<thead><tr>");
    for (h, number) in cells {
        let _ = write!(out, "<th{}>{}</th>", if *number { " class=\"n\"" } else { "" }, escape(h));
    }
    out + "</tr></thead>"
}

/// The whole-trace report of `session` as the page exports it and `report --format html`
/// prints it by default: top 20 rows per table, the slowest complete step explained (no such
/// section without complete steps), links back to `viewer_url` when given.
pub fn export(session: &crate::session::Session, viewer_url: Option<&str>) -> String {
    let options = super::trace::ReportOptions::default();
    let explanation = session.explain(crate::analysis::explain::Which::Slowest).ok();
    TraceReport::build(session, options).html(explanation.as_ref(), viewer_url)
}

impl TraceReport<'_> {
    /// The report as one self-contained HTML file; `explanation` adds a "why is this step slow"
    /// section, `viewer_url` (the address opening this trace in the viewer) adds links back.
    pub fn html(&self, explanation: Option<&Explanation>, viewer_url: Option<&str>) -> String {
        let links = Links { base: viewer_url.map(|u| u.split('#').next().unwrap_or(u)) };
        let name = escape(self.session.name());
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
             <meta name=\"color-scheme\" content=\"light dark\">\
             <title>Kinetoscope report: {name}</title><style>{STYLE}{}</style></head><body>\n\
             <header><h1>Kinetoscope report</h1><p class=\"muted\"><span id=\"trace-name\">{name}</span>",
            palette_css()
        );
        if viewer_url.is_some() {
            let _ = write!(out, " · {}", links.to(&[], "open in the viewer"));
        }
        out.push_str("</p></header>\n");
        out.push_str(&self.summary_html());
        if let Some(e) = explanation {
            out.push_str(&explanation_html(e, &links));
        }
        out.push_str(&self.findings_html(&links));
        out.push_str(&self.charts_html());
        out.push_str(&self.ops_html());
        out.push_str(&self.kernels_html());
        out.push_str(&self.steps_html(&links));
        out.push_str(&self.modules_html());
        out.push_str(&self.flame_html());
        let _ = write!(
            out,
            "<footer class=\"muted\"><p>Written by kinetoscope {}; definitions: docs/definitions.md in the Kinetoscope repository.</p></footer>\n</body></html>\n",
            env!("CARGO_PKG_VERSION")
        );
        out
    }

    fn summary_html(&self) -> String {
        let ops = &self.ops;
        let mut rows: Vec<(&str, String)> = Vec::new();
        if let Some((t0, t1)) = self.options.range {
            rows.push(("Range", format!("<td class=\"n\">{} - {}</td>", span(t0), span(t1))));
        }
        rows.push(("Self CPU time total", us_cell(ops.self_cpu_total_ns)));
        rows.push(("Self CUDA time total", us_cell(ops.self_device_total_ns)));
        rows.push(("Kernels (calls)", n_cell(self.kernels.calls)));
        rows.push(("Steps", n_cell(self.steps.steps.len())));
        if let Some(st) = &self.steps.stats {
            rows.push(("Step time (mean)", format!("<td class=\"n\" data-us=\"{}\">{}</td>", st.duration.mean / 1e3, span(st.duration.mean.round() as i64))));
            rows.push(("Step time (p95)", format!("<td class=\"n\" data-us=\"{}\">{}</td>", st.duration.p95 / 1e3, span(st.duration.p95.round() as i64))));
        }
        let mut gpu_rows = Vec::new();
        for g in &self.gpus {
            gpu_rows.push((format!("GPU {} utilization", g.device), format!("<td class=\"n\" data-pct=\"{}\">{:.2} %</td>", g.utilization * 100.0, g.utilization * 100.0)));
        }
        let mut out = String::from("<section id=\"summary\"><h2>Summary</h2><table class=\"kv\">");
        for (k, v) in rows.iter().map(|(k, v)| ((*k).to_owned(), v)).chain(gpu_rows.iter().map(|(k, v)| (k.clone(), v))) {
            let _ = write!(out, "<tr><th>{}</th>{v}</tr>", escape(&k));
        }
        out + "</table></section>\n"
    }

    fn findings_html(&self, links: &Links) -> String {
        let findings = self.session.findings();
        let mut out = format!("<section id=\"findings\"><h2>Findings ({})</h2>", findings.len());
        if findings.is_empty() {
            out.push_str("<p>No finding.</p>");
        }
        for f in findings {
            out.push_str(&self.finding_html(f, links));
        }
        out + "</section>\n"
    }

    fn finding_html(&self, f: &Finding, links: &Links) -> String {
        let trace = self.session.trace();
        let sev = f.severity.as_str();
        let title = links.to(&[("tab", "findings".into()), ("finding", f.rule.into())], &escape(&f.title));
        let mut out = format!(
            "<article class=\"finding {sev}\" data-rule=\"{}\"><h3><span class=\"sev\">{sev}</span> {} · {title}</h3><dl>\
             <dt>Why</dt><dd>{}</dd><dt>Means</dt><dd>{}</dd><dt>Try</dt><dd>{}</dd>",
            escape(f.rule),
            escape(f.rule),
            escape(&f.why),
            escape(&f.meaning),
            escape(&f.try_this)
        );
        let e = &f.evidence;
        let range = e.range_ns.map(|(a, b)| format!(", {} - {}", span(a), span(b))).unwrap_or_default();
        let _ = write!(out, "<dt>Evidence</dt><dd><span data-n=\"{}\">{}</span> slices on {} lanes{range}", e.total, e.total, e.lanes.len());
        if !e.slices.is_empty() {
            out.push_str("<table class=\"evidence\">");
            out.push_str(&head(&[("Slice", false), ("Start", true), ("Duration", true)]));
            for &id in e.slices.iter().take(EVIDENCE_ROWS) {
                let s = &trace.slices;
                let (Some(&start), Some(&dur), Some(&name)) = (s.start_ns.get(id as usize), s.dur_ns.get(id as usize), s.name.get(id as usize)) else {
                    continue;
                };
                let name = trace.strings.get(name);
                let text = escape(&cut(&name, NAME_CHARS));
                let cell = match stable_key(trace, id) {
                    Some(k) => links.to(&slice_view(start, dur, &k), &text),
                    None => text,
                };
                let _ = write!(out, "<tr><td class=\"name\">{cell}</td>{}{}</tr>", us_cell(start), us_cell(dur));
            }
            out.push_str("</table>");
        }
        out + "</dd></dl></article>"
    }

    fn charts_html(&self) -> String {
        let trace = self.session.trace();
        let window = self.options.range.unwrap_or((0, trace.end_ns));
        let set = crate::answer::counters::counters(self.session.gpu(), &self.memory, window, CURVE_BUCKETS);
        let charts = [
            ("chart-steps", "Step time by category", svg::step_bars(&self.steps, |n| step_name(trace, n))),
            (
                "chart-gpu",
                "GPU utilization",
                svg::counter_lines(&set, |m| m == "utilization", 100.0, Some(100.0), "GPU utilization (%)", |v| format!("{v:.0} %")),
            ),
            (
                "chart-memory",
                "Allocated memory",
                svg::counter_lines(&set, |m| m == "memory", 1e-6, None, "Allocated memory (MB)", |v| format!("{v:.0} MB")),
            ),
        ];
        let mut out = String::from("<section id=\"charts\"><h2>Charts</h2>");
        for (id, caption, chart) in charts {
            let body = chart.unwrap_or_else(|| "<p class=\"muted\">No data in this trace.</p>".to_owned());
            let _ = write!(out, "<figure id=\"{id}\"><figcaption>{caption}</figcaption>{body}</figure>");
        }
        out + "</section>\n"
    }

    fn ops_html(&self) -> String {
        let ops = &self.ops;
        let (key, by) = match self.options.sort {
            Some(key) => (key, format!("{key:?}")),
            None if ops.self_device_total_ns > 0 => (SortKey::SelfDevice, "Self CUDA".to_owned()),
            None => (SortKey::SelfCpu, "Self CPU".to_owned()),
        };
        let mut out = format!("<section id=\"ops\"><h2>Top ops (by {by})</h2><table id=\"ops-table\">");
        out.push_str(&head(&[("Name", false), ("Self CPU", true), ("CPU total", true), ("Self CUDA", true), ("CUDA total", true), ("# of Calls", true)]));
        for r in super::sorted(ops, key, self.options.top) {
            let name = if self.options.by_shape && !r.input_shapes.is_empty() { format!("{} {}", r.name, r.input_shapes) } else { r.name.clone() };
            let _ = write!(
                out,
                "<tr>{}{}{}{}{}{}</tr>",
                name_cell(&name),
                us_cell(r.self_cpu_ns),
                us_cell(r.cpu_total_ns),
                us_cell(r.self_device_ns),
                us_cell(r.device_total_ns),
                n_cell(r.calls)
            );
        }
        out + "</table></section>\n"
    }

    fn kernels_html(&self) -> String {
        if self.kernels.rows.is_empty() {
            return String::new();
        }
        let mut out = String::from("<section id=\"kernels\"><h2>Top kernels (by total time)</h2><table id=\"kernels-table\">");
        out.push_str(&head(&[("Kernel", false), ("Calls", true), ("Total", true), ("Share", true), ("Mean", true), ("Max", true), ("Launched by", false)]));
        for k in self.kernels.rows.iter().take(self.options.top) {
            let _ = write!(
                out,
                "<tr>{}{}{}<td class=\"n\" data-pct=\"{}\">{:.2} %</td><td class=\"n\" data-us=\"{}\">{}</td>{}<td class=\"name\">{}</td></tr>",
                name_cell(&k.name),
                n_cell(k.calls()),
                us_cell(k.total_ns),
                k.share * 100.0,
                k.share * 100.0,
                k.stats.mean / 1e3,
                span(k.stats.mean.round() as i64),
                us_cell(k.stats.max),
                k.top_op.as_ref().map_or_else(String::new, |o| escape(&cut(&o.name, NAME_CHARS)))
            );
        }
        out + "</table></section>\n"
    }

    fn steps_html(&self, links: &Links) -> String {
        let trace = self.session.trace();
        let mut out = String::from("<section id=\"steps\"><h2>Steps</h2>");
        if self.steps.steps.is_empty() {
            out.push_str(
                "<p>No ProfilerStep#N in this trace, so no step table, step breakdown or step rules. \
                 A repeating annotation can stand for the step: <code>kinetoscope report --step-marker NAME</code>.</p>",
            );
            let candidates = crate::analysis::steps::marker_candidates(trace, 5);
            if !candidates.is_empty() {
                out.push_str("<table id=\"step-candidates\">");
                out.push_str(&head(&[("Repeating annotation", false), ("Count", true)]));
                for (name, count) in &candidates {
                    let _ = write!(out, "<tr>{}{}</tr>", name_cell(name), n_cell(count));
                }
                out.push_str("</table>");
            }
            return out + "</section>\n";
        }
        out.push_str("<table id=\"steps-table\">");
        let mut cols = vec![("Step", false), ("CPU dur", true), ("GPU dur", true), ("Step dur", true)];
        cols.extend(CATEGORIES.iter().map(|c| (c.label(), true)));
        out.push_str(&head(&cols));
        for s in &self.steps.steps {
            let mark = if s.incomplete { " (incomplete)" } else { "" };
            let name = escape(&format!("{}{mark}", step_name(trace, s.number)));
            let view = [("t", format!("{},{}", s.start_ns, s.end_ns)), ("tab", "steps".into()), ("scope", format!("step:{}", s.number))];
            let _ = write!(
                out,
                "<tr data-step=\"{}\"><td>{}</td>{}{}{}",
                s.number,
                links.to(&view, &name),
                us_cell(s.cpu_dur_ns()),
                us_cell(s.gpu_dur_ns()),
                us_cell(s.dur_ns())
            );
            for c in CATEGORIES {
                out.push_str(&us_cell(s.breakdown.get(c)));
            }
            out.push_str("</tr>");
        }
        out + "</table></section>\n"
    }

    /// The `nn.Module` tree (calls starting in the report's range), indented by depth, in call
    /// order; nothing without `nn.Module` frames.
    fn modules_html(&self) -> String {
        let trace = self.session.trace();
        let m = crate::analysis::modules::analyze_in(trace, self.options.range);
        if m.rows.is_empty() {
            return String::new();
        }
        let mut out = String::from("<section id=\"modules\"><h2>Modules</h2><table id=\"modules-table\">");
        let mut cols = vec![("Module", false), ("Calls", true), ("Host total", true), ("Host self", true), ("Device total", true), ("Device self", true)];
        if m.backward_tied {
            cols.push(("Backward device", true));
        }
        out.push_str(&head(&cols));
        for r in m.rows.iter().take(MODULE_ROWS) {
            let s = &r.stats;
            // Indented with no-break spaces: the cell's font is monospace, and the file has no
            // style attribute (tests check that markup carries no styling or script).
            let indent = "\u{a0}\u{a0}".repeat(usize::from(r.depth));
            let name = escape(&cut(&r.label(trace), NAME_CHARS));
            let _ = write!(
                out,
                "<tr data-depth=\"{}\"><td class=\"name\">{indent}{name}</td>{}{}{}{}{}",
                r.depth,
                n_cell(s.occurrences),
                us_cell(s.host_ns),
                us_cell(s.self_host_ns),
                us_cell(s.device_ns),
                us_cell(s.self_device_ns)
            );
            if m.backward_tied {
                out.push_str(&us_cell(s.backward_device_ns));
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
        if m.rows.len() > MODULE_ROWS {
            let _ = write!(out, "<p class=\"muted\">{} more rows: <code>kinetoscope report --modules</code> lists them all.</p>", m.rows.len() - MODULE_ROWS);
        }
        out + "</section>\n"
    }

    /// The call tree of the report's range as a flame graph (nothing without host work).
    fn flame_html(&self) -> String {
        let trace = self.session.trace();
        let tree = crate::analysis::call_tree::build(trace, self.options.range);
        match flame::icicle(trace, &tree) {
            Some(svg) => format!("<section id=\"flame\"><h2>Flame graph</h2><figure id=\"flame-graph\">{svg}</figure></section>\n"),
            None => String::new(),
        }
    }
}

/// The view of one slice: a window around it and its selection by stable key.
fn slice_view(start: i64, dur: i64, k: &crate::index::details::StableKey) -> [(&'static str, String); 2] {
    let pad = (dur / 2).max(1_000);
    [
        ("t", format!("{},{}", start - pad, start + dur + pad)),
        ("sel", format!("{},{},{},{}", k.lane, k.start_ns, k.nth, k.name)),
    ]
}

/// "Why is this step slow": the sentences, then the categories, kernels and ops that changed.
fn explanation_html(e: &Explanation, links: &Links) -> String {
    let title = links.to(&[("tab", "steps".into()), ("scope", format!("step:{}", e.step))], &escape(&e.name));
    let mut out = format!("<section id=\"explanation\"><h2>Why is {title} slow</h2>");
    for s in sentences(e) {
        let _ = write!(out, "<p>{}</p>", escape(&s));
    }
    out.push_str("<table>");
    out.push_str(&head(&[("", false), ("Step", true), ("Median", true), ("Delta", true)]));
    let rows = e
        .categories
        .iter()
        .map(|c| (format!("category {}", c.category.label()), c.step_ns, c.median_ns, c.delta_ns()))
        .chain(e.kernels.iter().map(|i| (format!("kernel {}", i.name), i.step_ns, i.median_ns, i.delta_ns())))
        .chain(e.ops.iter().map(|i| (format!("op {}", i.name), i.step_ns, i.median_ns, i.delta_ns())));
    for (name, step, median, delta) in rows {
        let _ = write!(
            out,
            "<tr>{}{}<td class=\"n\" data-us=\"{}\">{}</td><td class=\"n\" data-us=\"{}\">{}{}</td></tr>",
            name_cell(&name),
            us_cell(step),
            median / 1e3,
            span(median.round() as i64),
            delta / 1e3,
            if delta >= 0.0 { "+" } else { "-" },
            span(delta.abs().round() as i64)
        );
    }
    out + "</table></section>\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_literal() {
        assert_eq!(escape("<script>alert('x')</script> & \"q\""), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
        assert_eq!(escape("a\u{0}b"), "a b");
    }

    #[test]
    fn links_encode_the_fragment_and_drop_an_old_one() {
        let links = Links { base: Some("https://v.example/?url=a.json") };
        assert_eq!(
            links.to(&[("sel", "3,100,0,<x> y".into())], "t"),
            "<a href=\"https://v.example/?url=a.json#sel=3%2C100%2C0%2C%3Cx%3E%20y\">t</a>"
        );
        assert_eq!(Links { base: None }.to(&[("t", "1,2".into())], "t"), "t");
    }
}
