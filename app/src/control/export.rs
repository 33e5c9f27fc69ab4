//! Export report intents: ask the worker for the loaded trace's HTML report (never built on the
//! main thread) and save the answer as one file named after the trace.

use super::Controller;
use crate::state::export::file_name;
use leptos::prelude::*;
use protocol::{Answer, Query};
use wasm_bindgen::{JsCast, JsValue};

impl Controller {
    /// Asks for the report, linking back to this page when it opened the trace from a URL.
    pub fn export_report(self) {
        self.ask(Query::Report { viewer_url: super::link::viewer_url() });
    }

    /// The answer to report query `id`: saved as a download.
    pub(super) fn export_answer(self, id: u32, answer: Answer) {
        let Some(html) = self.export.try_update(|e| e.apply(id, answer)).flatten() else {
            return;
        };
        let name = self.state.with_untracked(|s| s.name.clone()).unwrap_or_default();
        if let Err(e) = download(&file_name(&name), &html) {
            let message = e.as_string().unwrap_or_else(|| format!("{e:?}"));
            self.export.update(|s| s.error = Some(format!("cannot save the report: {message}")));
        }
    }

    /// Report query `id` failed.
    pub(super) fn export_failed(self, id: u32, message: String) {
        self.export.update(|e| {
            e.failed(id, message);
        });
    }
}

/// Saves `html` as file `name` through a temporary object URL and a clicked `<a download>`.
fn download(name: &str, html: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(html));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("text/html;charset=utf-8");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let document = window().document().ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = document.create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url)
}
