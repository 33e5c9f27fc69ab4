//! The Run tab's ranks timeline (docs/viewer.md#runs): up to 8 ranks' timelines stacked, one
//! panel per rank (its GPU streams and main CPU thread shown, its other threads folded), one
//! time axis on the chosen clock (as recorded, aligned by collectives, or at a step's start).
//! W/S/A/D, zoom and pan act on every rank; the search box flags matches on every rank and
//! sums their counts (Enter / Shift+Enter: next / previous match across ranks); a click selects a slice (its details below) and, for a collective
//! kernel, marks that instance on every rank with its arrival order and waits.
//!
//! Test ids: `run-stack-ranks` (the timeline), `run-stack-pick` (checkbox per rank,
//! `data-rank`), `run-stack-clock` (select: `recorded`, `collectives`, `step`), `run-stack-step`
//! (a step picker, on `step`), `run-stack-search`, `run-stack-search-count`, `run-stack-reset`,
//! `run-stack-status`, panels `run-stack-rank` (`data-rank`) with canvases `run-stack-canvas`
//! (`data-rank`), `run-stack-selection`, `run-stack-collective` with rows `run-stack-member`
//! (`data-rank`, `data-arrival`, `data-wait` µs).

use super::lane_canvas::LaneCanvas;
use super::lane_source::LaneSource;
use super::theme::Theme;
use crate::control::Controller;
use crate::deferred::Deferred;
use crate::panels::StepPicker;
use crate::state::format;
use crate::state::ranks::{default_clock, default_ranks, Clock};
use crate::state::stack::{StackId, StackState};
use leptos::prelude::*;
use protocol::{RunData, MAX_HELD_RANKS};
use std::sync::Arc;

/// The ranks timeline of run `data`; asks for the default ranks the first time it shows, once
/// the rest of the page is built: the worker then reloads the models it dropped, and that work
/// beside the page's build (on two cores) stretched the build's tasks past 50 ms.
#[component]
pub fn RanksTimeline(ctl: Controller, data: Arc<RunData>, theme: ReadSignal<Theme>) -> impl IntoView {
    if ctl.ranks.with_untracked(|r| r.chosen.is_empty()) {
        let (clock, ranks, run) = (default_clock(&data), default_ranks(&data), data.clone());
        crate::deferred::when_built(move || {
            let fresh = ctl.ranks.try_with_untracked(|r| r.chosen.is_empty() && r.hold.is_none());
            // Still this run (another may have opened meanwhile).
            let same = ctl.run.try_with_untracked(|r| r.data.as_ref().is_some_and(|d| Arc::ptr_eq(d, &run)));
            if fresh == Some(true) && same == Some(true) {
                ctl.ranks.update_untracked(|r| r.clock = clock);
                ctl.ranks_show(&ranks);
            }
        });
    }
    // Keys go back to the main timeline when the Run tab closes.
    on_cleanup(move || ctl.stack_focus(false));
    let held = Memo::new(move |_| ctl.ranks.with(|r| r.held.clone()));
    let offsets: Vec<(u32, Option<f64>)> = data.offsets_us.iter().filter_map(|o| Some((o.rank?, o.offset_us))).collect();
    let panels = move || {
        held.get()
            .into_iter()
            .enumerate()
            .map(|(i, rank)| {
                let offset = offsets.iter().find(|o| o.0 == rank).and_then(|o| o.1);
                let offset = offset.map(|o| format!(" · clock offset {}", format::signed_us(o))).unwrap_or_default();
                let label = move || ctl.rank_stack.with(|s| s.panels.get(i).map(|p| p.label.clone())).unwrap_or_default();
                let title = Memo::new(move |_| format!("{}{offset}", label()));
                // One panel per frame (`Deferred`): eight built in one task took over 50 ms.
                view! {
                    <Deferred>
                        <div class="stack-pane" data-testid="run-stack-rank" data-rank=rank>
                            <div class="stack-title">{move || title.get()}</div>
                            <LaneCanvas ctl=ctl theme=theme source=LaneSource::Stack(StackId::Ranks, i)
                                testid="run-stack-canvas" rank=rank />
                        </div>
                    </Deferred>
                }
            })
            .collect_view()
    };
    view! {
        <section class="card compare-stack run-ranks" data-testid="run-stack-ranks">
            <h2>"Ranks timeline " <span class="muted">"one time axis; W/S/A/D, drag and ctrl+wheel move every rank; click a collective kernel to mark it on every rank"</span></h2>
            // Part by part, one per frame (`Deferred`), as the rest of the Run tab.
            <Deferred><RankPicker ctl=ctl data=data.clone() /></Deferred>
            <Deferred><Toolbar ctl=ctl /></Deferred>
            <Status ctl=ctl />
            {panels}
            <Selection ctl=ctl />
        </section>
    }
}

/// One checkbox per rank of the run (at most [`MAX_HELD_RANKS`] checked).
#[component]
fn RankPicker(ctl: Controller, data: Arc<RunData>) -> impl IntoView {
    let boxes = data
        .ranks
        .iter()
        .filter_map(|r| r.rank)
        .map(|rank| {
            let checked = move || ctl.ranks.with(|r| r.chosen.contains(&rank));
            let on_change = move |ev: leptos::ev::Event| {
                let mut chosen = ctl.ranks.with_untracked(|r| r.chosen.clone());
                if event_target_checked(&ev) {
                    chosen.push(rank);
                } else {
                    chosen.retain(|&x| x != rank);
                }
                if chosen.len() <= MAX_HELD_RANKS && !chosen.is_empty() {
                    ctl.ranks_show(&chosen);
                } else {
                    // Refused: the box goes back to what is shown.
                    ctl.ranks.update(|_| {});
                }
            };
            view! {
                <label class="run-stack-pick">
                    <input type="checkbox" data-testid="run-stack-pick" data-rank=rank prop:checked=checked on:change=on_change />
                    {format!("rank {rank}")}
                </label>
            }
        })
        .collect_view();
    view! { <div class="run-stack-tools">"Ranks (up to 8): " {boxes}</div> }
}

/// Clock switch, step picker, search box and count, reset.
#[component]
fn Toolbar(ctl: Controller) -> impl IntoView {
    let clock = Memo::new(move |_| ctl.ranks.with(|r| r.clock));
    let steps = Memo::new(move |_| ctl.rank_stack.with(StackState::common_steps));
    let step = Memo::new(move |_| match clock.get() {
        Clock::Step(n) => Some(n),
        _ => None,
    });
    let on_clock = move |ev: leptos::ev::Event| {
        let first = steps.with_untracked(|s| s.first().copied()).unwrap_or(0);
        let c = match event_target_value(&ev).as_str() {
            "collectives" => Clock::Collectives,
            "step" => Clock::Step(step.get_untracked().unwrap_or(first)),
            _ => Clock::Recorded,
        };
        ctl.ranks_clock(c);
    };
    let count = move || {
        ctl.ranks.with(|r| {
            if r.search.text.is_empty() {
                return String::new();
            }
            let (total, complete) = r.search.total();
            let per: Vec<String> = r.held.iter().zip(&r.search.counts).filter_map(|(rank, c)| Some(format!("rank {rank}: {}", (*c)?))).collect();
            let more = if complete { "" } else { "…" };
            format!("{total} matches{more} ({})", per.join(", "))
        })
    };
    let on_key = move |e: web_sys::KeyboardEvent| {
        if e.key() == "Enter" {
            e.prevent_default();
            ctl.ranks_search_step(!e.shift_key());
        }
    };
    let option = move |value: &'static str, label: &'static str| {
        view! { <option value=value selected=move || clock.get().as_str() == value>{label}</option> }
    };
    view! {
        <div class="tl-toolbar">
            <span>"Clock"</span>
            <select data-testid="run-stack-clock" on:change=on_clock>
                {option("recorded", "as recorded")}
                {option("collectives", "aligned by collectives")}
                {option("step", "at step")}
            </select>
            <Show when=move || step.get().is_some()>
                <StepPicker testid="run-stack-step" steps=steps current=step
                    on_pick=Callback::new(move |n| ctl.ranks_clock(Clock::Step(n))) />
            </Show>
            <input type="search" placeholder="Search every rank (Enter: next)" data-testid="run-stack-search"
                prop:value=move || ctl.ranks.with(|r| r.search.typed.clone())
                on:input=move |e| ctl.ranks_search(event_target_value(&e))
                on:keydown=on_key />
            <span class="muted" data-testid="run-stack-search-count">{count}</span>
            <span class="spacer"></span>
            <button data-testid="run-stack-reset" title="Show every rank whole, or the aligned step (0)"
                on:click=move |_| ctl.stack_view(StackId::Ranks, StackState::reset)>"Reset zoom"</button>
        </div>
    }
}

/// Models being reloaded, and ranks that could not be held.
#[component]
fn Status(ctl: Controller) -> impl IntoView {
    let text = move || {
        ctl.ranks.with(|r| {
            let failed: Vec<String> = r.failed.iter().map(|(rank, e)| format!("rank {rank}: {e}")).collect();
            let failed = (!failed.is_empty()).then(|| format!("not shown: {}", failed.join("; ")));
            let loading = r.hold.map(|_| match r.reloading {
                Some((i, Some(pct))) => format!("loading the ranks' models: file {} {pct}%", i + 1),
                _ => "loading the ranks' models…".to_owned(),
            });
            [loading, failed].into_iter().flatten().collect::<Vec<_>>().join(" · ")
        })
    };
    view! { <p class="muted" data-testid="run-stack-status">{text}</p> }
}

/// The selected slice, and the collective instance it belongs to: every rank's arrival and
/// wait, first arrival first.
#[component]
fn Selection(ctl: Controller) -> impl IntoView {
    let selected = move || {
        ctl.ranks.with(|r| {
            let sel = r.selection.as_ref()?;
            let d = sel.details.as_ref();
            let name = d.map_or("…".to_owned(), |d| d.slice.name.clone());
            let dur = d.map(|d| format::span_us(d.slice.dur_ns as f64 / 1e3)).unwrap_or_default();
            let text = format!("rank {} · {name} · {dur}", sel.rank);
            Some(view! { <p data-testid="run-stack-selection" data-rank=sel.rank>{text}</p> })
        })
    };
    let collective = move || {
        ctl.ranks.with(|r| {
            let c = r.collective.as_ref()?;
            let mut members = c.members.clone();
            members.sort_by_key(|m| m.arrival);
            let rows = members
                .into_iter()
                .map(|m| {
                    view! {
                        <tr data-testid="run-stack-member" data-rank=m.rank data-arrival=m.arrival data-wait=m.wait_us>
                            <td>{m.arrival + 1}</td>
                            <td>{format!("rank {}", m.rank)}</td>
                            <td class="num">{format::span_us(m.wait_us)}</td>
                        </tr>
                    }
                })
                .collect_view();
            let step = c.step.map(|s| format!(" · step {s}")).unwrap_or_default();
            let head = format!("{} · {}{step} · #{} in its step", c.key, c.name, c.index_in_step);
            Some(view! {
                <div data-testid="run-stack-collective">
                    <h3>"Collective " <span class="muted">{head}</span></h3>
                    <table class="run-table">
                        <thead><tr><th>"arrived"</th><th>"rank"</th><th>"waited"</th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            })
        })
    };
    view! { {selected} {collective} }
}
