//! The root component: header (open button, theme toggle), drop overlay, progress and error,
//! then, once a trace is loaded, the timeline with its details panel and the tabs below
//! (summary and tables). State and queries live in the [`Controller`].
//!
//! With no `?url=` the page loads [`DEMO_URL`]. With `?url=CAND&base=BASE` it loads BASE, keeps
//! it as the comparison baseline, then loads CAND and shows the Compare tab.

use crate::control::Controller;
use crate::panels::{
    CompareButton, ComparePanel, DetailsPanel, DropZone, ErrorPanel, FindingsPanel, OpenButton, ProgressPanel, SummaryPanel,
    TablePanel, Tabs,
};
use crate::state::table::{Scope, Tab};
use crate::timeline::theme::Theme;
use crate::timeline::Timeline;
use leptos::prelude::*;
use web_sys::File;

/// The trace shown when the page has no `?url=`.
const DEMO_URL: &str = "./public/demo.pt.trace.json.gz";

/// The page.
#[component]
pub fn App() -> impl IntoView {
    let ctl = Controller::new();
    match start_param("base") {
        Some(base) => ctl.load_pair(&base, &start_url()),
        None => ctl.load_url(&start_url()),
    }
    let theme = RwSignal::new(preferred_theme());
    Effect::new(move |_| {
        let t = theme.get();
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("data-theme", t.as_str());
        }
    });
    let on_file = Callback::new(move |file: File| ctl.load_file(file));
    let on_compare = Callback::new(move |file: File| ctl.compare_with(file));
    let on_select = Callback::new(move |tab: Tab| ctl.select_tab(tab));
    let on_filter = Callback::new(move |text: String| ctl.set_filter(text));
    let on_by_shape = Callback::new(move |on: bool| ctl.set_by_shape(on));
    let on_sort = Callback::new(move |key: String| ctl.sort_by(key));
    let on_scope = Callback::new(move |scope: Scope| ctl.set_scope(scope));
    let on_row = Callback::new(move |name: String| ctl.highlight_name(name));
    let state = ctl.state.read_only();
    let tables = ctl.tables.read_only();
    let loaded = Memo::new(move |_| state.with(|s| s.summary.is_some()));
    // The timeline stays mounted once a trace was shown: it keeps canvas listeners and observers
    // that must not outlive it, and reloading only resets its state.
    let shown = Memo::new(move |was: Option<&bool>| was.copied().unwrap_or(false) || loaded.get());
    let on_summary = Memo::new(move |_| tables.with(|t| t.tab == Tab::Summary));
    let on_findings = Memo::new(move |_| tables.with(|t| t.tab == Tab::Findings));
    let on_compare_tab = Memo::new(move |_| tables.with(|t| t.tab == Tab::Compare));
    let steps = Memo::new(move |_| {
        ctl.timeline
            .with(|t| t.layout.as_ref().map(|l| l.steps.clone()).unwrap_or_default())
    });
    let range = Memo::new(move |_| ctl.timeline.with(|t| t.range));
    view! {
        <header class="top">
            <h1>"Kinetoscope"</h1>
            <OpenButton on_file=on_file />
            <CompareButton on_file=on_compare />
            <span class="spacer"></span>
            <button data-testid="theme-toggle" title="Light / dark theme"
                on:click=move |_| theme.update(|t| *t = t.toggled())>
                {move || if theme.get() == Theme::Dark { "☀ Light" } else { "☾ Dark" }}
            </button>
        </header>
        <DropZone on_file=on_file />
        <main>
            <ProgressPanel state=state />
            <ErrorPanel state=state />
            <Show when=move || shown.get()>
                <div class="workspace" class:hidden=move || !loaded.get()>
                    <Timeline ctl=ctl theme=theme.read_only() />
                    <DetailsPanel ctl=ctl />
                </div>
            </Show>
            <Show when=move || loaded.get()>
                <Tabs tables=tables on_select=on_select />
            </Show>
            <Show when=move || on_summary.get()>
                <SummaryPanel state=state />
            </Show>
            <Show when=move || loaded.get() && on_findings.get()>
                <FindingsPanel ctl=ctl />
            </Show>
            <Show when=move || loaded.get() && on_compare_tab.get()>
                <ComparePanel ctl=ctl />
            </Show>
            <Show when=move || loaded.get()>
                <TablePanel
                    tables=tables
                    steps=steps
                    range=range
                    on_filter=on_filter
                    on_by_shape=on_by_shape
                    on_sort=on_sort
                    on_scope=on_scope
                    on_row=on_row
                />
            </Show>
        </main>
    }
}

/// The `?url=` query parameter, or the demo trace.
fn start_url() -> String {
    let search = window().location().search().unwrap_or_default();
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()
        .and_then(|params| params.get("url"))
        .filter(|url| !url.trim().is_empty())
        .unwrap_or_else(|| DEMO_URL.to_owned())
}

/// A non-empty query parameter of the page URL (`?base=` names the comparison baseline).
fn start_param(name: &str) -> Option<String> {
    let search = window().location().search().unwrap_or_default();
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()
        .and_then(|params| params.get(name))
        .filter(|v| !v.trim().is_empty())
}

/// Dark when the system prefers it.
fn preferred_theme() -> Theme {
    let dark = window()
        .match_media("(prefers-color-scheme: dark)")
        .ok()
        .flatten()
        .is_some_and(|m| m.matches());
    if dark {
        Theme::Dark
    } else {
        Theme::Light
    }
}
