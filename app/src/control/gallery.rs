//! Fetches the gallery's `index.json` beside the page (served by `kinetoscope serve`, written
//! by `kinetoscope publish`). A page without one (plain `dist/`, a 404) opens the demo instead.

use crate::state::gallery::{GalleryState, Index};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// The listing's URL, relative to the page.
pub const INDEX_URL: &str = "index.json";

/// Fetches and reads [`INDEX_URL`], then calls `done` with it or why there is none.
pub fn fetch_index(done: impl FnOnce(Result<Index, String>) + 'static) {
    leptos::task::spawn_local(async move { done(read_index().await) });
}

async fn read_index() -> Result<Index, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_str(INDEX_URL)).await.map_err(|_| "index.json: fetch failed")?;
    let response: web_sys::Response = response.dyn_into().map_err(|_| "index.json: not a response")?;
    if !response.ok() {
        return Err(format!("index.json: HTTP {}", response.status()));
    }
    let text = response.text().map_err(|_| "index.json: no body")?;
    let text = JsFuture::from(text).await.map_err(|_| "index.json: body unreadable")?;
    GalleryState::parse(&text.as_string().unwrap_or_default())
}
