//! The one frame scheduler: everything that wants to run at the next animation frame (the
//! timeline's and each stacked panel's paint, held-key motion, the next deferred part of the
//! page) asks here for a named [`Target`]. At most one `requestAnimationFrame` is pending; each
//! frame runs the callbacks due then, once each, in the order their targets were first asked
//! for. Asking again for a target already due replaces its callback (the latest wins, and a
//! paint asked for ten times before a frame paints once). A callback that asks for a frame gets
//! the next one.
//!
//! Why one (Perfetto's `RafScheduler`): four call sites each kept their own "scheduled" flag
//! and frame request; now a frame is requested once, whoever asks.
//!
//! [`now_ms`] is the page clock that frames, held-key motion and query latencies are timed with.

use crate::state::stack::StackId;
use leptos::prelude::request_animation_frame;
use std::cell::{Cell, RefCell};

/// What a frame callback is for; one callback per target and frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The main timeline's canvas.
    Timeline,
    /// A stacked panel's canvas, by stack and panel index.
    StackPane(StackId, usize),
    /// Motion of held W/A/S/D keys.
    HeldKeys,
    /// The next part of the page built after a frame (`deferred`).
    PageBuild,
}

/// Callbacks due at the next frame, by target, in order of first request.
#[derive(Default)]
struct Due(Vec<(Target, Box<dyn FnOnce()>)>);

impl Due {
    /// Adds or replaces `target`'s callback; true when the list was empty.
    fn ask(&mut self, target: Target, f: Box<dyn FnOnce()>) -> bool {
        let was_empty = self.0.is_empty();
        match self.0.iter_mut().find(|(t, _)| *t == target) {
            Some(slot) => slot.1 = f,
            None => self.0.push((target, f)),
        }
        was_empty
    }
}

thread_local! {
    static DUE: RefCell<Due> = RefCell::new(Due::default());
    /// An animation frame is requested and has not run yet.
    static REQUESTED: Cell<bool> = const { Cell::new(false) };
}

/// Milliseconds from the page's time origin (`performance.now()`; 0 without a window).
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Runs `f` at the next animation frame, in place of any callback `target` has due then.
pub fn request(target: Target, f: impl FnOnce() + 'static) {
    DUE.with_borrow_mut(|due| due.ask(target, Box::new(f)));
    if !REQUESTED.replace(true) {
        request_animation_frame(run);
    }
}

/// The frame: runs what was due when it began; what those callbacks ask for waits for the
/// next frame.
fn run() {
    REQUESTED.set(false);
    let due = DUE.take();
    for (_, f) in due.0 {
        f();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    fn log_to(log: &Rc<RefCell<Vec<&'static str>>>, what: &'static str) -> Box<dyn FnOnce()> {
        let log = log.clone();
        Box::new(move || log.borrow_mut().push(what))
    }

    #[test]
    fn a_target_runs_once_per_frame_with_its_latest_callback() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut due = Due::default();
        assert!(due.ask(Target::Timeline, log_to(&log, "timeline 1")));
        assert!(!due.ask(Target::HeldKeys, log_to(&log, "keys")));
        assert!(!due.ask(Target::Timeline, log_to(&log, "timeline 2")));
        assert!(!due.ask(Target::StackPane(StackId::Compare, 1), log_to(&log, "pane 1")));
        for (_, f) in due.0 {
            f();
        }
        assert_eq!(*log.borrow(), ["timeline 2", "keys", "pane 1"]);
    }

    #[test]
    fn a_callback_asking_again_waits_for_the_next_frame() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let again = log_to(&log, "next frame");
        let first = Box::new(move || {
            DUE.with_borrow_mut(|due| due.ask(Target::HeldKeys, again));
        });
        DUE.with_borrow_mut(|due| due.ask(Target::HeldKeys, first));
        run();
        assert!(log.borrow().is_empty());
        run();
        assert_eq!(*log.borrow(), ["next frame"]);
    }
}
