//! Level-of-detail tiles: `Index::lane_tile` equals the naive group-by query on every real
//! fixture (random windows and resolutions, fixed seed), stays within rows × buckets, keeps
//! overflow rows, and draws long slices across the buckets they cover.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::index::{lod::MAX_TILE_BUCKETS, Index, Tile};
use kinetoscope::model::{LaneId, Trace};
use std::collections::BTreeMap;

/// One rect: (row, slice, start_bucket, end_bucket, count).
type Rect = (u16, u32, u32, u32, u32);

/// splitmix64: a fixed-seed PRNG, so failures replay.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

fn trace_of(path: &std::path::Path) -> Trace {
    let (engine, _) = common::load(path);
    engine.trace().unwrap().clone()
}

fn rects(tile: &Tile) -> Vec<Rect> {
    (0..tile.len())
        .map(|i| {
            (
                tile.row[i],
                tile.slice[i],
                tile.start_bucket[i],
                tile.end_bucket[i],
                tile.count[i],
            )
        })
        .collect()
}

/// The naive query of the lod module header, over the tile's own (snapped) window.
fn naive(trace: &Trace, lane: LaneId, w0: i64, w1: i64, r: i64) -> Vec<Rect> {
    let s = &trace.slices;
    let l = &trace.lanes[lane.0 as usize];
    let mut groups: BTreeMap<(u16, i64), (u32, i64, u32)> = BTreeMap::new();
    for id in l.slices.clone() {
        let i = id as usize;
        let (a, b) = (s.start_ns[i], s.start_ns[i] + s.dur_ns[i].max(1));
        if b <= w0 || a >= w1 {
            continue;
        }
        let clipped = b.min(w1) - a.max(w0);
        let g = groups
            .entry((s.row[i], a.max(w0).div_euclid(r)))
            .or_insert((id, clipped, 0));
        if clipped > g.1 || (clipped == g.1 && id < g.0) {
            (g.0, g.1) = (id, clipped);
        }
        g.2 += 1;
    }
    let first = w0.div_euclid(r);
    groups
        .into_iter()
        .map(|((row, _), (id, _, count))| {
            let i = id as usize;
            let (a, b) = (s.start_ns[i], s.start_ns[i] + s.dur_ns[i].max(1));
            let sb = a.max(w0).div_euclid(r) - first;
            let eb = (b.min(w1) + r - 1).div_euclid(r) - first;
            (row, id, sb as u32, eb as u32, count)
        })
        .collect()
}

/// Checks one tile against the naive query and the size bound.
fn check(trace: &Trace, index: &Index, lane: LaneId, start: i64, end: i64, res: i64) -> usize {
    let tile = index.lane_tile(trace, lane, start, end, res);
    let r = tile.resolution_ns;
    assert!(
        r >= 1 && r.count_ones() == 1 && r <= res.max(1) && 2 * r > res.max(1),
        "resolution {res} -> {r}"
    );
    assert_eq!(tile.start_ns.rem_euclid(r), 0);
    assert!(tile.start_ns <= start && start - tile.start_ns < r);
    assert!(
        tile.end_ns >= tile.start_ns
            && (tile.end_ns >= end || tile.buckets() == MAX_TILE_BUCKETS as u64)
    );
    assert_eq!(tile.rows, trace.lanes[lane.0 as usize].rows);
    let got = rects(&tile);
    let want = naive(trace, lane, tile.start_ns, tile.end_ns, r);
    assert_eq!(
        got, want,
        "lane {} window [{start}, {end}) res {res}",
        lane.0
    );
    assert!(
        got.len() as u64 <= u64::from(tile.rows) * tile.buckets(),
        "rects over rows x buckets"
    );
    for w in got.windows(2) {
        assert!(
            (w[0].0, w[0].2) < (w[1].0, w[1].2),
            "one rect per (row, bucket), ordered"
        );
    }
    for &(_, _, sb, eb, count) in &got {
        assert!(sb < eb && u64::from(eb) <= tile.buckets() && count >= 1);
    }
    got.len()
}

/// The invariant the tile query stands on: extents of one row never overlap, so start order
/// is end order.
fn rows_are_disjoint(trace: &Trace, index: &Index) {
    let s = &trace.slices;
    for l in 0..trace.lanes.len() {
        let lane = LaneId(l as u32);
        let mut total = 0;
        for row in 0..index.rows(lane) {
            let ids = index.row_slices(lane, row);
            total += ids.len();
            for w in ids.windows(2) {
                let (a, b) = (w[0] as usize, w[1] as usize);
                assert!(
                    s.start_ns[a] + s.dur_ns[a].max(1) <= s.start_ns[b],
                    "row {row}: {a} overlaps {b}"
                );
            }
        }
        assert_eq!(total, trace.lanes[l].slices.len());
    }
}

/// Random windows and resolutions over every lane of `trace`; returns the rects checked.
fn property(trace: &Trace, rng: &mut Rng) -> usize {
    let index = Index::build(trace);
    rows_are_disjoint(trace, &index);
    let span = trace.end_ns.max(1);
    let mut total = 0;
    for (l, lane) in trace.lanes.iter().enumerate() {
        let lane_id = LaneId(l as u32);
        let windows = if lane.slices.len() > 1000 { 60 } else { 15 };
        total += check(trace, &index, lane_id, 0, span, span / 2000);
        total += check(trace, &index, lane_id, -span, 2 * span, 1);
        for _ in 0..windows {
            let width = 1i64 << (1 + rng.below(u64::from(span.ilog2()) + 2));
            let start = rng.below(span as u64 + width as u64) as i64 - width / 2;
            let pixels = 1 + rng.below(3000) as i64;
            let res = (width / pixels).max(1) + rng.below(7) as i64;
            total += check(trace, &index, lane_id, start, start + width, res);
        }
    }
    total
}

#[test]
fn tiles_equal_the_naive_query_on_every_real_fixture() {
    let mut rng = Rng(0x6b69_6e65_746f);
    let total: usize = common::real_fixtures()
        .iter()
        .map(|p| property(&trace_of(p), &mut rng))
        .sum();
    assert!(total > 10_000, "the property test drew only {total} rects");
}

#[test]
fn tiles_equal_the_naive_query_on_generated_traces() {
    let mut rng = Rng(7);
    let demo = kinetoscope::synth::demo::generate();
    let real = common::json_bytes(&common::real("gpumodel__trace.json"));
    let mut inflated = Vec::new();
    kinetoscope::synth::inflate::inflate_copies(&real, 4, &mut inflated).unwrap();
    for (name, bytes) in [("demo", demo), ("gpumodel x4", inflated)] {
        let (engine, result) = common::load_bytes(name, bytes);
        result.unwrap();
        assert!(property(engine.trace().unwrap(), &mut rng) > 100, "{name}");
    }
}

fn inline(text: &str) -> (Trace, Index) {
    let (engine, _) = common::load_str(text);
    let trace = engine.trace().unwrap().clone();
    let index = Index::build(&trace);
    (trace, index)
}

fn names(trace: &Trace, tile: &Tile) -> Vec<(String, u16, u32, u32, u32)> {
    rects(tile)
        .into_iter()
        .map(|(row, id, a, b, n)| {
            (
                trace
                    .strings
                    .get(trace.slices.name[id as usize])
                    .into_owned(),
                row,
                a,
                b,
                n,
            )
        })
        .collect()
}

#[test]
fn long_parent_is_one_rect_across_buckets_and_small_children_are_counted() {
    // parent 0..1000 µs; ten 10 µs children every 100 µs; at 128 µs per bucket every child
    // shares a bucket with at most one other.
    let mut events =
        vec![r#"{"ph":"X","name":"parent","pid":1,"tid":1,"ts":0,"dur":1000}"#.to_string()];
    for k in 0..10 {
        events.push(format!(
            r#"{{"ph":"X","name":"c{k}","pid":1,"tid":1,"ts":{},"dur":10}}"#,
            k * 100 + 1
        ));
    }
    let (trace, index) = inline(&format!("[{}]", events.join(",")));
    let tile = index.lane_tile(&trace, LaneId(0), 0, 1_000_000, 100_000);
    assert_eq!(tile.resolution_ns, 65_536);
    let got = names(&trace, &tile);
    assert_eq!(
        got[0],
        ("parent".into(), 0, 0, 16, 1),
        "one rect over 16 buckets"
    );
    let children: Vec<_> = got[1..]
        .iter()
        .map(|(n, row, a, b, c)| (n.as_str(), *row, *a, *b, *c))
        .collect();
    assert_eq!(children.len(), 10, "{children:?}");
    assert!(children
        .iter()
        .all(|&(_, row, a, b, c)| row == 1 && b == a + 1 && c == 1));
    // At 1 ms per bucket all children fall in one group: the first stands for all ten.
    let coarse = index.lane_tile(&trace, LaneId(0), 0, 1_000_000, 1 << 20);
    assert_eq!(
        names(&trace, &coarse),
        vec![("parent".into(), 0, 0, 1, 1), ("c0".into(), 1, 0, 1, 10)]
    );
}

#[test]
fn a_slice_starting_before_the_window_is_clipped_and_does_not_hide_a_longer_one() {
    // `long` starts before the window and ends 600 ns into it; `next` starts there and is
    // longer inside the window: `next` represents the first bucket and counts `long`.
    let (trace, index) = inline(
        r#"[{"ph":"X","name":"long","pid":1,"tid":1,"ts":0,"dur":103},
            {"ph":"X","name":"next","pid":1,"tid":1,"ts":103,"dur":50}]"#,
    );
    let tile = index.lane_tile(&trace, LaneId(0), 100 * 1024, 200 * 1024, 1024);
    assert_eq!(tile.start_ns, 102_400);
    assert_eq!(names(&trace, &tile), vec![("next".into(), 0, 0, 50, 2)]);
    let all = index.lane_tile(&trace, LaneId(0), 0, 200_000, 1024);
    assert_eq!(
        names(&trace, &all),
        vec![
            ("long".into(), 0, 0, 101, 1),
            ("next".into(), 0, 100, 150, 1)
        ]
    );
}

#[test]
fn overflow_rows_are_in_the_tile() {
    // b partially overlaps a: it goes to an overflow row below a's layer.
    let (trace, index) = inline(
        r#"[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":10},
            {"ph":"X","name":"a1","pid":1,"tid":1,"ts":1,"dur":2},
            {"ph":"X","name":"b","pid":1,"tid":1,"ts":5,"dur":10}]"#,
    );
    assert_eq!(trace.lanes[0].rows, 3);
    let tile = index.lane_tile(&trace, LaneId(0), 0, 16_000, 1024);
    let got = names(&trace, &tile);
    assert_eq!(
        got.iter().map(|g| (g.0.as_str(), g.1)).collect::<Vec<_>>(),
        vec![("a", 0), ("a1", 1), ("b", 2)]
    );
    check(&trace, &index, LaneId(0), 0, 16_000, 1);
}

#[test]
fn zero_length_slices_cover_one_bucket() {
    let (trace, index) = inline(
        r#"[{"ph":"X","name":"p","pid":1,"tid":1,"ts":0,"dur":4},
            {"ph":"X","name":"z","pid":1,"tid":1,"ts":4,"dur":0},
            {"ph":"X","name":"q","pid":1,"tid":1,"ts":4,"dur":2}]"#,
    );
    let tile = index.lane_tile(&trace, LaneId(0), 0, 8_000, 1000);
    assert_eq!(tile.resolution_ns, 512);
    let got = names(&trace, &tile);
    assert!(got.contains(&("z".into(), 1, 7, 8, 1)), "{got:?}");
    for res in [1, 3, 512, 4096] {
        check(&trace, &index, LaneId(0), 0, 8_000, res);
        check(&trace, &index, LaneId(0), 4_000, 4_001, res);
    }
}

#[test]
fn odd_requests_give_bounded_tiles() {
    let (trace, index) = inline(r#"[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":10}]"#);
    let huge = index.lane_tile(&trace, LaneId(0), i64::MIN, i64::MAX, 1);
    assert_eq!(huge.buckets(), MAX_TILE_BUCKETS as u64);
    assert!(huge.is_empty(), "the window was cut before the trace");
    let wide = index.lane_tile(&trace, LaneId(0), -5, i64::MAX, i64::MAX);
    assert_eq!(wide.resolution_ns, 1 << 62);
    assert_eq!(names(&trace, &wide).len(), 1);
    for res in [0, -3] {
        assert_eq!(
            index
                .lane_tile(&trace, LaneId(0), 0, 100, res)
                .resolution_ns,
            1
        );
    }
    assert!(index.lane_tile(&trace, LaneId(0), 100, 0, 1).is_empty());
    assert!(index.lane_tile(&trace, LaneId(7), 0, 100, 1).is_empty());
    let one = index.lane_tile(&trace, LaneId(0), 9_999, 10_000, 1);
    assert_eq!(rects(&one), vec![(0, 0, 0, 1, 1)]);
}

#[test]
fn every_slice_one_bucket_wide_is_drawn_as_itself() {
    let trace = trace_of(&common::real(
        "kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz",
    ));
    let index = Index::build(&trace);
    let s = &trace.slices;
    for (l, lane) in trace.lanes.iter().enumerate() {
        for res in [1 << 10, 1 << 14, 1 << 18] {
            let tile = index.lane_tile(&trace, LaneId(l as u32), 0, trace.end_ns, res);
            let drawn: std::collections::HashSet<u32> = tile.slice.iter().copied().collect();
            for id in lane.slices.clone() {
                if s.dur_ns[id as usize] >= tile.resolution_ns
                    && s.start_ns[id as usize] + s.dur_ns[id as usize] <= tile.end_ns
                {
                    assert!(
                        drawn.contains(&id),
                        "slice {id} of {} ns missing at {res} ns/px",
                        s.dur_ns[id as usize]
                    );
                }
            }
        }
    }
}
