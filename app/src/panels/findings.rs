//! The cheatsheet panel: findings by severity, each with its measured title, what it usually
//! means, what to try, why we think so (the numbers the rule compared, muted) and how much
//! evidence backs it. Clicking a finding zooms the timeline to
//! the evidence and selects it; hovering outlines the evidence.
//!
//! Test ids: `findings` (panel), `finding` items (`data-rule`, `data-severity`, `data-active`),
//! `finding-count`, `finding-why`, `finding-link` (the share link of the view with that finding active),
//! `findings-no-steps` (a trace without steps: the step rules did not run). Trace text is always
//! text, never HTML.

use crate::control::Controller;
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
                {move || list.get().unwrap_or_default().into_iter().map(|f| item(ctl, f, active)).collect_view()}
            </ul>
        </section>
    }
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
