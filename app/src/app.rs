//! The root component: header (open button, theme toggle), drop overlay, progress and error,
//! then, once a trace is loaded, the timeline with its details panel and the tabs below
//! (summary, tables and charts). State and queries live in the [`Controller`].
//!
//! With `?run=MANIFEST` it opens the ranks of a distributed run listed by that JSON manifest
//! (several picked or dropped files, or a folder, do the same) and lands on the Run tab.
//! With no `?url=` the page shows the run gallery when an `index.json` sits beside it
//! (`kinetoscope serve` / `publish`), else loads [`DEMO_URL`], unless its fragment is a share
//! link to a local file, which the page then asks for. A share link's view is restored after the load.
//! With `?url=CAND&base=BASE` it loads BASE, keeps it as the comparison baseline, then loads CAND
//! and shows the Compare tab.
//!
//! Boot: `boot.js` compiles the wasm off the main thread and instantiates it; `main` mounts the
//! page one task later. The page builds each part of itself in a task of its own
//! ([`Deferred`]), so that no task is long, and then starts the load.

use crate::charts::ChartsPanel;
use crate::control::Controller;
use crate::deferred::Deferred;
use crate::panels::{
    CompareButton, ComparePanel, DetailsPanel, DropZone, ErrorPanel, FindingsPanel, FlamePanel, GalleryPanel,
    HealthPanel, LoadNotices, ModuleActions, OpenButton, OpenFolderButton, ProgressPanel, RunBack, RunBadge, RunPanel,
    StepExplain, GlancePanel, SummaryPanel, BoundByPanel, WhatIfPanel, TablePanel, Tabs, TraceHeader,
};
use crate::state::format;
use crate::state::gallery::GalleryState;
use crate::state::link::ViewLink;
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
    let wanted = RwSignal::new(None::<(String, u64)>);
    let gallery = RwSignal::new(GalleryState::default());
    // Once the page is built: its tasks then never wait for a core while the worker parses
    // (a 2-core machine made tasks of 20 ms two to four times longer), and the worker never
    // waits for them. A file opened by then is not replaced. A test first sees
    // `window.kinetoscope` with this load running.
    crate::deferred::when_built(move || {
        if ctl.state.with_untracked(|s| s.status == crate::state::Status::Idle) {
            start(ctl, wanted, gallery);
        }
        ctl.install_test_hook();
        ctl.listen_for_posts();
    });
    let copied = RwSignal::new(false);
    let theme = RwSignal::new(preferred_theme());
    Effect::new(move |_| {
        let t = theme.get();
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("data-theme", t.as_str());
        }
    });
    let on_files = Callback::new(move |files: Vec<File>| ctl.load_files(files));
    let on_compare = Callback::new(move |file: File| ctl.compare_with(file));
    let on_select = Callback::new(move |tab: Tab| ctl.select_tab(tab));
    let on_filter = Callback::new(move |text: String| ctl.set_filter(text));
    let on_by_shape = Callback::new(move |on: bool| ctl.set_by_shape(on));
    let on_workload = Callback::new(move |w: protocol::Workload| ctl.set_workload(w));
    let on_sort = Callback::new(move |key: String| ctl.sort_by(key));
    let on_scope = Callback::new(move |scope: Scope| ctl.set_scope(scope));
    let on_row = Callback::new(move |name: String| ctl.highlight_name(name));
    let on_step = Callback::new(move |step: u64| ctl.explain_step(Some(step)));
    let on_column = Callback::new(move |key: String| ctl.toggle_column(key));
    let on_marker = Callback::new(move |marker: Option<String>| ctl.set_step_marker(marker));
    let marking = Memo::new(move |_| ctl.state.with(|s| s.steps.clone()));
    let on_resize = Callback::new(move |(key, ch): (String, usize)| ctl.resize_column(key, ch));
    let explained = Memo::new(move |_| ctl.explain.with(|e| e.step()));
    let modules = ModuleActions {
        on_toggle: Callback::new(move |k: usize| ctl.toggle_module(k)),
        on_all: Callback::new(move |collapsed: bool| ctl.collapse_modules(collapsed)),
        on_pick: Callback::new(move |k: usize| ctl.pick_module(k)),
    };
    let state = ctl.state.read_only();
    let tables = ctl.tables.read_only();
    let loaded = Memo::new(move |_| state.with(|s| s.summary.is_some()));
    let settled = Memo::new(move |_| state.with(|s| s.summary.is_some() && s.settled));
    let on_summary = Memo::new(move |_| settled.get() && tables.with(|t| t.tab == Tab::Summary));
    let on_findings = Memo::new(move |_| tables.with(|t| t.tab == Tab::Findings));
    let on_steps = Memo::new(move |_| tables.with(|t| t.tab == Tab::Steps));
    let on_flame = Memo::new(move |_| tables.with(|t| t.tab == Tab::Flame));
    let on_charts = Memo::new(move |_| settled.get() && tables.with(|t| t.tab == Tab::Charts));
    let on_compare_tab = Memo::new(move |_| tables.with(|t| t.tab == Tab::Compare));
    let run = ctl.run.read_only();
    let run_open = Memo::new(move |_| run.with(|r| r.open));
    // The Run tab, or the run's files while they arrive (before any tab is shown).
    let on_run = Memo::new(move |_| {
        run_open.get() && (tables.with(|t| t.tab == Tab::Run) || run.with(|r| r.data.is_none() && r.error.is_none()))
    });
    let run_back = Memo::new(move |_| {
        run_open.get() && loaded.get() && tables.with(|t| t.tab != Tab::Run) && run.with(|r| r.data.is_some())
    });
    let steps = Memo::new(move |_| {
        ctl.timeline
            .with(|t| t.layout.as_ref().map(|l| l.steps.clone()).unwrap_or_default())
    });
    let range = Memo::new(move |_| ctl.timeline.with(|t| t.range));
    // Each `Deferred` builds in a task of its own, in this order.
    view! {
        <Deferred>
            <header class="top">
                <h1>"Kinetoscope"</h1>
                {move || run_open.get().then(|| view! { <RunBadge run=run /> })}
                <OpenButton on_files=on_files />
                <OpenFolderButton on_files=on_files />
                <CompareButton on_file=on_compare />
                <span class="spacer"></span>
                <Show when=move || loaded.get()>
                    <button data-testid="copy-link" title="Copy a link to this trace at this view"
                        on:click=move |_| copied.set(ctl.copy_link())>
                        {move || if copied.get() { "Link copied" } else { "Copy link" }}
                    </button>
                    <button data-testid="export-report"
                        title=move || ctl.export.with(|e| e.error.clone()).unwrap_or_else(|| "Save this trace's report as one HTML file (tables, charts, findings; opens offline)".into())
                        prop:disabled=move || ctl.export.with(|e| e.pending.is_some())
                        on:click=move |_| ctl.export_report()>
                        {move || if ctl.export.with(|e| e.pending.is_some()) { "Exporting…" } else { "Export report" }}
                    </button>
                </Show>
                <button data-testid="theme-toggle" title="Light / dark theme"
                    on:click=move |_| theme.update(|t| *t = t.toggled())>
                    {move || if theme.get() == Theme::Dark { "☀ Light" } else { "☾ Dark" }}
                </button>
            </header>
            <DropZone on_files=on_files />
        </Deferred>
        <main>
            <Deferred>
                {move || wanted.get().filter(|_| !loaded.get()).map(|(name, size)| view! {
                    <section class="card" data-testid="link-file-prompt">
                        <h2>"Open the linked trace"</h2>
                        <p>
                            "This link shows a view of "<b>{name}</b>{format!(" ({}). ", format::bytes(size))}
                            "Open that file from your machine to see it: it is read in this browser and never uploaded."
                        </p>
                        <OpenButton on_files=on_files />
                    </section>
                })}
                <Show when=move || gallery.with(|g| g.index.is_some()) && !loaded.get()>
                    <GalleryPanel gallery=gallery />
                </Show>
                <ProgressPanel state=state on_cancel=Callback::new(move |()| ctl.cancel_load()) />
                <Show when=move || loaded.get()>
                    <Deferred>
                        <TraceHeader state=state />
                        <LoadNotices state=state />
                    </Deferred>
                </Show>
                <ErrorPanel state=state />
                <Show when=move || run_back.get()>
                    <RunBack ctl=ctl />
                </Show>
            </Deferred>
            // Mounted at boot, laid out at its final size but invisible until a trace is loaded,
            // so building and sizing it never delays the first paint; it stays mounted (it keeps
            // canvas listeners and observers that must not outlive it), and reloading only
            // resets its state.
            <Deferred>
                <div class="workspace" class:staged=move || !loaded.get()>
                    <Timeline ctl=ctl theme=theme.read_only() />
                    <Deferred>
                        <DetailsPanel ctl=ctl />
                    </Deferred>
                </div>
            </Deferred>
            <Show when=move || settled.get()>
                <Deferred>
                    <Tabs tables=tables run_open=run_open on_select=on_select />
                </Deferred>
            </Show>
            <Show when=move || on_run.get()>
                <Deferred>
                    <RunPanel ctl=ctl theme=theme.read_only() />
                </Deferred>
            </Show>
            <Show when=move || on_summary.get()>
                <Deferred>
                    <GlancePanel ctl=ctl state=state />
                    <HealthPanel ctl=ctl state=state />
                    <details class="card parse-stats" data-testid="parse-stats">
                        <summary>"Parse statistics: file, events, links, lanes"</summary>
                        <SummaryPanel state=state />
                    </details>
                </Deferred>
            </Show>
            <Show when=move || settled.get() && on_findings.get()>
                <Deferred>
                    <FindingsPanel ctl=ctl />
                </Deferred>
            </Show>
            <Show when=move || settled.get() && on_compare_tab.get()>
                <Deferred>
                    <ComparePanel ctl=ctl theme=theme.read_only() />
                </Deferred>
            </Show>
            <Show when=move || settled.get()>
                <Deferred>
                    <TablePanel
                        tables=tables
                        steps=steps
                        range=range
                        on_filter=on_filter
                        on_by_shape=on_by_shape
                        on_sort=on_sort
                        on_scope=on_scope
                        on_row=on_row
                        on_step=on_step
                        on_column=on_column
                        on_resize=on_resize
                        explained=explained
                        marking=marking
                        on_marker=on_marker
                        on_workload=on_workload
                        modules=modules
                    />
                </Deferred>
            </Show>
            <Show when=move || settled.get() && on_flame.get()>
                <Deferred>
                    <FlamePanel ctl=ctl theme=theme.read_only() />
                </Deferred>
            </Show>
            <Show when=move || settled.get() && on_steps.get()>
                // One part per task: the three panels built together made a long task.
                <Deferred>
                    <BoundByPanel ctl=ctl />
                </Deferred>
                <Deferred>
                    <WhatIfPanel ctl=ctl />
                </Deferred>
                <Deferred>
                    <StepExplain ctl=ctl />
                </Deferred>
            </Show>
            <Show when=move || on_charts.get()>
                <Deferred>
                    <ChartsPanel ctl=ctl theme=theme.read_only() />
                </Deferred>
            </Show>
        </main>
    }
}

/// Starts what the page URL asks for. A link to a local file waits for the user to open that
/// file; a page without a trace shows the gallery if it has one; otherwise the URL (or the
/// demo, or a baseline / candidate pair) loads at once. Either way the link's view is restored
/// after the load.
fn start(ctl: Controller, wanted: RwSignal<Option<(String, u64)>>, gallery: RwSignal<GalleryState>) {
    let link = ViewLink::parse(&window().location().hash().unwrap_or_default());
    if let Some(run) = url_param("run") {
        ctl.load_run_url(&run);
        return ctl.restore_later(link);
    }
    match (url_param("url"), &link.file, url_param("base")) {
        (Some(cand), _, Some(base)) => ctl.load_pair(&base, &cand),
        (None, Some(file), _) => wanted.set(Some(file.clone())),
        (Some(url), _, _) => ctl.load_url(&url),
        (None, None, _) => {
            // No trace named: the gallery if one is beside the page, else the demo.
            return crate::control::gallery::fetch_index(move |index| match index {
                Ok(index) => {
                    gallery.update(|g| g.index = Some(index));
                    // Until a trace is opened (a posted one too), the listing stays live.
                    crate::control::gallery::poll_index(gallery, move || {
                        ctl.state.with_untracked(|s| s.status == crate::state::Status::Idle)
                    });
                }
                // Unless a trace came meanwhile (posted by the page that opened this one).
                Err(_) if ctl.state.with_untracked(|s| s.status == crate::state::Status::Idle) => {
                    ctl.load_demo(DEMO_URL);
                    ctl.restore_later(link);
                }
                Err(_) => {}
            });
        }
    }
    ctl.restore_later(link);
}

/// A non-empty query parameter of the page URL (`?url=` the trace, `?base=` the comparison
/// baseline).
pub(crate) fn url_param(name: &str) -> Option<String> {
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
