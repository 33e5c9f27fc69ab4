//! The critical path (`analysis::critical_path`, docs/definitions.md "Critical path").
//!
//! Synthetic steps (`synth::paths`, ground truth by construction): each case's path, its
//! length and bound-by shares are derived by hand below from the generator's timing model
//! (µs); what-if answers equal a re-run of the generator with the change applied. Real
//! fixtures: every step's path covers the step exactly, and against HTA 0.5.0's
//! `critical_path_analysis` (`*.cpa.json`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::critical_path::{self, BoundBy, Edit, StepPath};
use kinetoscope::analysis::steps;
use kinetoscope::synth::paths::{generate, Case, Knobs};

const US: i64 = 1_000;

fn paths_of(bytes: Vec<u8>) -> Vec<StepPath> {
    let (engine, _) = common::load_bytes("paths.json", bytes);
    let session = engine.session().unwrap();
    let t = session.trace();
    critical_path::analyze(t, &steps::analyze(t, None))
}

fn what_if(bytes: Vec<u8>, edits: &[&str]) -> Vec<StepPath> {
    let (engine, _) = common::load_bytes("paths.json", bytes);
    let session = engine.session().unwrap();
    let t = session.trace();
    let edits: Vec<Edit> = edits.iter().map(|e| e.parse().unwrap()).collect();
    critical_path::what_if(t, &steps::analyze(t, None), &edits)
}

/// The non-zero shares of a path in µs, by class id.
fn shares_us(p: &StepPath) -> Vec<(&'static str, i64)> {
    BoundBy::ALL.iter().filter(|c| p.shares[c.index()] != 0).map(|c| (c.as_str(), p.shares[c.index()] / US)).collect()
}

fn only_step(case: Case, knobs: Knobs) -> StepPath {
    let mut paths = paths_of(generate(case, knobs));
    assert_eq!(paths.len(), 1, "{case:?}: one step");
    paths.remove(0)
}

/// A case, its wall time and its shares, µs.
type Expected = (Case, i64, &'static [(&'static str, i64)]);

#[test]
fn each_synthetic_case_has_the_path_it_was_built_with() {
    // (case, wall µs, shares µs), each derived from synth::paths' timing model.
    let expected: [Expected; 8] = [
        // 10 x (20 Python + aten::mm: 5 own + 4 launch call + 6 own) + 20 Python; the 3 µs
        // kernels end long before the CPU does.
        (Case::CpuBound, 370, &[("cpu_op", 150), ("cpu_overhead", 220)]),
        // 10 Python, 1 of aten::mm to its launch, 5 launch delay, then ten 100 µs GEMMs queued
        // 1 µs apart; the CPU is done at 90 µs.
        (Case::GpuBound, 1025, &[("cpu_op", 1), ("cpu_overhead", 10), ("launch_delay", 5), ("gpu_compute", 1000), ("kernel_gap", 9)]),
        // Five GEMMs (ending at 520), cudaDeviceSynchronize returns 2 µs later, then 3 x (5
        // Python + 20 aten::add).
        (
            Case::DeviceSync,
            597,
            &[("cpu_op", 61), ("cpu_overhead", 25), ("launch_delay", 5), ("gpu_compute", 500), ("kernel_gap", 4), ("sync_wait", 2)],
        ),
        // The GEMM (16-216) on stream 7, the add on stream 20 starts 2 µs after it ends.
        (Case::CrossStream, 318, &[("cpu_op", 1), ("cpu_overhead", 10), ("launch_delay", 5), ("gpu_compute", 300), ("sync_wait", 2)]),
        // aten::mm (6) and 2 Python, c10d::allreduce_'s 1 µs to its launch, 5 launch delay, the
        // 400 µs all-reduce (its wait for the late rank inside) ends last.
        (Case::Collective, 424, &[("cpu_op", 7), ("cpu_overhead", 12), ("launch_delay", 5), ("gpu_communication", 400)]),
        // CUDAGraph::replay's 2 µs to cudaGraphLaunch, 5 launch delay, five 50 µs GEMMs 1 µs apart.
        (Case::GraphReplay, 271, &[("cpu_op", 2), ("cpu_overhead", 10), ("launch_delay", 5), ("gpu_compute", 250), ("kernel_gap", 4)]),
        // As CrossStream, but the wait is a recorded `Stream Wait Event`: the add (218-318)
        // follows the GEMM (16-216), not the decoy on stream 21 (24-217) ending after it.
        (Case::EventWait, 318, &[("cpu_op", 1), ("cpu_overhead", 10), ("launch_delay", 5), ("gpu_compute", 300), ("sync_wait", 2)]),
        // cudaStreamSynchronize(7) at 24 µs returns 2 µs after the GEMM (216), recorded as a
        // `Stream Sync` of stream 7: not after the decoy (217) that also ends inside the call;
        // then 3 Python + 20 aten::add.
        (
            Case::StreamSync,
            241,
            &[("cpu_op", 21), ("cpu_overhead", 13), ("launch_delay", 5), ("gpu_compute", 200), ("sync_wait", 2)],
        ),
    ];
    for (case, wall, shares) in expected {
        let p = only_step(case, Knobs::default());
        assert_eq!(p.wall_ns(), wall * US, "{case:?}: wall time");
        assert_eq!(shares_us(&p), shares.to_vec(), "{case:?}: shares");
        assert_eq!(p.shares.iter().sum::<i64>(), p.wall_ns(), "{case:?}: the path covers the step");
        let covered: i64 = p.segments.iter().map(|s| s.end_ns - s.start_ns).sum();
        assert_eq!(covered, p.wall_ns(), "{case:?}: segments cover the step");
        assert!(p.segments.windows(2).all(|w| w[0].end_ns == w[1].start_ns), "{case:?}: segments are contiguous");
    }
}

#[test]
fn bound_by_names_the_dominant_class() {
    assert_eq!(only_step(Case::CpuBound, Knobs::default()).bound_by(), BoundBy::CpuOverhead);
    assert_eq!(only_step(Case::GpuBound, Knobs::default()).bound_by(), BoundBy::GpuCompute);
    assert_eq!(only_step(Case::Collective, Knobs::default()).bound_by(), BoundBy::GpuCommunication);
}

#[test]
fn what_if_equals_the_generator_rerun_with_the_change() {
    let half_gemm = Knobs { gemm_scale: 0.5, ..Knobs::default() };
    let no_launch = Knobs { launch_ns: 0, ..Knobs::default() };
    let half_python = Knobs { python_scale: 0.5, ..Knobs::default() };
    let no_comm = Knobs { comm_scale: 0.0, ..Knobs::default() };
    let no_sync = Knobs { sync: false, ..Knobs::default() };
    // (case, edits, the same change in the generator, whether the step gets shorter)
    let cases: [(Case, &[&str], Knobs, bool); 12] = [
        (Case::GpuBound, &["gemm*0.5"], half_gemm, true),
        (Case::GpuBound, &["launch=0"], no_launch, true),
        (Case::CpuBound, &["python*0.5"], half_python, true),
        // Faster GEMMs buy a CPU-bound step nothing: the answer says so.
        (Case::CpuBound, &["kernel:xmma_gemm*0.5"], half_gemm, false),
        (Case::DeviceSync, &["sync=0"], no_sync, true),
        (Case::DeviceSync, &["gemm*0.5"], half_gemm, true),
        (Case::CrossStream, &["gemm*0.5"], half_gemm, true),
        (Case::Collective, &["comm=0"], no_comm, true),
        (Case::GraphReplay, &["gemm*0.5", "launch=0"], Knobs { gemm_scale: 0.5, launch_ns: 0, ..Knobs::default() }, true),
        // The recorded waits follow the GEMM: a guess from the decoy's end would answer 318 and
        // 241 µs.
        (Case::EventWait, &["gemm*0.5"], half_gemm, true),
        (Case::StreamSync, &["gemm*0.5"], half_gemm, true),
        (Case::StreamSync, &["sync=0"], no_sync, true),
    ];
    for (case, edits, knobs, shorter) in cases {
        let answered = what_if(generate(case, Knobs::default()), edits);
        let rerun = only_step(case, knobs);
        assert_eq!(answered.len(), 1);
        assert_eq!(answered[0].wall_ns(), rerun.wall_ns(), "{case:?} {edits:?}: what-if against the re-run");
        let before = only_step(case, Knobs::default()).wall_ns();
        assert_eq!(answered[0].wall_ns() < before, shorter, "{case:?} {edits:?}: {before} ns before");
        assert_eq!(answered[0].shares.iter().sum::<i64>(), answered[0].wall_ns(), "{case:?} {edits:?}: shares cover it");
    }
}

#[test]
fn what_if_with_no_edit_reproduces_the_step() {
    for case in Case::ALL {
        let bytes = generate(case, Knobs::default());
        let plain = paths_of(bytes.clone());
        let unchanged = what_if(bytes.clone(), &[]);
        let scaled_by_one = what_if(bytes, &["gpu*1", "cpu*1"]);
        assert_eq!(plain, unchanged, "{case:?}");
        assert_eq!(plain[0].wall_ns(), scaled_by_one[0].wall_ns(), "{case:?}");
    }
}

#[test]
fn edits_are_read_or_refused_with_a_sentence() {
    for ok in ["gemm*0.5", "launch=0", "kernel:nccl*0", "op:aten::copy_=0", "dataloader=0", "gpu_compute*2"] {
        assert!(ok.parse::<Edit>().is_ok(), "{ok}");
    }
    for (bad, says) in [("gemm", "SELECTOR*FACTOR"), ("gemm*x", "number"), ("warp*0.5", "not a selector"), ("launch=2", "`=` sets"), ("kernel:*0", "need a name")] {
        let err = bad.parse::<Edit>().unwrap_err().to_string();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

/// Every real fixture: each step's path covers the step's span exactly and ends where the
/// step ends (the weights reproduce the observed schedule), for traces without steps the
/// capture window.
#[test]
fn every_real_step_path_covers_its_step() {
    let mut steps_seen = 0;
    for path in common::real_fixtures() {
        let (engine, _) = common::load(&path);
        let session = engine.session().unwrap();
        let t = session.trace();
        let st = steps::analyze(t, None);
        let paths = critical_path::analyze(t, &st);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!paths.is_empty(), "{name}: a path");
        for (i, p) in paths.iter().enumerate() {
            if let Some(step) = st.steps.get(i) {
                assert_eq!((p.start_ns, p.end_ns), (step.start_ns, step.end_ns), "{name} step {}: the path spans the step", step.number);
                steps_seen += 1;
            }
            assert_eq!(p.shares.iter().sum::<i64>(), p.wall_ns(), "{name} {:?}: shares cover the step", p.step);
            assert!(p.shares.iter().all(|&s| s >= 0), "{name} {:?}: {:?}", p.step, p.shares);
            let first = p.segments.first().map_or(p.end_ns, |s| s.start_ns);
            let last = p.segments.last().map_or(p.start_ns, |s| s.end_ns);
            assert_eq!((first, last), (p.start_ns, p.end_ns), "{name} {:?}: segments from start to end", p.step);
            assert!(p.segments.windows(2).all(|w| w[0].end_ns == w[1].start_ns), "{name} {:?}: no moment unaccounted", p.step);
        }
    }
    assert!(steps_seen >= 25, "{steps_seen} steps");
}

/// HTA 0.5.0's `critical_path_analysis` per step (`*.cpa.json`; REFERENCE.md "Critical path").
/// HTA weighs time between ops and blocking calls 0 and returns from the GPU only through
/// `cuda_sync` events, which none of these traces has. Where a step has no blocking call
/// that waited for the GPU, HTA's graph is complete: its path length equals our path without
/// the time between ops within 3%, and each HTA bound-by share is within 5 points of ours.
/// Elsewhere HTA's path stops short of the step (its `path_span_us` < the step), and ours
/// covers the whole step, the waits HTA loses carried by our sync edges.
#[test]
fn against_hta_critical_path() {
    let mut complete = 0;
    let mut with_waits = 0;
    for path in common::real_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let stem = name.trim_end_matches(".gz").trim_end_matches(".json");
        let Ok(bytes) = std::fs::read(common::shared().join(format!("fixtures/oracle/{stem}.cpa.json"))) else {
            continue;
        };
        let oracle: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        if oracle["status"] != "ok" {
            continue;
        }
        let (engine, _) = common::load(&path);
        let session = engine.session().unwrap();
        let t = session.trace();
        let st = steps::analyze(t, None);
        let paths = critical_path::analyze(t, &st);
        for hta in oracle["steps"].as_array().unwrap() {
            if hta["gpu_annotation"] == true || hta["status"] != "ok" {
                continue;
            }
            let number: u64 = hta["name"].as_str().unwrap().trim_start_matches("ProfilerStep#").parse().unwrap();
            let p = paths.iter().find(|p| p.step == Some(number)).unwrap_or_else(|| panic!("{name}: step {number}"));
            let hta_us = hta["critical_path_us"].as_f64().unwrap();
            let ours_us = p.busy_ns() as f64 / 1e3;
            let window = hta["window_dur_us"].as_f64().unwrap();
            if p.busy_ns() == 0 {
                // triton_example: the step's thread records nothing but the annotation (13.3 s,
                // compiling); HTA's path is 1.4 ms of ops in another process. Ours says the
                // step's time is unrecorded host time, which is what the trace shows.
                assert!(hta_us < 0.01 * window, "{name} step {number}: HTA {hta_us} of {window} µs");
                assert_eq!(p.bound_by(), BoundBy::CpuOverhead);
            } else if p.sync_waits == 0 {
                complete += 1;
                assert!((ours_us - hta_us).abs() <= 0.03 * hta_us, "{name} step {number}: ours {ours_us} µs, HTA {hta_us} µs");
                let busy = p.busy_ns() as f64;
                let share = |classes: &[BoundBy]| 100.0 * classes.iter().map(|c| p.shares[c.index()]).sum::<i64>() as f64 / busy;
                let pct = &hta["summary_pct"];
                let pairs = [
                    ("cpu_bound", share(&[BoundBy::CpuOp, BoundBy::DataLoading])),
                    ("gpu_compute_bound", share(&[BoundBy::GpuCompute, BoundBy::MemcpyMemset])),
                    ("gpu_communication_bound", share(&[BoundBy::GpuCommunication])),
                    ("gpu_kernel_kernel_overhead", share(&[BoundBy::KernelGap])),
                    ("gpu_kernel_launch_overhead", share(&[BoundBy::LaunchDelay])),
                ];
                for (class, ours) in pairs {
                    let theirs = pct[class].as_f64().unwrap_or(0.0);
                    assert!((ours - theirs).abs() <= 5.0, "{name} step {number} {class}: ours {ours:.1}%, HTA {theirs:.1}%");
                }
            } else {
                with_waits += 1;
                let span = hta["path_span_us"].as_f64().unwrap();
                assert!(span < window, "{name} step {number}: HTA's path stops short ({span} of {window} µs)");
                assert_eq!(p.shares.iter().sum::<i64>(), p.wall_ns(), "{name} step {number}: ours covers the step");
                let sync_and_gpu = p.shares[BoundBy::SyncWait.index()] + p.shares[BoundBy::GpuCompute.index()] + p.shares[BoundBy::GpuCommunication.index()] + p.shares[BoundBy::MemcpyMemset.index()];
                assert!(sync_and_gpu > 0, "{name} step {number}: a blocking call's wait is on our path");
            }
        }
    }
    assert!(complete >= 3 && with_waits >= 10, "{complete} complete, {with_waits} with waits");
}

/// `report --json --what-if`: the answer for the synthetic GPU-bound step equals the
/// generator's re-run with GEMMs at half time, and `critical_path` lists the step's path.
#[test]
fn cli_what_if_answers_the_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gpu_bound.json");
    std::fs::write(&file, generate(Case::GpuBound, Knobs::default())).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", "--json", "--what-if", "gemm*0.5", "--what-if", "launch=0"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rerun = only_step(Case::GpuBound, Knobs { gemm_scale: 0.5, launch_ns: 0, ..Knobs::default() });
    let step = &report["what_if"]["steps"][0];
    assert_eq!(step["before_us"], 1025.0);
    assert_eq!(step["after_us"].as_f64().unwrap(), rerun.wall_ns() as f64 / 1e3);
    assert_eq!(step["bound_by_after"], "gpu_compute");
    let path = &report["critical_path"]["steps"][0];
    assert_eq!((path["wall_us"].as_f64(), path["bound_by"].as_str()), (Some(1025.0), Some("gpu_compute")));
    assert_eq!(path["shares_us"]["gpu_compute"], 1000.0);

    let text = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", "--critical-path", "--what-if", "launch=0"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("Critical path (what bounds each step)") && text.contains("What if launch=0"), "{text}");
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope")).args(["report", "--what-if", "warp*2"]).arg(&file).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("not a selector"));
}

/// `run --json` gives each rank what bounds its complete steps: the sum of the paths `report
/// --json` gives each step of that rank (the DLRM ranks: two bound by communication, two by
/// their CPU ops), and a straggler's `why_on_path` names only what its paths run through.
#[test]
fn run_json_gives_each_rank_its_bound_by() {
    let files: Vec<std::path::PathBuf> = common::real_fixtures().into_iter().filter(|p| p.to_string_lossy().contains("param__dlrm_kineto")).collect();
    assert_eq!(files.len(), 4);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope")).arg("run").arg("--json").args(&files).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut bounds = Vec::new();
    for rank in run["ranks"].as_array().unwrap() {
        let file = rank["file"].as_str().unwrap();
        let path = files.iter().find(|p| p.to_string_lossy().ends_with(file) || file.ends_with(&*p.file_name().unwrap().to_string_lossy())).unwrap();
        let (engine, _) = common::load(path);
        let session = engine.session().unwrap();
        let st = steps::analyze(session.trace(), None);
        let complete: Vec<u64> = st.steps.iter().filter(|s| !s.incomplete).map(|s| s.number).collect();
        let paths = critical_path::analyze(session.trace(), &st);
        let counted: Vec<&StepPath> = paths.iter().filter(|p| complete.is_empty() || p.step.is_some_and(|n| complete.contains(&n))).collect();
        let wall: i64 = counted.iter().map(|p| p.wall_ns()).sum();
        let cp = &rank["critical_path"];
        assert_eq!(cp["wall_us"].as_f64().unwrap(), wall as f64 / 1e3, "{file}");
        let mut total = 0.0;
        for c in BoundBy::ALL {
            let ns: i64 = counted.iter().map(|p| p.shares[c.index()]).sum();
            let pct = cp["shares_pct"][c.as_str()].as_f64().unwrap();
            assert!((pct - 100.0 * ns as f64 / wall as f64).abs() < 1e-9, "{file} {}", c.as_str());
            total += pct;
        }
        assert!((total - 100.0).abs() < 1e-6, "{file}: shares sum to {total}");
        bounds.push(cp["bound_by"].as_str().unwrap().to_owned());
    }
    bounds.sort();
    // As HTA's oracle for these ranks: 1 and 3 waited in the all-to-all (46.6% and 38.2% of
    // their paths), 0 and 2 are bound by their own ops (44.0% and 53.3%).
    assert_eq!(bounds, ["cpu_op", "cpu_op", "gpu_communication", "gpu_communication"]);
    // Joined at the collectives, the waits are the last arriver's path: rank 2 (the run's
    // straggler) arrived last at every collective the others' paths waited in (2.1, 3.8 and
    // 3.8 ms), so every rank's joined path is bound by host ops, as rank 2's own is.
    assert_eq!(run["stragglers"][0]["rank"], 2);
    for rank in run["ranks"].as_array().unwrap() {
        let (own, j) = (&rank["critical_path"], &rank["joined_path"]);
        assert_eq!(j["bound_by"], "cpu_op", "{}", rank["rank"]);
        let total: f64 = BoundBy::ALL.iter().map(|c| j["shares_pct"][c.as_str()].as_f64().unwrap()).sum();
        assert!((total - 100.0).abs() < 1e-6, "joined shares sum to {total}");
        let waited = j["waited_us"].as_f64().unwrap();
        let moved = own["shares_pct"]["gpu_communication"].as_f64().unwrap() - j["shares_pct"]["gpu_communication"].as_f64().unwrap();
        assert!((moved / 100.0 * own["wall_us"].as_f64().unwrap() - waited).abs() < 1e-3, "{}: {moved}% moved, {waited} µs waited", rank["rank"]);
        let on: Vec<u64> = j["waited_on"].as_array().unwrap().iter().map(|w| w["rank"].as_u64().unwrap()).collect();
        assert_eq!(on, if rank["rank"] == 2 { vec![] } else { vec![2] }, "{}", rank["rank"]);
    }
    for s in run["stragglers"].as_array().unwrap() {
        let why: Vec<&str> = s["why"]["kernels"].as_array().unwrap().iter().chain(s["why"]["ops"].as_array().unwrap()).map(|k| k["name"].as_str().unwrap()).collect();
        for on in s["why_on_path"].as_array().unwrap() {
            assert!(why.contains(&on["name"].as_str().unwrap()) && on["on_path_us"].as_f64().unwrap() > 0.0);
        }
    }
}

/// The page's answers (`Query::CriticalPath`, `Query::PathSegments`, `Query::WhatIf`) carry
/// the numbers of `report --json`'s `critical_path` and `what_if` on a real trace: the same
/// steps, shares and bound-by classes, each step's shares summing to its wall time; a step's
/// segments lie inside it and hold its top events, a window's only what overlaps it, capped;
/// a what-if from the session's cached graphs equals one from freshly built graphs, and a bad
/// edit is an error sentence, not a failed query.
#[test]
fn the_page_answers_equal_the_report() {
    use kinetoscope::analysis::critical_path::CriticalPaths;
    use protocol::{Answer, Query};
    let mut engine = common::load_real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let Answer::CriticalPath(data) = engine.query(&Query::CriticalPath).unwrap().0 else { panic!("not a path") };
    let paths = engine.session().unwrap().critical_paths().to_vec();
    assert_eq!(data.classes, BoundBy::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>());
    assert_eq!(data.steps.len(), paths.len());
    assert!(paths.len() >= 2);
    for (w, p) in data.steps.iter().zip(&paths) {
        assert_eq!((w.step, w.start_ns, w.end_ns), (p.step, p.start_ns, p.end_ns));
        assert_eq!(w.shares_ns, p.shares.to_vec());
        assert_eq!(w.shares_ns.iter().sum::<i64>(), p.wall_ns());
        assert_eq!(w.bound_by, p.bound_by().as_str());
        let query = Query::PathSegments { step: p.step, start_ns: p.start_ns, end_ns: p.end_ns };
        let Answer::PathSegments(seg) = engine.query(&query).unwrap().0 else { panic!("not segments") };
        assert_eq!(seg.steps.len(), 1);
        let segments = &seg.steps[0].segments;
        assert!(!segments.is_empty());
        assert!(segments.iter().all(|s| s.start_ns >= p.start_ns && s.end_ns <= p.end_ns && s.start_ns < s.end_ns));
        assert!(segments.windows(2).all(|s| s[0].end_ns <= s[1].start_ns), "time order");
        let on_path: i64 = p.segments.iter().filter(|s| s.slice != kinetoscope::model::NONE).map(|s| s.end_ns - s.start_ns).sum();
        let kept: i64 = segments.iter().map(|s| s.end_ns - s.start_ns).sum();
        if seg.dropped == 0 {
            assert_eq!(kept, on_path, "merged, none dropped");
        } else {
            assert!(segments.len() == protocol::MAX_PATH_SEGMENTS && kept < on_path);
        }
        for e in &p.top {
            assert!(segments.iter().any(|s| s.slice == e.slice), "top event {} is sent", e.slice);
        }
        assert!(segments.iter().all(|s| seg.names.get(s.name as usize).is_some()));
    }
    // Every step in a window of the first two steps' boundary: both steps, only what overlaps.
    let (a, b) = (paths[0].end_ns - 1_000_000, paths[1].start_ns + 1_000_000);
    let Answer::PathSegments(seg) = engine.query(&Query::PathSegments { step: None, start_ns: a, end_ns: b }).unwrap().0 else {
        panic!("not segments")
    };
    assert_eq!(seg.steps.iter().map(|s| s.step).collect::<Vec<_>>(), [paths[0].step, paths[1].step]);
    assert!(seg.steps.iter().flat_map(|s| &s.segments).all(|s| s.start_ns < b && s.end_ns > a));
    assert!(seg.steps.iter().all(|s| !s.segments.is_empty()));
    let edits = ["launch=0", "gemm*0.5"];
    let Answer::WhatIf(w) = engine.query(&Query::WhatIf { edits: edits.iter().map(|e| e.to_string()).collect() }).unwrap().0 else {
        panic!("not a what-if")
    };
    assert_eq!(w.error, None);
    let parsed: Vec<Edit> = edits.iter().map(|e| e.parse().unwrap()).collect();
    let session = engine.session().unwrap();

    let fresh = CriticalPaths::build(session.trace(), session.whole_steps()).what_if(session.trace(), &parsed);
    let report = kinetoscope::report::critical_path::what_if_json(session.trace(), &parsed, session.critical_paths(), &fresh);
    for (w, r) in w.steps.iter().zip(report["steps"].as_array().unwrap()) {
        assert_eq!(w.after_ns as f64 / 1000.0, r["after_us"].as_f64().unwrap());
        assert_eq!(w.before_ns as f64 / 1000.0, r["before_us"].as_f64().unwrap());
        assert_eq!(w.bound_by_after, r["bound_by_after"].as_str().unwrap());
    }
    assert!(w.steps.iter().any(|s| s.after_ns < s.before_ns), "launch=0 shortens a step");
    let Answer::WhatIf(bad) = engine.query(&Query::WhatIf { edits: vec!["gemm*fast".into()] }).unwrap().0 else { panic!() };
    assert!(bad.error.as_deref().is_some_and(|e| e.contains("gemm*fast")), "{:?}", bad.error);
    assert!(bad.steps.is_empty());
}

/// The explanation of a slow step says what its path is bound by against the median step's.
#[test]
fn the_explanation_contrasts_the_paths() {
    let engine = common::load_real("kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz");
    let session = engine.session().unwrap();
    let e = session.explain(kinetoscope::analysis::explain::Which::Slowest).unwrap();
    let p = e.path.clone().expect("a path contrast");
    let mine = session.critical_paths().iter().find(|q| q.step == Some(e.step)).unwrap();
    assert_eq!(p.bound_by, mine.bound_by());
    assert!((p.share - mine.shares[p.bound_by.index()] as f64 / mine.wall_ns() as f64).abs() < 1e-12);
    let lines = kinetoscope::analysis::explain::sentences(&e);
    let line = lines.iter().find(|l| l.starts_with("Its critical path is ")).expect("the path sentence");
    assert!(line.contains(p.bound_by.label()) && line.contains("(median step: "), "{line}");
}
