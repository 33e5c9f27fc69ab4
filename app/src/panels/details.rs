//! The details panel for the selected slice: name, category, lane, start, duration, self time,
//! every arg (grid, block, registers, shared memory, occupancy, input dims, correlation, ...),
//! parent and children, "launched by" / "launched" (the cudaLaunchKernel <-> kernel link, by
//! correlation or flow) and flows in and out. Every related slice is a link that selects it and
//! brings it into view.
//!
//! Test ids: `details-panel` (`data-slice` = selected id), `detail-name`, `detail-arg` rows
//! (`data-key`), `launched-by`, `launched`, `flow-in`, `flow-out`, `parent`, `child`, `enclosing-op`
//! (each a `slice-link` button with `data-slice`), `detail-source` (`data-file`; a Triton kernel
//! or op: its `kernel_file`) with `detail-source-link` (`href` = `?src=` base + path) and
//! `source-op`, `detail-graph` (`data-graph`, `data-node`; a CUDA graph node) with
//! `graph-launch` and `graph-arrows` (a checkbox: draw every dependency arrow of the node's graph
//! launch, `data-edges` = how many), `detail-work` (a kernel with known FLOPs or bytes: its
//! work op as `work-op`, rows `detail-work-row` with `data-key` = `flops`, `bytes`, `tflops`,
//! `gbps`, `peak_pct`, `bandwidth_pct`, `bound` and the raw number in `data-value`). Trace
//! text is always text, never HTML.

use crate::control::Controller;
use crate::state::format;
use leptos::prelude::*;
use protocol::{GraphNode, KernelSource, SliceDetails, SliceRef, SliceWork};

/// Shows the selected slice, or a hint when nothing is selected.
#[component]
pub fn DetailsPanel(ctl: Controller) -> impl IntoView {
    let selected = Memo::new(move |_| ctl.timeline.with(|t| t.selected.clone()));
    view! {
        <aside class="details card" data-testid="details-panel"
            data-slice=move || selected.get().map(|d| d.slice.id.to_string())>
            {move || match selected.get() {
                Some(d) => details_view(ctl, d).into_any(),
                None => view! {
                    <p class="muted">"Click a slice to see its args, its parent and children, and what launched it. Shift-drag to measure a range; press ? for keys."</p>
                }.into_any(),
            }}
        </aside>
    }
}

fn details_view(ctl: Controller, d: SliceDetails) -> impl IntoView {
    let s = &d.slice;
    let facts = [
        ("Category", d.cat.clone()),
        ("Lane", d.lane_name.clone()),
        ("Start", format::span_us(s.start_ns as f64 / 1e3)),
        ("Duration", format::span_us(s.dur_ns as f64 / 1e3)),
        ("Self time", format::span_us(d.self_ns as f64 / 1e3)),
    ]
    .into_iter()
    .map(|(k, v)| view! { <tr><th>{k}</th><td>{v}</td></tr> })
    .collect_view();
    let args = d
        .args
        .iter()
        .map(|(k, v)| {
            view! {
                <tr data-testid="detail-arg" data-key=k.clone()>
                    <th>{k.clone()}</th>
                    <td class="mono">{v.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    let one = |title: &'static str, id: &'static str, r: Option<SliceRef>| {
        r.map(|r| view! { <div class="rel"><h3>{title}</h3>{link(ctl, id, r)}</div> })
    };
    let many = |title: &'static str, id: &'static str, rs: Vec<SliceRef>, total: usize| {
        (!rs.is_empty()).then(|| {
            let more = (total > rs.len()).then(|| format!("… {} more", total - rs.len()));
            let items = rs.into_iter().map(|r| link(ctl, id, r)).collect_view();
            view! { <div class="rel"><h3>{title}</h3>{items}<span class="muted">{more}</span></div> }
        })
    };
    let launched_n = d.launched.len();
    let children_n = d.children_total as usize;
    let (flows_in_n, flows_out_n) = (d.flows_in.len(), d.flows_out.len());
    let graph = d.graph.clone().map(|g| graph_view(ctl, g));
    let source = d.source.clone().map(|src| source_view(ctl, src));
    let work = d.work.clone().map(|w| work_view(ctl, w));
    view! {
        <h2 data-testid="detail-name" class="mono">{s.name.clone()}</h2>
        <table class="facts">{facts}</table>
        {work}
        {source}
        {graph}
        {one("Launched by", "launched-by", d.launched_by.clone())}
        {many("Launched", "launched", d.launched.clone(), launched_n)}
        {one("Enclosing op", "enclosing-op", d.op.clone())}
        {one("Parent", "parent", d.parent.clone())}
        {many("Children", "child", d.children.clone(), children_n)}
        {many("Flows in", "flow-in", d.flows_in.clone(), flows_in_n)}
        {many("Flows out", "flow-out", d.flows_out.clone(), flows_out_n)}
        <h3>"Args"</h3>
        <table class="args">{args}</table>
    }
}

/// A kernel's CUDA graph: graph and node ids, and the graph launch with its kernel count. The
/// node's dependency arrows are its flows in and out, drawn on the timeline while it is selected;
/// on request, every arrow of its graph launch is drawn (`TimelineState::graph_arrows`).
fn graph_view(ctl: Controller, g: GraphNode) -> impl IntoView {
    let ids = match (g.graph_id, g.node_id) {
        (Some(graph), Some(node)) => format!("graph {graph}, node {node}"),
        (Some(graph), None) => format!("graph {graph}"),
        _ => "graph launch (no graph id in the trace)".to_owned(),
    };
    let launch = g.launch.map(|r| {
        let n = g.launch_kernels;
        view! { {link(ctl, "graph-launch", r)}<span class="muted">{format!(" launched {n} kernels")}</span> }
    });
    let total = g.edges_total;
    let arrows = (total > 0).then(|| {
        let drawn = g.edges.len();
        let label = if drawn < total as usize {
            format!(" Draw this launch's dependency arrows ({drawn} of {total})")
        } else {
            format!(" Draw this launch's {total} dependency arrows")
        };
        view! {
            <label class="toggle">
                <input type="checkbox" data-testid="graph-arrows" data-edges=total
                    prop:checked=move || ctl.timeline.with(|t| t.graph_arrows)
                    on:change=move |_| ctl.view(|t| t.graph_arrows = !t.graph_arrows) />
                {label}
            </label>
        }
    });
    view! {
        <div class="rel" data-testid="detail-graph" data-graph=g.graph_id data-node=g.node_id>
            <h3>"CUDA graph"</h3>
            <p>{ids}</p>
            {launch}
            {arrows}
        </div>
    }
}

/// A kernel's work (docs/definitions.md "Roofline"): FLOPs and bytes (its share of its work
/// op's), and the rates over this slice's duration; unknown values show "—".
fn work_view(ctl: Controller, w: SliceWork) -> impl IntoView {
    fn num(v: Option<f64>, text: impl Fn(f64) -> String) -> (Option<String>, String) {
        (v.map(|v| v.to_string()), v.map_or_else(|| "—".to_owned(), text))
    }
    let peak = w.peak.clone().unwrap_or_default();
    let rows = [
        ("flops", "FLOPs", num(w.flops, format::flops)),
        ("bytes", "Bytes", num(w.bytes, |b| format::bytes(b.max(0.0) as u64))),
        ("tflops", "TFLOP/s", num(w.tflops, format::rate)),
        ("peak_pct", "% of peak", num(w.peak_pct, |v| format!("{v:.1}% ({peak})"))),
        ("gbps", "GB/s", num(w.gbps, format::rate)),
        ("bandwidth_pct", "% of bandwidth", num(w.bandwidth_pct, |v| format!("{v:.1}%"))),
        ("bound", "Bound", (None, w.bound.clone().unwrap_or_else(|| "—".to_owned()))),
    ];
    let rows = rows
        .into_iter()
        .map(|(key, label, (value, text))| {
            view! { <tr data-testid="detail-work-row" data-key=key data-value=value><th>{label}</th><td>{text}</td></tr> }
        })
        .collect_view();
    let op = w.op.map(|r| link(ctl, "work-op", r));
    view! {
        <div class="rel" data-testid="detail-work">
            <h3>"Work"</h3>
            <table class="facts">{rows}</table>
            {op}
        </div>
    }
}

/// A compiled kernel's source: `file:line (function)`, a link when the page was opened with
/// `?src=BASE` (BASE + path), and the op that carries it.
fn source_view(ctl: Controller, src: KernelSource) -> impl IntoView {
    let text = match (src.line, &src.function) {
        (Some(line), Some(f)) => format!("{}:{line} ({f})", src.file),
        (Some(line), None) => format!("{}:{line}", src.file),
        _ => src.file.clone(),
    };
    let file = src.file.clone();
    let shown = match crate::app::url_param("src") {
        Some(base) => {
            let href = format!("{base}{file}");
            view! { <a data-testid="detail-source-link" class="mono" href=href target="_blank" rel="noopener">{text}</a> }.into_any()
        }
        None => view! { <span class="mono">{text}</span> }.into_any(),
    };
    let op = src.op.map(|r| link(ctl, "source-op", r));
    view! {
        <div class="rel" data-testid="detail-source" data-file=file>
            <h3>"Source"</h3>
            {shown}
            {op}
        </div>
    }
}

/// A button that selects `r` and shows its name and duration.
fn link(ctl: Controller, testid: &'static str, r: SliceRef) -> impl IntoView {
    let text = format!("{} ({})", r.name, format::span_us(r.dur_ns as f64 / 1e3));
    let id = r.id;
    view! {
        <button class="slice-link" data-testid=testid data-slice=id title=r.name.clone()
            on:click=move |_| ctl.select_ref(r.clone())>
            {text}
        </button>
    }
}
