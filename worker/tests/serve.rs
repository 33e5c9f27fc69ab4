//! `kinetoscope serve` / `publish`: the directory scan (runs, ranks, non-trace JSON skipped,
//! unreadable files named with the reason, a 10,000-file listing timed) and the real server on
//! an ephemeral port (every refused path, Range, gzip passed through, rescans, read-only).
//!
//! Inputs are made here: a synthetic two-rank run (`synth::run`, `distributedInfo` written by
//! construction) and small hand-written files whose kind is known by construction.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use kinetoscope::serve::limits::Limits;
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

/// A small site next to `log` (so it lives as long as the fixture's directory): `index.html` and
/// `public/demo.json`.
fn site_beside(log: &Path) -> PathBuf {
    let site = log.with_file_name("site");
    std::fs::create_dir_all(site.join("public")).unwrap();
    std::fs::write(site.join("index.html"), "<!doctype html><title>site</title>").unwrap();
    std::fs::write(site.join("public/demo.json"), "{}").unwrap();
    site
}

/// A server on an ephemeral port over `log`, with [`site_beside`] it.
fn start(log: &Path) -> SocketAddr {
    start_within(log, Limits::default())
}

/// [`start`] with other connection limits.
fn start_within(log: &Path, limits: Limits) -> SocketAddr {
    let site = site_beside(log);
    let steps = kinetoscope::serve::steps::StepCounts::start();
    let logs = http::Logs { dir: log.canonicalize().unwrap(), root_name: "log".into(), steps };
    let served = http::Served { logs: Some(logs), site };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || http::run(served, "127.0.0.1:0".parse().unwrap(), limits, |addr| tx.send(addr).unwrap()));
    rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap()
}

/// A raw HTTP/1.1 request (the path is sent exactly as given: no client normalizes it).
fn request(addr: SocketAddr, method: &str, path: &str, headers: &str) -> (u16, String, Vec<u8>) {
    send(addr, &format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{headers}\r\n"))
}

/// Sends `text` as is and reads the answer to its end: status, head, body. A server that does
/// not answer within 10 s fails the test instead of hanging it.
fn send(addr: SocketAddr, text: &str) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    stream.write_all(text.as_bytes()).unwrap();
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
fn without_a_log_directory_only_the_site_is_served() {
    let (_base, log) = fixture();
    let site = site_beside(&log);
    let served = http::Served { logs: None, site };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || http::run(served, "127.0.0.1:0".parse().unwrap(), Limits::default(), |a| tx.send(a).unwrap()));
    let addr = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    assert_eq!(get(addr, "/").0, 200, "the site");
    assert!(!String::from_utf8_lossy(&get(addr, "/").2).contains("kinetoscope-gallery"), "a page without a listing asks for none");
    assert_eq!(get(addr, "/public/demo.json").0, 200, "the demo beside it");
    // No listing, so the page opens its demo; no trace of the directory is reachable.
    assert_eq!(get(addr, "/index.json").0, 404);
    assert_eq!(get(addr, "/logs/job-b/worker3.json").0, 404);
    let (_, head, _) = get(addr, "/");
    assert!(head.to_ascii_lowercase().contains("x-content-type-options: nosniff"), "the security headers: {head}");
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
    // The page is marked as having a listing, at / and /index.html alike.
    let marked = format!("{}<!doctype html><title>site</title>", kinetoscope::serve::page::GALLERY_META);
    for path in ["/", "/index.html"] {
        let (status, head, body) = get(addr, path);
        assert_eq!((status, String::from_utf8_lossy(&body).into_owned()), (200, marked.clone()), "{path}");
        assert!(head.to_ascii_lowercase().contains("text/html"), "{head}");
    }
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
    let done = publish::publish(&log, site, &out, false).unwrap();
    assert_eq!((done.runs, done.traces, done.unreadable), (2, 4, 3));
    assert!(out.join("index.html").is_file() && out.join("public/demo.json").is_file());
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(page, format!("{}<!doctype html>", kinetoscope::serve::page::GALLERY_META), "the published page asks for its listing");
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
    let inside = publish::publish(&log, site, &log.join("site"), false).unwrap_err();
    assert!(inside.contains("inside"), "{inside}");
}

/// `kinetoscope serve ARGS` in a child process, killed when dropped; stderr's lines arrive on
/// `stderr` as they are written.
struct ServeProcess {
    child: std::process::Child,
    stderr: std::sync::mpsc::Receiver<String>,
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `kinetoscope serve LOG --port 0 --site SITE` (under `ulimit -n` when given) and waits for
/// the URL it prints: the server and its address, or the process and `None` when it exited first.
fn spawn_serve(log: &Path, site: &Path, max_files: Option<u32>) -> (ServeProcess, Option<SocketAddr>) {
    use std::io::BufRead;
    let limit = max_files.map_or_else(String::new, |n| format!("ulimit -n {n} && "));
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{limit}exec \"$0\" serve \"$1\" --port 0 --site \"$2\""))
        .args([Path::new(env!("CARGO_BIN_EXE_kinetoscope")), log, site])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut served = ServeProcess { child, stderr: std::sync::mpsc::channel().1 };
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = served.child.stderr.take().unwrap();
    std::thread::spawn(move || std::io::BufReader::new(stderr).lines().map_while(Result::ok).try_for_each(|line| tx.send(line)));
    served.stderr = rx;
    let mut first = String::new();
    std::io::BufReader::new(served.child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let addr = first.split("http://").nth(1).and_then(|rest| rest.split('/').next()).map(|a| a.parse().unwrap());
    (served, addr)
}

/// `kinetoscope serve` aborted when it ran out of file descriptors: the accept loop's back-off
/// needed a timer the runtime was built without. Under `ulimit -n 64`, 100 connections make
/// accept fail; once they close, the same process answers again (issue 48).
#[test]
fn r48_running_out_of_file_descriptors_is_survived() {
    let (_base, log) = fixture();
    let site = site_beside(&log);
    let (mut server, addr) = spawn_serve(&log, &site, Some(64));
    let addr = addr.expect("the server started");
    let held: Vec<TcpStream> = (0..100).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut log_lines = Vec::new();
    while std::time::Instant::now() < deadline && server.child.try_wait().unwrap().is_none() {
        if let Ok(line) = server.stderr.recv_timeout(std::time::Duration::from_millis(100)) {
            let accept_failed = line.contains("cannot accept");
            log_lines.push(line);
            if accept_failed {
                break;
            }
        }
    }
    drop(held);
    assert_eq!(server.child.try_wait().unwrap(), None, "the server died: {log_lines:?}");
    assert!(log_lines.iter().any(|l| l.contains("cannot accept")), "accept never failed (is the limit applied?): {log_lines:?}");
    assert_eq!(get(addr, "/index.json").0, 200);
    assert_eq!(get(addr, "/logs/job-b/worker3.json").0, 200);
}

/// `serve FILE` (a file, not a directory) started a server that listed nothing; it is an
/// error with a sentence and exit code 1 (issue 48).
#[test]
fn r48_serve_of_a_file_is_an_error() {
    let (_base, log) = fixture();
    let site = site_beside(&log);
    let (mut server, addr) = spawn_serve(&log.join("job-b/worker3.json"), &site, None);
    assert_eq!(addr, None, "a server started over a file");
    let status = server.child.wait().unwrap();
    let stderr: Vec<String> = server.stderr.iter().collect();
    assert_eq!(status.code(), Some(1), "{stderr:?}");
    assert!(stderr.iter().any(|l| l.contains("is not a directory")), "{stderr:?}");
}

/// Hidden files were served though the listing hides them (issue 48): any `/logs/` segment
/// starting with `.` is 404, encoded or not.
#[test]
fn r48_hidden_paths_are_refused() {
    let (_base, log) = fixture();
    std::fs::write(log.join("job-b/.hidden.json"), r#"{"traceEvents": [{"ph": "i", "name": "h", "ts": 1}]}"#).unwrap();
    std::fs::create_dir_all(log.join(".hiddendir")).unwrap();
    std::fs::write(log.join(".hiddendir/t.json"), r#"{"traceEvents": [{"ph": "i", "name": "h", "ts": 1}]}"#).unwrap();
    let addr = start(&log);
    for path in ["/logs/job-b/.hidden.json", "/logs/.hiddendir/t.json", "/logs/.hiddendir/run.json", "/logs/.cache/hidden.json", "/logs/job-b/%2ehidden.json"] {
        let (status, _, body) = get(addr, path);
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body.contains("hidden"), "{path}: a sentence saying why: {body}");
    }
    assert_eq!(get(addr, "/logs/job-b/worker3.json").0, 200, "the server still answers");
}

/// Any Host was accepted, so a page on another site could read every trace through DNS
/// rebinding despite the loopback bind (issue 48). A foreign Host is 421 with a sentence.
#[test]
fn r48_a_foreign_host_is_refused() {
    let (_base, log) = fixture();
    let addr = start(&log);
    let port = addr.port();
    for host in [format!("evil.example:{port}"), "evil.example".into(), format!("localhost.evil.example:{port}"), format!("10.1.2.3:{port}")] {
        let (status, _, body) = send(addr, &format!("GET /logs/job-b/worker3.json HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"));
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 421, "{host}: {body}");
        assert!(body.contains("Host") && !body.contains("traceEvents"), "{host}: {body}");
    }
    let (status, _, _) = send(addr, "GET /index.json HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 400, "no Host at all");
    for host in [format!("localhost:{port}"), "LOCALHOST".into(), format!("127.0.0.1:{port}"), "127.0.0.1".into(), format!("[::1]:{port}")] {
        let (status, _, _) = send(addr, &format!("GET /logs/job-b/worker3.json HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"));
        assert_eq!(status, 200, "{host}");
    }
}

/// `//public` answered a redirect to `//public/`, which a browser reads as the host `public`
/// (issue 48). Every redirect stays on this origin: its Location starts with a single `/`.
#[test]
fn r48_redirects_stay_on_this_origin() {
    let (_base, log) = fixture();
    let addr = start(&log);
    for path in ["//public", "///public", "//public?x=1", "/%2fpublic", "/\\public"] {
        let (status, head, _) = get(addr, path);
        let location = head.lines().find_map(|l| l.strip_prefix("location: ").or_else(|| l.strip_prefix("Location: ")));
        assert!(
            location.is_none_or(|l| l.starts_with('/') && !l.starts_with("//") && !l.starts_with("/\\")),
            "{path}: {status} to {location:?}"
        );
        assert!(status < 500, "{path}: {status}");
    }
    let (status, head, _) = get(addr, "/public");
    assert!((300..400).contains(&status) && head.to_ascii_lowercase().contains("location: /public/"), "{head}");
    assert_eq!(get(addr, "/public/demo.json").0, 200, "the server still answers");
}

/// There were no security headers, only index.html's meta tag (issue 48). Every response
/// (site file, trace, listing, refusal) carries them; the policy is index.html's, plus
/// `frame-ancestors`, which a meta tag cannot set.
#[test]
fn r48_security_headers_on_every_response() {
    let (_base, log) = fixture();
    let addr = start(&log);
    let index_html = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../index.html")).unwrap();
    let meta = index_html.split("http-equiv=\"Content-Security-Policy\" content=\"").nth(1).unwrap().split('"').next().unwrap();
    let csp = format!("content-security-policy: {meta}; frame-ancestors 'none'");
    let long = format!("/{}", "a".repeat(10_000));
    for path in ["/index.html", "/logs/job-b/worker3.json", "/index.json", "/logs/job-a/run.json", "/nope.html", "/logs/job-b/missing.json", "/logs/../x.json", long.as_str()] {
        let (status, head, _) = get(addr, path);
        let head = head.to_ascii_lowercase();
        for header in [csp.as_str(), "x-content-type-options: nosniff", "x-frame-options: deny", "referrer-policy: no-referrer"] {
            assert!(head.lines().any(|l| l == header.to_ascii_lowercase()), "{status} {}: no {header:?} in\n{head}", &path[..path.len().min(40)]);
        }
    }
    let (status, head, _) = send(addr, "GET /index.json HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
    assert!(status >= 400 && head.to_ascii_lowercase().contains("x-frame-options: deny"), "{head}");
}

/// A 10,000-character path gave 500 (issue 48): a path or file name longer than any file can
/// have is 414 with a sentence, on the site and under `/logs/`.
#[test]
fn r48_a_very_long_path_is_refused_with_a_sentence() {
    let (_base, log) = fixture();
    let addr = start(&log);
    let name = "a".repeat(300);
    for path in [format!("/{}", "a".repeat(10_000)), format!("/{name}"), format!("/public/{name}.json"), format!("/logs/{}.json", "a".repeat(10_000)), format!("/logs/job-b/{name}.json")] {
        let (status, _, body) = get(addr, &path);
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 414, "{}: {body}", &path[..40]);
        assert!(body.contains("long"), "{body}");
    }
    assert_eq!(get(addr, "/index.html").0, 200, "the server still answers");
}

/// How long `stream` stays open while we send nothing more: the time until the server closes it
/// (EOF, a reset or an answer), or `None` if it is still open after `wait`.
fn closed_within(stream: &mut TcpStream, wait: std::time::Duration) -> Option<std::time::Duration> {
    let started = std::time::Instant::now();
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 1024];
    match stream.read(&mut buf) {
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => None,
        _ => Some(started.elapsed()),
    }
}

/// No connection ever timed out: 2,000 idle ones were held for 22 s (issue 48). One that
/// moves no byte is closed after `Limits::idle` (here with a header timeout far longer).
#[test]
fn r48_an_idle_connection_is_closed() {
    let (_base, log) = fixture();
    let limits = Limits { idle: std::time::Duration::from_millis(500), header_read: std::time::Duration::from_secs(60), ..Limits::default() };
    let addr = start_within(&log, limits);
    let mut idle = TcpStream::connect(addr).unwrap();
    let closed = closed_within(&mut idle, std::time::Duration::from_secs(10)).expect("the idle connection is closed");
    assert!(closed >= std::time::Duration::from_millis(400), "closed after {closed:?}, before the idle time");
    assert_eq!(get(addr, "/index.json").0, 200, "the server still answers");
}

/// A client sending its headers a byte at a time held its connection forever (issue 48): the
/// headers must be complete within `Limits::header_read`, however steadily bytes arrive.
#[test]
fn r48_headers_sent_slowly_time_out() {
    let (_base, log) = fixture();
    let limits = Limits { header_read: std::time::Duration::from_millis(600), idle: std::time::Duration::from_secs(60), ..Limits::default() };
    let addr = start_within(&log, limits);
    let mut slow = TcpStream::connect(addr).unwrap();
    let started = std::time::Instant::now();
    let mut closed = false;
    for byte in b"GET /index.json HTTP/1.1\r\nHost: localhost\r\n".iter().cycle().take(200) {
        if slow.write_all(&[*byte]).is_err() || closed_within(&mut slow, std::time::Duration::from_millis(50)).is_some() {
            closed = true;
            break;
        }
    }
    let elapsed = started.elapsed();
    assert!(closed, "still open after {elapsed:?} of slow headers");
    assert!(elapsed >= std::time::Duration::from_millis(500), "closed after {elapsed:?}, before the header time");
    assert_eq!(get(addr, "/index.json").0, 200, "the server still answers");
}

/// Holding about 1,024 connections killed the server (issue 48). At most
/// `Limits::connections` are served at once; the next waits, is served once one closes, and
/// the server answers after many more.
#[test]
fn r48_connections_beyond_the_limit_wait_and_the_server_recovers() {
    let (_base, log) = fixture();
    let limits = Limits { connections: 4, header_read: std::time::Duration::from_secs(60), idle: std::time::Duration::from_secs(60) };
    let addr = start_within(&log, limits);
    let mut held: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let mut waiting = TcpStream::connect(addr).unwrap();
    waiting.write_all(b"GET /index.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    assert_eq!(closed_within(&mut waiting, std::time::Duration::from_millis(500)), None, "a fifth connection was served");
    held.pop();
    waiting.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    let mut answer = Vec::new();
    waiting.read_to_end(&mut answer).unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&answer));
    drop(held);
    // Fewer than the listen backlog (128 here): more would wait in `connect` itself.
    let many: Vec<TcpStream> = (0..100).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(std::time::Duration::from_millis(200));
    drop(many);
    assert_eq!(get(addr, "/index.json").0, 200, "the server still answers");
}

/// `publish` wrote through symlinks already inside OUT, so files outside OUT were overwritten
/// (issue 48). A link where a file or directory goes is replaced; its target is unchanged.
#[test]
fn r48_publish_never_writes_through_a_symlink_in_out() {
    let (base, log) = fixture();
    let site = site_beside(&log);
    let out = base.path().join("team");
    let victims = base.path().join("victims");
    std::fs::create_dir_all(victims.join("dir")).unwrap();
    for name in ["trace.json", "index.json", "index.html", "run.json", "dir/rank-0.json"] {
        std::fs::write(victims.join(name), "untouched").unwrap();
    }
    std::fs::create_dir_all(out.join("logs/job-b")).unwrap();
    let link = |target: &str, at: &str| std::os::unix::fs::symlink(victims.join(target), out.join(at)).unwrap();
    link("trace.json", "logs/job-b/worker3.json");
    link("index.json", "index.json");
    link("index.html", "index.html");
    link("run.json", "logs/job-b/run.json");
    link("dir", "logs/job-a");
    publish::publish(&log, &site, &out, false).unwrap();
    for name in ["trace.json", "index.json", "index.html", "run.json", "dir/rank-0.json"] {
        assert_eq!(std::fs::read_to_string(victims.join(name)).unwrap(), "untouched", "{name} was written through a link");
    }
    assert_eq!(std::fs::read(out.join("logs/job-b/worker3.json")).unwrap(), std::fs::read(log.join("job-b/worker3.json")).unwrap());
    assert_eq!(std::fs::read(out.join("logs/job-a/rank-0.json")).unwrap(), std::fs::read(log.join("job-a/rank-0.json")).unwrap());
    assert!(!std::fs::symlink_metadata(out.join("logs/job-a")).unwrap().is_symlink(), "the directory link is replaced");
    assert!(std::fs::read_to_string(out.join("index.json")).unwrap().contains("kinetoscope.index"));
}

/// `publish` left an empty OUT behind when it refused (issue 48): an OUT it created, with the
/// parents it created, is removed again; one that existed stays.
#[test]
fn r48_a_refused_publish_leaves_no_out_behind() {
    let (base, log) = fixture();
    let site = site_beside(&log);
    for out in [log.join("site"), log.join("a/b/c"), base.path().join("team/../log/x")] {
        let refused = publish::publish(&log, &site, &out, false).unwrap_err();
        assert!(refused.contains("inside"), "{refused}");
    }
    assert!(!log.join("site").exists() && !log.join("a").exists() && !log.join("x").exists(), "an OUT it created is left");
    assert!(!base.path().join("team").exists(), "a parent it created is left");
    let refused = publish::publish(&log, &site, base.path(), false).unwrap_err();
    assert!(refused.contains("inside"), "LOGDIR inside OUT: {refused}");
    assert!(base.path().is_dir() && log.is_dir(), "an OUT that existed stays");
    let refused = publish::publish(&log.join("job-b/worker3.json"), &site, &base.path().join("team"), false).unwrap_err();
    assert!(refused.contains("not a directory") && !base.path().join("team").exists(), "{refused}");
}

/// `publish` never removed a trace deleted from LOGDIR (issue 48): OUT/logs mirrors LOGDIR,
/// stale traces, manifests and emptied directories removed, unless `keep`.
#[test]
fn r48_publish_mirrors_the_log_directory_unless_kept() {
    let (base, log) = fixture();
    let site = site_beside(&log);
    let (out, kept) = (base.path().join("team"), base.path().join("kept"));
    for dir in [&out, &kept] {
        publish::publish(&log, &site, dir, false).unwrap();
        std::fs::write(dir.join("logs/.htaccess"), "a host's file").unwrap();
    }
    std::fs::remove_file(log.join("job-b/worker3.json")).unwrap();
    std::fs::remove_dir_all(log.join("job-a")).unwrap();
    let done = publish::publish(&log, &site, &out, false).unwrap();
    assert_eq!((done.traces, done.removed), (1, 4), "worker3.json, job-a's two traces and its run.json");
    assert!(!out.join("logs/job-b/worker3.json").exists() && !out.join("logs/job-a").exists());
    assert!(out.join("logs/job-b/worker7.pt.trace.json.gz").is_file() && out.join("logs/job-b/run.json").is_file());
    assert!(out.join("logs/.htaccess").is_file(), "hidden entries are left alone");
    let done = publish::publish(&log, &site, &kept, true).unwrap();
    assert_eq!(done.removed, 0);
    assert!(kept.join("logs/job-b/worker3.json").is_file() && kept.join("logs/job-a/rank-0.json").is_file(), "--keep keeps them");
}
