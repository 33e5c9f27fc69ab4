//! Connection handling for `kinetoscope serve`: the accept loop and what bounds a connection.
//!
//! - **At most [`Limits::connections`] at once.** A permit is taken before each accept, so
//!   excess connections wait in the kernel's backlog (they are not refused) until one ends.
//! - **Accept errors are survived.** Out of file descriptors (`EMFILE`) and the like: one line
//!   on stderr per run of failures, then a retry every [`ACCEPT_BACKOFF`]; a connection reset
//!   before it was accepted is skipped silently.
//! - **Headers in [`Limits::header_read`]**, counted from the connection's start or the end of
//!   the previous response (hyper's `header_read_timeout`), so an idle keep-alive connection
//!   closes then too, and a client sending its headers a byte at a time cannot hold one.
//! - **No progress for [`Limits::idle`] closes it** ([`Idle`]): a client that stops reading a
//!   download, or a request whose answer takes that long to start.
//!
//! Each connection is HTTP/1.1 driven by hyper's `http1` builder: `axum::serve` offers no
//! timeouts, and its accept loop's back-off needed the runtime's timer, which `kinetoscope
//! serve` used to be built without (it aborted when descriptors ran out, docs/deploy.md).
//! Cost: one permit and one timer reset per read or write that moved bytes.

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// Wait after an accept error before the next accept.
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// What bounds the server's connections; [`Limits::default`] is what `kinetoscope serve` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once (default 256: with a trace file open each, half of the usual
    /// 1,024 descriptors); more wait to be accepted.
    pub connections: usize,
    /// Time to send a request's headers, from the connection's start or the previous
    /// response (default 10 s).
    pub header_read: Duration,
    /// A connection that moves no byte for this long is closed (default 60 s).
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self { connections: 256, header_read: Duration::from_secs(10), idle: Duration::from_secs(60) }
    }
}

/// Accepts connections on `listener` and serves `router` on each, within `limits`, until the
/// process ends.
///
/// # Errors
/// Never in practice: the connection permits' semaphore is never closed.
pub async fn serve(listener: TcpListener, router: Router, limits: Limits) -> Result<(), String> {
    let permits = Arc::new(Semaphore::new(limits.connections.max(1)));
    let mut failing = false;
    loop {
        let permit = Arc::clone(&permits).acquire_owned().await.map_err(|e| format!("the server stopped: {e}"))?;
        match listener.accept().await {
            Ok((stream, _)) => {
                failing = false;
                tokio::spawn(connection(stream, router.clone(), limits, permit));
            }
            Err(e) if is_connection_error(&e) => {}
            Err(e) => {
                if !failing {
                    eprintln!("kinetoscope: cannot accept a connection ({e}); retrying every {} ms", ACCEPT_BACKOFF.as_millis());
                }
                failing = true;
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
}

/// Errors that concern one connection (gone before it was accepted), not the listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionRefused)
}

/// Serves one connection; `_permit` is given back when it ends.
async fn connection(stream: TcpStream, router: Router, limits: Limits, _permit: OwnedSemaphorePermit) {
    let io = TokioIo::new(Idle::new(stream, limits.idle));
    let service = TowerToHyperService::new(router);
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read);
    // How a connection ends (closed by the client, timed out, malformed) concerns that client
    // alone, who has been answered or has gone: nothing to report.
    let _ = builder.serve_connection(io, service).await;
}

/// A stream that fails with `TimedOut` once it has moved no byte for `timeout` while polled.
struct Idle {
    stream: TcpStream,
    timeout: Duration,
    /// Re-armed to now + `timeout` each time bytes move.
    deadline: Pin<Box<Sleep>>,
}

impl Idle {
    fn new(stream: TcpStream, timeout: Duration) -> Self {
        Self { stream, timeout, deadline: Box::pin(tokio::time::sleep(timeout)) }
    }

    /// `polled` (a read or write of `stream`), with the deadline re-armed when it moved bytes
    /// and checked when it waits.
    fn watch<T>(&mut self, cx: &mut Context<'_>, polled: Poll<io::Result<T>>, moved: impl Fn(&T) -> bool) -> Poll<io::Result<T>> {
        match polled {
            Poll::Ready(Ok(value)) => {
                if moved(&value) {
                    self.deadline.as_mut().reset(Instant::now() + self.timeout);
                }
                Poll::Ready(Ok(value))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => match self.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "the connection was idle too long"))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl AsyncRead for Idle {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        let moved = buf.filled().len() > before;
        this.watch(cx, polled, |()| moved)
    }
}

impl AsyncWrite for Idle {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.watch(cx, polled, |&n| n > 0)
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.watch(cx, polled, |&n| n > 0)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_flush(cx);
        this.watch(cx, polled, |()| false)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
