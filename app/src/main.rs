//! Kinetoscope front end: a Leptos CSR app that streams a trace into the engine worker and shows
//! its summary. View code only; parsing happens in the worker (`worker/src/bin/worker.rs`).
//!
//! Layout: [`bridge`] talks to the worker, [`state`] holds plain view state, [`control`] turns
//! intents and replies into state and queries, [`timeline`] paints the lane timeline, [`charts`]
//! draws the charts tab, [`panels`] render the rest, [`window_hook`] publishes `window.kinetoscope`,
//! [`app`] wires them together, building the page over several tasks with [`deferred`]; [`frame`]
//! runs whatever waits for the next animation frame.

mod app;
mod bridge;
mod charts;
mod control;
mod deferred;
mod frame;
mod panels;
mod state;
mod window_hook;
mod timeline;

fn main() {
    console_error_panic_hook::set_once();
    // In a task of its own, not in the one that instantiated the wasm (see `app` on the boot).
    leptos::prelude::set_timeout(
        || leptos::mount::mount_to_body(app::App),
        std::time::Duration::ZERO,
    );
}
