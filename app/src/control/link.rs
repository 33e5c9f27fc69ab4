//! Share links (docs/deploy.md#share-links): the URL fragment follows the view (debounced
//! `replaceState`, no history entries), "Copy link" puts the full URL on the clipboard, and a link
//! opened later restores its view once the trace's layout has arrived.
//!
//! A link for a locally opened file carries the file's name and size; opening it asks for that
//! file (read in the browser, never uploaded) and then restores the view.

use super::Controller;
use crate::state::link::{CompareLink, ViewLink};
use crate::state::stack::Pane;
use crate::state::table::{Scope, Sort, Tab};
use leptos::prelude::*;
use protocol::Query;
use std::time::Duration;

/// How long the fragment waits after the last change before it is rewritten: navigation emits
/// changes every frame, and browsers throttle frequent `replaceState` calls.
const WRITE_DELAY: Duration = Duration::from_millis(250);

/// Where the loaded trace came from, and the link bookkeeping.
#[derive(Clone, Debug, Default)]
pub struct LinkState {
    /// A link waiting for its trace's layout to be applied.
    pub pending: Option<ViewLink>,
    /// A finding to activate once the findings arrive.
    pub finding: Option<String>,
    /// The trace came from a local file (the link then names it instead of a URL).
    pub local_file: bool,
    /// The last fragment written.
    pub written: String,
    /// A write is scheduled.
    pub scheduled: bool,
}

impl Controller {
    /// The link describing the current view.
    pub fn current_link(self) -> ViewLink {
        let mut link = self.timeline.with_untracked(|t| ViewLink {
            window: t.layout.as_ref().map(|_| (t.view.start, t.view.end)),
            selection: t.selected.as_ref().map(|d| d.key.clone()),
            range: t.range,
            search: Some(t.search.text.trim().to_owned()).filter(|s| !s.is_empty()),
            pinned: t.pinned_names(),
            ..ViewLink::default()
        });
        self.tables.with_untracked(|t| {
            link.tab = (t.tab != Tab::Summary).then(|| t.tab.as_str().to_owned());
            link.scope = match t.scope {
                Scope::Trace => None,
                Scope::Step(n, ..) => Some(format!("step:{n}")),
                Scope::Range(..) => Some("range".into()),
            };
            link.sort = t.sort.as_ref().map(|s| (s.key.clone(), s.desc));
            link.by_shape = t.by_shape;
            link.workload = t.workload;
            link.filter = Some(t.filter.trim().to_owned()).filter(|f| !f.is_empty());
        });
        link.finding = self.findings.with_untracked(|f| f.active.clone());
        link.critical = self.critical.with_untracked(|c| c.shown.then_some(c.step));
        link.marker = self.state.with_untracked(|s| s.steps.marker.clone());
        link.compare = self.compare_link();
        let local = self.link.with_value(|l| l.local_file);
        link.file = self
            .state
            .with_untracked(|s| s.summary.as_ref().map(|s| (s.file_name.clone(), s.file_bytes)))
            .filter(|_| local);
        link
    }

    /// The Compare tab's part of the link (empty while no baseline is kept).
    fn compare_link(self) -> CompareLink {
        let sort = |s: Option<&Sort>| s.map(|s| (s.key.clone(), s.desc));
        let mut link = self.compare.with_untracked(|c| {
            c.base.as_ref().map_or_else(CompareLink::default, |_| CompareLink {
                sort: sort(c.op_sort.as_ref()),
                kernel_sort: sort(c.kernel_sort.as_ref()),
                by_shape: c.by_shape,
                ..CompareLink::default()
            })
        });
        if self.compare.with_untracked(|c| c.base.is_some()) {
            self.stack.with_untracked(|s| {
                link.step = s.focus(Pane::Base.index()).map(|f| f.number).or(s.step());
                link.window = s.ready().then(|| s.window());
            });
        }
        link
    }

    /// The full URL of the current view (page URL with its query, fragment replaced).
    pub fn share_url(self) -> String {
        url_of(&self.current_link())
    }

    /// The share URL of finding `rule` (the current view with that finding active).
    pub fn finding_url(self, rule: &str) -> String {
        let mut link = self.current_link();
        link.finding = Some(rule.to_owned());
        url_of(&link)
    }

    /// Schedules a fragment rewrite (no-op while a link is being restored).
    pub(super) fn schedule_fragment(self) {
        let busy = self.link.with_value(|l| l.scheduled || l.pending.is_some());
        if busy || self.state.with_untracked(|s| s.summary.is_none()) {
            return;
        }
        self.link.update_value(|l| l.scheduled = true);
        set_timeout(move || self.write_fragment(), WRITE_DELAY);
    }

    fn write_fragment(self) {
        self.link.update_value(|l| l.scheduled = false);
        let fragment = self.current_link().to_fragment();
        if self.link.with_value(|l| l.written == fragment) {
            return;
        }
        let url = format!("{}#{fragment}", page_path());
        if let Ok(history) = window().history() {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
        self.link.update_value(|l| l.written = fragment);
    }

    /// Copies the share URL to the clipboard; true once the copy was handed to the browser.
    pub fn copy_link(self) -> bool {
        let url = self.share_url();
        let clipboard = window().navigator().clipboard();
        let _ = clipboard.write_text(&url);
        true
    }

    /// Remembers `link` to restore once the next trace's layout arrives.
    pub fn restore_later(self, link: ViewLink) {
        self.link.update_value(|l| l.pending = Some(link));
    }

    /// The layout arrived: applies a pending link, in the order its parts depend on each
    /// other (table settings before the tab's query; the range before a range scope).
    pub(super) fn restore(self) {
        let Some(link) = self.link.try_update_value(|l| l.pending.take()).flatten() else {
            return;
        };
        if let Some((a, b)) = link.window {
            self.view(|t| t.view.set(a, b));
        }
        if !link.pinned.is_empty() {
            self.view(|t| t.pin_names(&link.pinned));
        }
        if link.range.is_some() {
            self.timeline.update(|t| t.range = link.range);
        }
        let steps = self.timeline.with_untracked(|t| {
            t.layout.as_ref().map(|l| l.steps.clone()).unwrap_or_default()
        });
        let scope = match link.scope.as_deref() {
            Some("range") => link.range.map(|(a, b)| Scope::Range(a.floor() as i64, b.ceil() as i64)),
            Some(s) => s.strip_prefix("step:").and_then(|n| {
                steps
                    .iter()
                    .find(|st| st.number.to_string() == n)
                    .map(|st| Scope::Step(st.number, st.start_ns, st.end_ns))
            }),
            None => None,
        };
        self.tables.update(|t| {
            t.by_shape = link.by_shape;
            t.workload = link.workload;
            t.scope = scope.unwrap_or_default();
        });
        if let Some(tab) = link.tab.as_deref().and_then(|n| Tab::ALL.into_iter().find(|t| t.as_str() == n)) {
            self.select_tab(tab);
        }
        // After the tab: selecting another tab clears the sort and the filter. The answer keeps
        // a sort whose column it has.
        self.tables.update(|t| {
            t.sort = link.sort.clone().map(|(key, desc)| Sort { key, desc });
            t.filter = link.filter.clone().unwrap_or_default();
        });
        if let Some(q) = link.search {
            self.search(q);
        }
        if let Some(step) = link.critical {
            self.critical.update(|c| c.step = step);
            self.set_critical_shown(true);
        }
        if let Some(key) = link.selection {
            self.ask_timeline(Query::Resolve { key });
        }
        if let Some(rule) = link.finding {
            self.link.update_value(|l| l.finding = Some(rule));
            self.findings_arrived();
        }
        self.publish();
    }

    /// Findings arrived (or a link named one): activates the finding a link asked for, keeping
    /// the link's view.
    pub(super) fn findings_arrived(self) {
        let Some(rule) = self.link.with_value(|l| l.finding.clone()) else { return };
        let Some(f) = self.findings.with_untracked(|s| s.find(&rule).cloned()) else { return };
        self.link.update_value(|l| l.finding = None);
        self.findings.update(|s| s.active = Some(f.rule.clone()));
        self.view(|t| t.highlight = f.slices.clone());
    }
}

/// The address that opens the loaded trace in this viewer (origin, path and `?url=...`), for
/// the exported report's links back; `None` when the trace did not come from `?url=` (a picked
/// or dropped file has no address to link to).
pub(super) fn viewer_url() -> Option<String> {
    let search = window().location().search().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    params.get("url")?;
    Some(format!("{}{}", window().location().origin().ok()?, page_path()))
}

/// The page's path and query (`/sub/?url=...`), without origin or fragment.
fn page_path() -> String {
    let location = window().location();
    format!(
        "{}{}",
        location.pathname().unwrap_or_default(),
        location.search().unwrap_or_default()
    )
}

/// The full URL of this page with `link` as its fragment (none when the link carries nothing).
fn url_of(link: &ViewLink) -> String {
    let page = format!("{}{}", window().location().origin().unwrap_or_default(), page_path());
    match link.to_fragment() {
        f if f.is_empty() => page,
        f => format!("{page}#{f}"),
    }
}
