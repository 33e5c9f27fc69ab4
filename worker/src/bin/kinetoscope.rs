//! `kinetoscope` CLI: arguments -> a loaded [`Session`] -> the library's report -> stdout.
//! Every analysis and its rendering live in the library (`report`), so the CLI and the page
//! read the same session code; this file only parses arguments, reads files and times loads.
//!
//! Exit codes: 0 ok, 1 the input could not be loaded, 2 usage error (clap's, with a hint).
//! `diff --fail-if`: 1 means a gate failed (its reason on one line), so unreadable inputs and
//! gates that cannot be evaluated exit 2 there.
//! `kinetoscope help COMMAND` or `COMMAND --help` documents each command (docs/cli.md too).

// The CLI is where files, clocks and threads belong (worker/clippy.toml keeps them out of the engine).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

#[path = "kinetoscope/args.rs"]
mod args;
#[path = "kinetoscope/bench.rs"]
mod bench;
#[path = "kinetoscope/read.rs"]
mod read;

use args::{Cli, Command};
use clap::{CommandFactory, Parser};
use kinetoscope::analysis::explain::Which;
use kinetoscope::analysis::work::peaks::Peaks;
use kinetoscope::engine::Engine;
use kinetoscope::report::diff::{DiffOptions, DiffReport};
use kinetoscope::report::gate::Gate;
use kinetoscope::report::schema::{self, Schema};
use kinetoscope::report::trace::{ReportOptions, TraceReport};
use kinetoscope::report::throughput::{self, Workload};
use kinetoscope::session::Session;
use protocol::TraceSummary;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info { trace, json } => info(&trace, json),
        Command::Report {
            trace,
            step,
            range,
            by_shape,
            sort,
            top,
            name_width,
            explain_step,
            step_marker,
            json,
            format,
            viewer_url,
            gpu_peak,
            batch_size,
            tokens_per_step,
            tree,
            min_pct,
            critical_path,
            phases,
            modules,
            depth,
            what_if,
            memory,
            roofline,
        } => {
            let options = ReportOptions { range: None, by_shape, sort, top, name_width };
            let explain = Explain { step: explain_step, marker: step_marker, viewer_url, gpu_peak, workload: Workload { batch_size, tokens_per_step }, tree: tree.then_some(min_pct), critical_path, phases, modules: modules.then_some(depth), what_if, memory, roofline };
            report(&trace, step, range, options, explain, Format::of(json, format.as_deref()))
        }
        Command::Diff { base, cand, by_shape, sort, top, json, format, fail_if, tree, min_pct } => {
            let (op_sort, kernel_sort) = sort.unwrap_or((None, None));
            let options = DiffOptions { by_shape, op_sort, kernel_sort, top, tree: tree.then_some(min_pct) };
            return diff(&base, &cand, options, Format::of(json, format.as_deref()), &fail_if);
        }
        Command::Run { paths, json, format, threads } => run(&paths, json, format.as_deref(), threads),
        Command::Export { paths, format: _, step_marker } => export(&paths, step_marker.as_deref()),
        Command::Serve { logdir, port, host, site } => serve(logdir.as_deref(), std::net::SocketAddr::new(host, port), site.as_deref()),
        Command::Publish { logdir, out, site, keep } => publish(&logdir, &out, site.as_deref(), keep),
        Command::Bench { trace, runs, threads, python } => bench::streamed(&trace, runs, threads.into(), python.as_deref())
            .and_then(|()| read(&trace))
            .and_then(|raw| bench::run(&trace, &raw, runs, threads.into())),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "kinetoscope", &mut std::io::stdout());
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("kinetoscope: {msg}");
            ExitCode::from(1)
        }
    }
}

/// An input that could not be read or loaded, as one line.
type Failure = String;

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| format!("cannot read {path:?}: {e}"))
}

/// Reads and loads `path` into a session; the summary's `parse_ms` is the load's wall time.
fn load(path: &Path) -> Result<(Arc<Session>, TraceSummary), Failure> {
    load_marked(path, None)
}

/// [`load`] with steps marked by `marker` instead of `ProfilerStep#N`.
fn load_marked(path: &Path, marker: Option<String>) -> Result<(Arc<Session>, TraceSummary), Failure> {
    let name = if read::is_stdin(path) { "stdin".into() } else { path.file_name().map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy()).into_owned() };
    let shown = if read::is_stdin(path) { name.clone() } else { path.display().to_string() };
    let mut engine = Engine::new();
    engine.set_step_marker(marker);
    let started = Instant::now();
    // Read and parsed piece by piece, on every core: the JSON is never held whole.
    let mut summary = read::load_file(&mut engine, &name, path, read::cores()).map_err(|e| format!("{shown}: {e}"))?;
    summary.parse_ms = started.elapsed().as_secs_f64() * 1000.0;
    let session = engine.session().cloned().ok_or_else(|| format!("{shown}: no trace loaded"))?;
    Ok((session, summary))
}

/// Prints `body` as a `schema` document (the contract keys first, docs/schema/).
fn print_json(schema: Schema, body: &impl serde::Serialize) -> Result<(), Failure> {
    println!("{}", schema::to_json(schema, body).map_err(|e| e.to_string())?);
    Ok(())
}

/// `--json` / `--format` of `report` and `diff`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Markdown,
    Html,
}

impl Format {
    /// `--json` wins (clap rejects both together); `--format` values are clap-checked.
    fn of(json: bool, format: Option<&str>) -> Self {
        match (json, format) {
            (true, _) | (_, Some("json")) => Self::Json,
            (_, Some("md")) => Self::Markdown,
            (_, Some("html")) => Self::Html,
            _ => Self::Text,
        }
    }
}

fn info(path: &Path, json: bool) -> Result<(), Failure> {
    let (_, summary) = load(path)?;
    if json {
        return print_json(Schema::Info, &summary);
    }
    print!("{}", kinetoscope::answer::summary::text(&summary));
    Ok(())
}

/// `report`'s step options: the step to explain and the step marker; the viewer URL the
/// HTML form links back to; the GPU peaks given by hand (MFU and %Peak read them).
struct Explain {
    step: Option<Which>,
    marker: Option<String>,
    viewer_url: Option<String>,
    gpu_peak: Option<String>,
    /// `--batch-size` / `--tokens-per-step`: the throughput section and JSON key.
    workload: Workload,
    /// `--tree [--min-pct P]`: the call tree section and JSON key, nodes under P% left out.
    tree: Option<f64>,
    /// `--critical-path`: the text section.
    critical_path: bool,
    /// `--phases`: the text section.
    phases: bool,
    /// `--modules [--depth N]`: the text section, at most N levels below the roots.
    modules: Option<Option<usize>>,
    /// `--what-if` edits.
    what_if: Vec<kinetoscope::analysis::critical_path::Edit>,
    /// `--memory`: the text section on what holds memory.
    memory: bool,
    /// `--roofline`: the text section on the kernels the roofline leaves off.
    roofline: bool,
}

/// `session` with the peaks of `spec` over the table's for its GPU.
fn with_gpu_peaks(session: Arc<Session>, spec: &str) -> Result<Arc<Session>, Failure> {
    let peaks = Peaks::with_overrides(session.work().peaks(), spec).map_err(|e| format!("--gpu-peak {e}"))?;
    let session = Arc::try_unwrap(session).unwrap_or_else(|shared| Session::new(shared.name(), shared.trace().clone()));
    Ok(Arc::new(session.with_peaks(Some(peaks))))
}

fn report(
    path: &Path,
    step: Option<u64>,
    range: Option<(i64, i64)>,
    mut options: ReportOptions,
    explain: Explain,
    format: Format,
) -> Result<(), Failure> {
    let (session, _) = load_marked(path, explain.marker)?;
    let session = match explain.gpu_peak.as_deref() {
        Some(spec) => with_gpu_peaks(session, spec)?,
        None => session,
    };
    let explain_step = explain.step;
    options.range = match step {
        Some(n) => Some(step_range(session.trace(), n)?),
        None => range.map(|r| within_trace(session.trace(), r)).transpose()?,
    };
    let explanation = explain_step.map(|w| session.explain(w)).transpose()?;
    let report = TraceReport::build(&session, options);
    let what_if = (!explain.what_if.is_empty()).then(|| {
        let before = report.paths();
        let graphs = kinetoscope::analysis::critical_path::CriticalPaths::build(session.trace(), &report.steps_analyzed());
        (before, graphs.what_if(session.trace(), &explain.what_if))
    });
    match format {
        Format::Html => {
            // The HTML explains the slowest step unless told which; a trace without complete
            // steps simply has no such section.
            let explanation = explanation.or_else(|| session.explain(Which::Slowest).ok());
            print!("{}", report.html(explanation.as_ref(), explain.viewer_url.as_deref()));
        }
        Format::Json => {
            let mut value = report.json();
            if let (Some(e), Some(map)) = (&explanation, value.as_object_mut()) {
                map.insert("explanation".into(), kinetoscope::report::explain::json(e));
            }
            if let (false, Some(map)) = (explain.workload.is_empty(), value.as_object_mut()) {
                map.insert("throughput".into(), throughput::json(session.trace(), &report.steps_analyzed(), explain.workload));
            }
            if let (Some(min_pct), Some(map)) = (explain.tree, value.as_object_mut()) {
                let tree = kinetoscope::analysis::call_tree::build(session.trace(), options.range);
                map.insert("call_tree".into(), kinetoscope::report::tree::json(session.trace(), &tree, min_pct));
            }
            if let (Some((before, after)), Some(map)) = (&what_if, value.as_object_mut()) {
                let answer = kinetoscope::report::critical_path::what_if_json(session.trace(), &explain.what_if, before, after);
                map.insert("what_if".into(), answer);
            }
            return print_json(Schema::Report, &value);
        }
        Format::Markdown => {
            print!("{}", report.markdown());
            if let Some(e) = &explanation {
                // The explanation is prose plus an aligned table: kept verbatim in a code block.
                print!("\n#### Why this step is slow\n\n```text\n{}```\n", kinetoscope::report::explain::text(e));
            }
        }
        Format::Text => {
            print!("{}", report.text());
            if !explain.workload.is_empty() {
                print!("{}", throughput::text(session.trace(), &report.steps_analyzed(), explain.workload));
            }
            if let Some(min_pct) = explain.tree {
                let tree = kinetoscope::analysis::call_tree::build(session.trace(), options.range);
                print!("{}", kinetoscope::report::tree::text(session.trace(), &tree, min_pct, 67));
            }
            if explain.critical_path {
                print!("{}", kinetoscope::report::critical_path::text(session.trace(), &report.paths(), options.top));
            }
            if explain.phases {
                print!("{}", kinetoscope::report::phases::text(&report.phases()));
            }
            if let Some(depth) = explain.modules {
                let modules = kinetoscope::analysis::modules::analyze(session.trace());
                print!("{}", kinetoscope::report::modules::text(session.trace(), &modules, options.sort, depth, options.name_width));
            }
            if explain.memory {
                print!("{}", report.held_text());
            }
            if explain.roofline {
                print!("{}", report.roofline_text());
            }
            if let Some((before, after)) = &what_if {
                print!("{}", kinetoscope::report::critical_path::what_if_text(session.trace(), &explain.what_if, before, after));
            }
            if let Some(e) = &explanation {
                print!("\n{}", kinetoscope::report::explain::text(e));
            }
        }
    }
    Ok(())
}

/// `--range`, refused when it starts after the trace ends (every table would be empty).
fn within_trace(trace: &kinetoscope::model::Trace, (t0, t1): (i64, i64)) -> Result<(i64, i64), Failure> {
    if t0 >= trace.end_ns {
        let us = |ns: i64| ns as f64 / 1000.0;
        return Err(format!("--range {}:{} starts after the trace ends (it spans 0:{} µs)", us(t0), us(t1), us(trace.end_ns)));
    }
    Ok((t0, t1))
}

/// The span of `ProfilerStep#n`, or a message listing the steps the trace has.
fn step_range(trace: &kinetoscope::model::Trace, n: u64) -> Result<(i64, i64), Failure> {
    let steps = kinetoscope::analysis::steps::profiler_steps(trace);
    let step = steps.iter().find(|s| s.number == n).ok_or_else(|| {
        let known: Vec<String> = steps.iter().map(|s| s.number.to_string()).collect();
        format!("no ProfilerStep#{n} in this trace (steps: {})", known.join(", "))
    })?;
    Ok((step.start_ns, step.end_ns))
}

/// `diff`, printed; with `gates`, exit 1 when one fails (reasons on one stderr line) and 2
/// when an input cannot be read or a gate cannot be evaluated.
fn diff(base: &Path, cand: &Path, options: DiffOptions, format: Format, gates: &[(String, Gate)]) -> ExitCode {
    let input_error = if gates.is_empty() { 1 } else { 2 };
    let fail = |code: u8, msg: &str| {
        eprintln!("kinetoscope: {msg}");
        ExitCode::from(code)
    };
    let (base, cand) = match load(base).and_then(|(b, _)| load(cand).map(|(c, _)| (b, c))) {
        Ok(sessions) => sessions,
        Err(msg) => return fail(input_error, &msg),
    };
    let report = DiffReport::build(&base, &cand, options);
    let failed = match report.failed_gates(gates) {
        Ok(failed) => failed,
        Err(e) => return fail(2, &e.to_string()),
    };
    let printed = match format {
        Format::Json => print_json(Schema::Diff, &report.json()),
        Format::Markdown => {
            print!("{}", report.markdown((!gates.is_empty()).then_some((gates.len(), failed.as_slice()))));
            Ok(())
        }
        // clap offers `html` to `report` only.
        Format::Text | Format::Html => {
            print!("{}", report.text());
            Ok(())
        }
    };
    if let Err(msg) = printed {
        return fail(input_error, &msg);
    }
    if failed.is_empty() {
        return ExitCode::SUCCESS;
    }
    fail(1, &format!("--fail-if failed: {}", failed.join("; ")))
}

fn run(paths: &[PathBuf], json: bool, format: Option<&str>, threads: Option<u16>) -> Result<(), Failure> {
    use kinetoscope::run::Format;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = threads.map_or(cores, usize::from);
    if format == Some("parquet") {
        return run_parquet(paths, threads);
    }
    let format = if json { Format::Json } else { format.and_then(Format::parse).unwrap_or(Format::Text) };
    let out = kinetoscope::run::run_files(paths, threads, format).map_err(|e| e.to_string())?;
    print!("{out}");
    if !out.ends_with('\n') {
        println!();
    }
    Ok(())
}

/// `run --format parquet`: the last path is the output folder.
fn run_parquet(paths: &[PathBuf], threads: usize) -> Result<(), Failure> {
    use kinetoscope::export::parquet::{run, Sink};
    let (inputs, dir) = inputs_and_dir(paths, "run PATHS... --format parquet DIR")?;
    let runs = kinetoscope::run::load::analyze_files(inputs, threads).map_err(|e| e.to_string())?;
    let mut sink = Sink::create(dir, &run::TABLES)?;
    sink.append(&run::tables(&runs))?;
    let rows = sink.finish()?;
    eprintln!("wrote {}: {}", dir.display(), rows_text(&rows));
    Ok(())
}

/// `steps 12 rows, collectives 96 rows, ...`.
fn rows_text(rows: &[(&str, u64)]) -> String {
    rows.iter().map(|(name, n)| format!("{name} {n} rows")).collect::<Vec<_>>().join(", ")
}

/// The inputs and the output folder (the last path) of a `--format parquet` command.
fn inputs_and_dir<'a>(paths: &'a [PathBuf], usage: &str) -> Result<(&'a [PathBuf], &'a Path), Failure> {
    match paths.split_last() {
        Some((dir, inputs)) if !inputs.is_empty() => Ok((inputs, dir)),
        _ => Err(format!("give the traces, then the output folder: {usage}")),
    }
}

/// `export --format parquet`: each trace loaded in turn, its tables appended to DIR's files.
fn export(paths: &[PathBuf], marker: Option<&str>) -> Result<(), Failure> {
    use kinetoscope::export::parquet::{trace, Sink};
    let (traces, dir) = inputs_and_dir(paths, "export TRACE... --format parquet DIR")?;
    let mut sink = Sink::create(dir, &trace::TABLES)?;
    let (mut load_s, mut export_s) = (0.0, 0.0);
    for path in traces {
        let started = Instant::now();
        let (session, _) = load_marked(path, marker.map(str::to_owned))?;
        let loaded = Instant::now();
        sink.append_each(|name| trace::table(&session, name))?;
        load_s += (loaded - started).as_secs_f64();
        export_s += loaded.elapsed().as_secs_f64();
    }
    let rows = sink.finish()?;
    eprintln!("wrote {}: {} (load {load_s:.2} s, tables {export_s:.2} s)", dir.display(), rows_text(&rows));
    Ok(())
}

/// `serve`: finds the site, binds, prints the URL (stdout, first line) and serves until killed.
fn serve(logdir: Option<&Path>, addr: std::net::SocketAddr, site: Option<&Path>) -> Result<(), Failure> {
    use kinetoscope::serve::{find_site, http, limits::Limits, log_dir, root_name};
    let logs = match logdir {
        Some(dir) => {
            let dir = log_dir(dir)?;
            let steps = kinetoscope::serve::steps::StepCounts::start();
            Some(http::Logs { root_name: root_name(&dir), dir, steps })
        }
        None => None,
    };
    let site = find_site(site, std::env::current_exe().ok().as_deref())?;
    if let (false, Some(logs)) = (addr.ip().is_loopback(), &logs) {
        eprintln!(
            "kinetoscope: warning: listening on {}: the traces under {} are readable by anyone who can reach this port",
            addr.ip(),
            logs.dir.display()
        );
    }
    let served = http::Served { logs, site };
    http::run(served, addr, Limits::default(), |bound| {
        let host = if bound.ip().is_unspecified() { "127.0.0.1".to_owned() } else { bound.ip().to_string() };
        let host = if bound.is_ipv6() && !bound.ip().is_unspecified() { format!("[{host}]") } else { host };
        println!("Kinetoscope at http://{host}:{}/  (Ctrl-C to stop)", bound.port());
        let _ = std::io::Write::flush(&mut std::io::stdout());
    })
}

/// `publish`: the static folder, and a one-line summary on stderr.
fn publish(logdir: &Path, out: &Path, site: Option<&Path>, keep: bool) -> Result<(), Failure> {
    let site = kinetoscope::serve::find_site(site, std::env::current_exe().ok().as_deref())?;
    let done = kinetoscope::serve::publish::publish(logdir, &site, out, keep)?;
    eprintln!(
        "wrote {}: {} runs, {} traces ({:.1} MB){}{}; open index.html there on any static host",
        out.display(),
        done.runs,
        done.traces,
        done.bytes as f64 / 1e6,
        if done.unreadable > 0 { format!(", {} unreadable files named in index.json", done.unreadable) } else { String::new() },
        if done.removed > 0 { format!(", {} files no longer in LOGDIR removed", done.removed) } else { String::new() }
    );
    Ok(())
}
