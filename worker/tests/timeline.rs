//! Timeline answers through `Engine::query` on real fixtures: the layout lists every lane the
//! summary lists (Python stacks aside: tests/python_stack.rs), tile words equal the index's
//! tiles, a kernel's details name its launching `cudaLaunchKernel`, stable keys resolve back,
//! search steps cycle through every match, and counter tracks cover the GPUs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::engine::Engine;
use kinetoscope::index::Index;
use kinetoscope::model::LaneId;
use protocol::{Answer, Query, SliceDetails, TraceRef, RECT_MATCH, RECT_WORDS};

fn answer(e: &mut Engine, q: &Query) -> (Answer, Option<Vec<u32>>) {
    e.query(q).unwrap()
}

fn details(e: &mut Engine, q: &Query) -> Option<SliceDetails> {
    match answer(e, q).0 {
        Answer::Details(d) => d,
        other => panic!("not details: {other:?}"),
    }
}

#[test]
fn layout_lists_every_lane_of_every_fixture() {
    for path in common::real_fixtures() {
        let (e, summary) = common::load(&path);
        let layout = e.layout().expect("a layout once loaded");
        // A thread's Python stack is listed again, in the group after its process's.
        let trace = e.trace().unwrap();
        let mut listed: Vec<(u32, Vec<(u32, String)>)> = Vec::new();
        for g in &layout.groups {
            for l in &g.lanes {
                let process = trace.lanes[l.lane as usize].process;
                let owner = trace.strings.get(trace.processes[process as usize].name);
                assert!(g.name == owner || g.name == format!("{owner} · Python stack"), "{}", g.name);
                let at = match listed.iter().position(|(p, _)| *p == process) {
                    Some(at) => at,
                    None => {
                        listed.push((process, Vec::new()));
                        listed.len() - 1
                    }
                };
                if !listed[at].1.iter().any(|(id, _)| *id == l.lane) {
                    listed[at].1.push((l.lane, l.name.clone()));
                }
            }
        }
        listed.sort_by_key(|(p, _)| *p);
        let names: Vec<(String, Vec<String>)> = listed
            .iter()
            .map(|(p, lanes)| {
                let mut names: Vec<String> = lanes.iter().map(|(_, n)| n.clone()).collect();
                names.sort();
                (trace.strings.get(trace.processes[*p as usize].name).into_owned(), names)
            })
            .collect();
        let expected: Vec<(String, Vec<String>)> = summary
            .processes
            .iter()
            .filter(|p| !p.lanes.is_empty())
            .map(|p| {
                let mut lanes: Vec<String> = p.lanes.iter().map(|l| l.name.clone()).collect();
                lanes.sort();
                (p.name.clone(), lanes)
            })
            .collect();
        assert_eq!(names, expected, "{}", path.display());
        let slices: u64 = listed.iter().flat_map(|(_, lanes)| lanes).map(|&(l, _)| trace.lanes[l as usize].slices.len() as u64).sum();
        assert_eq!(slices, trace.slices.len() as u64, "{}", path.display());
        assert!(layout.steps.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
    }
}

#[test]
fn tile_words_equal_the_index_tiles() {
    let mut e = common::load_real("partx__profiler_trace_single_sample.json");
    let trace = e.trace().unwrap().clone();
    let index = Index::build(&trace);
    let lanes: Vec<u32> = (0..trace.lanes.len() as u32).collect();
    let (t0, t1, res) = (0, trace.end_ns, (trace.end_ns / 1500).max(1));
    let (Answer::Tiles(set), Some(words)) = answer(
        &mut e,
        &Query::Tiles {
            trace: protocol::TraceRef::Current,
            lanes: lanes.clone(),
            start_ns: t0,
            end_ns: t1,
            resolution_ns: res,
            search: Some("gemm".into()),
        },
    ) else {
        panic!("not tiles");
    };
    assert_eq!(set.lanes.len(), lanes.len());
    let mut at = 0;
    let mut matched = 0;
    for &(lane, n) in &set.lanes {
        let tile = index.lane_tile(&trace, LaneId(lane), t0, t1, res);
        assert_eq!(tile.len(), n as usize);
        assert_eq!((set.start_ns, set.resolution_ns), (tile.start_ns, tile.resolution_ns));
        for i in 0..tile.len() {
            let w = &words[at * RECT_WORDS..(at + 1) * RECT_WORDS];
            assert_eq!(w[0], u32::from(tile.row[i]));
            assert_eq!((w[1], w[2], w[3], w[5]), (tile.start_bucket[i], tile.end_bucket[i], tile.slice[i], tile.count[i]));
            let name = &set.names[(w[4] & !RECT_MATCH) as usize];
            assert_eq!(*name, trace.strings.get(trace.slices.name[w[3] as usize]));
            let is_match = name.to_ascii_lowercase().contains("gemm");
            if w[4] & RECT_MATCH != 0 {
                matched += 1;
            } else {
                assert!(!is_match, "{name} matches gemm but is not flagged");
            }
            at += 1;
        }
    }
    assert_eq!(at * RECT_WORDS, words.len());
    assert!(matched > 0);
}

#[test]
fn kernel_details_name_the_launch_and_keys_resolve() {
    let mut e = common::load_real("partx__profiler_trace_single_sample.json");
    let trace = e.trace().unwrap();
    let s = &trace.slices;
    let kernel = (0..s.len())
        .find(|&i| s.launch[i] != kinetoscope::model::NONE && trace.strings.get(s.name[i]).contains("gemm"))
        .unwrap() as u32;
    let d = details(&mut e, &Query::Details { slice: kernel, trace: TraceRef::Current }).unwrap();
    let launch = d.launched_by.clone().unwrap();
    assert!(launch.name.starts_with("cudaLaunchKernel") || launch.name.starts_with("cuLaunch"), "{}", launch.name);
    assert!(d.args.iter().any(|(k, _)| k == "grid"));
    assert!(d.args.iter().any(|(k, _)| k == "correlation"));
    assert!(d.op.is_some());
    // The launch's own details list this kernel among what it launched.
    let back = details(&mut e, &Query::Details { slice: launch.id, trace: TraceRef::Current }).unwrap();
    assert!(back.launched.iter().any(|r| r.id == kernel));
    // The stable key resolves to the same slice.
    let again = details(&mut e, &Query::Resolve { key: d.key.clone() }).unwrap();
    assert_eq!(again.slice.id, kernel);
    assert!(details(&mut e, &Query::Details { slice: u32::MAX - 1, trace: TraceRef::Current }).is_none());
}

#[test]
fn search_steps_cycle_through_every_match() {
    let mut e = common::load_real("partx__profiler_trace_single_sample.json");
    let step = |e: &mut Engine, from: Option<u32>, forward: bool| match answer(
        e,
        &Query::Search {
            text: "aten::addmm".into(),
            from_slice: from,
            from_ns: 0,
            forward,
            trace: TraceRef::Current,
        },
    )
    .0
    {
        Answer::Search(h) => h,
        other => panic!("not a search: {other:?}"),
    };
    let first = step(&mut e, None, true);
    let total = first.total;
    assert!(total > 1);
    assert_eq!(first.rank, Some(1));
    let mut hit = first.hit.clone().unwrap();
    for k in 2..=total {
        let h = step(&mut e, Some(hit.id), true);
        hit = h.hit.unwrap();
        assert_eq!(h.rank, Some(k));
        assert!(hit.name.contains("aten::addmm"));
    }
    // Past the last match, next wraps to the first; previous from the first wraps to the last.
    let wrapped = step(&mut e, Some(hit.id), true);
    assert_eq!(wrapped.hit.as_ref().unwrap().id, first.hit.as_ref().unwrap().id);
    let back = step(&mut e, Some(first.hit.unwrap().id), false);
    assert_eq!(back.hit.unwrap().id, hit.id);
    assert_eq!(back.rank, Some(total));
}

#[test]
fn counters_cover_every_gpu() {
    let mut e = common::load_real("partx__profiler_trace_single_sample.json");
    let end = e.trace().unwrap().end_ns;
    let Answer::Counters(set) = answer(&mut e, &Query::Counters { start_ns: 0, end_ns: end, buckets: 200 }).0 else {
        panic!("not counters");
    };
    let util: Vec<_> = set.series.iter().filter(|s| s.metric == "utilization").collect();
    assert!(!util.is_empty());
    for s in &util {
        assert!(s.values.len() <= 201 && s.values.len() >= 199);
        assert!(s.values.iter().flatten().all(|v| (0.0..=1.0).contains(v)));
        assert!(s.values.iter().flatten().any(|&v| v > 0.0));
    }
}

#[test]
fn kernel_histogram_counts_every_kernel_of_that_name() {
    let mut e = common::load_real("partx__profiler_trace_single_sample.json");
    let trace = e.trace().unwrap();
    let s = &trace.slices;
    let name = (0..s.len())
        .find(|&i| trace.strings.get(s.cat[i]) == "kernel")
        .map(|i| trace.strings.get(s.name[i]).into_owned())
        .unwrap();
    let durs: Vec<i64> = (0..s.len())
        .filter(|&i| trace.strings.get(s.cat[i]) == "kernel" && trace.strings.get(s.name[i]) == name)
        .map(|i| s.dur_ns[i])
        .collect();
    let Answer::Histogram(h) = answer(&mut e, &Query::Histogram { name: name.clone(), bins: 20 }).0 else {
        panic!("not a histogram");
    };
    assert_eq!(h.total, durs.len() as u64);
    assert_eq!(h.counts.iter().sum::<u64>(), h.total);
    assert_eq!(h.min_ns, *durs.iter().min().unwrap());
    assert_eq!(h.max_ns, *durs.iter().max().unwrap());
    assert!(h.min_ns + h.width_ns * 20 > h.max_ns);
}

#[test]
fn findings_on_the_wire_match_the_engine_and_cite_real_slices() {
    let mut e = common::load_real("partx__profiler_trace_single_sample.json");
    let expected = e.session().unwrap().findings().to_vec();
    let Answer::Findings(found) = answer(&mut e, &Query::Findings).0 else {
        panic!("not findings");
    };
    let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
    let want: Vec<&str> = expected.iter().map(|f| f.rule).collect();
    assert_eq!(rules, want);
    assert!(rules.contains(&"dtod-before-gemm"));
    let trace = e.trace().unwrap();
    for (f, x) in found.iter().zip(&expected) {
        assert_eq!(f.slices.len(), x.evidence.slices.len());
        assert_eq!(f.total, x.evidence.total);
        for r in &f.slices {
            assert_eq!(trace.strings.get(trace.slices.name[r.id as usize]), r.name);
            assert_eq!(trace.slices.start_ns[r.id as usize], r.start_ns);
        }
    }
}
