//! Worker client: spawns the engine worker, checks its protocol version, numbers requests and
//! keeps only the latest load (latest wins).
//!
//! Inputs: `begin` then `fetch` (a URL checked by [`source`]) or `read` (a local file), `fail`,
//! `query` calls, and the worker's messages. Output: the [`FromWorker`] replies
//! that belong to the current load (plus `Ready`) and the answers to the latest query of each
//! [`Channel`], handed to the `sink` given to [`Bridge::new`] with the channel the query was
//! sent on (recorded when it was sent, so the consumer is known without asking every state)
//! and the rect words of a tile answer; replies for cancelled or superseded ids are dropped here.
//!
//! Invariants: at most one load is current; starting one cancels the previous in the worker.
//! Messages sent before the worker's `Ready` wait in a queue (a worker drops messages that arrive
//! before its wasm has set `onmessage`). A worker announcing another `PROTOCOL_VERSION`, or whose
//! first message this page cannot read (a stale cached worker: worker files are not
//! content-hashed), is refused with a visible error; a worker that crashes (an `error` event:
//! a trap, a panic, a script that did not load) or whose reply cannot be received
//! (`messageerror`) is terminated, the current load fails with "the load worker stopped: …"
//! and the next load spawns a new one, so the app stays usable.
//! The sink is never called while the bridge's state is borrowed.
//!
//! Cost: one JSON string per control message. The worker reads a load's bytes itself (a fetch
//! or the `File` handed to it), so they never pass through the page's main thread: reading a
//! 1 GB body here took tasks of 90–150 ms. See docs/architecture.md.

mod conn;
pub mod source;
mod wire;

use conn::{spawn_worker, Conn};
use protocol::{Channel, FromWorker, LoadError, Query, ToWorker, PROTOCOL_VERSION};
use std::cell::RefCell;
use std::rc::Rc;
use source::Target;
use wasm_bindgen::JsValue;
use web_sys::File;

/// Handle to the worker client; clones share one worker.
#[derive(Clone)]
pub struct Bridge(Rc<Shared>);

/// What the bridge hands to its sink: a reply, the channel its query was sent on (answers and
/// query failures only) and, for tile answers, the rect words.
pub type Sink = dyn Fn(FromWorker, Option<Channel>, Option<Vec<u32>>);

struct Shared {
    inner: RefCell<Inner>,
    sink: Box<Sink>,
}

struct Inner {
    link: Link,
    next_id: u32,
    current: Option<u32>,
    /// The latest query of each channel; replies to older ones are dropped (latest wins).
    queries: Vec<(Channel, u32)>,
    /// The latest `HoldRanks`, until its `RanksHeld` (its `RankProgress` pass too).
    hold: Option<u32>,
}

/// The connection's state.
enum Link {
    /// Spawned, `Ready` not received yet: outgoing messages wait in the queue.
    Booting(Conn, Vec<(ToWorker, Option<JsValue>)>),
    /// Handshake done.
    Ready(Conn),
    /// Crashed or could not start; the next load tries a new worker.
    Dead(LoadError),
    /// Speaks another protocol version; every load fails with this error.
    Refused(LoadError),
}

/// Why [`Link::deliver`] could not send a message.
enum Undelivered {
    /// `postMessage` failed.
    Post(String),
    /// The worker is dead or speaks another protocol.
    Down(LoadError),
}

impl Undelivered {
    /// One line for a failed query.
    fn message(self) -> String {
        match self {
            Self::Post(e) => e,
            Self::Down(error) => error.message,
        }
    }
}

impl Link {
    /// Queues `msg` (and `file`) while the worker boots, posts it once ready.
    fn deliver(&mut self, msg: ToWorker, file: Option<JsValue>) -> Result<(), Undelivered> {
        match self {
            Link::Booting(_, queue) => {
                queue.push((msg, file));
                Ok(())
            }
            Link::Ready(conn) => wire::post(&conn.worker, &msg, file.as_ref()).map_err(Undelivered::Post),
            Link::Dead(error) | Link::Refused(error) => Err(Undelivered::Down(error.clone())),
        }
    }
}

impl Bridge {
    /// A bridge whose worker starts with [`Bridge::start`] or the first load; `sink` receives
    /// `Ready` and the current load's replies.
    pub fn new(sink: impl Fn(FromWorker, Option<Channel>, Option<Vec<u32>>) + 'static) -> Bridge {
        let never = worker_error("not started".into());
        let inner = Inner {
            link: Link::Dead(never),
            next_id: 1,
            current: None,
            queries: Vec::new(),
            hold: None,
        };
        Bridge(Rc::new(Shared {
            inner: RefCell::new(inner),
            sink: Box::new(sink),
        }))
    }

    /// Spawns the worker unless one runs (a dead one is replaced).
    pub fn start(&self) {
        if matches!(self.0.inner.borrow().link, Link::Dead(_)) {
            self.connect();
        }
    }

    /// Starts a new load and returns its id; the previous load is cancelled.
    pub fn begin(&self) -> u32 {
        self.start();
        let mut inner = self.0.inner.borrow_mut();
        let id = inner.next_id;
        inner.next_id = id.checked_add(1).unwrap_or(1);
        let previous = inner.current.replace(id);
        match &mut inner.link {
            // Everything queued belongs to the load being replaced.
            Link::Booting(_, queue) => queue.clear(),
            Link::Ready(conn) => {
                if let Some(prev) = previous {
                    if let Err(e) = wire::post(&conn.worker, &ToWorker::Cancel { id: prev }, None) {
                        web_sys::console::warn_1(&JsValue::from_str(&e));
                    }
                }
            }
            Link::Dead(_) | Link::Refused(_) => {}
        }
        id
    }

    /// A fresh request id for [`Bridge::query`].
    pub fn next_query_id(&self) -> u32 {
        let mut inner = self.0.inner.borrow_mut();
        let id = inner.next_id;
        inner.next_id = id.checked_add(1).unwrap_or(1);
        id
    }

    /// Sends query `id` (from [`Bridge::next_query_id`]); the reply to an older query of the
    /// same channel will be dropped. An unusable worker answers at once with `QueryFailed`.
    pub fn query(&self, id: u32, query: Query) {
        self.query_on(query.channel(), id, query);
    }

    /// [`Bridge::query`] on `channel` instead of the query's own (a consumer with its own
    /// latest-wins stream, like the charts).
    pub fn query_on(&self, channel: Channel, id: u32, query: Query) {
        let mut inner = self.0.inner.borrow_mut();
        inner.queries.retain(|&(c, _)| c != channel);
        inner.queries.push((channel, id));
        let outcome = inner.link.deliver(ToWorker::Query { id, query }, None).map_err(Undelivered::message);
        if outcome.is_err() {
            inner.queries.retain(|&(_, q)| q != id);
        }
        drop(inner);
        if let Err(message) = outcome {
            (self.0.sink)(FromWorker::QueryFailed { id, message }, Some(channel), None);
        }
    }

    /// Has the worker hold the models of `ranks` of the open run (`HoldRanks` `id`, from
    /// [`Bridge::next_query_id`]); supersedes the previous hold. A worker that cannot take it
    /// answers at once with an empty `RanksHeld`.
    pub fn hold_ranks(&self, id: u32, ranks: Vec<u32>) {
        let mut inner = self.0.inner.borrow_mut();
        inner.hold = Some(id);
        let msg = ToWorker::HoldRanks { id, ranks, workers: workers_param() };
        let outcome = inner.link.deliver(msg, None);
        let failed = outcome.is_err().then(|| inner.drop_hold()).flatten();
        drop(inner);
        if let Some(msg) = failed {
            (self.0.sink)(msg, None, None);
        }
    }

    /// Stops the current load: its stream stops, and the worker, which may be busy parsing
    /// it, is terminated (the next load starts a fresh one). The load ends with a `cancelled`
    /// error; pending queries fail.
    pub fn cancel(&self) {
        let mut inner = self.0.inner.borrow_mut();
        let Some(id) = inner.current.take() else {
            return;
        };
        let queries = std::mem::take(&mut inner.queries);
        // Dropping the connection terminates the worker.
        inner.link = Link::Dead(worker_error("the last load was cancelled".into()));
        let held = inner.drop_hold();
        drop(inner);
        if let Some(msg) = held {
            (self.0.sink)(msg, None, None);
        }
        for (channel, qid) in queries {
            let message = "cancelled".to_owned();
            (self.0.sink)(FromWorker::QueryFailed { id: qid, message }, Some(channel), None);
        }
        let error = LoadError {
            kind: "cancelled".into(),
            ..worker_error("Loading was cancelled. Open another trace.".into())
        };
        (self.0.sink)(FromWorker::Failed { id, error }, None, None);
    }

    /// Has the worker fetch `target` as load `id`.
    pub fn fetch(&self, id: u32, target: &Target) {
        let msg = ToWorker::Fetch {
            id,
            url: target.href.clone(),
            name: target.name.clone(),
            workers: workers_param(),
        };
        self.send(id, msg, None);
    }

    /// Has the worker re-mark the loaded trace's steps by `marker` as load `id`.
    pub fn set_step_marker(&self, id: u32, marker: Option<String>) {
        self.send(id, ToWorker::SetStepMarker { id, marker }, None);
    }

    /// Has the worker measure the loaded trace against the GPU peaks `spec` as load `id`.
    pub fn set_peaks(&self, id: u32, spec: Option<String>) {
        self.send(id, ToWorker::SetPeaks { id, spec }, None);
    }

    /// Has the worker read `file` as load `id`.
    pub fn read(&self, id: u32, file: File) {
        let msg = ToWorker::Read {
            id,
            workers: workers_param(),
        };
        self.send(id, msg, Some(file.into()));
    }

    /// Has the worker load `buffer` (a trace another page posted, named `name`) as load `id`;
    /// the buffer moves to the worker.
    pub fn take(&self, id: u32, name: &str, buffer: js_sys::ArrayBuffer) {
        let msg = ToWorker::Bytes {
            id,
            name: name.to_owned(),
            workers: workers_param(),
        };
        self.send(id, msg, Some(buffer.into()));
    }

    /// Has the worker load the run listed by the manifest at `target` as load `id`.
    pub fn fetch_run(&self, id: u32, target: &Target) {
        let msg = ToWorker::FetchRun {
            id,
            url: target.href.clone(),
            workers: workers_param(),
        };
        self.send(id, msg, None);
    }

    /// Has the worker load the run of `files` as load `id` (the files travel beside the
    /// message, as handles).
    pub fn read_run(&self, id: u32, files: &[File]) {
        let array = js_sys::Array::new();
        for f in files {
            array.push(f);
        }
        let msg = ToWorker::ReadRun {
            id,
            workers: workers_param(),
        };
        self.send(id, msg, Some(array.into()));
    }

    /// Has the worker make rank `rank` of the open run the current trace, as load `id`.
    pub fn open_rank(&self, id: u32, rank: u32) {
        let msg = ToWorker::OpenRank {
            id,
            rank,
            workers: workers_param(),
        };
        self.send(id, msg, None);
    }

    /// Ends load `id` with an error found on this side (a URL that cannot be loaded), if still
    /// current.
    pub fn fail(&self, id: u32, error: LoadError) {
        let mut inner = self.0.inner.borrow_mut();
        if inner.current != Some(id) {
            return;
        }
        inner.current = None;
        match &mut inner.link {
            Link::Booting(_, queue) => queue.clear(),
            Link::Ready(conn) => {
                // Best effort: if this fails the worker is gone and holds nothing anyway.
                let _ = wire::post(&conn.worker, &ToWorker::Cancel { id }, None);
            }
            Link::Dead(_) | Link::Refused(_) => {}
        }
        drop(inner);
        (self.0.sink)(FromWorker::Failed { id, error }, None, None);
    }

    /// Queues or posts `msg` for the current load `id`; a failure ends the load.
    fn send(&self, id: u32, msg: ToWorker, file: Option<JsValue>) {
        let mut inner = self.0.inner.borrow_mut();
        if inner.current != Some(id) {
            return;
        }
        let outcome = inner.link.deliver(msg, file).map_err(|u| match u {
            Undelivered::Post(e) => LoadError { kind: "protocol".into(), ..worker_error(e) },
            Undelivered::Down(error) => error,
        });
        drop(inner);
        if let Err(error) = outcome {
            self.fail(id, error);
        }
    }

    /// Spawns a worker and installs its handlers; on failure the link stays dead with the reason.
    fn connect(&self) {
        let link = match spawn_worker(Rc::downgrade(&self.0)) {
            Ok(conn) => Link::Booting(conn, Vec::new()),
            Err(e) => Link::Dead(worker_error(format!("cannot start the worker: {e}"))),
        };
        self.0.inner.borrow_mut().link = link;
    }

    fn on_message(&self, data: &JsValue) {
        match wire::decode(data) {
            Ok((msg, words)) => {
                let replies = self.0.inner.borrow_mut().receive(msg);
                let mut words = words;
                for (m, channel) in replies {
                    let w = matches!(m, FromWorker::Answer { .. }).then(|| words.take()).flatten();
                    (self.0.sink)(m, channel, w);
                }
            }
            Err(e) => {
                web_sys::console::error_1(&JsValue::from_str(&e));
                // Before `Ready`, an unreadable message is a worker of another protocol (whose
                // `Ready` this page cannot read either): refused like one that announces it.
                let mut inner = self.0.inner.borrow_mut();
                let failed = matches!(inner.link, Link::Booting(..))
                    .then(|| inner.refuse("the worker's first message is not one this page reads".into()));
                drop(inner);
                if let Some(failed) = failed {
                    (self.0.sink)(failed, None, None);
                }
            }
        }
    }

    fn on_error(&self, message: String) {
        let mut inner = self.0.inner.borrow_mut();
        let error = worker_error(stopped(&message));
        // Dropping the connection terminates the crashed worker; the next load spawns a new one.
        inner.link = Link::Dead(error.clone());
        let id = inner.current.take().unwrap_or(0);
        let queries = std::mem::take(&mut inner.queries);
        let held = inner.drop_hold();
        drop(inner);
        if let Some(msg) = held {
            (self.0.sink)(msg, None, None);
        }
        for (channel, qid) in queries {
            let message = error.message.clone();
            (self.0.sink)(FromWorker::QueryFailed { id: qid, message }, Some(channel), None);
        }
        (self.0.sink)(FromWorker::Failed { id, error }, None, None);
    }
}

impl Inner {
    /// Updates the link for one worker message and returns the replies to hand to the sink,
    /// answers and query failures with the channel their query was sent on.
    fn receive(&mut self, msg: FromWorker) -> Vec<(FromWorker, Option<Channel>)> {
        match msg {
            FromWorker::Ready { protocol_version } => {
                self.handshake(protocol_version).into_iter().map(|m| (m, None)).collect()
            }
            FromWorker::Progress { id, .. }
            | FromWorker::RunStarted { id, .. }
            | FromWorker::RankProgress { id, .. }
            | FromWorker::RankLoaded { id, .. }
                if self.current == Some(id) =>
            {
                vec![(msg, None)]
            }
            FromWorker::Loaded { id, .. } | FromWorker::Failed { id, .. }
                if self.current == Some(id) =>
            {
                self.current = None;
                vec![(msg, None)]
            }
            FromWorker::RankProgress { id, .. } if self.hold == Some(id) => vec![(msg, None)],
            FromWorker::RanksHeld { id, .. } if self.hold == Some(id) => {
                self.hold = None;
                vec![(msg, None)]
            }
            FromWorker::Answer { id, .. } | FromWorker::QueryFailed { id, .. } => {
                let Some(at) = self.queries.iter().position(|&(_, q)| q == id) else {
                    return Vec::new();
                };
                let (channel, _) = self.queries.remove(at);
                vec![(msg, Some(channel))]
            }
            _ => Vec::new(),
        }
    }

    /// Ends the hold awaited, if any, with the empty `RanksHeld` a worker that can no longer
    /// answer it stands for.
    fn drop_hold(&mut self) -> Option<FromWorker> {
        let id = self.hold.take()?;
        Some(FromWorker::RanksHeld { id, held: Vec::new(), failed: Vec::new() })
    }

    /// Refuses the worker (a stale cached one: `what` it did wrong) and fails the current load.
    fn refuse(&mut self, what: String) -> FromWorker {
        let message = format!(
            "{what}, this page expects protocol {PROTOCOL_VERSION}: a stale cached worker? \
             Reload the page without cache."
        );
        let error = LoadError {
            kind: "protocol".into(),
            ..worker_error(message)
        };
        self.link = Link::Refused(error.clone());
        let id = self.current.take().unwrap_or(0);
        FromWorker::Failed { id, error }
    }

    fn handshake(&mut self, version: u32) -> Vec<FromWorker> {
        let ready = FromWorker::Ready {
            protocol_version: version,
        };
        let link = std::mem::replace(&mut self.link, Link::Dead(worker_error("handshake".into())));
        let Link::Booting(conn, queue) = link else {
            self.link = link;
            return vec![ready];
        };
        if version != PROTOCOL_VERSION {
            drop(conn);
            return vec![ready, self.refuse(format!("the worker speaks protocol {version}"))];
        }
        let mut replies = vec![ready];
        for (msg, file) in queue {
            if let Err(e) = wire::post(&conn.worker, &msg, file.as_ref()) {
                let id = self.current.take().unwrap_or(0);
                let error = LoadError {
                    kind: "protocol".into(),
                    ..worker_error(e)
                };
                replies.push(FromWorker::Failed { id, error });
                break;
            }
        }
        self.link = Link::Ready(conn);
        replies
    }
}

/// The page's `?workers=N`, if any: the parse workers a large file is split across, whatever
/// the core count (benchmarks: `1` forces the single-worker parse; e2e: `2` compares several
/// with one on any machine).
fn workers_param() -> Option<u32> {
    let search = web_sys::window()?.location().search().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    params.get("workers")?.trim().parse().ok()
}

/// What the page says when the load worker died with `message`: names it, and says what a bare
/// wasm trap means (panics arrive with their own message, thrown by the worker's hook).
fn stopped(message: &str) -> String {
    let why = if message.contains("RuntimeError: unreachable") {
        " (the engine aborted: most often its 4 GiB of memory ran out)"
    } else {
        ""
    };
    format!("the load worker stopped: {message}{why}")
}

/// A `LoadError` of kind `worker` (the worker could not start or crashed) with no position.
fn worker_error(message: String) -> LoadError {
    LoadError {
        kind: "worker".into(),
        message,
        offset: None,
        line: None,
        column: None,
    }
}

#[cfg(test)]
mod tests {
    use super::stopped;

    #[test]
    fn a_dead_load_worker_is_named_and_a_bare_trap_explained() {
        assert_eq!(
            stopped("Uncaught Error: panicked at worker/src/x.rs:1:2: capacity overflow"),
            "the load worker stopped: Uncaught Error: panicked at worker/src/x.rs:1:2: capacity overflow"
        );
        assert_eq!(
            stopped("Uncaught RuntimeError: unreachable"),
            "the load worker stopped: Uncaught RuntimeError: unreachable (the engine aborted: most \
             often its 4 GiB of memory ran out)"
        );
    }
}
