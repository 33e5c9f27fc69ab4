//! Fetches the gallery's `index.json` beside the page (served by `kinetoscope serve`, written
//! by `kinetoscope publish`). A page without one (plain `dist/`, a 404) opens the demo instead.

use crate::state::gallery::{GalleryState, Index};
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
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
