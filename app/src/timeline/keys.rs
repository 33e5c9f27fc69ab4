//! Keyboard navigation as Perfetto users expect: W/S zoom around the pointer, A/D pan; a press
//! moves one step at once and holding keeps moving smoothly (per animation frame, scaled by the
//! elapsed time); F zooms to the selection, C toggles the critical path, 0 / Home shows everything, Escape clears, `?` toggles
//! the help overlay. Keys typed into inputs are left alone, except Escape, which leaves the input.

use crate::control::timeline::{KEY_PAN, KEY_ZOOM};
use crate::control::Controller;
use crate::frame::{now_ms, Target};
use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::JsCast;

/// Navigation keys held down, the pointer's x (zoom anchor) and the animation's state.
#[derive(Default)]
pub struct Keys {
    held: RefCell<Vec<char>>,
    /// Pointer x over the drawing area, or `None` (zoom around the center).
    pub anchor: Cell<Option<f64>>,
    running: Cell<bool>,
}

impl Keys {
    /// Handles a keydown; returns true when the key was used.
    pub fn down(self: &Rc<Self>, ctl: Controller, ev: &web_sys::KeyboardEvent, help: RwSignal<bool>) -> bool {
        if typing(ev) {
            // Escape leaves the text field, so the navigation keys work again.
            if ev.key() == "Escape" {
                if let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) {
                    let _ = el.blur();
                }
            }
            return false;
        }
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return false;
        }
        let key = ev.key();
        match key.as_str() {
            "w" | "W" | "s" | "S" | "a" | "A" | "d" | "D" => {
                let k = key.to_ascii_lowercase().chars().next().unwrap_or('w');
                if !ev.repeat() {
                    self.step(ctl, k, 100.0);
                    if !self.held.borrow().contains(&k) {
                        self.held.borrow_mut().push(k);
                    }
                    self.start(ctl);
                }
            }
            "f" | "F" => ctl.zoom_to_selection(),
            "c" | "C" => ctl.toggle_critical(),
            "0" | "Home" if ctl.stack_active() => ctl.stack_reset(),
            "0" | "Home" => ctl.reset_view(),
            "?" => help.update(|h| *h = !*h),
            "Escape" => {
                help.set(false);
                ctl.clear_selection();
                ctl.set_range(None);
            }
            _ => return false,
        }
        true
    }

    /// Handles a keyup.
    pub fn up(&self, ev: &web_sys::KeyboardEvent) {
        let key = ev.key().to_ascii_lowercase();
        self.held.borrow_mut().retain(|c| !key.starts_with(*c));
    }

    /// Forgets held keys (the window lost focus: keyups will not come).
    pub fn clear(&self) {
        self.held.borrow_mut().clear();
    }

    /// Moves the view as key `k` held for `ms` milliseconds would: the stacked timelines (the
    /// Compare tab's or the ranks) when the pointer was last over them, else the main timeline.
    fn step(&self, ctl: Controller, k: char, ms: f64) {
        let stack = ctl.stack_active();
        let (width, anchor) = if stack {
            ctl.stack_anchor()
        } else {
            (ctl.timeline.with_untracked(|t| t.view.width), self.anchor.get())
        };
        let anchor = anchor.unwrap_or(width / 2.0);
        let f = ms / 100.0;
        let (zoom, pan) = match k {
            'w' => (KEY_ZOOM.powf(f), 0.0),
            's' => (KEY_ZOOM.powf(-f), 0.0),
            'a' => (1.0, -width * KEY_PAN * f),
            'd' => (1.0, width * KEY_PAN * f),
            _ => return,
        };
        match (stack, zoom != 1.0) {
            (true, true) => ctl.stack_zoom(zoom, anchor),
            (true, false) => ctl.stack_pan(pan),
            (false, true) => ctl.zoom(zoom, anchor),
            (false, false) => ctl.pan(pan),
        }
    }

    fn start(self: &Rc<Self>, ctl: Controller) {
        if self.running.replace(true) {
            return;
        }
        frame(self.clone(), ctl, now_ms());
    }
}

/// One animation frame of held-key motion; schedules the next while keys are held. The first
/// 150 ms only wait, so a short press moves exactly one step.
fn frame(keys: Rc<Keys>, ctl: Controller, since: f64) {
    crate::frame::request(Target::HeldKeys, move || {
        let now = now_ms();
        let held: Vec<char> = keys.held.borrow().clone();
        if held.is_empty() {
            keys.running.set(false);
            return;
        }
        let elapsed = now - since;
        if elapsed >= 150.0 {
            // At most 50 ms of motion per frame, so a stalled frame does not jump.
            let dt = (elapsed - 150.0).min(50.0);
            for k in held {
                keys.step(ctl, k, dt);
            }
            frame(keys, ctl, now - 150.0);
        } else {
            frame(keys, ctl, since);
        }
    });
}

/// True when the key goes to a text field.
fn typing(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"))
}
