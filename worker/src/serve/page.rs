//! The page as served with a listing: `index.html` marked so the page asks for `index.json`.
//! A plain static host serves the page unmarked, and the page opens its demo without asking for
//! a listing that is not there (a 404 in every visitor's console and the host's log).

/// The marker, added at the start of `<head>`; the page looks for it by name.
pub const GALLERY_META: &str = r#"<meta name="kinetoscope-gallery" content="index.json">"#;

/// `html` with [`GALLERY_META`] right after its `<head>` tag (at the start when it has none);
/// unchanged when it is already marked.
pub fn with_gallery(html: &str) -> String {
    if html.contains(GALLERY_META) {
        return html.to_owned();
    }
    let lower = html.to_ascii_lowercase();
    let at = lower
        .find("<head")
        .and_then(|start| lower[start..].find('>').map(|end| start + end + 1))
        .unwrap_or(0);
    format!("{}{GALLERY_META}{}", &html[..at], &html[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_follows_the_head_tag_once() {
        let page = "<!doctype html><html><head lang=\"en\"><title>K</title></head></html>";
        let marked = with_gallery(page);
        assert_eq!(marked, format!("<!doctype html><html><head lang=\"en\">{GALLERY_META}<title>K</title></head></html>"));
        assert_eq!(with_gallery(&marked), marked);
        assert_eq!(with_gallery("<p>"), format!("{GALLERY_META}<p>"));
    }
}
