//! Traces another page posts to this one, by Perfetto's `postMessage` convention, so a dashboard
//! or notebook that opens traces in Perfetto opens them here the same way: the sender opens the
//! page (or embeds it in a frame), posts `"PING"` until the page answers `"PONG"`, then posts
//! `{kinetoscope: {buffer, title?, fileName?}}` (or the same under `perfetto`), `buffer` an
//! `ArrayBuffer` of the trace as a file holds it (JSON or gzip). See docs/viewer.md.
//!
//! Only the page's opener, the frame's parent and the page itself are heard: another window
//! cannot replace the trace shown. The buffer moves on to the worker without a copy.

use super::Controller;
use js_sys::{ArrayBuffer, Object, Reflect};
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{MessageEvent, Window};

/// A posted buffer's limit: the worker addresses its bytes with 32-bit offsets.
const MAX_BYTES: f64 = u32::MAX as f64;

impl Controller {
    /// Answers pings and opens the traces posted to this page, for the page's lifetime.
    pub fn listen_for_posts(self) {
        // Never removed: the page hears posts as long as it lives.
        let _ = window_event_listener(ev::message, move |e: MessageEvent| self.on_post(&e));
    }

    fn on_post(self, e: &MessageEvent) {
        let window = window();
        let Some(source) = e.source().filter(|s| heard(&window, s)) else {
            return;
        };
        let data = e.data();
        if data.as_string().as_deref() == Some("PING") {
            // A window of another realm: `instanceof Window` is false for it, so no `dyn_ref`;
            // `heard` found it to be the opener or the parent, both windows.
            let sender: &Window = source.unchecked_ref();
            // Carries nothing: any origin may know the page is ready.
            let _ = sender.post_message(&JsValue::from_str("PONG"), "*");
            return;
        }
        let Some(trace) = ["kinetoscope", "perfetto"]
            .into_iter()
            .filter_map(|key| Reflect::get(&data, &key.into()).ok())
            .find(JsValue::is_object)
        else {
            return;
        };
        let text = |key: &str| Reflect::get(&trace, &key.into()).ok().and_then(|v| v.as_string()).filter(|s| !s.trim().is_empty());
        let name = text("fileName").or_else(|| text("title")).unwrap_or_else(|| "posted trace".to_owned());
        match Reflect::get(&trace, &"buffer".into()).ok().and_then(|b| b.dyn_into::<ArrayBuffer>().ok()) {
            Some(buffer) => self.load_bytes(&name, buffer),
            None => self.refuse_load(&name, "io", "a posted trace must carry its bytes as `buffer`, an ArrayBuffer".into()),
        }
    }

    /// Loads `buffer`, a trace posted to the page named `name`, cancelling any running load.
    pub fn load_bytes(self, name: &str, buffer: ArrayBuffer) {
        // `byteLength` read as a number: js-sys's `byte_length` is a u32 and would wrap.
        let size = Reflect::get(&buffer, &"byteLength".into()).ok().and_then(|v| v.as_f64()).unwrap_or_default();
        if size > MAX_BYTES {
            let message = format!(
                "The posted trace is {:.2} GB; a posted buffer can hold at most {:.2} GB. Post it \
                 gzipped, or open the file itself (drop it on the page, or ?url=).",
                size / 1e9,
                MAX_BYTES / 1e9
            );
            return self.refuse_load(name, "too-big", message);
        }
        let Some(bridge) = self.get_bridge() else {
            return;
        };
        self.begin(name);
        self.end_run();
        // Shared like a local file: the link names the file, which a teammate opens.
        self.link.update_value(|l| l.local_file = true);
        let id = bridge.begin();
        bridge.take(id, name, buffer);
    }
}

/// True for a post from this page's opener, its parent (this page in a frame) or itself (a
/// top-level page is its own parent).
fn heard(window: &Window, source: &Object) -> bool {
    let opener = window.opener().ok().filter(|o| !o.is_null());
    let parent = window.parent().ok().flatten().map(JsValue::from);
    [opener, parent].into_iter().flatten().any(|w| Object::is(&w, source))
}
