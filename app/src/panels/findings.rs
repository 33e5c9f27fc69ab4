//! The cheatsheet panel: findings by severity, each with its measured title, what it usually
//! means, what to try, why we think so (the numbers the rule compared, muted) and how much
//! evidence backs it. Clicking a finding zooms the timeline to
//! the evidence and selects it; hovering outlines the evidence.
//!
//! Test ids: `findings` (panel), `finding` items (`data-rule`, `data-severity`, `data-active`),
//! `finding-count`, `finding-remedy` (`data-us`: what the modelled remedy saves per step),
//! `finding-impact` (`data-us`, `data-pct`: what fixing it saves at most per
//! step), `finding-why`, `findings-negligible` (a `<details>` folding the negligible ones), `finding-link` (the share link of the view with that finding active),
//! `findings-no-steps` (a trace without steps: the step rules did not run). Trace text is always
//! text, never HTML.

use crate::control::Controller;
use crate::state::format;
use leptos::prelude::*;
use protocol::FindingData;

/// The list of findings of the loaded trace.
#[component]
pub fn FindingsPanel(ctl: Controller) -> impl IntoView {
    let list = Memo::new(move |_| ctl.findings.with(|f| f.list.clone()));
    let active = Memo::new(move |_| ctl.findings.with(|f| f.active.clone()));
    let counts = Memo::new(move |_| ctl.findings.with(|f| f.counts()));
    let no_steps = Memo::new(move |_| ctl.timeline.with(|t| t.layout.as_ref().is_some_and(|l| l.steps.is_empty())));
    view! {
        <section class="card findings" data-testid="findings">
            <p class="muted" data-testid="finding-count">
                {move || match list.get() {
                    None => "Reading the trace…".to_owned(),
                    Some(l) if l.is_empty() => "No known pattern found in this trace.".to_owned(),
                    Some(_) => {
                        let (a, w, i) = counts.get();
                        format!("{a} alerts · {w} warnings · {i} notes — click one to see its evidence on the timeline")
                    }
                }}
            </p>
            {move || no_steps.get().then(|| view! {
                <p class="muted" data-testid="findings-no-steps">{format!("{}: {}.", super::NO_STEPS, super::NO_STEP_RULES)}</p>
            })}
            <ul>
                {move || list.get().unwrap_or_default().into_iter().filter(|f| !negligible(f)).map(|f| item(ctl, f, active)).collect_view()}
            </ul>
            {move || {
                let folded: Vec<FindingData> = list.get().unwrap_or_default().into_iter().filter(negligible).collect();
                let rules: Vec<String> = folded.iter().map(|f| f.rule.clone()).collect();
                // Open while the active finding (clicked, or named by a link) is folded in it.
                let holds_active = move || active.get().is_some_and(|a| rules.contains(&a));
                (!folded.is_empty()).then(|| view! {
                    <details class="negligible" data-testid="findings-negligible" prop:open=holds_active>
                        <summary title="Under 2% of step time on the critical path: fixing them would not shorten a step by much">
                            {format!("Negligible ({})", folded.len())}
                        </summary>
                        <ul>{folded.into_iter().map(|f| item(ctl, f, active)).collect_view()}</ul>
                    </details>
                })
            }}
        </section>
    }
}

/// A finding folded under "Negligible": a warning told as info because its impact is under
/// 2% of step time (its why says "Negligible:"), or an info whose measured impact is under 2%
/// (docs/findings.md "Impact and severity").
pub fn negligible(f: &FindingData) -> bool {
    // Rules about something other than step time keep their place whatever their impact.
    let about_steps = !f.rule.starts_with("health-") && !matches!(f.rule.as_str(), "memory-near-limit" | "partial-trace");
    f.why.contains("Negligible:") || (about_steps && f.severity == "info" && f.impact_pct.is_some_and(|p| p < 2.0))
}

/// "Would save up to 4.10 ms of 38.0 ms per step (10.8%)", from the finding's impact.
fn impact_text(f: &FindingData) -> Option<String> {
    let (us, pct) = (f.impact_us?, f.impact_pct?);
    if us <= 0.0 {
        return Some("None of its evidence is on a step's critical path: fixing it alone would not shorten a step.".to_owned());
    }
    let step_us = if pct > 0.0 { us * 100.0 / pct } else { 0.0 };
    Some(format!("Would save up to {} of {} per step ({pct:.1}%).", format::span_us(us), format::span_us(step_us)))
}

/// "Modelled with the syncs removed: each step 3.10 ms shorter (8.2%)", from the remedy's
/// what-if.
fn remedy_text(f: &FindingData) -> Option<String> {
    let (us, pct, what) = f.remedy.as_ref()?;
    if *us <= 0.0 {
        return Some(format!("Modelled with {what}: no step would be shorter (another path sets it)."));
    }
    Some(format!("Modelled with {what}: each step {} shorter ({pct:.1}%).", format::span_us(*us)))
}

fn item(ctl: Controller, f: FindingData, active: Memo<Option<String>>) -> impl IntoView {
    let rule = f.rule.clone();
    let (r1, r2, r3) = (rule.clone(), rule.clone(), rule.clone());
    let is_active = Memo::new(move |_| active.get().as_deref() == Some(r1.as_str()));
    let shown = f.slices.len();
    let evidence = if f.total as usize > shown {
        format!("{} slices of evidence ({shown} outlined)", f.total)
    } else {
        format!("{} slices of evidence", f.total)
    };
    view! {
        <li
            class=format!("finding {}", f.severity)
            class:active=move || is_active.get()
            data-testid="finding"
            data-rule=rule.clone()
            data-severity=f.severity.clone()
            data-active=move || is_active.get().to_string()
            on:click=move |_| ctl.activate_finding(&r2)
            on:mouseenter=move |_| ctl.hover_finding(Some(rule.clone()))
            on:mouseleave=move |_| ctl.hover_finding(None)
        >
            <div class="finding-head">
                <span class="badge">{f.severity.clone()}</span>
                <code class="rule">{f.rule.clone()}</code>
                <span class="finding-title">{f.title.clone()}</span>
            </div>
            {impact_text(&f).map(|t| view! {
                <p class="impact" data-testid="finding-impact" data-us=f.impact_us.map(|u| u.to_string())
                    data-pct=f.impact_pct.map(|p| p.to_string())>{t}</p>
            })}
            {remedy_text(&f).map(|t| view! {
                <p class="impact" data-testid="finding-remedy" data-us=f.remedy.as_ref().map(|r| r.0.to_string())>{t}</p>
            })}
            <p class="muted why" data-testid="finding-why">{f.why.clone()}</p>
            <p><b>"Usually means: "</b>{f.meaning.clone()}</p>
            <p><b>"Try: "</b>{f.try_this.clone()}</p>
            <p class="muted">
                {evidence}" · "
                <a data-testid="finding-link" href=move || ctl.finding_url(&r3)
                    title="A link that opens this trace with this finding selected"
                    on:click=|e| e.stop_propagation()>"link to this finding"</a>
            </p>
        </li>
    }
}
