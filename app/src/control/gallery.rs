//! Fetches the gallery's `index.json` beside the page (served by `kinetoscope serve`, written
//! by `kinetoscope publish`), named by the `kinetoscope-gallery` meta tag both add to the page.
//! A page without the tag (plain `dist/` on a static host) asks for nothing and opens the demo.
//! While the gallery shows, the listing is read again every [`POLL`] ([`poll_index`]): the
//! server scans the log directory on each request, so a running job's traces appear without a
//! reload (a poll, not server-sent events: a published folder is a static host).

use crate::state::gallery::{GalleryState, Index};
use js_sys::{Function, Promise, Reflect};
use leptos::prelude::{RwSignal, Update, WithUntracked};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The meta tag naming the listing (`worker/src/serve/page.rs` writes it).
const GALLERY_META: &str = "meta[name=\"kinetoscope-gallery\"]";

/// The listing's URL, relative to the page, when the page was served with one.
fn listing_url() -> Option<String> {
    let document = web_sys::window()?.document()?;
    let meta = document.query_selector(GALLERY_META).ok()??;
    meta.get_attribute("content").filter(|c| !c.trim().is_empty())
}

/// How often the shown gallery reads the listing again.
pub const POLL: std::time::Duration = std::time::Duration::from_secs(2);

/// Fetches and reads the listing, then calls `done` with it or why there is none (no listing
/// named: at once, without a request).
pub fn fetch_index(done: impl FnOnce(Result<Index, String>) + 'static) {
    leptos::task::spawn_local(async move { done(read_index().await) });
}

/// Reads the listing every [`POLL`] into `gallery` while `showing()` holds; a failed read keeps
/// the last listing (a server restarting is not a reason to blank the page).
pub fn poll_index(gallery: RwSignal<GalleryState>, showing: impl Fn() -> bool + Copy + 'static) {
    leptos::prelude::set_timeout(
        move || {
            if !showing() {
                return;
            }
            fetch_index(move |index| {
                if let Ok(index) = index {
                    // Only a changed listing redraws (the filter box keeps its focus).
                    if gallery.with_untracked(|g| g.index.as_ref() != Some(&index)) {
                        gallery.update(|g| g.index = Some(index));
                    }
                }
                poll_index(gallery, showing);
            });
        },
        POLL,
    );
}

async fn read_index() -> Result<Index, String> {
    let window = web_sys::window().ok_or("no window")?;
    let url = listing_url().ok_or("no listing beside this page")?;
    let response = JsFuture::from(window.fetch_with_str(&url)).await.map_err(|_| "index.json: fetch failed")?;
    // Read through the Response's properties: web-sys's `Response` feature would rebuild every
    // web-sys dependent of the app for three accessors.
    let field = |name: &str| Reflect::get(&response, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
    if !field("ok").is_truthy() {
        return Err(format!("index.json: HTTP {}", field("status").as_f64().unwrap_or(0.0)));
    }
    let text: Function = field("text").dyn_into().map_err(|_| "index.json: not a response")?;
    let body: Promise = text.call0(&response).and_then(|p| p.dyn_into()).map_err(|_| "index.json: no body")?;
    let body = JsFuture::from(body).await.map_err(|_| "index.json: body unreadable")?;
    GalleryState::parse(&body.as_string().unwrap_or_default())
}
