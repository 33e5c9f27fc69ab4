//! The Run tab: the files of a distributed run as they arrive, then the run analysis the worker
//! answered (`kinetoscope run --json`'s numbers): diagnostics, the rank x step heatmap (a
//! click opens that rank's timeline at that step), the rank table, stragglers and collective
//! waits, clock offsets and run findings. The answer comes first: findings, then the
//! straggler (its delay said before per-name differences); then the overview, the heatmap
//! (step time or time not waiting in collectives, the straggler's row outlined), the ranks
//! timeline ([`RanksTimeline`]), the rank table and the offsets. [`RunBack`] is the way back
//! from a rank's timeline.
//!
//! Test ids: `run`, `run-progress` (rows `run-progress-row` with `data-index`, `data-rank`
//! once known, `data-loaded`), `run-error`, `run-overview`, `run-diagnostics` (items
//! `run-diagnostic` with `data-kind`), `run-heatmap` (canvas; `data-mode`, `data-straggler`),
//! `run-heat-mode` (buttons, `data-mode`), `run-heatmap-straggler` (`data-rank`),
//! `run-straggler-delay` (`data-rank`), `run-rank-table` (rows
//! `run-rank-row` with `data-rank`; cells `td[data-key]` with the raw number in `data-value`,
//! µs / percent / bytes as the keys say), `run-stragglers` (rows `run-straggler`, and
//! `run-wait-row` per rank with `data-rank`), `run-offsets` (rows `run-offset`, `data-rank`,
//! `data-value` µs), `run-findings` (items `run-finding` with `data-rule`; evidence buttons
//! `run-evidence` with `data-rank` / `data-step`), `run-stack-a` / `run-stack-b` / `run-stack`
//! (two ranks stacked in the Compare tab), `run-back`.

use crate::control::Controller;
use crate::deferred::Deferred;
use crate::state::format;
use crate::charts::heatmap::Shown;
use crate::state::run::{cell_at, heatmap_axes, heatmap_height, HeatMode, RunState};
use crate::timeline::ranks::RanksTimeline;
use crate::timeline::theme::Theme;
use leptos::html::Canvas;
use leptos::prelude::*;
use protocol::{RunCollectiveRank, RunData, RunOffset, RunRank, RunStraggler};
use std::sync::Arc;

/// The Run tab's content.
#[component]
pub fn RunPanel(ctl: Controller, theme: ReadSignal<Theme>) -> impl IntoView {
    let run = ctl.run.read_only();
    let data = Memo::new(move |_| run.with(|r| r.data.clone()));
    let error = move || {
        run.with(|r| r.error.clone()).map(|message| {
            view! { <p class="card error" data-testid="run-error" role="alert">{message}</p> }
        })
    };
    view! {
        <section class="run" data-testid="run">
            {error}
            <Progress run=run />
            // One part per frame: built in one task, 64 ranks' tables and heatmap took 128 ms.
            {move || data.get().map(|d| {
                let (d1, d2, d3, d4, d5, d6) = (d.clone(), d.clone(), d.clone(), d.clone(), d.clone(), d.clone());
                // The answer first: who is slow and why, then where (heatmap, timelines).
                view! {
                    <Deferred><Findings ctl=ctl data=d5.clone() /></Deferred>
                    <Deferred><Stragglers data=d3.clone() /></Deferred>
                    <Deferred><Overview data=d.clone() /></Deferred>
                    <Deferred><Heatmap ctl=ctl data=d1.clone() theme=theme /></Deferred>
                    <Deferred><RanksTimeline ctl=ctl data=d6.clone() theme=theme /></Deferred>
                    <Deferred><RankTable data=d2.clone() /></Deferred>
                    <Deferred><Offsets data=d4.clone() /></Deferred>
                }
            })}
        </section>
    }
}

/// "Rank N · step S — Back to run": shown above the timeline while a rank opened from the
/// run is shown on another tab.
#[component]
pub fn RunBack(ctl: Controller) -> impl IntoView {
    let run = ctl.run.read_only();
    let label = move || {
        run.with(|r| match r.focus {
            Some((rank, Some(step))) => format!("Run: rank {rank}, step {step}"),
            Some((rank, None)) => format!("Run: rank {rank}"),
            None => format!("Run of {} traces", r.files.len()),
        })
    };
    view! {
        <div class="run-back-bar">
            <span>{label}</span>
            <button data-testid="run-back" on:click=move |_| ctl.back_to_run()>"← Back to run"</button>
        </div>
    }
}

/// "Run · 4 of 8 ranks" in the header bar while a run is open.
#[component]
pub fn RunBadge(run: ReadSignal<RunState>) -> impl IntoView {
    let label = move || {
        run.with(|r| {
            let files = r.files.len() as u64;
            match r.data.as_ref().and_then(|d| d.world_size) {
                Some(w) if u64::from(w) != files => format!("Run · {files} of {w} ranks"),
                _ => format!("Run · {}", format::plural(files, "rank", "ranks")),
            }
        })
    };
    view! {
        <span class="run-badge" data-testid="run-badge" title="A distributed run is open: one trace per rank (Run tab)">{label}</span>
    }
}

#[component]
fn Progress(run: ReadSignal<RunState>) -> impl IntoView {
    let rows = move || {
        run.with(|r| {
            r.files
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let status = match (&f.error, f.loaded, f.phase) {
                        (Some(e), _, _) => format!("failed: {e}"),
                        (None, true, _) => format::plural(f.steps, "step", "steps"),
                        (None, false, Some(phase)) => {
                            let pct = f.total_bytes.filter(|&t| t > 0).map(|t| f.done_bytes.saturating_mul(100) / t);
                            format!("{} {}", format::phase_name(phase), pct.map(|p| format!("{p}%")).unwrap_or_default())
                        }
                        (None, false, None) => "waiting".into(),
                    };
                    view! {
                        <tr data-testid="run-progress-row" data-index=i data-rank=f.rank.map(|r| r.to_string())
                            data-loaded=f.loaded.to_string() class:error=f.error.is_some()>
                            <td>{f.rank.map_or("–".into(), |r| r.to_string())}</td>
                            <td class="name" title=f.name.clone()>{f.name.clone()}</td>
                            <td>{status}</td>
                        </tr>
                    }
                })
                .collect_view()
        })
    };
    let caption = move || run.with(|r| format!("{} of {} files in", r.loaded(), r.files.len()));
    view! {
        <div class="card" data-testid="run-progress">
            <h2>"Files " <span class="muted">{caption}</span></h2>
            <table class="run-table">
                <thead><tr><th>"rank"</th><th>"file"</th><th>"status"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

#[component]
fn Overview(data: Arc<RunData>) -> impl IntoView {
    let world = data.world_size.map_or("?".into(), |w| w.to_string());
    let text = format!(
        "{} of world size {world} · backend {} · {} · collectives: {} matched, {} unmatched · clock {}",
        format::plural(data.ranks.len() as u64, "rank", "ranks"),
        data.backend.as_deref().unwrap_or("?"),
        format::plural(heatmap_axes(&data).1.len() as u64, "step", "steps"),
        data.collectives.matched,
        data.collectives.unmatched,
        data.clock.as_deref().unwrap_or("?"),
    );
    let diagnostics = data
        .diagnostics
        .iter()
        .map(|d| view! { <li data-testid="run-diagnostic" data-kind=d.kind.clone()><code>{d.kind.clone()}</code>" "{d.message.clone()}</li> })
        .collect_view();
    let none = data.diagnostics.is_empty().then(|| view! { <li class="muted">"No problem with the inputs."</li> });
    view! {
        <div class="card" data-testid="run-overview">
            <p>{text}</p>
            <ul class="run-diagnostics" data-testid="run-diagnostics">{diagnostics}{none}</ul>
        </div>
    }
}

#[component]
fn Heatmap(ctl: Controller, data: Arc<RunData>, theme: ReadSignal<Theme>) -> impl IntoView {
    let node = NodeRef::<Canvas>::new();
    let resized = RwSignal::new(0u32);
    let listener = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n = n.wrapping_add(1)));
    on_cleanup(move || listener.remove());
    let height = heatmap_height(heatmap_axes(&data).0.len());
    let drawn = data.clone();
    let mode = Memo::new(move |_| ctl.run.with(|r| r.heat_mode));
    let straggler = data.straggler;
    Effect::new(move |_| {
        let theme = theme.get();
        let shown = Shown { mode: mode.get(), straggler };
        resized.track();
        let Some(canvas) = node.get() else { return };
        let drawn = drawn.clone();
        // In a task of its own: reading the width lays the new part out, and 64 ranks' cells
        // drawn in the task that built the part took it over 50 ms.
        crate::deferred::next_task(move || {
            let width = f64::from(canvas.client_width()).max(200.0);
            let cells = crate::charts::heatmap::draw(canvas, &drawn, width, shown, theme, window().device_pixel_ratio());
            ctl.heatmap_drawn(cells);
        });
    });
    let toggle = |m: HeatMode, label: &'static str| {
        view! {
            <button data-testid="run-heat-mode" data-mode=m.key() class:active=move || mode.get() == m
                aria-pressed=move || (mode.get() == m).to_string() on:click=move |_| ctl.set_heat_mode(m)>{label}</button>
        }
    };
    let title = move || match mode.get() {
        HeatMode::Step => "Step time by rank",
        HeatMode::NotWaiting => "Time not waiting in collectives by rank",
    };
    let legend = straggler.map(|r| {
        view! { <span class="run-straggler-mark" data-testid="run-heatmap-straggler" data-rank=r>{format!("★ outlined: rank {r}, the straggler")}</span> }
    });
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let hit = ctl.run.with_untracked(|r| cell_at(&r.heatmap, f64::from(ev.offset_x()), f64::from(ev.offset_y())).map(|c| (c.rank, c.step)));
        if let Some((rank, step)) = hit {
            ctl.open_rank(rank, Some(step));
        }
    };
    let ranks = heatmap_axes(&data).0;
    let (a, b) = (RwSignal::new(ranks.first().copied()), RwSignal::new(ranks.get(1).copied()));
    let options = move |selected: RwSignal<Option<u32>>| {
        ranks
            .iter()
            .map(|&r| view! { <option value=r selected=move || selected.get() == Some(r)>{format!("rank {r}")}</option> })
            .collect_view()
    };
    let pick = |slot: RwSignal<Option<u32>>| move |ev| slot.set(event_target_value(&ev).parse().ok());
    let stack = move |_| {
        if let (Some(a), Some(b)) = (a.get_untracked(), b.get_untracked()) {
            ctl.stack_ranks(a, b);
        }
    };
    view! {
        <figure class="card">
            <h2>{title}" " <span class="muted">"darker is longer; ▲ step-time outlier; click a cell to open that rank at that step"</span></h2>
            <div class="run-heat-tools">
                <span class="run-heat-modes">
                    {toggle(HeatMode::Step, "step time")}
                    {toggle(HeatMode::NotWaiting, "time not waiting in collectives")}
                </span>
                {legend}
            </div>
            <canvas data-testid="run-heatmap" class="run-heatmap" style=format!("height: {height}px") node_ref=node on:click=on_click
                data-mode=move || mode.get().key() data-straggler=straggler.map(|r| r.to_string())></canvas>
            <div class="run-stack-tools">
                "Stack "
                <select data-testid="run-stack-a" on:change=pick(a)>{options(a)}</select>
                " over "
                <select data-testid="run-stack-b" on:change=pick(b)>{options(b)}</select>
                <button data-testid="run-stack" title="Both ranks' timelines, one above the other, aligned at a step (the Compare tab)"
                    on:click=stack>"Stack timelines"</button>
            </div>
        </figure>
    }
}

/// A numeric cell: the raw value in `data-value`, `text` shown.
/// Rows per [`Deferred`] part of a run table: one task built 64 ranks' rows and laid them out
/// in 50-60 ms on the 2-core machine; a part of 16 takes a quarter of that.
const ROWS_PER_PART: usize = 16;

/// `items`' rows, [`ROWS_PER_PART`] built per frame.
fn by_parts<T, V>(items: &[T], row: fn(&T) -> V) -> impl IntoView
where
    T: Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    items
        .chunks(ROWS_PER_PART)
        .map(|part| {
            let part: Arc<[T]> = part.into();
            view! {
                <Deferred>
                    {
                        let part = part.clone();
                        move || part.iter().map(row).collect_view()
                    }
                </Deferred>
            }
        })
        .collect_view()
}

fn num(key: &'static str, value: Option<f64>, text: String) -> impl IntoView {
    view! { <td class="num" data-key=key data-value=value.map(|v| v.to_string())>{text}</td> }
}

fn us_cell(key: &'static str, value: Option<f64>) -> impl IntoView {
    num(key, value, value.map_or("–".into(), format::span_us))
}

fn pct_cell(key: &'static str, value: Option<f64>) -> impl IntoView {
    num(key, value, value.map_or("–".into(), |v| format!("{v:.1} %")))
}

#[component]
fn RankTable(data: Arc<RunData>) -> impl IntoView {
    fn row(r: &RunRank) -> impl IntoView {
        let b = &r.breakdown_us;
        let rank = r.rank.map(|x| x.to_string());
        view! {
            <tr data-testid="run-rank-row" data-rank=rank.clone()>
                <td data-key="rank" data-value=rank.clone()>{rank.clone().unwrap_or_default()}</td>
                <td class="name" data-key="file" title=r.file.clone()>{r.file.clone()}</td>
                {num("steps", Some(r.steps as f64), r.steps.to_string())}
                {us_cell("step_mean_us", r.step_mean_us)}
                {us_cell("step_p95_us", r.step_p95_us)}
                {us_cell("compute_us", Some(b.compute))}
                {us_cell("comm_non_overlapped_us", Some(b.comm_non_overlapped))}
                {us_cell("comm_overlapped_us", Some(b.comm_overlapped))}
                {us_cell("memory_us", Some(b.memory))}
                {us_cell("idle_us", Some(b.idle))}
                {pct_cell("overlap_pct", r.overlap_pct)}
                {pct_cell("gpu_utilization_pct", r.gpu_utilization_pct)}
                {num("peak_memory_bytes", r.peak_memory_bytes, r.peak_memory_bytes.map_or("–".into(), |v| format::bytes(v.max(0.0) as u64)))}
            </tr>
        }
    }
    let rows = by_parts(&data.ranks, row);
    view! {
        <div class="card">
            <h2>"Ranks"</h2>
            <div class="run-scroll">
                <table class="run-table" data-testid="run-rank-table">
                    <thead><tr>
                        <th>"rank"</th><th>"file"</th><th>"steps"</th><th>"step mean"</th><th>"step p95"</th>
                        <th>"compute"</th><th>"comm (not overlapped)"</th><th>"comm (overlapped)"</th>
                        <th>"memcpy/memset"</th><th>"idle"</th><th>"overlap"</th><th>"GPU util."</th><th>"peak memory"</th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </div>
    }
}

#[component]
fn Stragglers(data: Arc<RunData>) -> impl IntoView {
    fn straggler(s: &RunStraggler) -> impl IntoView {
        // The delay first, then the names that ran longer (a few µs each, often).
        let delay = s.why.delay.as_ref().map(|d| d.text.clone());
        // Short kernel names: whole templated names made the cell dozens of lines tall at 800 px.
        let named: Vec<_> = s.why.kernels.iter().chain(&s.why.ops).take(3).collect();
        let short = crate::state::names::short_names(named.iter().map(|x| x.name.as_str()));
        let names = named.iter().zip(short).map(|(x, n)| format!("{n} (+{})", format::span_us(x.extra_us)));
        let full: Vec<String> = delay.iter().cloned().chain(named.iter().map(|x| format!("{} (+{})", x.name, format::span_us(x.extra_us)))).collect();
        let why: Vec<String> = delay.into_iter().chain(names).collect();
        view! {
            <tr data-testid="run-straggler" data-rank=s.rank.map(|r| r.to_string())>
                <td>{s.rank.map_or("?".into(), |r| r.to_string())}</td>
                {num("last_arrivals", Some(s.last_arrivals as f64), s.last_arrivals.to_string())}
                {us_cell("caused_wait_us", Some(s.caused_wait_us))}
                {us_cell("waited_us", Some(s.waited_us))}
                <td class="why" title=full.join("; ")>{why.join("; ")}</td>
            </tr>
        }
    }
    fn wait(w: &RunCollectiveRank) -> impl IntoView {
        view! {
            <tr data-testid="run-wait-row" data-rank=w.rank.map(|r| r.to_string())>
                <td>{w.rank.map_or("?".into(), |r| r.to_string())}</td>
                {num("collectives", Some(w.collectives as f64), w.collectives.to_string())}
                {num("matched", Some(w.matched as f64), w.matched.to_string())}
                {num("last_arrivals", Some(w.last_arrivals as f64), w.last_arrivals.to_string())}
                {us_cell("wait_us", Some(w.wait_us))}
            </tr>
        }
    }
    let stragglers = by_parts(&data.stragglers, straggler);
    let waits = by_parts(&data.collectives.per_rank, wait);
    let named = data.straggler.and_then(|r| data.stragglers.iter().find(|s| s.rank == Some(r)));
    let summary = named.map(|s| {
        let rank = s.rank.map_or("?".into(), |r| r.to_string());
        let delay = s.why.delay.as_ref().map_or_else(String::new, |d| format!(": {}", d.text));
        view! {
            <p class="run-straggler-delay" data-testid="run-straggler-delay" data-rank=rank.clone()>
                <b>{format!("Rank {rank} is the straggler")}</b>{format!(", making the others wait {}{delay}", format::span_us(s.caused_wait_us))}
            </p>
        }
    });
    view! {
        <div class="card" data-testid="run-stragglers">
            <h2>"Stragglers " <span class="muted">"who arrived last at collectives, and the wait it caused"</span></h2>
            {summary}
            <table class="run-table">
                <thead><tr><th>"rank"</th><th>"last arrivals"</th><th>"wait caused"</th><th>"waited"</th><th>"why"</th></tr></thead>
                <tbody>{stragglers}</tbody>
            </table>
            <h3>"Collective waits per rank"</h3>
            <table class="run-table">
                <thead><tr><th>"rank"</th><th>"collectives"</th><th>"matched"</th><th>"last arrivals"</th><th>"waited"</th></tr></thead>
                <tbody>{waits}</tbody>
            </table>
        </div>
    }
}

#[component]
fn Offsets(data: Arc<RunData>) -> impl IntoView {
    fn row(o: &RunOffset) -> impl IntoView {
        view! {
            <tr data-testid="run-offset" data-rank=o.rank.map(|r| r.to_string()) data-value=o.offset_us.map(|v| v.to_string())>
                <td>{o.rank.map_or("?".into(), |r| r.to_string())}</td>
                <td class="num">{o.offset_us.map_or("not estimable".into(), format::signed_us)}</td>
            </tr>
        }
    }
    let rows = by_parts(&data.offsets_us, row);
    view! {
        <div class="card" data-testid="run-offsets">
            <h2>"Clock offsets " <span class="muted">{format!("time axis: {}", data.clock.as_deref().unwrap_or("?"))}</span></h2>
            <table class="run-table">
                <thead><tr><th>"rank"</th><th>"offset"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

#[component]
fn Findings(ctl: Controller, data: Arc<RunData>) -> impl IntoView {
    let items = data
        .findings
        .iter()
        .map(|f| {
            let mut places: Vec<(u32, Option<u64>)> = f.evidence.iter().filter_map(|e| Some((e.rank?, e.step))).collect();
            places.dedup();
            let evidence = places
                .into_iter()
                .take(6)
                .map(|(rank, step)| {
                    let label = step.map_or(format!("rank {rank}"), |s| format!("rank {rank} · step {s}"));
                    view! {
                        <button data-testid="run-evidence" data-rank=rank data-step=step.map(|s| s.to_string())
                            on:click=move |_| ctl.open_rank(rank, step)>{label}</button>
                    }
                })
                .collect_view();
            view! {
                <li data-testid="run-finding" data-rule=f.rule.clone()>
                    <b>{f.title.clone()}</b>
                    <p class="muted">{f.why.clone()}</p>
                    <div class="run-evidence">{evidence}</div>
                </li>
            }
        })
        .collect_view();
    let none = data.findings.is_empty().then(|| view! { <li class="muted">"No run finding."</li> });
    view! {
        <div class="card" data-testid="run-findings">
            <h2>"Run findings"</h2>
            <ul class="run-findings">{items}{none}</ul>
        </div>
    }
}
