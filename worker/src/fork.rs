//! Two jobs that may run at once. The engine spawns no thread (lib.rs), so a caller that has
//! threads (the CLI, tests) passes [`Threads`], which runs one of the jobs on another; the page,
//! whose wasm instance has one thread, passes [`Sequential`]. Used where a load ends on one thread
//! while its parts were parsed on many (`load::join`): sorting, linking and merging columns.

/// Runs two jobs, at once where it can, and returns both results.
pub trait Fork: Sync {
    /// `(a(), b())`, in any order or at the same time.
    fn join<A: Send, B: Send>(&self, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B);
}

/// Runs both jobs on the calling thread, `a` first.
pub struct Sequential;

impl Fork for Sequential {
    fn join<A: Send, B: Send>(&self, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
        (a(), b())
    }
}

/// Runs `b` on a thread of its own while `a` runs on the calling one (native only: the
/// engine never picks it, its callers do).
#[cfg(not(target_arch = "wasm32"))]
pub struct Threads;

#[cfg(not(target_arch = "wasm32"))]
impl Fork for Threads {
    #[allow(clippy::disallowed_methods)]
    fn join<A: Send, B: Send>(&self, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
        std::thread::scope(|scope| {
            let other = scope.spawn(b);
            let first = a();
            match other.join() {
                Ok(second) => (first, second),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }
}
