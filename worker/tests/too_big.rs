//! Too big is a sentence, not a crash: a trace over the load's budget (`kinetoscope::budget`) is
//! refused by its declared size, by the bytes that arrive, or while its gzip inflates (a gzip
//! bomb stops at the budget), always with the same sentence (kind `too-big`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use flate2::write::GzEncoder;
use flate2::Compression;
use kinetoscope::budget::{Budget, Size, TooBig, WASM32_LARGEST_BUFFER};
use kinetoscope::engine::{Engine, Target};
use kinetoscope::intake::Incoming;
use std::io::Write;
use std::sync::OnceLock;

/// A valid trace of about `bytes`: one event, then whitespace (what a bomb inflates to here).
fn padded_trace(bytes: usize) -> Vec<u8> {
    let head = br#"{"traceEvents":[{"ph":"X","name":"op","pid":1,"tid":1,"ts":1,"dur":1}"#;
    let mut json = head.to_vec();
    json.resize(bytes.max(head.len()) - 2, b' ');
    json.extend_from_slice(b"]}");
    json
}

/// What [`bomb`] inflates to: 256 MiB.
const BOMB_INFLATED: usize = 256 << 20;

/// A gzip bomb of about 256 KB inflating to [`BOMB_INFLATED`], made once for the tests that use it.
fn bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(|| gzip_bomb(BOMB_INFLATED))
}

/// `padded_trace(bytes)` gzipped as one member, written 1 MiB at a time so the trace is never
/// held whole.
fn gzip_bomb(bytes: usize) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    let head = padded_trace(0);
    gz.write_all(&head[..head.len() - 2]).unwrap();
    let spaces = vec![b' '; 1 << 20];
    let mut left = bytes - head.len();
    while left > 0 {
        let n = left.min(spaces.len());
        gz.write_all(&spaces[..n]).unwrap();
        left -= n;
    }
    gz.write_all(b"]}").unwrap();
    gz.finish().unwrap()
}

fn load(budget: Budget, name: &str, bytes: Vec<u8>) -> Result<protocol::TraceSummary, protocol::LoadError> {
    Engine::with_budget(budget).load(name, bytes, &mut |_, _, _| {})
}

/// The end every sentence shares: what the tab holds, why, and what to do.
fn tail(max: &str, name: &str) -> String {
    format!(
        ", more than the {max} of JSON a browser tab can hold (4 GiB of wasm memory, about \
         {:.1} bytes per JSON byte while loading): capture fewer steps \
         (torch.profiler.schedule(wait=1, warmup=1, active=2)) or read it on the command line \
         with kinetoscope report {name:?}",
        Budget::TAB.peak_per_json_byte()
    )
}

#[test]
fn the_tab_holds_what_4_gib_holds_at_the_measured_peak() {
    let streamed = Budget::TAB;
    let fits = |b: Budget| (b.max_json_bytes() as f64 * b.peak_per_json_byte()) < (4u64 << 30) as f64;
    assert!(fits(streamed), "a streamed load at the budget fits in 4 GiB");
    assert!(streamed.max_json_bytes() > 5_000_000_000, "a 5 GB trace opens: {}", streamed.max_json_bytes());
    let whole = streamed.held_whole();
    assert!(whole.max_json_bytes() <= WASM32_LARGEST_BUFFER, "held whole, the JSON is one buffer");
    assert!(fits(whole), "a load split across parse workers at its budget fits in 4 GiB");
    assert!(whole.max_json_bytes() > 1_800_000_000 && whole.max_json_bytes() < streamed.max_json_bytes());
    assert_eq!(Budget::UNLIMITED.held_whole(), Budget::UNLIMITED);
}

/// The issue's 24 M-event trace (5.8 GB): refused by its declared size, before a byte is
/// allocated.
#[test]
fn declared_size_over_the_budget_is_refused_before_reserving() {
    let err = Incoming::open(1, "big.pt.trace.json", Some(5_800_000_000), 2, Budget::TAB).unwrap_err();
    assert_eq!(err.size, Size::File { bytes: 5_800_000_000, at_least: false });
    let max = kinetoscope::report::memory::bytes(Budget::TAB.max_json_bytes() as i64);
    assert_eq!(err.sentence("big.pt.trace.json"), format!("This trace is 5.80 GB{}", tail(&max, "big.pt.trace.json")));
}

/// A source that declares no size (or less than it sends) is stopped as the bytes pass the budget.
#[test]
fn bytes_past_the_budget_are_refused_as_they_arrive() {
    let budget = Budget::new(100);
    let mut incoming = Incoming::open(1, "stream.json", None, 1, budget).unwrap();
    assert!(incoming.append(64, 0.0, |b| b.fill(b' ')).is_ok());
    assert!(incoming.append(36, 1.0, |b| b.fill(b' ')).is_ok(), "exactly the budget is fine");
    let err = incoming.append(1, 2.0, |_| panic!("nothing is written past the budget")).unwrap_err();
    assert_eq!(err, TooBig { size: Size::File { bytes: 101, at_least: true }, budget });
    assert_eq!(err.sentence("stream.json"), format!("This trace is over 101 B{}", tail("100 B", "stream.json")));
}

/// Memory that runs out below the budget (a baseline or a run holds the rest) says so.
#[test]
fn out_of_memory_below_the_budget_says_what_holds_the_rest() {
    let err = TooBig::out_of_memory(900_000_000, Budget::TAB);
    assert_eq!(
        err.sentence("t.json"),
        format!(
            "This tab ran out of memory at 900.00 MB of this trace, below the 5.27 GB of JSON it can hold \
             (4 GiB of wasm memory, about 0.7 bytes per JSON byte while loading) \
             because a comparison baseline or a run's traces take the rest: close them, capture fewer \
             steps (torch.profiler.schedule(wait=1, warmup=1, active=2)) or read it on the command \
             line with kinetoscope report \"t.json\""
        )
    );
}

/// Plain JSON over the budget (handed whole to the engine) is refused by its actual size.
#[test]
fn plain_json_over_the_budget_is_refused() {
    let json = padded_trace(2_000);
    let err = load(Budget::new(1_999), "plain.json", json.clone()).unwrap_err();
    assert_eq!(err.kind, "too-big");
    assert_eq!(err.message, format!("This trace is 2.00 KB{}", tail("2.00 KB", "plain.json")));
    assert_eq!(load(Budget::new(2_000), "plain.json", json).unwrap().events, 1, "exactly the budget loads");
}

/// A gzip bomb: 256 MiB of JSON in about 256 KB of gzip, against a 4 MiB budget. Decompression
/// stops at the budget, having read a small share of the file, and says how far it got.
#[test]
fn gzip_bomb_stops_at_the_budget_while_inflating() {
    let bomb = bomb();
    assert!(bomb.len() < BOMB_INFLATED / 500, "a bomb: {} bytes of gzip", bomb.len());
    let budget = Budget::new(4 << 20);
    // As the page feeds it: 4 KiB pieces, inflated and parsed as they arrive.
    let mut engine = Engine::with_budget(budget);
    let mut loading = engine.begin(Target::Current, "bomb.json.gz", Some(bomb.len() as u64)).unwrap();
    let mut read = 0;
    let err = bomb
        .chunks(4096)
        .find_map(|piece| {
            read += piece.len();
            loading.push(piece).err()
        })
        .expect("the budget stops the bomb");
    assert_eq!(err.kind, "too-big");
    // Over the budget by at most one 64 KiB read.
    let over = ["This trace inflates to over 4.2", " MB of JSON (from the first "];
    assert!(err.message.starts_with(over[0]) && err.message[over[0].len() + 1..].starts_with(over[1]), "{}", err.message);
    assert!(err.message.ends_with(&tail("4.19 MB", "bomb.json.gz")), "{}", err.message);
    let total = kinetoscope::report::memory::bytes(bomb.len() as i64);
    assert!(err.message.contains(&format!(" of its {total} of gzip: about ")), "{}", err.message);
    assert!(read < bomb.len() / 2, "stopped early: {read} of {} compressed bytes read", bomb.len());
}

/// The boundary: a gzip inflating to exactly the budget loads, one byte less refuses it.
#[test]
fn gzip_inflating_to_the_budget_loads() {
    let json = padded_trace(300_000);
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&json).unwrap();
    let gz = gz.finish().unwrap();
    let summary = load(Budget::new(json.len() as u64), "fits.json.gz", gz.clone()).unwrap();
    assert_eq!(summary.events, 1);
    let err = load(Budget::new(json.len() as u64 - 1), "fits.json.gz", gz).unwrap_err();
    assert_eq!(err.kind, "too-big");
}

/// The projection of a uniform bomb's whole size is close to its real size.
#[test]
fn gzip_bomb_sentence_projects_its_whole_size() {
    let err = Engine::with_budget(Budget::new(32 << 20)).load("bomb.json.gz", bomb().to_vec(), &mut |_, _, _| {}).unwrap_err();
    let TooBigText { projected } = TooBigText::parse(&err.message);
    let ratio = projected / BOMB_INFLATED as f64;
    assert!((0.7..1.3).contains(&ratio), "projected {projected} for {BOMB_INFLATED}: {}", err.message);
}

/// The projected size read back from a sentence ("about N MB at that rate").
struct TooBigText {
    projected: f64,
}

impl TooBigText {
    fn parse(message: &str) -> Self {
        let about = message.split("about ").nth(1).unwrap();
        let mut words = about.split(' ');
        let n: f64 = words.next().unwrap().parse().unwrap();
        let unit = match words.next().unwrap() {
            "GB" => 1e9,
            "MB" => 1e6,
            "KB" => 1e3,
            other => panic!("unit {other}"),
        };
        Self { projected: n * unit }
    }
}
