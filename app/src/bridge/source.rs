//! Where a load comes from: a URL the page names (`?url=`, checked here) or a local file. The
//! worker reads the bytes itself (see `worker/src/web/source.rs`); only `http:`/`https:`
//! URLs (or relative ones) are loaded.

use protocol::LoadError;
use web_sys::Url;

/// A URL checked by [`resolve_url`]: absolute `href` and the file name shown to the user.
#[derive(Clone, Debug)]
pub struct Target {
    /// Absolute `http:` or `https:` URL.
    pub href: String,
    /// Last path segment, decoded (the host if the path is empty).
    pub name: String,
}

/// Resolves `url` against the page and checks its scheme.
///
/// # Errors
/// An `io` error for an unparsable URL or a scheme other than `http:` / `https:`.
pub fn resolve_url(url: &str) -> Result<Target, LoadError> {
    let base = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    let parsed = Url::new_with_base(url, &base).map_err(|_| io(format!("invalid URL {url:?}")))?;
    let scheme = parsed.protocol();
    if scheme != "http:" && scheme != "https:" {
        return Err(io(format!(
            "only http(s) or relative URLs can be loaded, not {url:?}"
        )));
    }
    let path = parsed.pathname();
    let segment = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or_default();
    let decoded = js_sys::decode_uri_component(segment).map(String::from);
    let name = match decoded.unwrap_or_else(|_| segment.to_owned()) {
        n if n.is_empty() => parsed.host(),
        n => n,
    };
    Ok(Target {
        href: parsed.href(),
        name,
    })
}

fn io(message: String) -> LoadError {
    LoadError {
        kind: "io".into(),
        message,
        offset: None,
        line: None,
        column: None,
    }
}
