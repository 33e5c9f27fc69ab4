//! `kinetoscope serve` / `publish`: the directory scan (runs, ranks, non-trace JSON skipped,
//! unreadable files named with the reason, a 10,000-file listing timed) and the real server on
//! an ephemeral port (every refused path, Range, gzip passed through, rescans, read-only).
//!
//! Inputs are made here: a synthetic two-rank run (`synth::run`, `distributedInfo` written by
//! construction) and small hand-written files whose kind is known by construction.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use kinetoscope::serve::{http, publish, scan};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};

/// A fresh, empty directory under the system temp dir, removed when dropped.
fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("kinetoscope-serve-{name}-")).tempdir().unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// `LOG/job-a/rank-{0,1}.json` (synthetic run), `LOG/job-b/worker7.pt.trace.json.gz` (rank 2 in
/// `distributedInfo`), `LOG/job-b/worker3.json` (rank from the name), non-trace JSON, a corrupt
/// gzip, a dangling symlink, a symlink to a trace outside, hidden files; and `OUTSIDE/secret.json`.
/// Returns the directory holding both (removed when dropped) and LOG.
fn fixture() -> (tempfile::TempDir, PathBuf) {
    let base = temp_dir("fixture");
    let (log, outside) = (base.path().join("log"), base.path().join("outside"));
    let spec = kinetoscope::synth::run::RunSpec { ranks: 2, world_size: 2, steps: 2, ..Default::default() };
    kinetoscope::synth::run::write_dir(&spec, &log.join("job-a")).unwrap();
    let b = log.join("job-b");
    std::fs::create_dir_all(&b).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let trace = |rank: &str| format!(r#"{{"schemaVersion": 1, "distributedInfo": {{"backend": "nccl", "rank": {rank}, "world_size": 8}}, "traceEvents": [{{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}}]}}"#);
    std::fs::write(b.join("worker7.pt.trace.json.gz"), gzip(trace("2").as_bytes())).unwrap();
    std::fs::write(b.join("worker3.json"), r#"[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]"#).unwrap();
    std::fs::write(b.join("config.json"), r#"{"lr": 0.1, "batch": [1, 2]}"#).unwrap();
    std::fs::write(b.join("run.json"), r#"{"ranks": ["worker3.json"]}"#).unwrap();
    std::fs::write(b.join("notes.txt"), "not a candidate").unwrap();
    std::fs::write(b.join("broken.json.gz"), [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xde, 0xad, 0xbe, 0xef]).unwrap();
    std::os::unix::fs::symlink(b.join("gone.json"), b.join("dangling.json")).unwrap();
    std::fs::write(outside.join("secret.json"), trace("0")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.json"), b.join("escape.json")).unwrap();
    std::os::unix::fs::symlink(&outside, log.join("escape-dir")).unwrap();
    std::fs::create_dir_all(log.join(".cache")).unwrap();
    std::fs::write(log.join(".cache/hidden.json"), trace("5")).unwrap();
    (base, log)
}

#[test]
fn scan_lists_runs_ranks_and_unreadable_files_and_skips_other_json() {
    let (_base, log) = fixture();
    let listing = scan::scan(&log).unwrap();
    /// A run's directory and its traces' paths and ranks.
    type RunRanks<'a> = (&'a str, Vec<(&'a str, Option<u32>)>);
    let runs: Vec<RunRanks> = listing
        .runs
        .iter()
        .map(|r| (r.dir.as_str(), r.traces.iter().map(|t| (t.path.as_str(), t.rank)).collect()))
        .collect();
    let mut sorted = runs.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec![
            ("job-a", vec![("job-a/rank-0.json", Some(0)), ("job-a/rank-1.json", Some(1))]),
            ("job-b", vec![("job-b/worker7.pt.trace.json.gz", Some(2)), ("job-b/worker3.json", Some(3))]),
        ],
        "two runs; config.json, run.json, notes.txt, hidden and symlinked directories left out"
    );
    let trace = &listing.runs.iter().find(|r| r.dir == "job-b").unwrap().traces[0];
    assert_eq!(trace.size, std::fs::metadata(log.join("job-b/worker7.pt.trace.json.gz")).unwrap().len());
    assert!(trace.mtime_ms > 1_600_000_000_000, "mtime in ms since the epoch");
    let unreadable: Vec<(&str, &str)> = listing.unreadable.iter().map(|u| (u.path.as_str(), u.reason.as_str())).collect();
    assert_eq!(unreadable.len(), 3, "{unreadable:?}");
    assert!(unreadable[0].0 == "job-b/broken.json.gz" && unreadable[0].1.contains("gzip"), "{unreadable:?}");
    assert!(unreadable[1].0 == "job-b/dangling.json" && unreadable[1].1.contains("symlink"), "{unreadable:?}");
    assert!(unreadable[2].0 == "job-b/escape.json" && unreadable[2].1.contains("outside"), "{unreadable:?}");
}

#[test]
fn scan_sorts_runs_newest_first() {
    let dir = temp_dir("order");
    let log = dir.path();
    for (dir, age_s) in [("old", 3600), ("new", 0), ("mid", 60)] {
        std::fs::create_dir_all(log.join(dir)).unwrap();
        let path = log.join(dir).join("t.json");
        std::fs::write(&path, r#"{"traceEvents": []}"#).unwrap();
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age_s);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
    }
    let listing = scan::scan(log).unwrap();
    let dirs: Vec<&str> = listing.runs.iter().map(|r| r.dir.as_str()).collect();
    assert_eq!(dirs, ["new", "mid", "old"]);
}

#[test]
fn scan_of_10000_files_is_fast() {
    let dir = temp_dir("many");
    let log = dir.path();
    let body = r#"{"distributedInfo": {"rank": 0}, "traceEvents": [{"ph": "i", "name": "x", "ts": 1}]}"#;
    for run in 0..100 {
        let dir = log.join(format!("run-{run:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for rank in 0..100 {
            std::fs::write(dir.join(format!("rank-{rank}.pt.trace.json")), body).unwrap();
        }
    }
    let started = std::time::Instant::now();
    let listing = scan::scan(log).unwrap();
    let elapsed = started.elapsed();
    let index = kinetoscope::serve::index::index(&listing, "many").to_string();
    let with_json = started.elapsed();
    println!("scan of 10,000 files in 100 runs: {:.1} ms (with index.json: {:.1} ms, {} bytes)", elapsed.as_secs_f64() * 1e3, with_json.as_secs_f64() * 1e3, index.len());
    assert_eq!(listing.runs.len(), 100);
    assert_eq!(listing.runs.iter().map(|r| r.traces.len()).sum::<usize>(), 10_000);
}

/// A server on an ephemeral port over `log`, with a one-file site next to it (so it lives as long
/// as the fixture's directory).
fn start(log: &Path) -> SocketAddr {
    let site = log.with_file_name("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("index.html"), "<!doctype html><title>site</title>").unwrap();
    let steps = kinetoscope::serve::steps::StepCounts::start();
    let served = http::Served { logdir: log.canonicalize().unwrap(), root_name: "log".into(), site, steps };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || http::run(served, "127.0.0.1:0".parse().unwrap(), |addr| tx.send(addr).unwrap()));
    rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap()
}

/// A raw HTTP/1.1 request (the path is sent exactly as given: no client normalizes it).
fn request(addr: SocketAddr, method: &str, path: &str, headers: &str) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{headers}\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head, raw[split + 4..].to_vec())
}

fn get(addr: SocketAddr, path: &str) -> (u16, String, Vec<u8>) {
    request(addr, "GET", path, "")
}

#[test]
fn every_escaping_path_is_refused() {
    let (_base, log) = fixture();
    let addr = start(&log);
    assert_eq!(get(addr, "/logs/job-b/worker3.json").0, 200, "a trace under LOGDIR is served");
    let refused = [
        ("/logs/../outside/secret.json", 400),
        ("/logs/job-b/../../outside/secret.json", 400),
        ("/logs/%2e%2e/outside/secret.json", 400),
        ("/logs/%2E%2E/%2e%2e/outside/secret.json", 400),
        ("/logs/job-b%2f..%2f..%2foutside%2fsecret.json", 400),
        ("/logs/..%5c..%5coutside%5csecret.json", 400),
        ("/logs//etc/passwd", 400),
        ("/logs/%2fetc%2fpasswd", 400),
        ("/logs/job-b/escape.json", 403),
        ("/logs/escape-dir/secret.json", 403),
        ("/logs/job-b/config.json", 403),
        ("/logs/job-b/notes.txt", 403),
        ("/logs/job-b/missing.json", 404),
    ];
    for (path, status) in refused {
        let (got, _, body) = get(addr, path);
        assert_eq!(got, status, "{path}: {}", String::from_utf8_lossy(&body));
        assert!(!String::from_utf8_lossy(&body).contains("traceEvents"), "{path} leaked a trace");
    }
    for path in ["/../outside/secret.json", "/%2e%2e/outside/secret.json", "/..%2foutside%2fsecret.json"] {
        let (got, _, body) = get(addr, path);
        assert!(got >= 400, "{path}: the site must not serve it either ({got})");
        assert!(!String::from_utf8_lossy(&body).contains("traceEvents"), "{path} leaked a trace");
    }
    assert_eq!(get(addr, "/logs/escape-dir/run.json").0, 403, "a run manifest of a directory outside");
}

#[test]
fn the_server_is_read_only() {
    let (_base, log) = fixture();
    let addr = start(&log);
    for method in ["POST", "PUT", "DELETE"] {
        for path in ["/logs/job-b/worker3.json", "/index.json", "/index.html"] {
            let (status, _, _) = request(addr, method, path, "Content-Length: 0\r\n");
            assert_eq!(status, 405, "{method} {path}");
        }
    }
    assert!(log.join("job-b/worker3.json").exists());
}

#[test]
fn traces_stream_with_range_and_gzip_as_stored() {
    let (_base, log) = fixture();
    let addr = start(&log);
    let stored = std::fs::read(log.join("job-b/worker7.pt.trace.json.gz")).unwrap();
    let (status, head, body) = get(addr, "/logs/job-b/worker7.pt.trace.json.gz");
    assert_eq!(status, 200);
    assert_eq!(body, stored, "gzip passed through as stored");
    assert!(!head.to_ascii_lowercase().contains("content-encoding"), "{head}");
    assert!(head.to_ascii_lowercase().contains("accept-ranges: bytes"), "{head}");
    let (status, head, body) = request(addr, "GET", "/logs/job-b/worker7.pt.trace.json.gz", "Range: bytes=2-11\r\n");
    assert_eq!(status, 206, "{head}");
    assert_eq!(body, stored[2..12]);
    let (status, _, body) = request(addr, "HEAD", "/logs/job-a/rank-0.json", "");
    assert_eq!((status, body.len()), (200, 0));
}

#[test]
fn listing_and_run_manifests_follow_the_directory() {
    let (_base, log) = fixture();
    let addr = start(&log);
    let (status, head, body) = get(addr, "/index.json");
    assert_eq!(status, 200);
    assert!(head.to_ascii_lowercase().contains("no-store"), "{head}");
    let index: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(index["runs"].as_array().unwrap().len(), 2);
    assert_eq!(index["unreadable"].as_array().unwrap().len(), 3);
    let (status, _, body) = get(addr, "/logs/job-a/run.json");
    assert_eq!(status, 200);
    let ranks = kinetoscope::ranks::manifest::manifest(&String::from_utf8_lossy(&body)).unwrap();
    assert_eq!(ranks.iter().map(|r| (r.url.as_str(), r.rank)).collect::<Vec<_>>(), [("rank-0.json", Some(0)), ("rank-1.json", Some(1))]);
    // A trace written while serving appears on the next listing.
    std::fs::create_dir_all(log.join("job-c")).unwrap();
    std::fs::write(log.join("job-c/rank-0.json"), r#"{"traceEvents": []}"#).unwrap();
    let index: serde_json::Value = serde_json::from_slice(&get(addr, "/index.json").2).unwrap();
    assert_eq!(index["runs"][0]["name"], "job-c", "newest first");
    // Step counts arrive from the background: the synthetic run has 2 steps per rank.
    let steps_of_job_a = || {
        let index: serde_json::Value = serde_json::from_slice(&get(addr, "/index.json").2).unwrap();
        let run = index["runs"].as_array().unwrap().iter().find(|r| r["name"] == "job-a").unwrap().clone();
        run["traces"][0]["steps"].as_u64()
    };
    let mut steps = steps_of_job_a();
    for _ in 0..100 {
        if steps.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        steps = steps_of_job_a();
    }
    assert_eq!(steps, Some(2));
    assert_eq!(get(addr, "/").0, 200, "the site");
}

#[test]
fn publish_writes_the_same_layout() {
    let (_base, log) = fixture();
    let site_dir = temp_dir("pubsite");
    let site = site_dir.path();
    std::fs::create_dir_all(site.join("public")).unwrap();
    std::fs::write(site.join("index.html"), "<!doctype html>").unwrap();
    std::fs::write(site.join("public/demo.json"), "{}").unwrap();
    let out_dir = temp_dir("out");
    let out = out_dir.path().join("team");
    let done = publish::publish(&log, site, &out).unwrap();
    assert_eq!((done.runs, done.traces, done.unreadable), (2, 4, 3));
    assert!(out.join("index.html").is_file() && out.join("public/demo.json").is_file());
    assert_eq!(std::fs::read(out.join("logs/job-b/worker7.pt.trace.json.gz")).unwrap(), std::fs::read(log.join("job-b/worker7.pt.trace.json.gz")).unwrap());
    let index: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    for run in index["runs"].as_array().unwrap() {
        assert!(out.join(run["manifest"].as_str().unwrap()).is_file(), "{run}");
        for trace in run["traces"].as_array().unwrap() {
            assert!(out.join(trace["url"].as_str().unwrap()).is_file(), "{trace}");
        }
    }
    assert!(!out.join("logs/job-b/config.json").exists(), "non-trace files are not published");
    let job_a = index["runs"].as_array().unwrap().iter().find(|r| r["name"] == "job-a").unwrap();
    assert_eq!(job_a["traces"][1]["steps"], 2, "publish counts steps");
    let inside = publish::publish(&log, site, &log.join("site")).unwrap_err();
    assert!(inside.contains("inside"), "{inside}");
}
