//! Input shapes: the raw `Input Dims` arg text -> the string PyTorch groups by.
//!
//! `key_averages(group_by_input_shape=True)` keys rows by `str(event.input_shapes)`, a Python
//! list of lists of ints: `[[64, 64], [64], []]`. The trace writes the same dims minified
//! (`[[64,64],[64],[]]`), except that a TensorList argument is written as a list of shapes
//! (`[[[32,1,1891],[32,1,1891]],[]]`), which PyTorch's shapes hold as `[]`; scalars and other
//! non-tensor arguments are `[]` in both. Events without the arg (annotations, runtime calls)
//! have no shapes: `[]`. 2021-era traces spell the key `Input dims`.
//!
//! Cost: O(len) per distinct raw text; callers intern by raw text, so once per distinct shape.

use crate::json::StringTracker;
/// `str(input_shapes)` for the raw JSON value of `Input Dims` (`None`: no such arg -> `[]`).
pub fn python_shapes(raw: Option<&[u8]>) -> String {
    let Some(raw) = raw else {
        return "[]".to_owned();
    };
    let mut out = String::with_capacity(raw.len() + 8);
    out.push('[');
    let inner = match (raw.first(), raw.last()) {
        (Some(b'['), Some(b']')) if raw.len() >= 2 => &raw[1..raw.len() - 1],
        _ => return "[]".to_owned(),
    };
    for (n, entry) in split_top_level(inner).enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        push_entry(&mut out, entry);
    }
    out.push(']');
    out
}

/// One argument's shape: a flat list of integers prints as `[a, b]`; anything else as `[]`.
fn push_entry(out: &mut String, entry: &[u8]) {
    let flat = entry.len() >= 2 && entry[0] == b'[' && entry[entry.len() - 1] == b']';
    let body = if flat {
        &entry[1..entry.len() - 1]
    } else {
        &b""[..]
    };
    let numeric = body
        .iter()
        .all(|&b| b.is_ascii_digit() || b == b'-' || b == b',' || b == b' ');
    out.push('[');
    if flat && numeric {
        for (n, dim) in body
            .split(|&b| b == b',')
            .filter(|d| !d.is_empty())
            .enumerate()
        {
            if n > 0 {
                out.push_str(", ");
            }
            out.push_str(std::str::from_utf8(dim).unwrap_or("").trim());
        }
    }
    out.push(']');
}

/// Splits the inside of a JSON array into its elements' texts (strings are not expected in
/// dims but are skipped correctly).
fn split_top_level(inner: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut parts = Vec::new();
    let mut depth = 0u32;
    let mut strings = StringTracker::default();
    let mut start = 0;
    for (i, &b) in inner.iter().enumerate() {
        if !strings.outside(b) {
            continue;
        }
        match b {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < inner.len() {
        parts.push(&inner[start..]);
    }
    parts.into_iter()
}

#[cfg(test)]
mod tests {
    use super::python_shapes;

    #[test]
    fn formats_like_python() {
        assert_eq!(
            python_shapes(Some(b"[[64,64],[64],[]]")),
            "[[64, 64], [64], []]"
        );
        assert_eq!(python_shapes(Some(b"[]")), "[]");
        assert_eq!(python_shapes(None), "[]");
        assert_eq!(python_shapes(Some(b"[[],[]]")), "[[], []]");
        // TensorList argument (partx aten::cat) and a scalar.
        assert_eq!(
            python_shapes(Some(b"[[[32,1,1891],[32,1,1891]],[]]")),
            "[[], []]"
        );
        assert_eq!(python_shapes(Some(b"[[[],[1]]]")), "[[]]");
        assert_eq!(python_shapes(Some(b"[[1, 2]]")), "[[1, 2]]");
    }
}
