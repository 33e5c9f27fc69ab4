//! Ways in and the progress bar: the "Open trace" button (file input, several files allowed:
//! the ranks of a run), the "Open folder" button (a folder of rank traces), the full-page drop
//! overlay (files or folders), and the progress panel shown while a load runs.
//!
//! Test ids: `file-input`, `folder-input`, `drop-zone` (always in the DOM;
//! `data-active="true"` and visible while files are dragged over the page), `progress` (with
//! `data-phase` and a `<progress>` whose `value` is the percent of `max="100"`, absent while
//! the total is unknown).

use crate::state::{format, LoadState};
use leptos::ev;
use leptos::prelude::*;
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{DragEvent, File, HtmlInputElement};

/// The "Open trace" button: a label wrapping the file input (several files: a run's ranks).
#[component]
pub fn OpenButton(on_files: Callback<Vec<File>>) -> impl IntoView {
    let on_change = picked_files(on_files, false);
    view! {
        <label class="button" title="Open a trace, or several: the ranks of a distributed run">
            "Open trace"
            <input type="file" data-testid="file-input" accept=".json,.gz" multiple on:change=on_change />
        </label>
    }
}

/// The "Open folder" button: every `*.json` / `*.json.gz` in a folder, as the ranks of a run.
#[component]
pub fn OpenFolderButton(on_files: Callback<Vec<File>>) -> impl IntoView {
    let on_change = picked_files(on_files, true);
    view! {
        <label class="button" title="Open a folder of traces: the ranks of a distributed run">
            "Open folder"
            <input type="file" data-testid="folder-input" prop:webkitdirectory=true multiple on:change=on_change />
        </label>
    }
}

/// The change handler of a multi-file input: hands the picked files to `on_files` (of a
/// folder, only the trace files, by path), then clears the input.
fn picked_files(on_files: Callback<Vec<File>>, folder: bool) -> impl Fn(ev::Event) {
    move |ev: ev::Event| {
        let input: HtmlInputElement = event_target(&ev);
        let files = input.files().map(|list| (0..list.length()).filter_map(|i| list.get(i)).collect::<Vec<_>>());
        let mut files = files.unwrap_or_default();
        if folder {
            files.retain(|f| is_trace_name(&f.name()));
            files.sort_by_key(relative_path);
        }
        // A folder without a trace file goes on too: the page says so.
        if folder || !files.is_empty() {
            on_files.run(files);
        }
        input.set_value("");
    }
}

/// A trace file's name, as `kinetoscope run` expands folders: `*.json` or `*.json.gz`.
fn is_trace_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// A picked folder file's path inside the folder (`webkitRelativePath`), else its name.
fn relative_path(f: &File) -> String {
    Reflect::get(f, &"webkitRelativePath".into())
        .ok()
        .and_then(|v| v.as_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| f.name())
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
pub fn DropZone(on_files: Callback<Vec<File>>) -> impl IntoView {
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
            let Some(dt) = e.data_transfer() else { return };
            // Entries must be taken inside the event; a folder among them is read after it.
            let entries = dropped_entries(&dt);
            if entries.iter().any(|entry| is_truthy(entry, "isDirectory")) {
                leptos::task::spawn_local(async move {
                    // Empty too: the page then says the folder holds no trace file.
                    on_files.run(entry_files(entries).await);
                });
                return;
            }
            let files = dt.files().map(|list| (0..list.length()).filter_map(|i| list.get(i)).collect::<Vec<_>>());
            if let Some(files) = files.filter(|f| !f.is_empty()) {
                on_files.run(files);
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

/// The `FileSystemEntry` of each dropped item (`webkitGetAsEntry`), where the browser has one.
fn dropped_entries(dt: &web_sys::DataTransfer) -> Vec<JsValue> {
    let Ok(items) = Reflect::get(dt, &"items".into()) else { return Vec::new() };
    let len = Reflect::get(&items, &"length".into()).ok().and_then(|l| l.as_f64()).unwrap_or(0.0) as u32;
    (0..len)
        .filter_map(|i| {
            let item = Reflect::get_u32(&items, i).ok()?;
            let get = Reflect::get(&item, &"webkitGetAsEntry".into()).ok()?.dyn_into::<Function>().ok()?;
            get.call0(&item).ok().filter(|e| !e.is_null() && !e.is_undefined())
        })
        .collect()
}

/// The trace files under dropped `entries` (folders read recursively), sorted by path.
async fn entry_files(entries: Vec<JsValue>) -> Vec<File> {
    let mut stack = entries;
    let mut out: Vec<(String, File)> = Vec::new();
    while let Some(entry) = stack.pop() {
        let path = Reflect::get(&entry, &"fullPath".into()).ok().and_then(|p| p.as_string()).unwrap_or_default();
        if is_truthy(&entry, "isFile") {
            if !is_trace_name(&path) {
                continue;
            }
            if let Ok(file) = callback_call(&entry, "file", None).await.and_then(|f| f.dyn_into::<File>().map_err(|_| JsValue::NULL)) {
                out.push((path, file));
            }
        } else if is_truthy(&entry, "isDirectory") {
            let Ok(reader) = Reflect::get(&entry, &"createReader".into())
                .and_then(|f| f.dyn_into::<Function>().map_err(|_| JsValue::NULL))
                .and_then(|f| f.call0(&entry))
            else {
                continue;
            };
            // readEntries returns a batch per call until an empty one.
            while let Ok(batch) = callback_call(&reader, "readEntries", None).await {
                let batch = js_sys::Array::from(&batch);
                if batch.length() == 0 {
                    break;
                }
                stack.extend(batch.iter());
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, f)| f).collect()
}

/// Calls `obj.method(arg?, resolve, reject)` (the entries API's callback style) and awaits it.
async fn callback_call(obj: &JsValue, method: &str, arg: Option<&JsValue>) -> Result<JsValue, JsValue> {
    let f = Reflect::get(obj, &method.into())?.dyn_into::<Function>()?;
    let promise = Promise::new(&mut |resolve, reject| {
        let _ = match arg {
            Some(a) => f.call3(obj, a, &resolve, &reject),
            None => f.call2(obj, &resolve, &reject),
        };
    });
    JsFuture::from(promise).await
}

fn is_truthy(obj: &JsValue, key: &str) -> bool {
    Reflect::get(obj, &key.into()).is_ok_and(|v| v.is_truthy())
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
