//! Ways in and the progress bar: the "Open trace" button (file input), the full-page drop
//! overlay, and the progress panel shown while a load runs.
//!
//! Test ids: `file-input`, `drop-zone` (always in the DOM; `data-active="true"` and visible
//! while files are dragged over the page), `progress` (with `data-phase` and a `<progress>`
//! whose `value` is the percent of `max="100"`, absent while the total is unknown).

use crate::state::{format, LoadState};
use leptos::ev;
use leptos::prelude::*;
use web_sys::{DragEvent, File, HtmlInputElement};

/// The "Open trace" button: a label wrapping the file input.
#[component]
pub fn OpenButton(on_file: Callback<File>) -> impl IntoView {
    let on_change = picked_file(on_file);
    view! {
        <label class="button">
            "Open trace"
            <input type="file" data-testid="file-input" accept=".json,.gz" on:change=on_change />
        </label>
    }
}

/// The change handler of a file input: hands the picked file to `on_file`, then clears the
/// input so the same file can be picked again.
pub fn picked_file(on_file: Callback<File>) -> impl Fn(ev::Event) {
    move |ev: ev::Event| {
        let input: HtmlInputElement = event_target(&ev);
        if let Some(file) = input.files().and_then(|files| files.get(0)) {
            on_file.run(file);
        }
        input.set_value("");
    }
}

/// Full-page overlay shown while files are dragged over the page; a drop anywhere loads the file.
#[component]
pub fn DropZone(on_file: Callback<File>) -> impl IntoView {
    // dragenter/dragleave fire for every element crossed; the overlay shows while depth > 0.
    let depth = RwSignal::new(0u32);
    let handles = [
        window_event_listener(ev::dragenter, move |e: DragEvent| {
            if carries_files(&e) {
                e.prevent_default();
                depth.update(|d| *d += 1);
            }
        }),
        window_event_listener(ev::dragover, move |e: DragEvent| {
            if carries_files(&e) {
                // Allows the drop.
                e.prevent_default();
            }
        }),
        window_event_listener(ev::dragleave, move |_| {
            depth.update(|d| *d = d.saturating_sub(1))
        }),
        window_event_listener(ev::drop, move |e: DragEvent| {
            e.prevent_default();
            depth.set(0);
            let files = e.data_transfer().and_then(|dt| dt.files());
            if let Some(file) = files.and_then(|files| files.get(0)) {
                on_file.run(file);
            }
        }),
    ];
    on_cleanup(move || handles.into_iter().for_each(|h| h.remove()));
    let active = move || depth.get() > 0;
    view! {
        <div data-testid="drop-zone" class="drop-zone" class:active=active
            data-active=move || active().to_string()>
            <p>"Drop a trace file to open it"</p>
        </div>
    }
}

/// True when the drag carries files (not text or links).
fn carries_files(e: &DragEvent) -> bool {
    e.data_transfer()
        .is_some_and(|dt| dt.types().includes(&"Files".into(), 0))
}

/// Phase, file name, MB done / total and percent of the running load.
#[component]
pub fn ProgressPanel(state: ReadSignal<LoadState>, on_cancel: Callback<()>) -> impl IntoView {
    let progress = Memo::new(move |_| state.with(|s| s.progress));
    let name = Memo::new(move |_| state.with(|s| s.name.clone().unwrap_or_default()));
    let phase = move || progress.get().map_or("", |p| format::phase_name(p.phase));
    let percent = move || progress.get().and_then(|p| p.percent());
    let amount = move || {
        progress.get().map(|p| match p.total_bytes {
            Some(total) => {
                let pct = p.percent().map(|x| format!(" ({x}%)")).unwrap_or_default();
                format!(
                    "{} / {} MB{pct}",
                    format::mb(p.done_bytes),
                    format::mb(total)
                )
            }
            None => format!("{} MB", format::mb(p.done_bytes)),
        })
    };
    view! {
        <Show when=move || progress.with(Option::is_some)>
            <section class="card progress" data-testid="progress" data-phase=phase>
                <div class="progress-label">
                    <span class="phase">{phase}</span>
                    <span class="name">{move || name.get()}</span>
                    <span class="amount">{amount}</span>
                    <button data-testid="cancel-load" on:click=move |_| on_cancel.run(())>"Cancel"</button>
                </div>
                <progress max="100" value=move || percent().map(|p| p.to_string())></progress>
            </section>
        </Show>
    }
}
