//! Building the page over several frames. A browser task that builds a large view also compiles
//! the wasm code it runs for the first time (V8 compiles wasm functions lazily, on first call),
//! which about doubles its cost: built in one task, the page's boot was over 100 ms, and the
//! panels that appear after a load 50-60 ms, on a 2-core machine. Each part is built in a task
//! of its own right after a frame, so its style and layout are the next frame's only ones: parts
//! built in tasks that ran back to back before one frame were laid out together, in a frame
//! that also painted the timeline (60-100 ms after a load).

use crate::frame::Target;
use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

/// How long a part waits for a frame before it is built anyway: a hidden page has none.
const FRAME_WAIT: Duration = Duration::from_millis(100);

thread_local! {
    /// [`Deferred`] views and [`next_task`] calls whose task has not run yet.
    static PENDING: Cell<usize> = const { Cell::new(0) };
    /// What runs once every part of the page asked for is built ([`when_built`]).
    static WAITING: RefCell<Vec<Box<dyn FnOnce()>>> = const { RefCell::new(Vec::new()) };
    /// Parts waiting for their frame, in order; one is built per frame.
    static QUEUE: RefCell<VecDeque<Box<dyn FnOnce()>>> = const { RefCell::new(VecDeque::new()) };
    /// What runs each time the page is built, after [`WAITING`] ([`on_built`]).
    static ON_BUILT: Cell<Option<fn()>> = const { Cell::new(None) };
}

/// How many parts of the page wait to be built; `window.kinetoscope.idle()` waits for none.
pub fn pending() -> usize {
    PENDING.get()
}

/// Runs `f` in a task of its own once no part of the page waits to be built.
pub fn when_built(f: impl FnOnce() + 'static) {
    WAITING.with_borrow_mut(|w| w.push(Box::new(f)));
    set_timeout(settle, Duration::ZERO);
}

/// Runs `f` each time no part of the page waits to be built any more, after what
/// [`when_built`] queued (the test hook lets `idle()` resolve then); replaces the previous `f`.
pub fn on_built(f: fn()) {
    ON_BUILT.set(Some(f));
}

/// Runs what waits for the page to be built, if it is; then [`on_built`]'s callback.
fn settle() {
    if PENDING.get() > 0 {
        return;
    }
    for f in WAITING.take() {
        f();
    }
    if let Some(f) = ON_BUILT.get() {
        f();
    }
}

/// Builds its children in a task of its own after the next frame; siblings each get a frame
/// of their own, in order.
#[component]
pub fn Deferred(children: ChildrenFn) -> impl IntoView {
    let ready = RwSignal::new(false);
    PENDING.set(PENDING.get() + 1);
    // `try_set`: the view may be gone by then.
    let build = move || {
        let _ = ready.try_set(true);
    };
    let first = QUEUE.with_borrow_mut(|q| {
        q.push_back(Box::new(build));
        q.len() == 1
    });
    if first {
        after_frame(build_next);
    }
    view! { <Show when=move || ready.get()>{children()}</Show> }
}

/// Builds the first queued part, then waits for a frame before the next.
fn build_next() {
    let Some(build) = QUEUE.with_borrow_mut(VecDeque::pop_front) else {
        return;
    };
    build();
    done_one();
    if !QUEUE.with_borrow(VecDeque::is_empty) {
        after_frame(build_next);
    }
}

/// Runs `f` in a task of its own, soon; `idle()` waits for it.
pub fn next_task(f: impl FnOnce() + 'static) {
    PENDING.set(PENDING.get() + 1);
    set_timeout(
        move || {
            f();
            done_one();
        },
        Duration::ZERO,
    );
}

/// Counts one waited-for task as run.
fn done_one() {
    PENDING.set(PENDING.get().saturating_sub(1));
    if PENDING.get() == 0 {
        // A task later: a part is built in its task's microtasks, and may ask for parts of its
        // own.
        set_timeout(settle, Duration::ZERO);
    }
}

/// Runs `f` in a task right after the next frame (or after [`FRAME_WAIT`] without one).
fn after_frame(f: fn()) {
    let done = Rc::new(Cell::new(false));
    let once = {
        let done = done.clone();
        move || {
            if !done.replace(true) {
                f();
            }
        }
    };
    let fallback = once.clone();
    crate::frame::request(Target::PageBuild, move || set_timeout(once, Duration::ZERO));
    set_timeout(fallback, FRAME_WAIT);
}
