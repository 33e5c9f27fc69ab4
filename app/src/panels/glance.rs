//! The Summary tab's lead, the trace at a glance: the hardware and job (GPUs, rank of world
//! size, runtime versions, profiler options), the steps (count, mean, p95) and what bounds
//! them, GPU utilization / SM efficiency / occupancy / tensor-core share, the top three
//! findings and trace health in one line. The numbers are `info --json`'s `about` and
//! `report --json`'s `step_stats`, `gpus`, `critical_path` and `findings`.
//!
//! Test ids: `glance` (the block); `glance-gpu` (`data-id`, `data-name`), `glance-rank`
//! (`data-rank`, `data-world`), `glance-recording`; `glance-steps` (`data-count`),
//! `glance-step-mean` / `glance-step-p95` (`data-value`, µs), `glance-bound` (`data-class`,
//! `data-share`); `glance-gpu-metrics` rows (`data-device`, cells `data-key` with
//! `data-value`, %); `glance-finding` (`data-rule`); `glance-health`.

use crate::control::Controller;
use crate::state::glance::health_line;
use crate::state::table::Tab;
use crate::state::{format, LoadState};
use leptos::prelude::*;
use protocol::{FindingData, Glance, GpuGlance, TraceAbout, TraceSummary};
use std::sync::Arc;

/// Findings the glance lists.
const TOP_FINDINGS: usize = 3;

/// The glance of the loaded trace.
#[component]
pub fn GlancePanel(ctl: Controller, state: ReadSignal<LoadState>) -> impl IntoView {
    let summary = Memo::new(move |_| state.with(|s| s.summary.clone()));
    let glance = Memo::new(move |_| state.with(|s| (s.glance.data.clone(), s.glance.error.clone())));
    let findings = Memo::new(move |_| ctl.findings.with(|f| f.list.clone()));
    move || {
        summary.get().map(|s| {
            let (data, error) = glance.get();
            view! {
                <section class="glance" data-testid="glance">
                    <div class="cards">
                        {hardware_card(&s)}
                        {steps_card(data.as_deref(), error.as_deref())}
                        {gpu_card(data.as_ref())}
                        {findings_card(ctl, findings.get().as_deref())}
                    </div>
                    <p class="glance-health" data-testid="glance-health">
                        <b>"Trace health: "</b>
                        {health_line(&s.health, s.warnings.len())}
                    </p>
                </section>
            }
        })
    }
}

/// GPUs, rank and how the trace was recorded.
fn hardware_card(s: &Arc<TraceSummary>) -> impl IntoView {
    let TraceAbout { devices, distributed, recording } = &s.about;
    let gpus = if devices.is_empty() {
        view! { <dd>"not listed (no deviceProperties)"</dd> }.into_any()
    } else {
        devices
            .iter()
            .map(|d| {
                let mut facts = vec![];
                facts.extend(d.memory_bytes.map(|b| format!("{:.0} GB", b as f64 / 1e9)));
                facts.extend(d.compute_capability.as_ref().map(|c| format!("compute {c}")));
                facts.extend(d.sms.map(|n| format!("{n} SMs")));
                view! {
                    <dd data-testid="glance-gpu" data-id=d.id data-name=d.name.clone()>
                        // ROCm traces list their GPUs with an empty name (the MI300X vLLM fixture).
                        <b>{if d.name.is_empty() { "name not recorded".to_owned() } else { d.name.clone() }}</b>
                        <span class="muted">{format!(" · {}", facts.join(" · "))}</span>
                    </dd>
                }
            })
            .collect_view()
            .into_any()
    };
    let rank = distributed.as_ref().map(|d| {
        let or_unknown = |v: Option<u32>| v.map_or("?".to_owned(), |v| v.to_string());
        let backend = d.backend.as_deref().map(|b| format!(" · {b}")).unwrap_or_default();
        view! {
            <dt>"Rank"</dt>
            <dd data-testid="glance-rank" data-rank=d.rank data-world=d.world_size>
                {format!("{} of {}{backend}", or_unknown(d.rank), or_unknown(d.world_size))}
            </dd>
        }
    });
    let recorded = recording
        .iter()
        .map(|(label, value)| view! { <span class="fact">{format!("{label}: {value}")}</span> })
        .collect_view();
    view! {
        <section class="card">
            <h2>"Hardware and job"</h2>
            <dl>
                <dt>"GPU"</dt>
                {gpus}
                {rank}
                <dt>"Recorded"</dt>
                <dd data-testid="glance-recording" class="facts">{recorded}</dd>
            </dl>
        </section>
    }
}

/// Step count, mean and p95, and what bounds the steps.
fn steps_card(g: Option<&Glance>, error: Option<&str>) -> impl IntoView {
    let body = match (g, error) {
        (_, Some(e)) => view! { <p class="muted">{format!("Not available: {e}")}</p> }.into_any(),
        (None, None) => view! { <p class="muted">"Measuring…"</p> }.into_any(),
        (Some(g), None) => {
            let steps = match &g.steps {
                Some(st) => view! {
                    <dt>"Steps"</dt>
                    <dd data-testid="glance-steps" data-count=st.count>{format::count(st.count)}</dd>
                    <dt>"Step time"</dt>
                    <dd>
                        <span data-testid="glance-step-mean" data-value=st.mean_ns / 1e3>
                            {format!("{} mean", format::span_us(st.mean_ns / 1e3))}
                        </span>
                        " · "
                        <span data-testid="glance-step-p95" data-value=st.p95_ns / 1e3>
                            {format!("{} p95", format::span_us(st.p95_ns / 1e3))}
                        </span>
                    </dd>
                }
                .into_any(),
                None => view! {
                    <dt>"Steps"</dt>
                    <dd data-testid="glance-steps" data-count=0>{super::NO_STEPS}</dd>
                }
                .into_any(),
            };
            let bound = g.bound_by.as_ref().map(|b| {
                let of = if g.steps.is_some() { "steps" } else { "windows" };
                view! {
                    <dt>"Bound by"</dt>
                    <dd data-testid="glance-bound" data-class=b.class.clone() data-share=b.share_pct>
                        <b>{b.label.clone()}</b>
                        {format!(
                            ": {:.0}% of the critical path, bounds {} of {} {of}",
                            b.share_pct, b.steps_bound, b.steps
                        )}
                    </dd>
                }
            });
            view! { <dl>{steps}{bound}</dl> }.into_any()
        }
    };
    view! {
        <section class="card">
            <h2>"Steps"</h2>
            {body}
        </section>
    }
}

/// Utilization, SM efficiency, occupancy and tensor-core share per GPU.
fn gpu_card(g: Option<&Arc<Glance>>) -> impl IntoView {
    let rows = g.map(|g| {
        if g.gpus.is_empty() {
            return view! { <p class="muted">"No kernels in this trace."</p> }.into_any();
        }
        let rows = g.gpus.iter().map(gpu_row).collect_view();
        view! {
            <table class="counts" data-testid="glance-gpu-metrics">
                <thead>
                    <tr><th class="device">"GPU"</th><th class="num" title="GPU utilization">"Util."</th>
                    <th class="num" title="Est. SM efficiency">"SM eff."</th>
                    <th class="num" title="Est. achieved occupancy">"Occ."</th>
                    <th class="num" title="Tensor-core kernels' share of kernel time">"TC"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        }
        .into_any()
    });
    view! {
        <section class="card">
            <h2>"GPU"</h2>
            {rows}
        </section>
    }
}

/// One GPU's row: each metric as a percentage, "—" where the trace has no data for it.
fn gpu_row(m: &GpuGlance) -> impl IntoView {
    let cell = |key: &'static str, v: Option<f64>| {
        let text = v.map_or("—".to_owned(), |v| format!("{v:.1}%"));
        view! { <td class="num" data-key=key data-value=v>{text}</td> }
    };
    view! {
        <tr data-device=m.device>
            <td>{m.device}</td>
            {cell("utilization_pct", Some(m.utilization_pct))}
            {cell("sm_efficiency_pct", m.sm_efficiency_pct)}
            {cell("achieved_occupancy_pct", m.achieved_occupancy_pct)}
            {cell("tensor_core_pct", m.tensor_core_pct)}
        </tr>
    }
}

/// The first findings as the Findings tab orders them (severity, then impact); a click opens
/// the finding there.
fn findings_card(ctl: Controller, list: Option<&[FindingData]>) -> impl IntoView {
    let body = match list {
        None => view! { <p class="muted">"Detecting…"</p> }.into_any(),
        Some([]) => view! { <p class="muted">"No findings."</p> }.into_any(),
        Some(list) => {
            let items = list
                .iter()
                .take(TOP_FINDINGS)
                .map(|f| {
                    let rule = f.rule.clone();
                    let impact = f.impact_pct.map(|p| format!(" · {p:.1}% of step time on the path")).unwrap_or_default();
                    view! {
                        <li class=format!("finding {}", f.severity) data-testid="glance-finding" data-rule=f.rule.clone()>
                            <a href="#" on:click=move |e| {
                                e.prevent_default();
                                ctl.select_tab(Tab::Findings);
                                ctl.activate_finding(&rule);
                            }>
                                <span class="badge">{f.severity.clone()}</span>" "{f.title.clone()}
                            </a>
                            <span class="muted">{impact}</span>
                        </li>
                    }
                })
                .collect_view();
            let more = list.len().saturating_sub(TOP_FINDINGS);
            let more = (more > 0).then(|| view! { <p class="muted">{format!("and {} more on the Findings tab", format::count(more as u64))}</p> });
            view! { <ul class="glance-findings">{items}</ul>{more} }.into_any()
        }
    };
    view! {
        <section class="card">
            <h2>"Top findings"</h2>
            {body}
        </section>
    }
}
