//! Search: slices whose name or one of whose arg values contains a text (the
//! timeline's search box: match count, next / previous, highlights; docs/viewer.md).
//!
//! A [`Query`] is compiled once per text and reused for the count, the first matches and every
//! next / previous step; it holds one `bool` per distinct string and one bit per slice:
//! - names: the text is looked for in every distinct string of the pool once, then the slice
//!   name column is checked with one table lookup per slice;
//! - arg values: the raw args buffer (all events' minified args, one allocation) is scanned once
//!   with `memchr` on the text's rarest byte. Each occurrence is mapped to the slice whose args
//!   span holds it (`Index::args_order`, binary search); that span is then settled in one pass
//!   and the scan jumps to the next slice's span. A slice matches when an occurrence lies in its
//!   span and starts inside a value, not inside a key (`grid` does not match every kernel,
//!   `[100` does match `"grid":[100,50,1]`). Values are raw JSON text: escapes stay escaped.
//!
//! Matching is ASCII case-insensitive substring (non-ASCII bytes compare exactly); the empty
//! text matches nothing. Results: the total number of matching slices and the first `limit`
//! ids in time order, time order being (start_ns, id) ascending over all lanes.
//!
//! Cost: compile O(string pool bytes + args bytes + t · (log n + span)) for t slices whose args
//! hold an occurrence; `run` O(n) with a bit test and a table lookup per slice; next / previous
//! O(lanes · log n) plus the slices passed before the nearest match in each lane.
//!
//! Why no text index: a substring index over names and args (suffix array, trigram lists)
//! costs several bytes per input byte, more than the whole model; a scan of the args at
//! memchr speed answers a new text in tens of milliseconds on a 300 MB trace, and the
//! per-distinct-name table makes the common case (op and kernel names) a column scan.

use super::Index;
use crate::model::Trace;

/// Where next / previous start from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cursor {
    /// A time in ns from the origin: next = first match starting at or after it, previous =
    /// last match starting before it.
    Time(i64),
    /// A slice (usually the current match): next / previous in (start_ns, id) order, itself
    /// excluded.
    Slice(u32),
}

/// Count and first matches of a search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchResult {
    /// Number of matching slices.
    pub total: u64,
    /// The first matches in time order, at most `limit`.
    pub ids: Vec<u32>,
}

/// ASCII case-insensitive substring finder.
#[derive(Clone, Debug)]
struct Finder {
    /// The text, ASCII-lowercased.
    needle: Vec<u8>,
    /// Exact finder, used when the text has no ASCII letter.
    exact: Option<memchr::memmem::Finder<'static>>,
    /// Position in `needle` of its rarest byte, the one candidates are found by.
    anchor: usize,
}

/// Rough frequency rank of a byte in trace names and minified args (higher = more common):
/// JSON punctuation and digits first, then letters by English frequency. Used to pick the
/// byte `memchr2` looks for, as memchr's own finder does with its byte-frequency table.
fn rank(b: u8) -> u8 {
    const COMMON: &[u8] = b"\",:0123456789etaoinsrlcdu_hmp{}[]fgbyw.v- kx()jqz";
    let lower = b.to_ascii_lowercase();
    COMMON
        .iter()
        .position(|&c| c == lower)
        .map_or(0, |p| (COMMON.len() - p) as u8)
}

impl Finder {
    fn new(text: &str) -> Self {
        let needle = text.as_bytes().to_ascii_lowercase();
        let exact = (!needle.iter().any(u8::is_ascii_alphabetic))
            .then(|| memchr::memmem::Finder::new(&needle).into_owned());
        let anchor = (0..needle.len())
            .min_by_key(|&k| rank(needle[k]))
            .unwrap_or(0);
        Self {
            needle,
            exact,
            anchor,
        }
    }

    /// First occurrence in `hay` at or after `from`.
    fn find_from(&self, hay: &[u8], from: usize) -> Option<usize> {
        let n = self.needle.len();
        let rest = hay.get(from..)?;
        if let Some(exact) = &self.exact {
            return exact.find(rest).map(|k| from + k);
        }
        let a = *self.needle.get(self.anchor)?;
        let mut at = self.anchor;
        while at < rest.len() {
            let k = at + memchr::memchr2(a, a.to_ascii_uppercase(), &rest[at..])? - self.anchor;
            match rest.get(k..k + n) {
                Some(w) if w.eq_ignore_ascii_case(&self.needle) => return Some(from + k),
                Some(_) => at = k + self.anchor + 1,
                None => return None,
            }
        }
        None
    }

    /// True when an occurrence in `span` (a minified args object) at or after `from` starts
    /// inside a value rather than inside a key. O(span length + occurrences).
    fn in_value(&self, span: &[u8], from: usize) -> bool {
        let mut keys = KeyScan::default();
        let mut at = from;
        while let Some(k) = self.find_from(span, at) {
            if keys.in_value(span, k) {
                return true;
            }
            at = k + 1;
        }
        false
    }
}

/// Walks a minified args object once, telling for ascending positions whether each lies
/// inside a key string.
#[derive(Default)]
struct KeyScan {
    /// Next byte to read.
    i: usize,
    /// The last string read: (opening quote, closing quote, is a key).
    last: Option<(usize, usize, bool)>,
}

impl KeyScan {
    /// True when byte `k` (not below any earlier `k`) lies outside every key string.
    fn in_value(&mut self, span: &[u8], k: usize) -> bool {
        loop {
            if let Some((open, close, key)) = self.last {
                if k >= open && k <= close {
                    return !key;
                }
            }
            if self.i > k || self.i >= span.len() {
                return true;
            }
            if span[self.i] != b'"' {
                self.i += 1;
                continue;
            }
            let open = self.i;
            let mut j = open + 1;
            while j < span.len() && span[j] != b'"' {
                j += if span[j] == b'\\' { 2 } else { 1 };
            }
            // `j` is the closing quote, or past the end of a cut span.
            self.last = Some((open, j, span.get(j + 1) == Some(&b':')));
            self.i = j + 1;
        }
    }
}

/// A compiled search text; see the module docs.
#[derive(Clone, Debug)]
pub struct Query {
    finder: Finder,
    /// Per `StrId`: the string contains the text.
    names: Vec<bool>,
    /// Per slice, one bit: an arg value contains the text.
    args: Vec<u64>,
    /// Any bit set in `args` or `true` in `names`.
    any: bool,
}

impl Query {
    /// Compiles `text` against `trace`'s strings and args (`index` maps args bytes to slices).
    pub fn new(trace: &Trace, index: &Index, text: &str) -> Self {
        let finder = Finder::new(text);
        let mut query = Self {
            finder,
            names: Vec::new(),
            args: Vec::new(),
            any: false,
        };
        if query.finder.needle.is_empty() {
            return query;
        }
        query.names = (0..trace.strings.len() as u32)
            .map(|id| {
                query
                    .finder
                    .find_from(trace.strings.bytes_of(crate::model::StrId(id)), 0)
                    .is_some()
            })
            .collect();
        query.args = query.arg_bits(trace, index);
        query.any = query.names.contains(&true) || query.args.iter().any(|&w| w != 0);
        query
    }

    /// Scans the args once, block by block; each occurrence is mapped to the slice whose args
    /// span holds it (binary search in `index.args_order`), and that span is then settled whole.
    /// Spans never cross blocks, so places are (block, offset in it).
    fn arg_bits(&self, trace: &Trace, index: &Index) -> Vec<u64> {
        let s = &trace.slices;
        let mut bits = vec![0u64; s.len().div_ceil(64)];
        let n = self.finder.needle.len();
        let order = index.args_order.get_or_init(|| args_order(trace));
        let span_of = |id: u32| s.args.get(id as usize).copied().unwrap_or_default();
        trace.args.each_block(|block, raw| {
            let mut from = 0;
            while let Some(p) = self.finder.find_from(raw, from) {
                let k = order.partition_point(|&id| {
                    let a = span_of(id);
                    (a.block, a.at as usize) <= (block, p)
                });
                // Next place worth looking: the next slice's args (others belong to instants,
                // counters, or nothing).
                let next = order
                    .get(k)
                    .map(|&id| span_of(id))
                    .filter(|a| a.block == block)
                    .map_or(raw.len(), |a| a.at as usize);
                from = next.max(p + 1);
                let Some(&id) = k.checked_sub(1).and_then(|k| order.get(k)) else {
                    continue;
                };
                let span = span_of(id);
                let (start, end) = (span.at as usize, span.at as usize + span.len as usize);
                if span.block != block || p + n > end {
                    continue;
                }
                if let Some(text) = raw.get(start..end) {
                    if self.finder.in_value(text, p - start) {
                        if let Some(w) = bits.get_mut(id as usize / 64) {
                            *w |= 1 << (id % 64);
                        }
                    }
                }
            }
            true
        });
        bits
    }

    /// True when slice `id` matches (false for an unknown id).
    pub fn matches(&self, trace: &Trace, id: u32) -> bool {
        let Some(name) = trace.slices.name.get(id as usize) else {
            return false;
        };
        let by_arg = self
            .args
            .get(id as usize / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0);
        by_arg || self.names.get(name.0 as usize).copied().unwrap_or(false)
    }

    /// The number of matches and the first `limit` in time order.
    pub fn run(&self, trace: &Trace, limit: usize) -> SearchResult {
        let mut result = SearchResult::default();
        if !self.any {
            return result;
        }
        let s = &trace.slices;
        for lane in &trace.lanes {
            let mut taken = 0;
            for id in lane.slices.clone() {
                if self.matches(trace, id) {
                    result.total += 1;
                    if taken < limit {
                        result.ids.push(id);
                        taken += 1;
                    }
                }
            }
        }
        result
            .ids
            .sort_unstable_by_key(|&id| (s.start_ns[id as usize], id));
        result.ids.truncate(limit);
        result
    }

    /// The first match after `cursor` in time order, if any.
    pub fn next(&self, trace: &Trace, cursor: Cursor) -> Option<u32> {
        let s = &trace.slices;
        let mut best: Option<(i64, u32)> = None;
        if !self.any {
            return None;
        }
        for lane in &trace.lanes {
            let (from, _) = bounds(trace, lane.slices.clone(), cursor);
            for id in from..lane.slices.end {
                let start = s.start_ns[id as usize];
                if best.is_some_and(|(b, _)| start > b) {
                    break;
                }
                if self.matches(trace, id) {
                    if best.is_none_or(|b| (start, id) < b) {
                        best = Some((start, id));
                    }
                    break;
                }
            }
        }
        best.map(|(_, id)| id)
    }

    /// The last match before `cursor` in time order, if any.
    pub fn prev(&self, trace: &Trace, cursor: Cursor) -> Option<u32> {
        let s = &trace.slices;
        let mut best: Option<(i64, u32)> = None;
        if !self.any {
            return None;
        }
        for lane in &trace.lanes {
            let (_, upto) = bounds(trace, lane.slices.clone(), cursor);
            for id in (lane.slices.start..upto).rev() {
                let start = s.start_ns[id as usize];
                if best.is_some_and(|(b, _)| start < b) {
                    break;
                }
                if self.matches(trace, id) {
                    best = best.max(Some((start, id)));
                    break;
                }
            }
        }
        best.map(|(_, id)| id)
    }
}

/// In a lane's id range: (first id after the cursor, first id not before the cursor), so ids
/// `[range.start, .1)` come before it and `[.0, range.end)` after it.
fn bounds(trace: &Trace, range: std::ops::Range<u32>, cursor: Cursor) -> (u32, u32) {
    let s = &trace.slices;
    let Some(starts) = s.start_ns.get(range.start as usize..range.end as usize) else {
        return (range.end, range.start);
    };
    let (t, id) = match cursor {
        Cursor::Time(t) => (t, None),
        Cursor::Slice(c) => match s.start_ns.get(c as usize) {
            Some(&t) => (t, Some(c)),
            None => return (range.end, range.start),
        },
    };
    let before = range.start + starts.partition_point(|&x| x < t) as u32;
    let through = range.start + starts.partition_point(|&x| x <= t) as u32;
    match id {
        None => (before, before),
        // Within equal starts ids ascend, so the cursor slice splits them.
        Some(c) => (
            (c.saturating_add(1)).clamp(before, through),
            c.clamp(before, through),
        ),
    }
}

/// Ids of slices with non-empty args, sorted by where their args are (block, offset).
pub(crate) fn args_order(trace: &Trace) -> Vec<u32> {
    let args = &trace.slices.args;
    let mut ids: Vec<u32> = (0..args.len() as u32)
        .filter(|&i| args[i as usize].len > 0)
        .collect();
    ids.sort_unstable_by_key(|&i| (args[i as usize].block, args[i as usize].at, i));
    ids.shrink_to_fit();
    ids
}

/// Searches `trace` for `text`: the count and the first `limit` matches in time order.
pub fn search(trace: &Trace, index: &Index, text: &str, limit: usize) -> SearchResult {
    Query::new(trace, index, text).run(trace, limit)
}

impl Index {
    /// Searches `trace` for `text`; see [`search`].
    pub fn search(&self, trace: &Trace, text: &str, limit: usize) -> SearchResult {
        search(trace, self, text, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::{Finder, KeyScan};

    #[test]
    fn keys_are_not_values() {
        let span = br#"{"grid":[100,50,1],"name":"a\"b:c","x":{"grid":1}}"#;
        let at = |needle: &str| {
            span.windows(needle.len())
                .position(|w| w == needle.as_bytes())
                .unwrap_or(usize::MAX)
        };
        let in_value = |k: usize| KeyScan::default().in_value(span, k);
        assert!(!in_value(at("grid")));
        assert!(in_value(at("[100")));
        assert!(in_value(at("100")));
        assert!(!in_value(at("name")));
        assert!(in_value(at("b:c")));
        assert!(in_value(at("\"a")));
        assert!(!in_value(span.len() - 9));
        let mut one = KeyScan::default();
        let ascending: Vec<bool> = [1, 2, 9, 22, 26, 31, 44, 48]
            .iter()
            .map(|&k| one.in_value(span, k))
            .collect();
        assert_eq!(
            ascending,
            [false, false, true, false, true, true, false, true]
        );
        assert!(!Finder::new("GRID").in_value(span, 0));
        assert!(Finder::new("B:C").in_value(span, 0));
        assert!(Finder::new("1}").in_value(span, 0));
    }

    #[test]
    fn finder_is_ascii_case_insensitive() {
        let f = Finder::new("aTen::Mm");
        assert_eq!(f.find_from(b"xx ATEN::mm aten::mm", 0), Some(3));
        assert_eq!(f.find_from(b"xx ATEN::mm aten::mm", 4), Some(12));
        assert_eq!(f.find_from(b"aten::m", 0), None);
        assert_eq!(Finder::new("[1,").find_from(b"[2,[1,", 0), Some(3));
    }
}
