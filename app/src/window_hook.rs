//! The read-only `window.kinetoscope` test contract (Perfetto's `waitForPerfettoIdle` idea).
//!
//! Output: `window.kinetoscope` is a getter (non-writable, non-configurable) returning a frozen
//! snapshot object, rebuilt when read after a state change (a change only marks it stale, so
//! the app does not build it on every frame for a reader that may never come):
//!
//! ```text
//! status          "idle" | "loading" | "ready" | "error"
//! summary         TraceSummary as JSON (the protocol's fields), or null
//! error           LoadError as JSON ({kind, message, offset, line, column}), or null
//! loads           number of loads that ended, success or failure
//! protocolVersion the worker's announced protocol version, or null before its Ready
//! table           the table tab shown: {kind: "ops"|"kernels"|"steps", scope: "trace" | "step"
//!                 | "range", rows: visible row count (after the filter), sort: {key, desc} or
//!                 null, byShape, pending}, or null on the summary and findings tabs or before
//!                 the first table arrived
//! modules         on the Modules tab once its tree arrived: {scope, all: rows in the tree,
//!                 backwardTied, sort: {key, desc} or null, filter, pending, rows: the rows
//!                 shown in order, [{index (pre-order), name, moduleId, depth, collapsed,
//!                 hasChildren, occurrences, hostNs, selfHostNs, deviceNs, selfDeviceNs,
//!                 backwardDeviceNs, firstId}]}, else null
//! flame           on the Flame tab once its tree arrived: `state::flame::FlameTree::hook_json`
//!                 plus {scope, pending} (the boxes as last drawn, CSS px from the canvas'
//!                 top-left), else null
//! timeline        null before the layout arrives, then {
//!                   startNs, endNs, nsPerPx, width, height, scrollY, rulerH: the view;
//!                   lanes: [{lane, name, group, y, height, rows}] (y: content px, screen y =
//!                          rulerH + y - scrollY, relative to the canvas top), counters: labels;
//!                   counterSeries: the counter tracks' latest set, {startNs, bucketNs, series:
//!                          [{device, metric, label, max, values}]} (values: utilization and SM
//!                          efficiency 0..1, memory bytes; one per bucket, null without data), or null;
//!                   selection: {id, name, lane, row, startNs, durNs, key, args: {k: text},
//!                               launchedBy: name|null, launched: count} or null;
//!                   range: [startNs, endNs] or null;
//!                   search: {text, total, rank} or null;
//!                   rects: rects in the tile cache, resolutionNs;
//!                   frames: {count, p50Ms, p95Ms, maxMs}, firstPaintMs,
//!                   firstTilesMs (load end to the first tiles answer),
//!                   pending: channels with an unanswered query,
//!                   highlight: evidence slices outlined }
//! findings        {rules: [rule ids, alerts first], active: rule|null}, or null before the
//!                 cheatsheet's answer
//! link            the share URL of the current view (what "Copy link" copies), or null
//! longTasks       {count, maxMs, list: [[startMs, durationMs]] (first 100)}: main-thread tasks
//!                 over 50 ms since the page started
//! charts          on the charts tab: {steps: step bars, gpu: utilization and SM efficiency
//!                 series, gpuLegend: their legend entries ("label: what it measures"), memory:
//!                 memory series, histogram: {name, total, minNs, maxNs, widthNs, counts,
//!                 medianNs} of the kernel shown or null, stepBars: [{step, parts: {key: ns}}]
//!                 (the steps table's keys of the stack shown) or null, stepStack: what the
//!                 step bars stack (`category`, `phase_cpu`, `phase_gpu`), counters: the whole-trace
//!                 counter set (below) or null, roofline: the roofline chart's data, {device,
//!                 known, model, source, peaks: {class: TFLOP/s, gbps} | null, roof: {class,
//!                 tflops} | null, ridge, caption, message (said in the chart's place when
//!                 peaks are unknown) | null, empty (said when no kernel is plotted) | null,
//!                 unplotted, leftOff: [{name, calls, totalNs, share, reason, why}] (report
//!                 --json roofline.left_off[]), points: [{name, calls, totalNs, flops,
//!                 bytes, intensity, tflops, gbps, peak, bound, peakPct}]} or null,
//!                 memoryChart: the memory chart's device, curves, categories, step peaks and
//!                 live allocations (`memory_json`) or null, pending};
//!                 null on the other tabs
//! compare         null while no baseline is kept, else {base: baseline file name, cand:
//!                 candidate file name or null before the comparison arrived, ops / kernels / modules:
//!                 diff rows shown, sort / kernelSort: {key, desc, abs} the order of the op /
//!                 kernel diff (abs: by |Δ|, the default order; null before a comparison
//!                 arrived), byShape, verdict: text or null, pending, stack}; stack is null before
//!                 the stacked timelines ask for their layouts, then {step: the step number they
//!                 align at (the baseline's), steps: step numbers in both traces, baseStep /
//!                 candStep: each panel's aligned step, baseStartNs / candStartNs: their starts
//!                 (ns from each trace's origin; time 0 of the panel), windowNs: [a, b] the
//!                 shared window in ns from the step start, nsPerPx, width, views: {base, cand}
//!                 each panel's window in its trace's ns, rects / lanes: {base, cand} rects in
//!                 the tile caches and lanes laid out, active: keys go to the stack, hover:
//!                 {pane, name, durNs} or null, frames: panel paints, pending}
//! run             null while no run is open (a single trace), else {ranks: rank numbers of
//!                 the rank table, steps: step numbers of the heatmap's columns, worldSize,
//!                 loaded / total: files in / files of the run, pending: the run query awaited,
//!                 heatmap: [{rank, step, durUs, waitUs, valueUs (shown in heatmapMode),
//!                 outlier, x, y, w, h}] cells as drawn (CSS px from the canvas' top-left),
//!                 heatmapMode: `step` / `not-waiting`, straggler: the rank outlined or null,
//!                 findings: run finding rules, diagnostics: their
//!                 kinds, focus: {rank, step} opened from the heatmap or null,
//!                 workerMemoryBytes: the load worker's wasm memory after the files, or null,
//!                 parseWorkers: per file, the parse worker that loaded it whole, or null,
//!                 stack: the ranks timeline, null before ranks are asked for, else {ranks:
//!                 ranks asked for, held: ranks whose models the worker holds (the panels,
//!                 ascending), failed: [{rank, error}], reloading: {index, pct} or null,
//!                 clock: "recorded" | "collectives" | "step", step: the step aligned at or
//!                 null, steps: step numbers every panel has, panels: [{rank, originNs: the
//!                 rank's time at the axis' 0 (ns), view: [a, b] its window in its own ns,
//!                 scrollY, height, lanes: [{lane, name, group, y, height, rows}] as the
//!                 timeline's, groups, folded: groups folded, rects, band: [a, b] the
//!                 collective marked on it (its ns) or null}], windowNs: [a, b] the shared
//!                 window (ns of the axis), nsPerPx, width, rulerH, selection: {rank, id,
//!                 name, startNs, durNs} or null, collective: {key, name, step, indexInStep,
//!                 lastRank, members: [{rank, arrival, waitUs, startNs, endNs}]} or null,
//!                 highlighted: ranks with a band, search: {text, total, complete, perRank,
//!                 hits: [{rank, id, name, lane, row, startNs, durNs}] each rank's first
//!                 match} or null, active, frames, pending}}
//! explain         null before the Steps tab asked for a step explanation, else {asked: the
//!                 step number asked for or null (the slowest), step: the step explained or
//!                 null while none is, sentences, evidence: [{kind: "kernel" | "op", name,
//!                 slice}] (the rows with a link, in order), error, pending}
//! critical        {shown, step, pending, error, classes, steps: [{step, startNs, endNs,
//!                 boundBy, sharesNs, slices: [{id, lane, row, startNs, durNs}] (each path
//!                 slice once; only the picked step's)}] | null, segments: {step, startNs,
//!                 endNs, dropped, count} (the path's slices the overlay holds) | null, outlined
//!                 (ids of path slices drawn in the view), arrows, whatIf: {edits, pending,
//!                 error, editError, latencyMs, steps: [{step, beforeNs, afterNs, boundByBefore,
//!                 boundByAfter, sharesAfterNs}] | null}}
//! idle()          Promise resolved when no load is running, no table, timeline, findings,
//!                 chart, compare, explanation, critical path or what-if query is pending, the panels below the timeline are
//!                 asked for (`settled`) and no part of the page waits to be built
//!                 ([`crate::deferred`]) (at once if all that holds)
//! ```
//!
//! Invariants: [`publish`] runs synchronously inside the state change (not in an effect), so a
//! test that triggers a load (e.g. `setInputFiles`) and then calls `idle()` sees `loading` and
//! waits. The snapshot is rebuilt on the first read after a change; `summary` is serialized only
//! when it changes.

use crate::state::charts::ChartState;
use crate::state::compare::{CompareState, DiffTable};
use crate::state::critical::CriticalState;
use crate::state::explain::{rows, ExplainState};
use crate::state::findings::FindingsState;
use crate::state::ranks::RanksState;
use crate::state::run::RunState;
use crate::state::stack::{Pane, StackState};
use crate::state::table::{Tab, TableState};
use crate::state::timeline::TimelineState;
use crate::state::tracks::TrackKind;
use crate::state::{LoadState, Status};
use js_sys::{Function, Object, Promise, Reflect};
use protocol::TraceSummary;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

/// How many long tasks `window.kinetoscope.longTasks.list` keeps.
const LONG_TASKS_KEPT: usize = 100;

thread_local! {
    static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
    /// Long tasks seen: (start ms, duration ms), at most [`LONG_TASKS_KEPT`].
    static LONG_TASKS: RefCell<(u32, Vec<(f64, f64)>)> = const { RefCell::new((0, Vec::new())) };
}

/// What the getter and `idle()` read.
struct Hook {
    snapshot: JsValue,
    /// The snapshot no longer matches the app's state.
    stale: bool,
    /// Rebuilds the snapshot from the app's state (with [`snapshot`]).
    refresh: Rc<dyn Fn()>,
    idle: Function,
    loading: bool,
    waiters: Vec<Function>,
    summary_cache: Option<(Arc<TraceSummary>, JsValue)>,
}

/// Defines `window.kinetoscope` (once); `refresh` rebuilds its snapshot with [`snapshot`].
pub fn install(refresh: impl Fn() + 'static) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let idle = Closure::<dyn Fn() -> Promise>::new(idle_promise);
    let getter = Closure::<dyn Fn() -> JsValue>::new(|| {
        // Not borrowed while refreshing: the refresh stores into the hook.
        let refresh = HOOK.with_borrow(|h| h.as_ref().filter(|h| h.stale).map(|h| h.refresh.clone()));
        if let Some(refresh) = refresh {
            refresh();
        }
        HOOK.with_borrow(|h| h.as_ref().map_or(JsValue::NULL, |h| h.snapshot.clone()))
    });
    let descriptor = Object::new();
    let _ = Reflect::set(&descriptor, &"get".into(), getter.as_ref());
    let _ = Reflect::set(&descriptor, &"enumerable".into(), &JsValue::TRUE);
    let idle_fn: Function = idle.as_ref().unchecked_ref::<Function>().clone();
    // Both closures live as long as the page.
    idle.forget();
    getter.forget();
    HOOK.set(Some(Hook {
        snapshot: JsValue::NULL,
        stale: true,
        refresh: Rc::new(refresh),
        idle: idle_fn,
        loading: false,
        waiters: Vec::new(),
        summary_cache: None,
    }));
    // Fails only if the property already exists (a second install); the first one stays.
    let _ = Object::define_property(&window, &"kinetoscope".into(), &descriptor);
    crate::deferred::on_built(recheck);
    observe_long_tasks();
}

/// Counts main-thread tasks over 50 ms (Chromium's `longtask` entries).
fn observe_long_tasks() {
    let callback = Closure::<dyn Fn(web_sys::PerformanceObserverEntryList)>::new(
        |list: web_sys::PerformanceObserverEntryList| {
            for entry in list.get_entries() {
                let Some(e) = entry.dyn_ref::<web_sys::PerformanceEntry>() else {
                    continue;
                };
                LONG_TASKS.with_borrow_mut(|(n, list)| {
                    *n += 1;
                    if list.len() < LONG_TASKS_KEPT {
                        list.push((e.start_time(), e.duration()));
                    }
                });
            }
        },
    );
    if let Ok(observer) = web_sys::PerformanceObserver::new(callback.as_ref().unchecked_ref()) {
        // `type` and `buffered`, not `entryTypes`: the tasks since the page's start count too,
        // not only those after this observer (the app's second task).
        let init = Object::new();
        let _ = Reflect::set(&init, &"type".into(), &"longtask".into());
        let _ = Reflect::set(&init, &"buffered".into(), &JsValue::TRUE);
        observer.observe(init.unchecked_ref());
        // Observes for the page's lifetime.
        std::mem::forget(observer);
    }
    callback.forget();
}

/// The app's states, read together by [`publish`] and [`refresh`].
pub struct States<'a> {
    /// The load and its summary.
    pub load: &'a LoadState,
    /// The table tab.
    pub tables: &'a TableState,
    /// The lane timeline.
    pub timeline: &'a TimelineState,
    /// The findings tab.
    pub findings: &'a FindingsState,
    /// The charts tab.
    pub charts: &'a ChartState,
    /// The comparison.
    pub compare: &'a CompareState,
    /// The stacked timelines of the comparison.
    pub stack: &'a StackState,
    /// The open distributed run.
    pub run: &'a RunState,
    /// The Steps tab's step explanation.
    pub explain: &'a ExplainState,
    /// The run's ranks timeline.
    pub ranks: &'a RanksState,
    /// Its panels.
    pub rank_stack: &'a StackState,
    /// Critical paths, the timeline's toggle and the What if panel.
    pub critical: &'a CriticalState,
}

/// Marks the snapshot stale, and resolves `idle()` waiters once the current change is done if
/// no load is running and no query is pending then.
pub fn publish(s: &States) {
    let queue = HOOK.with_borrow_mut(|hook| {
        let Some(hook) = hook.as_mut() else {
            return false;
        };
        hook.stale = true;
        hook.loading = s.load.status == Status::Loading
            || (s.load.summary.is_some() && !s.load.settled)
            || s.tables.pending.is_some()
            || s.timeline.busy()
            || s.findings.pending.is_some()
            || s.charts.busy()
            || s.compare.pending.is_some()
            || s.stack.busy()
            || s.run.busy()
            || s.explain.pending.is_some()
            || s.critical.pending.is_some()
            || s.critical.segments_pending.is_some()
            || s.critical.what_if.pending.is_some()
            || s.ranks.busy()
            || s.rank_stack.busy();
        // Resolved in a microtask, after the state change that called this has run to its end:
        // a change that publishes between two steps (a view moved, then its slice asked for)
        // must not let `idle()` resolve before the query of its second step is pending.
        !hook.waiters.is_empty() && !busy(hook)
    });
    if queue {
        wasm_bindgen_futures::spawn_local(async { recheck() });
    }
}

/// Replaces the snapshot with the app's states.
pub fn refresh(s: &States, link: Option<&str>) {
    HOOK.with_borrow_mut(|hook| {
        let Some(hook) = hook.as_mut() else { return };
        hook.snapshot = snapshot(hook, s, link);
        hook.stale = false;
    });
}

/// Resolves `idle()` waiters if nothing is pending any more; also called when the last part of
/// the page waiting to be built is built ([`crate::deferred::on_built`]).
fn recheck() {
    let waiters = HOOK.with_borrow_mut(|hook| hook.as_mut().map(take_waiters).unwrap_or_default());
    resolve(waiters);
}

/// The waiters to resolve now: all of them when the app is idle, else none.
fn take_waiters(hook: &mut Hook) -> Vec<Function> {
    if busy(hook) {
        Vec::new()
    } else {
        std::mem::take(&mut hook.waiters)
    }
}

/// A load or query is running, or a part of the page waits to be built.
fn busy(hook: &Hook) -> bool {
    hook.loading || crate::deferred::pending() > 0
}

fn resolve(waiters: Vec<Function>) {
    for resolve in waiters {
        let _ = resolve.call0(&JsValue::UNDEFINED);
    }
}

fn snapshot(hook: &mut Hook, s: &States, link: Option<&str>) -> JsValue {
    let States { load: state, tables, timeline, findings, .. } = *s;
    let charts = charts_js(tables, s.charts);
    let compare = compare_js(s.compare, s.stack);
    let summary = match &state.summary {
        Some(summary) => match &hook.summary_cache {
            Some((cached, js)) if Arc::ptr_eq(cached, summary) => js.clone(),
            _ => {
                let js = to_js(summary.as_ref());
                hook.summary_cache = Some((summary.clone(), js.clone()));
                js
            }
        },
        None => JsValue::NULL,
    };
    let error = state.error.as_ref().map_or(JsValue::NULL, to_js);
    let version = state.protocol_version.map_or(JsValue::NULL, |v| v.into());
    let table = table_js(tables);
    let long_tasks = LONG_TASKS.with_borrow(|(n, list)| {
        let max = list.iter().map(|t| t.1).fold(0.0, f64::max);
        to_js(&serde_json::json!({ "count": n, "maxMs": max, "list": list }))
    });
    let obj = Object::new();
    let findings = findings.list.as_ref().map_or(JsValue::NULL, |list| {
        let rules: Vec<&str> = list.iter().map(|f| f.rule.as_str()).collect();
        to_js(&serde_json::json!({ "rules": rules, "active": findings.active }))
    });
    let link = link.map_or(JsValue::NULL, JsValue::from_str);
    let fields: [(&str, JsValue); 18] = [
        ("modules", modules_js(tables)),
        ("flame", flame_js(tables)),
        ("critical", {
            let outlined = crate::timeline::draw_list::critical::outlined(timeline);
            to_js(&crate::state::critical::hook_json(s.critical, timeline.critical.as_deref(), &outlined))
        }),
        ("run", run_js(s.run, s.ranks, s.rank_stack)),
        ("explain", explain_js(s.explain)),
        ("status", state.status.as_str().into()),
        ("summary", summary),
        ("error", error),
        ("loads", state.loads.into()),
        ("protocolVersion", version),
        ("table", table),
        ("timeline", timeline_js(timeline)),
        ("charts", charts),
        ("longTasks", long_tasks),
        ("findings", findings),
        ("link", link),
        ("compare", compare),
        ("idle", hook.idle.clone().into()),
    ];
    for (key, value) in fields {
        let _ = Reflect::set(&obj, &key.into(), &value);
    }
    Object::freeze(&obj).into()
}

/// The step explanation (see the module docs), or null.
fn explain_js(e: &ExplainState) -> JsValue {
    if e.asked.is_none() {
        return JsValue::NULL;
    }
    let data = e.data.as_deref();
    let evidence = data.map(|d| {
        rows(d)
            .into_iter()
            .filter_map(|r| Some(serde_json::json!({ "kind": r.kind, "name": r.name, "slice": r.slice?.id })))
            .collect::<Vec<_>>()
    });
    to_js(&serde_json::json!({
        "asked": e.asked.flatten(),
        "step": e.step(),
        "sentences": data.map(|d| d.sentences.clone()),
        "evidence": evidence,
        "error": e.error,
        "pending": e.pending.is_some(),
    }))
}

/// The open run (see the module docs), or null.
fn run_js(r: &RunState, rank_state: &RanksState, rank_stack: &StackState) -> JsValue {
    use serde_json::json;
    if !r.open {
        return JsValue::NULL;
    }
    let data = r.data.as_deref();
    let ranks: Vec<Option<u32>> = data.map(|d| d.ranks.iter().map(|x| x.rank).collect()).unwrap_or_default();
    let steps = data.map(|d| crate::state::run::heatmap_axes(d).1).unwrap_or_default();
    let heatmap: Vec<serde_json::Value> = r
        .heatmap
        .iter()
        .map(|c| json!({"rank": c.rank, "step": c.step, "durUs": c.dur_us, "waitUs": c.wait_us, "valueUs": c.value_us, "outlier": c.outlier, "x": c.x, "y": c.y, "w": c.w, "h": c.h}))
        .collect();
    to_js(&json!({
        "ranks": ranks,
        "steps": steps,
        "worldSize": data.and_then(|d| d.world_size),
        "loaded": r.loaded(),
        "total": r.files.len(),
        "pending": r.busy(),
        "heatmap": heatmap,
        "heatmapMode": r.heat_mode.key(),
        "straggler": data.and_then(|d| d.straggler),
        "findings": data.map(|d| d.findings.iter().map(|f| f.rule.clone()).collect::<Vec<_>>()).unwrap_or_default(),
        "diagnostics": data.map(|d| d.diagnostics.iter().map(|x| x.kind.clone()).collect::<Vec<_>>()).unwrap_or_default(),
        "focus": r.focus.map(|(rank, step)| json!({"rank": rank, "step": step})),
        "workerMemoryBytes": r.files.iter().filter_map(|f| f.memory_bytes).max(),
        "parseWorkers": r.files.iter().map(|f| f.parse_worker).collect::<Vec<_>>(),
        "stack": ranks_json(rank_state, rank_stack),
    }))
}

/// The ranks timeline (see the module docs), or null before ranks are asked for.
fn ranks_json(r: &RanksState, s: &StackState) -> serde_json::Value {
    use serde_json::json;
    if r.chosen.is_empty() {
        return serde_json::Value::Null;
    }
    let ready = s.ready();
    let panels: Vec<serde_json::Value> = s
        .panels
        .iter()
        .zip(&r.held)
        .map(|(p, rank)| {
            let t = &p.timeline;
            json!({
                "rank": rank, "originNs": ready.then_some(t.origin_ns),
                "view": ready.then_some([t.view.start, t.view.end]), "scrollY": t.scroll_y, "height": t.height,
                "lanes": lanes_json(t),
                "groups": t.collapsed.len(), "folded": t.collapsed.iter().filter(|&&c| c).count(),
                "rects": t.tiles.len(), "band": p.band.map(|(a, b)| [a, b]),
            })
        })
        .collect();
    let selection = r.selection.as_ref().map(|x| {
        let d = x.details.as_ref();
        json!({"rank": x.rank, "id": x.slice, "name": d.map(|d| d.slice.name.clone()),
            "startNs": d.map(|d| d.slice.start_ns), "durNs": d.map(|d| d.slice.dur_ns)})
    });
    let collective = r.collective.as_ref().map(|c| {
        let members: Vec<serde_json::Value> = c
            .members
            .iter()
            .map(|m| json!({"rank": m.rank, "arrival": m.arrival, "waitUs": m.wait_us, "startNs": m.start_ns, "endNs": m.end_ns}))
            .collect();
        json!({"key": c.key, "name": c.name, "step": c.step, "indexInStep": c.index_in_step, "lastRank": c.last_rank, "members": members})
    });
    let highlighted: Vec<u32> = s.panels.iter().zip(&r.held).filter(|(p, _)| p.band.is_some()).map(|(_, &rank)| rank).collect();
    let search = (!r.search.text.is_empty()).then(|| {
        let (total, complete) = r.search.total();
        let hits: Vec<serde_json::Value> = r.search.hits.iter().zip(&r.held).filter_map(|(h, rank)| {
            let h = h.as_ref()?;
            Some(json!({"rank": rank, "id": h.id, "name": h.name, "lane": h.lane, "row": h.row, "startNs": h.start_ns, "durNs": h.dur_ns}))
        }).collect();
        json!({"text": r.search.text, "total": total, "complete": complete, "perRank": r.search.counts, "hits": hits})
    });
    let (a, b) = s.window();
    json!({
        "ranks": r.chosen, "held": r.held,
        "failed": r.failed.iter().map(|(rank, e)| json!({"rank": rank, "error": e})).collect::<Vec<_>>(),
        "reloading": r.reloading.map(|(index, pct)| json!({"index": index, "pct": pct})),
        "clock": r.clock.as_str(), "step": s.step(), "steps": s.common_steps(), "panels": panels,
        "windowNs": ready.then_some([a, b]), "nsPerPx": (b - a) / s.width(), "width": s.width(),
        "rulerH": crate::timeline::draw_list::RULER_H, "selection": selection, "collective": collective, "highlighted": highlighted, "search": search,
        "active": s.active, "frames": s.frames, "pending": r.busy() || s.busy(),
    })
}

/// `{base, cand, ops, kernels, modules (row counts), sort, kernelSort, byShape, verdict, pending, stack}`, or null.
fn compare_js(c: &CompareState, stack: &StackState) -> JsValue {
    let Some(base) = &c.base else {
        return JsValue::NULL;
    };
    let sort = |table| {
        c.order(table)
            .map(|o| serde_json::json!({"key": o.sort.key, "desc": o.sort.desc, "abs": o.abs}))
    };
    to_js(&serde_json::json!({
        "base": base,
        "cand": c.data.as_ref().map(|d| d.cand.clone()),
        "ops": c.op_rows().len(),
        "kernels": c.kernel_rows().len(),
        "modules": c.module_rows().len(),
        "sort": sort(DiffTable::Ops),
        "kernelSort": sort(DiffTable::Kernels),
        "byShape": c.by_shape,
        "verdict": c.data.as_ref().map(|d| d.verdict.clone()),
        "pending": c.pending.is_some(),
        "stack": stack_json(stack),
    }))
}

/// The stacked timelines: null before their layouts were asked for, else `{step, steps,
/// baseStep, candStep, baseStartNs, candStartNs, windowNs, nsPerPx, width, views, rects, lanes,
/// active, hover, frames, pending}` (see the module docs).
fn stack_json(s: &StackState) -> serde_json::Value {
    use serde_json::json;
    if !s.opened {
        return serde_json::Value::Null;
    }
    let ready = s.ready();
    let pane = |p: Pane| s.pane(p.index());
    let focus = |p: Pane| s.focus(p.index()).map(|f| f.number);
    let start = |p: Pane| ready.then(|| pane(p).map(|t| t.origin_ns)).flatten();
    let lanes = |t: &TimelineState| t.tracks.iter().filter(|x| matches!(x.kind, TrackKind::Lane { .. })).count();
    let per = |f: &dyn Fn(&TimelineState) -> usize| {
        json!({"base": pane(Pane::Base).map(f), "cand": pane(Pane::Cand).map(f)})
    };
    let hover = Pane::BOTH.into_iter().find_map(|p| {
        let h = pane(p)?.hover.as_ref()?;
        Some(json!({"pane": p.as_str(), "name": h.name, "durNs": h.details.as_ref().map(|d| d.slice.dur_ns)}))
    });
    let (a, b) = s.window();
    let view = |p: Pane| ready.then(|| pane(p).map(|t| [t.view.start, t.view.end])).flatten();
    json!({
        "step": focus(Pane::Base).or(s.step()), "steps": s.common_steps(),
        "baseStep": focus(Pane::Base), "candStep": focus(Pane::Cand),
        "baseStartNs": start(Pane::Base), "candStartNs": start(Pane::Cand),
        "windowNs": ready.then_some([a, b]), "nsPerPx": (b - a) / s.width(), "width": s.width(),
        "views": json!({"base": view(Pane::Base), "cand": view(Pane::Cand)}),
        "rects": per(&|t| t.tiles.len()), "lanes": per(&lanes),
        "active": s.active, "hover": hover, "frames": s.frames, "pending": s.busy(),
    })
}

/// `{kind, rows, sort, byShape, pending}` for the table tab shown, or null.
fn table_js(t: &TableState) -> JsValue {
    let Some(data) = t
        .data
        .as_ref()
        .filter(|_| !matches!(t.tab, Tab::Summary | Tab::Findings | Tab::Charts | Tab::Compare | Tab::Run))
    else {
        return JsValue::NULL;
    };
    let sort = t.sort.as_ref().map_or(JsValue::NULL, |s| {
        let obj = Object::new();
        let _ = Reflect::set(&obj, &"key".into(), &s.key.as_str().into());
        let _ = Reflect::set(&obj, &"desc".into(), &s.desc.into());
        Object::freeze(&obj).into()
    });
    let obj = Object::new();
    let fields: [(&str, JsValue); 6] = [
        ("kind", data.kind.as_str().into()),
        ("scope", t.scope.kind().into()),
        ("rows", (t.visible_rows().len() as u32).into()),
        ("sort", sort),
        ("byShape", t.by_shape.into()),
        ("pending", t.pending.is_some().into()),
    ];
    for (key, value) in fields {
        let _ = Reflect::set(&obj, &key.into(), &value);
    }
    Object::freeze(&obj).into()
}

/// The Flame tab's chart (see the contract above), or null.
fn flame_js(t: &TableState) -> JsValue {
    let Some(f) = t.flame.as_ref().filter(|_| t.tab == Tab::Flame) else {
        return JsValue::NULL;
    };
    let mut json = f.hook_json();
    json["scope"] = t.scope.kind().into();
    json["pending"] = t.pending.is_some().into();
    to_js(&json)
}

/// The module tree shown (see the contract above), or null.
fn modules_js(t: &TableState) -> JsValue {
    use serde_json::json;
    let Some(tree) = t.modules.as_ref().filter(|_| t.tab == Tab::Modules) else {
        return JsValue::NULL;
    };
    let rows: Vec<serde_json::Value> = t
        .module_rows()
        .into_iter()
        .filter_map(|k| {
            let r = tree.data.rows.get(k)?;
            Some(json!({
                "index": k, "name": r.name, "moduleId": r.module_id, "depth": r.depth,
                "collapsed": tree.collapsed.get(k).copied().unwrap_or(false), "hasChildren": tree.has_children(k),
                "occurrences": r.occurrences, "hostNs": r.host_ns, "selfHostNs": r.self_host_ns,
                "deviceNs": r.device_ns, "selfDeviceNs": r.self_device_ns,
                "backwardDeviceNs": r.backward_device_ns, "firstId": r.first.as_ref().map(|f| f.id),
            }))
        })
        .collect();
    to_js(&json!({
        "scope": t.scope.kind(), "all": tree.data.rows.len(), "backwardTied": tree.data.backward_tied,
        "sort": t.sort.as_ref().map(|s| json!({"key": s.key, "desc": s.desc})), "filter": t.filter,
        "pending": t.pending.is_some(), "rows": rows,
    }))
}

/// What the charts draw, counted; null off the charts tab.
fn charts_js(tables: &TableState, c: &ChartState) -> JsValue {
    if tables.tab != Tab::Charts {
        return JsValue::NULL;
    }
    let series = |gpu: bool| {
        c.counters.as_ref().map_or(0, |set| {
            set.series.iter().filter(|s| (s.metric != "memory") == gpu).count()
        })
    };
    let histogram = c.histogram.as_ref().map(|h| {
        serde_json::json!({
            "name": h.name, "total": h.total, "minNs": h.min_ns, "maxNs": h.max_ns,
            "widthNs": h.width_ns, "counts": h.counts, "medianNs": h.median_ns,
        })
    });
    let step_bars = c.steps.as_ref().map(|chart| {
        chart
            .bars
            .iter()
            .map(|b| {
                let parts: serde_json::Map<String, serde_json::Value> =
                    chart.keys.iter().cloned().zip(b.parts_ns.iter().map(|&ns| ns.into())).collect();
                serde_json::json!({ "step": b.number, "parts": parts })
            })
            .collect::<Vec<_>>()
    });
    let gpu_legend: Vec<String> = c.counters.as_ref().map_or_else(Vec::new, |set| {
        set.series
            .iter()
            .filter(|s| s.metric != "memory")
            .map(|s| {
                let (label, note) = crate::state::charts::gpu_legend(s);
                format!("{label}: {note}")
            })
            .collect()
    });
    to_js(&serde_json::json!({
        "steps": c.steps.as_ref().map_or(0, |s| s.bars.len()),
        "gpu": series(true),
        "gpuLegend": gpu_legend,
        "memory": series(false),
        "histogram": histogram,
        "stepBars": step_bars,
        "stepStack": c.step_stack.key(),
        "counters": c.counters.as_ref().map(counters_json),
        "roofline": c.roofline.as_ref().map(roofline_json),
        "memoryChart": memory_json(&c.memory),
        "pending": c.busy(),
    }))
}

/// The memory chart: `{device, devices: [{label, peakAllocated, peakReserved}], startNs,
/// bucketNs, allocated, reserved, categories: [{name, values: bytes per bucket}] (PyTorch's
/// order), steps: [{step,
/// peakNs, peakBytes}], live: {device, atNs, count, bytes, hovered, rows: [{bytes, atNs,
/// freedNs, category, op, opId, phase, module}] in the order shown}, sort: {key, desc}}`, or
/// null before the worker's answer.
fn memory_json(m: &crate::state::memory::MemoryView) -> serde_json::Value {
    use serde_json::json;
    let Some(d) = &m.data else { return serde_json::Value::Null };
    let devices: Vec<_> = d
        .devices
        .iter()
        .map(|x| json!({ "label": x.label, "peakAllocated": x.peak_allocated, "peakReserved": x.peak_reserved }))
        .collect();
    let categories: Vec<_> = d.categories.iter().map(|c| json!({ "name": c.name, "values": c.values })).collect();
    let steps: Vec<_> =
        d.steps.iter().map(|s| json!({ "step": s.step, "peakNs": s.peak_ns, "peakBytes": s.peak_bytes })).collect();
    let live = m.live().map(|l| {
        let rows: Vec<_> = m
            .rows()
            .iter()
            .map(|r| {
                json!({
                    "bytes": r.bytes, "atNs": r.at_ns, "freedNs": r.freed_ns, "category": r.category,
                    "op": r.op.as_ref().map(|o| o.name.clone()), "opId": r.op.as_ref().map(|o| o.id),
                    "phase": r.phase, "module": r.module,
                })
            })
            .collect();
        json!({ "device": l.device, "atNs": l.at_ns, "count": l.count, "bytes": l.bytes, "hovered": m.hovered.is_some(), "rows": rows })
    });
    json!({
        "device": d.device, "devices": devices, "startNs": d.start_ns, "bucketNs": d.bucket_ns,
        "allocated": d.allocated, "reserved": d.reserved, "categories": categories, "steps": steps,
        "live": live, "sort": { "key": m.sort.0.key(), "desc": m.sort.1 },
    })
}

/// The roofline chart's data: `{device, known, model, source, peaks: {class: TFLOP/s, gbps},
/// roof: {class, tflops} | null, ridge, caption, message, empty (no point: what is said),
/// unplotted, leftOff: [{name, calls, totalNs, share, reason, why}], points: [{name, calls,
/// totalNs, flops, bytes, intensity, tflops, gbps, peak, bound, peakPct}]}` (points longest first).
fn roofline_json(r: &protocol::RooflineData) -> serde_json::Value {
    use crate::state::roofline as rules;
    let peaks = r.peaks.as_ref().map(|p| {
        let mut m: serde_json::Map<String, serde_json::Value> =
            p.tflops.iter().map(|(c, t)| (c.clone(), (*t).into())).collect();
        m.insert("gbps".into(), p.gbps.into());
        m
    });
    let points: Vec<serde_json::Value> = r
        .points
        .iter()
        .map(|p| {
            serde_json::json!({
                "name": p.name, "calls": p.calls, "totalNs": p.total_ns, "flops": p.flops,
                "bytes": p.bytes, "intensity": p.intensity, "tflops": p.tflops, "gbps": p.gbps,
                "peak": p.peak, "bound": p.bound, "peakPct": p.peak_pct,
            })
        })
        .collect();
    serde_json::json!({
        "device": r.device, "known": r.known,
        "model": r.peaks.as_ref().map(|p| p.model.clone()),
        "source": r.peaks.as_ref().map(|p| p.source.clone()),
        "peaks": peaks,
        "roof": r.roof.as_ref().map(|(class, tflops)| serde_json::json!({ "class": class, "tflops": tflops })),
        "ridge": rules::ridge(r),
        "caption": rules::caption(r),
        "message": rules::unknown_message(r),
        "unplotted": r.left_off.len(),
        "leftOff": r.left_off.iter().map(|k| serde_json::json!({
            "name": k.name, "calls": k.calls, "totalNs": k.total_ns, "share": k.share,
            "reason": k.reason, "why": k.why,
        })).collect::<Vec<_>>(),
        "empty": rules::empty_message(r),
        "points": points,
    })
}

/// A counter set as the charts and the timeline hold it: `{startNs, bucketNs, series: [{device,
/// metric, label, max, values}]}` (values: one per bucket, null without data).
fn counters_json(set: &protocol::CounterSet) -> serde_json::Value {
    let series: Vec<serde_json::Value> = set
        .series
        .iter()
        .map(|s| {
            serde_json::json!({
                "device": s.device, "metric": s.metric, "label": s.label, "max": s.max,
                "values": s.values,
            })
        })
        .collect();
    serde_json::json!({ "startNs": set.start_ns, "bucketNs": set.bucket_ns, "series": series })
}

/// The lanes laid out: `[{lane, name, group, y, height, rows, first_row}]`, y in content px.
fn lanes_json(t: &TimelineState) -> Vec<serde_json::Value> {
    t.tracks
        .iter()
        .filter_map(|tr| match tr.kind {
            TrackKind::Lane { lane, rows, first_row } => Some(serde_json::json!({
                "lane": lane, "name": tr.label, "group": tr.group,
                "y": tr.y, "height": tr.height, "rows": rows, "first_row": first_row,
            })),
            _ => None,
        })
        .collect()
}

/// The timeline's view, lanes, selection, range, search and frame figures; null before layout.
fn timeline_js(t: &TimelineState) -> JsValue {
    use serde_json::{json, Value};
    if t.layout.is_none() {
        return JsValue::NULL;
    }
    let lanes = lanes_json(t);
    let counters: Vec<&str> = t
        .tracks
        .iter()
        .filter(|tr| matches!(tr.kind, TrackKind::Counter { .. }))
        .map(|tr| tr.label.as_str())
        .collect();
    let selection = t.selected.as_ref().map(|d| {
        let args: serde_json::Map<String, Value> =
            d.args.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        json!({
            "id": d.slice.id, "name": d.slice.name, "lane": d.slice.lane, "row": d.slice.row,
            "startNs": d.slice.start_ns, "durNs": d.slice.dur_ns, "key": d.key, "args": args,
            "launchedBy": d.launched_by.as_ref().map(|r| r.name.clone()),
            "launched": d.launched.len(),
        })
    });
    let search = t.search.hit.as_ref().map(|h| {
        json!({ "text": h.text, "total": h.total, "rank": h.rank })
    });
    let v = &t.view;
    to_js(&json!({
        "startNs": v.start, "endNs": v.end, "nsPerPx": v.ns_per_px(), "width": v.width,
        "height": t.height, "scrollY": t.scroll_y, "rulerH": crate::timeline::draw_list::RULER_H,
        "lanes": lanes, "counters": counters,
        "counterSeries": t.counters.as_ref().map(counters_json), "selection": selection,
        "range": t.range.map(|(a, b)| [a, b]), "search": search,
        "rects": t.tiles.len(), "resolutionNs": t.tiles.set.resolution_ns,
        "frames": {
            "count": t.frames.count, "p50Ms": t.frames.quantile(0.5),
            "p95Ms": t.frames.quantile(0.95),
            "maxMs": t.frames.ms.iter().copied().fold(0.0, f64::max),
        },
        "firstPaintMs": t.frames.first_paint_ms,
        "firstTilesMs": t.frames.tiles_ms,
        "loadedAtMs": t.loaded_at,
        "pending": t.pending_channels(),
        "highlight": t.highlight.len(),
    }))
}

/// A plain JS object with the value's serde JSON fields; null if it cannot be encoded.
fn to_js<T: serde::Serialize>(value: &T) -> JsValue {
    serde_json::to_string(value)
        .ok()
        .and_then(|json| js_sys::JSON::parse(&json).ok())
        .unwrap_or(JsValue::NULL)
}

fn idle_promise() -> Promise {
    Promise::new(&mut |resolve, _reject| {
        let resolve_now = HOOK.with_borrow_mut(|hook| match hook.as_mut() {
            Some(hook) if busy(hook) => {
                hook.waiters.push(resolve.clone());
                false
            }
            _ => true,
        });
        if resolve_now {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    })
}
