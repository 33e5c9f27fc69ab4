//! What every exchange with `kinetoscope serve` passes, as one axum middleware ([`policy`]):
//!
//! - **The request's Host** must name this server: `localhost`, a loopback address, or the
//!   address given to `--host`, with any port (an ssh tunnel changes it); when bound to all
//!   addresses (`0.0.0.0`, `::`), any address. Anything else is 421 with a sentence, no Host at
//!   all 400. This is the DNS-rebinding defence: a page on another site can point its own name
//!   at 127.0.0.1 and so read this server from the victim's browser, but the browser then sends
//!   that name as Host. An address in Host cannot be rebound, so addresses need no list.
//! - **Every response** gets [`CONTENT_SECURITY_POLICY`] (`index.html`'s meta policy plus
//!   `frame-ancestors`, which a meta tag cannot set), `X-Content-Type-Options: nosniff`,
//!   `X-Frame-Options: DENY` and `Referrer-Policy: no-referrer`.
//! - **Redirects stay on this origin**: a `Location` that does not start with a single `/`
//!   (`//host/`, `/\host/`, which browsers read as another host) becomes a 404. tower-http's
//!   `ServeDir` redirects a directory to its path plus `/`, so `//public` would say `//public/`.
//!
//! Every refusal, here and in the routes, is a plain-text sentence (`text`).
//!
//! Responses hyper writes itself (a request line it cannot parse) carry none of this: they
//! hold no content.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::IpAddr;

/// The Content Security Policy of every response: `index.html`'s meta tag plus
/// `frame-ancestors 'none'` (`tests/serve.rs` checks they agree).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; \
     connect-src 'self' http: https:; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; object-src 'none'; \
     base-uri 'self'; form-action 'none'; frame-ancestors 'none'";

/// A plain-text answer: `message`, one sentence. How this server refuses, here and in
/// [`super::http`]'s routes.
pub(super) fn text(status: StatusCode, message: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message).into_response()
}

/// The Host check, then the handler, then the response checks and headers. `bound` is the
/// address the server listens on.
pub async fn policy(State(bound): State<IpAddr>, request: Request, next: Next) -> Response {
    let mut response = match host_refusal(&request, bound) {
        Some((status, reason)) => text(status, reason),
        None => next.run(request).await,
    };
    if response.headers().get(header::LOCATION).is_some_and(|l| !same_origin(l.as_bytes())) {
        response = text(StatusCode::NOT_FOUND, "no such page".into());
    }
    secure(response.headers_mut());
    response
}

/// Why `request` is not for this server, if it is not.
fn host_refusal(request: &Request, bound: IpAddr) -> Option<(StatusCode, String)> {
    let Some(host) = request.headers().get(header::HOST) else {
        return Some((StatusCode::BAD_REQUEST, "the request has no Host header".into()));
    };
    // An absolute-form target (`GET http://name/ HTTP/1.1`) names a host too; both must pass.
    let named = [Some(host.as_bytes()), request.uri().authority().map(|a| a.as_str().as_bytes())];
    let foreign = named.into_iter().flatten().find(|h| !std::str::from_utf8(h).is_ok_and(|h| allowed(h, bound)))?;
    Some((
        StatusCode::MISDIRECTED_REQUEST,
        format!(
            "this server answers for localhost, its loopback and --host addresses only, not for Host {:?} \
             (a page of another site may be trying to read it through DNS rebinding)",
            String::from_utf8_lossy(foreign)
        ),
    ))
}

/// Whether the Host value `host` (`name`, `name:port`, `[v6]`, `[v6]:port`) names this server.
fn allowed(host: &str, bound: IpAddr) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback() || ip == bound || bound.is_unspecified())
}

/// Whether a `Location` stays on this origin: a path starting with one `/` (not `//` or `/\`).
fn same_origin(location: &[u8]) -> bool {
    match location {
        [b'/', second, ..] => *second != b'/' && *second != b'\\',
        [b'/'] => true,
        _ => false,
    }
}

/// Sets the security headers on `headers`.
fn secure(headers: &mut HeaderMap) {
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_this_server() {
        let loopback: IpAddr = [127, 0, 0, 1].into();
        for host in ["localhost", "LocalHost:8080", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:8080"] {
            assert!(allowed(host, loopback), "{host}");
        }
        for host in ["evil.example", "evil.example:8080", "localhost.evil.example", "10.0.0.2:8080", "[::2]", "", ":8080"] {
            assert!(!allowed(host, loopback), "{host}");
        }
        assert!(allowed("10.0.0.2:8080", [10, 0, 0, 2].into()), "the --host address");
        assert!(allowed("192.168.1.7", [0, 0, 0, 0].into()) && !allowed("box.lan", [0, 0, 0, 0].into()), "bound to all addresses");
    }

    #[test]
    fn redirects_on_this_origin_only() {
        for location in ["/", "/public/", "/a//b"] {
            assert!(same_origin(location.as_bytes()), "{location}");
        }
        for location in ["//public/", "/\\evil/", "http://evil/", "public/", ""] {
            assert!(!same_origin(location.as_bytes()), "{location}");
        }
    }
}
