//! The read-only `window.kinetoscope` test contract (Perfetto's `waitForPerfettoIdle` idea).
//!
//! Output: `window.kinetoscope` is a getter (non-writable, non-configurable) returning a frozen
//! snapshot object, replaced by [`publish`] on every state change:
//!
//! ```text
//! status          "idle" | "loading" | "ready" | "error"
//! summary         TraceSummary as JSON (the protocol's fields), or null
//! error           LoadError as JSON ({kind, message, offset, line, column}), or null
//! loads           number of loads that ended, success or failure
//! protocolVersion the worker's announced protocol version, or null before its Ready
//! table           the table tab shown: {kind: "ops"|"kernels"|"steps", rows: visible row
//!                 count (after the filter), sort: {key, desc} or null, byShape, pending},
//!                 or null on the summary tab or before the first table arrived
//! idle()          Promise resolved when no load is running and no table query is pending
//!                 (at once if none is)
//! ```
//!
//! Invariants: [`publish`] runs synchronously inside the state change (not in an effect), so a
//! test that triggers a load (e.g. `setInputFiles`) and then calls `idle()` sees `loading` and
//! waits. The snapshot is rebuilt per change; `summary` is serialized only when it changes.

use crate::state::table::{Tab, TableState};
use crate::state::{LoadState, Status};
use js_sys::{Function, Object, Promise, Reflect};
use protocol::TraceSummary;
use std::cell::RefCell;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

thread_local! {
    static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
}

/// What the getter and `idle()` read.
struct Hook {
    snapshot: JsValue,
    idle: Function,
    loading: bool,
    waiters: Vec<Function>,
    summary_cache: Option<(Arc<TraceSummary>, JsValue)>,
}

/// Defines `window.kinetoscope` (once); [`publish`] fills it.
pub fn install() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let idle = Closure::<dyn Fn() -> Promise>::new(idle_promise);
    let getter = Closure::<dyn Fn() -> JsValue>::new(|| {
        HOOK.with_borrow(|h| h.as_ref().map_or(JsValue::NULL, |h| h.snapshot.clone()))
    });
    let descriptor = Object::new();
    let _ = Reflect::set(&descriptor, &"get".into(), getter.as_ref());
    let _ = Reflect::set(&descriptor, &"enumerable".into(), &JsValue::TRUE);
    let idle_fn: Function = idle.as_ref().unchecked_ref::<Function>().clone();
    // Both closures live as long as the page.
    idle.forget();
    getter.forget();
    HOOK.set(Some(Hook {
        snapshot: JsValue::NULL,
        idle: idle_fn,
        loading: false,
        waiters: Vec::new(),
        summary_cache: None,
    }));
    // Fails only if the property already exists (a second install); the first one stays.
    let _ = Object::define_property(&window, &"kinetoscope".into(), &descriptor);
}

/// Replaces the snapshot with `state` and `tables`, and resolves `idle()` waiters if no load is
/// running and no query is pending.
pub fn publish(state: &LoadState, tables: &TableState) {
    let waiters = HOOK.with_borrow_mut(|hook| {
        let Some(hook) = hook.as_mut() else {
            return Vec::new();
        };
        hook.loading = state.status == Status::Loading || tables.pending.is_some();
        hook.snapshot = snapshot(hook, state, tables);
        if hook.loading {
            Vec::new()
        } else {
            std::mem::take(&mut hook.waiters)
        }
    });
    for resolve in waiters {
        let _ = resolve.call0(&JsValue::UNDEFINED);
    }
}

fn snapshot(hook: &mut Hook, state: &LoadState, tables: &TableState) -> JsValue {
    let summary = match &state.summary {
        Some(summary) => match &hook.summary_cache {
            Some((cached, js)) if Arc::ptr_eq(cached, summary) => js.clone(),
            _ => {
                let js = to_js(summary.as_ref());
                hook.summary_cache = Some((summary.clone(), js.clone()));
                js
            }
        },
        None => JsValue::NULL,
    };
    let error = state.error.as_ref().map_or(JsValue::NULL, to_js);
    let version = state.protocol_version.map_or(JsValue::NULL, |v| v.into());
    let table = table_js(tables);
    let obj = Object::new();
    let fields: [(&str, JsValue); 7] = [
        ("status", state.status.as_str().into()),
        ("summary", summary),
        ("error", error),
        ("loads", state.loads.into()),
        ("protocolVersion", version),
        ("table", table),
        ("idle", hook.idle.clone().into()),
    ];
    for (key, value) in fields {
        let _ = Reflect::set(&obj, &key.into(), &value);
    }
    Object::freeze(&obj).into()
}

/// `{kind, rows, sort, byShape, pending}` for the table tab shown, or null.
fn table_js(t: &TableState) -> JsValue {
    let Some(data) = t.data.as_ref().filter(|_| t.tab != Tab::Summary) else {
        return JsValue::NULL;
    };
    let sort = t.sort.as_ref().map_or(JsValue::NULL, |s| {
        let obj = Object::new();
        let _ = Reflect::set(&obj, &"key".into(), &s.key.as_str().into());
        let _ = Reflect::set(&obj, &"desc".into(), &s.desc.into());
        Object::freeze(&obj).into()
    });
    let obj = Object::new();
    let fields: [(&str, JsValue); 5] = [
        ("kind", data.kind.as_str().into()),
        ("rows", (t.visible_rows().len() as u32).into()),
        ("sort", sort),
        ("byShape", t.by_shape.into()),
        ("pending", t.pending.is_some().into()),
    ];
    for (key, value) in fields {
        let _ = Reflect::set(&obj, &key.into(), &value);
    }
    Object::freeze(&obj).into()
}

/// A plain JS object with the value's serde JSON fields; null if it cannot be encoded.
fn to_js<T: serde::Serialize>(value: &T) -> JsValue {
    serde_json::to_string(value)
        .ok()
        .and_then(|json| js_sys::JSON::parse(&json).ok())
        .unwrap_or(JsValue::NULL)
}

fn idle_promise() -> Promise {
    Promise::new(&mut |resolve, _reject| {
        let resolve_now = HOOK.with_borrow_mut(|hook| match hook.as_mut() {
            Some(hook) if hook.loading => {
                hook.waiters.push(resolve.clone());
                false
            }
            _ => true,
        });
        if resolve_now {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    })
}
