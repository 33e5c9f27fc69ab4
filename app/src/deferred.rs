//! Building the page over several tasks. A browser task that builds a large view also compiles
//! the wasm code it runs for the first time (V8 compiles wasm functions lazily, on first call),
//! which about doubles its cost: built in one task, the page's boot was over 100 ms, and the
//! panels that appear after a load 50-60 ms, on a 2-core machine.

use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::time::Duration;

thread_local! {
    /// [`Deferred`] views whose task has not run yet.
    static PENDING: Cell<usize> = const { Cell::new(0) };
    /// What runs once every part of the page asked for is built ([`when_built`]).
    static WAITING: RefCell<Vec<Box<dyn FnOnce()>>> = const { RefCell::new(Vec::new()) };
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

/// Runs what waits for the page to be built, if it is; then lets `idle()` resolve.
fn settle() {
    if PENDING.get() > 0 {
        return;
    }
    for f in WAITING.take() {
        f();
    }
    crate::testing::recheck();
}

/// Builds its children in a task after the one that builds it (a `setTimeout(0)`); siblings
/// each get a task of their own, in order.
#[component]
pub fn Deferred(children: ChildrenFn) -> impl IntoView {
    let ready = RwSignal::new(false);
    PENDING.set(PENDING.get() + 1);
    set_timeout(
        move || {
            // `try_set`: the view may be gone by then.
            let _ = ready.try_set(true);
            PENDING.set(PENDING.get().saturating_sub(1));
            if PENDING.get() == 0 {
                // A task later: the children are built in this task's microtasks, and may ask
                // for parts of their own.
                set_timeout(settle, Duration::ZERO);
            }
        },
        Duration::ZERO,
    );
    view! { <Show when=move || ready.get()>{children()}</Show> }
}
