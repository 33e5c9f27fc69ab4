//! Share links: the view state carried in the URL fragment, so a teammate opening the link sees
//! the same trace at the same view (docs/deploy.md#share-links).
//!
//! Format: `#` then `key=value` pairs joined by `&`, values percent-encoded (RFC 3986 unreserved
//! characters kept):
//!
//! ```text
//! t=START,END        visible window, ns from the trace origin
//! sel=LANE,START,NTH,NAME   selected slice by stable key (survives reparsing the same file)
//! range=START,END    selected time range, ns
//! tab=ops            active tab (summary, findings, ops, kernels, steps, ...)
//! scope=step:N | range     op / kernel table scope (range = the selected range)
//! sort=KEY,desc|asc  table sort; shape=1 groups ops by input shape
//! q=TEXT             search text
//! filter=TEXT        the op / kernel table's name filter
//! finding=RULE       active cheatsheet finding
//! cp=all | N         the timeline's critical path overlay, of every step or of step N
//! marker=NAME        the annotation marking steps in a trace without ProfilerStep#N
//! bs=N, tps=N        the Steps tab's batch size and tokens per step (samples/s, tokens/s)
//! pin=GROUP          a lane group pinned to the top of the timeline, one pair per group, in
//!                    the order shown (group names as the timeline labels them)
//! file=NAME,SIZE     a locally opened file (the link carries its name and size, never its bytes)
//! cstep=N            Compare tab: the step the stacked timelines align at
//! cwin=START,END     Compare tab: the stacked timelines' window, ns from that step's start
//! csort=KEY,desc|asc Compare tab: op diff sort (keys as `state::compare`); cksort= kernel diff
//! cshape=1           Compare tab: ops matched by input shape
//! ```
//!
//! Unknown keys are ignored and malformed values dropped, so an old or hand-edited link still
//! opens what it can. The trace itself comes from `?url=` (query string), not the fragment.

use protocol::{SliceKey, Workload};

/// Everything a share link restores.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewLink {
    /// Visible window, ns.
    pub window: Option<(f64, f64)>,
    /// Selected slice.
    pub selection: Option<SliceKey>,
    /// Selected time range, ns.
    pub range: Option<(f64, f64)>,
    /// Active tab (its test-id name).
    pub tab: Option<String>,
    /// Table scope: `step:N` or `range`.
    pub scope: Option<String>,
    /// Table sort column and descending flag.
    pub sort: Option<(String, bool)>,
    /// Ops grouped by input shape.
    pub by_shape: bool,
    /// Search text.
    pub search: Option<String>,
    /// The table's name filter.
    pub filter: Option<String>,
    /// Active finding's rule.
    pub finding: Option<String>,
    /// The critical path overlay: `Some(None)` every step, `Some(Some(n))` step n.
    pub critical: Option<Option<u64>>,
    /// The step marker (`None`: `ProfilerStep#N`).
    pub marker: Option<String>,
    /// The work per step the Steps tab's throughput columns divide.
    pub workload: Workload,
    /// A locally opened file's name and size.
    pub file: Option<(String, u64)>,
    /// Lane groups pinned to the top of the timeline, by name, top first.
    pub pinned: Vec<String>,
    /// The Compare tab's view.
    pub compare: CompareLink,
}

/// The Compare tab's part of a link: the stacked timelines' step and window, the diff tables'
/// sorts and the by-shape toggle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompareLink {
    /// Step the stacked timelines align at.
    pub step: Option<u64>,
    /// Their window, ns from the step's start (may start below 0).
    pub window: Option<(f64, f64)>,
    /// Op diff sort column and descending flag.
    pub sort: Option<(String, bool)>,
    /// Kernel diff sort.
    pub kernel_sort: Option<(String, bool)>,
    /// Ops matched by name + input shapes.
    pub by_shape: bool,
}

impl ViewLink {
    /// The fragment text (without `#`); empty when there is nothing to carry.
    pub fn to_fragment(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut put = |k: &str, v: String| parts.push(format!("{k}={}", encode(&v)));
        if let Some(file) = &self.file {
            put("file", format!("{},{}", file.0, file.1));
        }
        if let Some((a, b)) = self.window {
            put("t", format!("{},{}", a.round(), b.round()));
        }
        if let Some(k) = &self.selection {
            put("sel", format!("{},{},{},{}", k.lane, k.start_ns, k.nth, k.name));
        }
        if let Some((a, b)) = self.range {
            put("range", format!("{},{}", a.round(), b.round()));
        }
        if let Some(tab) = &self.tab {
            put("tab", tab.clone());
        }
        if let Some(scope) = &self.scope {
            put("scope", scope.clone());
        }
        let sort_text = |(key, desc): &(String, bool)| format!("{key},{}", if *desc { "desc" } else { "asc" });
        if let Some(sort) = &self.sort {
            put("sort", sort_text(sort));
        }
        if self.by_shape {
            put("shape", "1".into());
        }
        if let Some(q) = &self.search {
            put("q", q.clone());
        }
        if let Some(f) = &self.filter {
            put("filter", f.clone());
        }
        if let Some(f) = &self.finding {
            put("finding", f.clone());
        }
        if let Some(m) = &self.marker {
            put("marker", m.clone());
        }
        if let Some(n) = self.workload.batch_size {
            put("bs", n.to_string());
        }
        if let Some(n) = self.workload.tokens_per_step {
            put("tps", n.to_string());
        }
        for group in &self.pinned {
            put("pin", group.clone());
        }
        if let Some(step) = self.critical {
            put("cp", step.map_or_else(|| "all".to_owned(), |n| n.to_string()));
        }
        let c = &self.compare;
        if let Some(n) = c.step {
            put("cstep", n.to_string());
        }
        if let Some((a, b)) = c.window {
            put("cwin", format!("{},{}", a.round(), b.round()));
        }
        if let Some(sort) = &c.sort {
            put("csort", sort_text(sort));
        }
        if let Some(sort) = &c.kernel_sort {
            put("cksort", sort_text(sort));
        }
        if c.by_shape {
            put("cshape", "1".into());
        }
        parts.join("&")
    }

    /// Reads a fragment (with or without the leading `#`).
    pub fn parse(fragment: &str) -> Self {
        let mut link = Self::default();
        for pair in fragment.trim_start_matches('#').split('&') {
            let Some((key, raw)) = pair.split_once('=') else { continue };
            let value = decode(raw);
            match key {
                "t" => link.window = pair_f64(&value),
                "range" => link.range = pair_f64(&value),
                "sel" => link.selection = slice_key(&value),
                "tab" => link.tab = Some(value).filter(|v| !v.is_empty()),
                "scope" => link.scope = Some(value).filter(|v| !v.is_empty()),
                "sort" => link.sort = sort(&value),
                "cstep" => link.compare.step = value.parse().ok(),
                "cwin" => link.compare.window = pair_f64(&value),
                "csort" => link.compare.sort = sort(&value),
                "cksort" => link.compare.kernel_sort = sort(&value),
                "cshape" => link.compare.by_shape = value == "1",
                "shape" => link.by_shape = value == "1",
                "q" => link.search = Some(value).filter(|v| !v.is_empty()),
                "filter" => link.filter = Some(value).filter(|v| !v.is_empty()),
                "finding" => link.finding = Some(value).filter(|v| !v.is_empty()),
                "marker" => link.marker = Some(value).filter(|v| !v.is_empty()),
                "pin" if !value.is_empty() => link.pinned.push(value),
                "bs" => link.workload.batch_size = value.parse().ok().filter(|&n| n > 0),
                "tps" => link.workload.tokens_per_step = value.parse().ok().filter(|&n| n > 0),
                "cp" if value == "all" => link.critical = Some(None),
                "cp" => link.critical = value.parse().ok().map(Some),
                "file" => {
                    link.file = value
                        .rsplit_once(',')
                        .and_then(|(n, s)| Some((n.to_owned(), s.parse().ok()?)));
                }
                _ => {}
            }
        }
        link
    }
}

/// `KEY,desc` or `KEY,asc`.
fn sort(v: &str) -> Option<(String, bool)> {
    v.rsplit_once(',')
        .map(|(k, d)| (k.to_owned(), d != "asc"))
        .filter(|(k, _)| !k.is_empty())
}

fn pair_f64(v: &str) -> Option<(f64, f64)> {
    let (a, b) = v.split_once(',')?;
    let (a, b) = (a.parse::<f64>().ok()?, b.parse::<f64>().ok()?);
    (a.is_finite() && b.is_finite() && a < b).then_some((a, b))
}

/// `LANE,START,NTH,NAME` (the name last: it may contain commas).
fn slice_key(v: &str) -> Option<SliceKey> {
    let mut it = v.splitn(4, ',');
    Some(SliceKey {
        lane: it.next()?.parse().ok()?,
        start_ns: it.next()?.parse().ok()?,
        nth: it.next()?.parse().ok()?,
        name: it.next()?.to_owned(),
    })
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b',' | b':') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes; malformed escapes stay as written, invalid UTF-8 is replaced.
pub fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        match (b[i], b.get(i + 1).and_then(|&c| hex(c)), b.get(i + 2).and_then(|&c| hex(c))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_field() {
        let link = ViewLink {
            window: Some((1000.0, 250_000.0)),
            selection: Some(SliceKey {
                lane: 3,
                start_ns: 123_456,
                nth: 1,
                name: "void gemm<float, 128>(a, b) & <img src=x>".into(),
            }),
            range: Some((2000.0, 3000.0)),
            tab: Some("ops".into()),
            scope: Some("step:4".into()),
            sort: Some(("self_cuda".into(), false)),
            by_shape: true,
            search: Some("aten::mm #1".into()),
            filter: Some("vectorized_elementwise<&>".into()),
            finding: Some("dtod-before-gemm".into()),
            critical: Some(Some(7)),
            marker: Some("## Call CompiledFxGraph fx_0 ##".into()),
            workload: Workload { batch_size: Some(32), tokens_per_step: Some(65_536) },
            file: Some(("my trace,v2.json.gz".into(), 123_456_789)),
            pinned: vec!["GPU 0 & NCCL, stream 7".into(), "python3 (1234)".into()],
            compare: CompareLink {
                step: Some(10),
                window: Some((-1_250_000.0, 20_000_000.0)),
                sort: Some(("self_cuda_delta".into(), true)),
                kernel_sort: Some(("total_delta".into(), false)),
                by_shape: true,
            },
        };
        let text = link.to_fragment();
        assert!(!text.contains(' ') && !text.contains('<') && !text.contains('#'));
        assert_eq!(ViewLink::parse(&format!("#{text}")), link);
    }

    #[test]
    fn bad_values_are_dropped_and_unknown_keys_ignored() {
        let link = ViewLink::parse("t=5,1&sel=x,1,0,a&range=1,2&zz=9&q=&filter=&marker=&sort=,desc&file=a,big&cstep=x&cwin=3,-3&pin=");
        assert_eq!(link, ViewLink { range: Some((1.0, 2.0)), ..ViewLink::default() });
        assert_eq!(decode("%zz%41%"), "%zzA%");
        assert_eq!(ViewLink::default().to_fragment(), "");
        assert_eq!(ViewLink::parse("#cp=all").critical, Some(None));
    }
}
