//! A profiler step picker: the step's number in a box, with previous / next buttons. A select
//! with an option per step took 30-60 ms to build for a 1,099-step trace, and was a long list to
//! scroll through.
//!
//! Test ids: the box is `testid`, the buttons `<testid>-prev` and `<testid>-next`.

use leptos::prelude::*;
use web_sys::HtmlInputElement;

/// Picks one of `steps` (numbers, in order) through `on_pick`; `current` is the one shown. A
/// number that is not a step puts the box back to `current`.
#[component]
pub fn StepPicker(
    testid: &'static str,
    #[prop(into)] steps: Signal<Vec<u64>>,
    #[prop(into)] current: Signal<Option<u64>>,
    on_pick: Callback<u64>,
) -> impl IntoView {
    // Picks the step `by` places from the current one, if there is one.
    let go = move |by: isize| {
        let to = current.get_untracked().and_then(|now| {
            steps.with_untracked(|s| {
                let at = s.iter().position(|&n| n == now)?;
                s.get(at.checked_add_signed(by)?).copied()
            })
        });
        if let Some(n) = to {
            on_pick.run(n);
        }
    };
    let on_change = move |ev: leptos::ev::Event| {
        let input = event_target::<HtmlInputElement>(&ev);
        let typed = input.value().trim().parse::<u64>().ok();
        match typed.filter(|n| steps.with_untracked(|s| s.contains(n))) {
            Some(n) => on_pick.run(n),
            None => input.set_value(
                &current
                    .get_untracked()
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
            ),
        }
    };
    let first = move || steps.with(|s| s.first().copied());
    let last = move || steps.with(|s| s.last().copied());
    view! {
        <span class="step-pick">
            <button data-testid=format!("{testid}-prev") title="Previous step"
                disabled=move || current.get().is_none() || current.get() == first()
                on:click=move |_| go(-1)>"‹"</button>
            <input type="number" data-testid=testid aria-label="Profiler step"
                prop:value=move || current.get().map(|n| n.to_string()).unwrap_or_default()
                min=move || first().map(|n| n.to_string())
                max=move || last().map(|n| n.to_string())
                disabled=move || steps.with(Vec::is_empty)
                on:change=on_change />
            <button data-testid=format!("{testid}-next") title="Next step"
                disabled=move || current.get().is_none() || current.get() == last()
                on:click=move |_| go(1)>"›"</button>
            <span class="muted">{move || format!("of {} steps", steps.with(Vec::len))}</span>
        </span>
    }
}
