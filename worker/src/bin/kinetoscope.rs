//! `kinetoscope` CLI: flags -> engine -> text or JSON, exit codes.
//!
//! ```text
//! kinetoscope info TRACE [--json]          trace summary (same numbers as the page)
//! kinetoscope report TRACE [--step N | --range T0:T1] [--by-shape] [--sort KEY] [--top K] [--json]
//! kinetoscope diff BASE CAND [--by-shape] [--sort KEY] [--top K] [--json]
//!                                          compare two traces (verdict, summary, op/kernel diff)
//! kinetoscope bench TRACE [--runs N] [--threads T]   parse+index throughput, one JSON line per run
//! kinetoscope demo OUT                     write the built-in demo trace (gzip)
//! kinetoscope inflate IN OUT --target-mb N repeat a trace along time to N MB
//! ```
//! Exit codes: 0 ok, 1 the input could not be loaded, 2 usage error.

use kinetoscope::engine::Engine;
use protocol::TraceSummary;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage:
  kinetoscope info TRACE [--json]
  kinetoscope report TRACE [--step N | --range T0:T1] [--by-shape] [--sort self_cpu|cpu_total|self_cuda|cuda_total|calls] [--top K] [--json]
  kinetoscope diff BASE CAND [--by-shape] [--sort name|[abs:|delta:]calls|self_cpu|self_cuda|cuda_total|total|mean] [--top K] [--json]
  kinetoscope bench TRACE [--runs N] [--threads T]
  kinetoscope demo OUT
  kinetoscope inflate IN OUT --target-mb N";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("info") => info(&args[1..]),
        Some("report") => report(&args[1..]),
        Some("diff") => diff(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("demo") => demo(&args[1..]),
        Some("inflate") => inflate(&args[1..]),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(Failure::Usage(format!("unknown or missing command\n{USAGE}"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(msg)) => {
            eprintln!("kinetoscope: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Input(msg)) => {
            eprintln!("kinetoscope: {msg}");
            ExitCode::from(1)
        }
    }
}

/// What went wrong, mapped to an exit code.
enum Failure {
    Usage(String),
    Input(String),
}

/// Splits `args` into positionals and the value of `--flag value` options.
struct Args<'a> {
    positional: Vec<&'a str>,
    args: &'a [String],
}

impl<'a> Args<'a> {
    fn new(args: &'a [String], flags_with_value: &[&str]) -> Self {
        let mut positional = Vec::new();
        let mut i = 0;
        while i < args.len() {
            if flags_with_value.contains(&args[i].as_str()) {
                i += 2;
                continue;
            }
            if !args[i].starts_with("--") {
                positional.push(args[i].as_str());
            }
            i += 1;
        }
        Self { positional, args }
    }

    fn has(&self, flag: &str) -> bool {
        self.args.iter().any(|a| a == flag)
    }

    fn value(&self, flag: &str) -> Option<&'a str> {
        let i = self.args.iter().position(|a| a == flag)?;
        self.args.get(i + 1).map(String::as_str)
    }

    fn positional(&self, i: usize, what: &str) -> Result<&'a str, Failure> {
        self.positional.get(i).copied().ok_or_else(|| Failure::Usage(format!("missing {what}\n{USAGE}")))
    }
}

fn read(path: &str) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::Input(format!("cannot read {path:?}: {e}")))
}

fn load(path: &str) -> Result<(Engine, TraceSummary), Failure> {
    let bytes = read(path)?;
    let name = std::path::Path::new(path).file_name().map_or(path.into(), |n| n.to_string_lossy().into_owned());
    let mut engine = Engine::new();
    let started = Instant::now();
    let mut summary = engine
        .load(&name, bytes, &mut |_, _, _| {})
        .map_err(|e| Failure::Input(format!("{path}: {}", e.message)))?;
    summary.parse_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok((engine, summary))
}

fn info(args: &[String]) -> Result<(), Failure> {
    let a = Args::new(args, &[]);
    let path = a.positional(0, "TRACE")?;
    let (_, summary) = load(path)?;
    if a.has("--json") {
        let text = serde_json::to_string_pretty(&summary).map_err(|e| Failure::Input(e.to_string()))?;
        println!("{text}");
    } else {
        print!("{}", kinetoscope::summary::text(&summary));
    }
    Ok(())
}

/// The time range a report covers: a step, an explicit range (µs from trace start), or all.
fn report_range(a: &Args<'_>, trace: &kinetoscope::model::Trace) -> Result<Option<(i64, i64)>, Failure> {
    if let Some(n) = a.value("--step") {
        let n: u64 = n.parse().map_err(|_| Failure::Usage("--step takes a step number".into()))?;
        let steps = kinetoscope::analysis::steps::profiler_steps(trace);
        let step = steps.iter().find(|s| s.number == n).ok_or_else(|| {
            let known: Vec<String> = steps.iter().map(|s| s.number.to_string()).collect();
            Failure::Input(format!("no ProfilerStep#{n} in this trace (steps: {})", known.join(", ")))
        })?;
        return Ok(Some((step.start_ns, step.end_ns)));
    }
    let Some(text) = a.value("--range") else { return Ok(None) };
    let bad = || Failure::Usage("--range takes T0:T1 in µs from the trace start".into());
    let (t0, t1) = text.split_once(':').ok_or_else(bad)?;
    let ns = |t: &str| t.trim().parse::<f64>().map(|v| (v * 1000.0).round() as i64).map_err(|_| bad());
    Ok(Some((ns(t0)?, ns(t1)?)))
}

fn report(args: &[String]) -> Result<(), Failure> {
    use kinetoscope::analysis::ops::{OpIndex, OpOptions};
    use kinetoscope::report::SortKey;
    let a = Args::new(args, &["--step", "--range", "--sort", "--top"]);
    let path = a.positional(0, "TRACE")?;
    let top: usize = a.value("--top").unwrap_or("20").parse().map_err(|_| Failure::Usage("--top takes a number".into()))?;
    let sort = match a.value("--sort") {
        Some(s) => Some(SortKey::parse(s).ok_or_else(|| Failure::Usage(format!("unknown --sort {s:?}\n{USAGE}")))?),
        None => None,
    };
    let (engine, summary) = load(path)?;
    let trace = engine.trace().ok_or_else(|| Failure::Input("no trace loaded".into()))?;
    let opts = OpOptions { by_shape: a.has("--by-shape"), range: report_range(&a, trace)? };
    let ops = OpIndex::new(trace).table(trace, &opts);
    let sections = Sections::compute(trace, opts.range, top);
    if a.has("--json") {
        let text = serde_json::to_string_pretty(&sections.json(trace, &summary.file_name, &ops, opts.range, sort))
            .map_err(|e| Failure::Input(e.to_string()))?;
        println!("{text}");
    } else {
        print!("{}", sections.text(trace, &ops, opts.by_shape, sort, top));
    }
    Ok(())
}

/// Every analysis of one report, computed once for text or JSON.
struct Sections {
    kernels: kinetoscope::analysis::kernels::KernelTable,
    steps: kinetoscope::analysis::steps::Steps,
    gpus: Vec<kinetoscope::analysis::gpu::GpuMetrics>,
    memory: kinetoscope::analysis::memory::Memory,
    idle: kinetoscope::analysis::idle::Idle,
    /// Cheatsheet findings: always over the whole trace (rules compare steps with each other).
    findings: Vec<kinetoscope::finding::Finding>,
}

impl Sections {
    fn compute(trace: &kinetoscope::model::Trace, range: Option<(i64, i64)>, top: usize) -> Self {
        use kinetoscope::analysis::{gpu, idle, kernels, memory, steps};
        Self {
            kernels: kernels::kernel_table(trace, range),
            steps: steps::analyze(trace, range),
            gpus: gpu::gpu_metrics(trace, range),
            memory: memory::analyze(trace, range, top.min(10)),
            idle: idle::analyze(trace, range),
            findings: kinetoscope::finding::detect(trace),
        }
    }

    fn json(
        &self,
        trace: &kinetoscope::model::Trace,
        file: &str,
        ops: &kinetoscope::analysis::ops::OpTable,
        range: Option<(i64, i64)>,
        sort: Option<kinetoscope::report::SortKey>,
    ) -> serde_json::Value {
        use kinetoscope::report::{gpu, idle, kernels, memory, ops_json, sorted, steps, SortKey};
        serde_json::json!({
            "file": file,
            "range_us": range.map(|(t0, t1)| [t0 as f64 / 1000.0, t1 as f64 / 1000.0]),
            "self_cpu_time_total_us": ops.self_cpu_total_ns as f64 / 1000.0,
            "self_device_time_total_us": ops.self_device_total_ns as f64 / 1000.0,
            "ops": ops_json(&sorted(ops, sort.unwrap_or(SortKey::SelfDevice), usize::MAX)),
            "kernels": kernels::kernels_json(&self.kernels.rows),
            "steps": steps::steps_json(&self.steps),
            "step_stats": steps::step_stats_json(&self.steps),
            "gpus": gpu::gpus_json(&self.gpus),
            "memory": memory::memory_json(trace, &self.memory),
            "idle": idle::idle_json(&self.idle),
            "launch": idle::launch_json(trace, &self.idle),
            "findings": kinetoscope::report::findings::findings_json(&self.findings),
        })
    }

    fn text(
        &self,
        trace: &kinetoscope::model::Trace,
        ops: &kinetoscope::analysis::ops::OpTable,
        by_shape: bool,
        sort: Option<kinetoscope::report::SortKey>,
        top: usize,
    ) -> String {
        use kinetoscope::report::{gpu, idle, kernels, memory, op_table_text, sorted, steps, SortKey};
        let shape = if by_shape { ", grouped by input shape" } else { "" };
        let tables: Vec<(String, SortKey)> = match sort {
            Some(key) => vec![(format!("ops by {key:?}{shape}"), key)],
            None if ops.self_device_total_ns > 0 => vec![
                (format!("TOP CUDA ops (by Self CUDA){shape}"), SortKey::SelfDevice),
                (format!("TOP CPU ops (by Self CPU){shape}"), SortKey::SelfCpu),
            ],
            None => vec![(format!("TOP CPU ops (by Self CPU){shape}"), SortKey::SelfCpu)],
        };
        let mut out = String::new();
        for (title, key) in tables {
            out.push_str(&op_table_text(&title, ops, &sorted(ops, key, top), by_shape));
        }
        if !self.kernels.rows.is_empty() {
            out.push_str(&kernels::kernel_table_text("TOP kernels (by total time)", &self.kernels, top));
        }
        if !self.steps.steps.is_empty() {
            out.push_str(&steps::steps_text(&self.steps));
        }
        if !self.gpus.is_empty() {
            out.push_str(&gpu::gpu_text(&self.gpus));
        }
        if !self.memory.devices.is_empty() {
            out.push_str(&memory::memory_text(trace, &self.memory));
        }
        if !self.idle.streams.is_empty() {
            out.push_str(&idle::idle_text(trace, &self.idle));
        }
        out.push_str(&kinetoscope::report::findings::findings_text(&self.findings));
        out
    }
}

fn diff(args: &[String]) -> Result<(), Failure> {
    use kinetoscope::compare::{compare, parse_sort, sort_rows, CompareOptions, KernelColumn, OpColumn, SortKey};
    use kinetoscope::report::compare::{comparison_json, comparison_text, Files, TextOptions};
    let a = Args::new(args, &["--sort", "--top"]);
    let (base_path, cand_path) = (a.positional(0, "BASE")?, a.positional(1, "CAND")?);
    let top: usize = a.value("--top").unwrap_or("20").parse().map_err(|_| Failure::Usage("--top takes a number".into()))?;
    let (op_sort, kernel_sort) = match a.value("--sort") {
        Some(s) => parse_sort(s).ok_or_else(|| Failure::Usage(format!("unknown --sort {s:?}\n{USAGE}")))?,
        None => (None, None),
    };
    let (base_engine, base) = load(base_path)?;
    let (cand_engine, cand) = load(cand_path)?;
    let no_trace = || Failure::Input("no trace loaded".into());
    let opts = CompareOptions { by_shape: a.has("--by-shape") };
    let mut c = compare(base_engine.trace().ok_or_else(no_trace)?, cand_engine.trace().ok_or_else(no_trace)?, &opts);
    let device = c.ops.iter().any(|r| r.self_device_ns.base != 0.0 || r.self_device_ns.cand != 0.0);
    let default_column = if device { OpColumn::SelfDevice } else { OpColumn::SelfCpu };
    let op_sort = op_sort.unwrap_or(SortKey::AbsDelta(default_column));
    let kernel_sort = kernel_sort.unwrap_or(SortKey::AbsDelta(KernelColumn::Total));
    // Name sorts ascending; deltas largest first.
    sort_rows(&mut c.ops, op_sort, op_sort != SortKey::Name);
    sort_rows(&mut c.kernels, kernel_sort, kernel_sort != SortKey::Name);
    let files = Files { base: &base.file_name, cand: &cand.file_name };
    if a.has("--json") {
        let text = serde_json::to_string_pretty(&comparison_json(&c, files)).map_err(|e| Failure::Input(e.to_string()))?;
        println!("{text}");
    } else {
        let headline = match op_sort {
            SortKey::Delta(k) | SortKey::AbsDelta(k) => k,
            SortKey::Name => default_column,
        };
        let options = TextOptions { headline, op_order: order(op_sort, OpColumn::label), kernel_order: order(kernel_sort, KernelColumn::label), top };
        print!("{}", comparison_text(&c, files, &options));
    }
    Ok(())
}

/// How a sort key orders rows, for a table title.
fn order<C: Copy>(key: kinetoscope::compare::SortKey<C>, label: fn(C) -> &'static str) -> String {
    use kinetoscope::compare::SortKey;
    match key {
        SortKey::Delta(c) => format!("Δ {} descending", label(c)),
        SortKey::AbsDelta(c) => format!("|Δ {}| descending", label(c)),
        SortKey::Name => "name".to_owned(),
    }
}

fn bench(args: &[String]) -> Result<(), Failure> {
    let a = Args::new(args, &["--runs", "--threads"]);
    let path = a.positional(0, "TRACE")?;
    let number = |flag: &str, default: &str| -> Result<usize, Failure> {
        a.value(flag).unwrap_or(default).parse().map_err(|_| Failure::Usage(format!("{flag} takes a number")))
    };
    let (runs, threads) = (number("--runs", "3")?, number("--threads", "1")?.max(1));
    let raw = read(path)?;
    for run in 0..runs {
        let started = Instant::now();
        let json = kinetoscope::input::decode(raw.clone(), &mut |_| {}).json;
        let trace = parse_parallel(&json, threads)?;
        let secs = started.elapsed().as_secs_f64();
        let index_bytes = trace.heap_bytes();
        let line = serde_json::json!({
            "bench": "parse_index", "target": "native", "file": path, "run": run, "threads": threads,
            "file_bytes": raw.len(), "json_bytes": json.len(), "events": trace.stats.events,
            "seconds": secs, "mb_per_s": json.len() as f64 / 1e6 / secs,
            "events_per_s": trace.stats.events as f64 / secs,
            "index_bytes": index_bytes, "index_ratio": index_bytes as f64 / json.len().max(1) as f64,
        });
        println!("{line}");
        if run == 0 {
            bench_first_view(path, &json);
            bench_op_ranges(path, &trace);
        }
    }
    Ok(())
}

/// Times what the page asks the worker for before its first timeline paint: the load's index,
/// the layout, then tiles and counters of the whole trace at 1,600 pixels.
fn bench_first_view(path: &str, json: &[u8]) {
    use kinetoscope::engine::Engine;
    use protocol::Query;
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let mut engine = Engine::new();
    let started = Instant::now();
    if engine.load(path, json.to_vec(), &mut |_, _, _| {}).is_err() {
        return;
    }
    let load_ms = ms(started);
    let started = Instant::now();
    let Some(layout) = engine.layout() else {
        return;
    };
    let layout_ms = ms(started);
    let lanes = layout.groups.iter().flat_map(|g| g.lanes.iter().map(|l| l.lane)).collect();
    let resolution_ns = (layout.end_ns / 1600).max(1);
    let tiles = Query::Tiles { trace: protocol::TraceRef::Current, lanes, start_ns: 0, end_ns: layout.end_ns, resolution_ns, search: None };
    let started = Instant::now();
    let rect_words = engine.query(&tiles).ok().and_then(|(_, words)| words).map_or(0, |w| w.len());
    let tiles_ms = ms(started);
    let started = Instant::now();
    let _ = engine.query(&Query::Counters { start_ns: 0, end_ns: layout.end_ns, buckets: 800 });
    let counters_ms = ms(started);
    let Some(trace) = engine.trace() else {
        return;
    };
    let started = Instant::now();
    let _ = kinetoscope::analysis::gpu::GpuIndex::new(trace);
    let gpu_index_ms = ms(started);
    let started = Instant::now();
    let _ = kinetoscope::analysis::memory::analyze(trace, None, 0);
    let memory_ms = ms(started);
    let line = serde_json::json!({
        "bench": "first_view", "target": "native", "file": path, "load_ms": load_ms,
        "layout_ms": layout_ms, "tiles_ms": tiles_ms, "rects": rect_words / protocol::RECT_WORDS,
        "counters_ms": counters_ms, "gpu_index_ms": gpu_index_ms, "memory_ms": memory_ms,
    });
    println!("{line}");
}

/// Times the op table: index build once, then range queries as a brushed timeline asks them.
fn bench_op_ranges(path: &str, trace: &kinetoscope::model::Trace) {
    use kinetoscope::analysis::ops::{OpIndex, OpOptions};
    let started = Instant::now();
    let index = OpIndex::new(trace);
    let build_ms = started.elapsed().as_secs_f64() * 1e3;
    let end = trace.end_ns;
    for (label, t0, t1) in [("whole", 0, end), ("half", end / 4, end * 3 / 4), ("tenth", end / 2, end / 2 + end / 10)] {
        let started = Instant::now();
        let table = index.table(trace, &OpOptions { by_shape: false, range: Some((t0, t1)) });
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let line = serde_json::json!({
            "bench": "op_table_range", "target": "native", "file": path, "range": label,
            "slices": trace.slices.len(), "index_build_ms": build_ms, "query_ms": ms, "rows": table.rows.len(),
        });
        println!("{line}");
    }
}

/// Parses `json` in `threads` parts on scoped threads (the engine itself never spawns any).
fn parse_parallel(json: &[u8], threads: usize) -> Result<kinetoscope::model::Trace, Failure> {
    use kinetoscope::load::{assemble, parse_part, plan};
    let plan = plan(json, threads).map_err(|e| Failure::Input(e.to_string()))?;
    let parts = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..plan.parts.len()).map(|i| scope.spawn({
            let plan = &plan;
            move || parse_part(json, plan, i, &mut |_| {})
        })).collect();
        handles.into_iter().map(|h| h.join().map_err(|_| Failure::Input("a parse thread panicked".into()))).collect::<Result<Vec<_>, _>>()
    })?;
    assemble(json, &plan, parts).map_err(|e| Failure::Input(e.to_string()))
}

fn demo(args: &[String]) -> Result<(), Failure> {
    let out = Args::new(args, &[]).positional(0, "OUT")?;
    let bytes = if out.ends_with(".gz") { kinetoscope::synth::demo::generate_gzip() } else { kinetoscope::synth::demo::generate() };
    std::fs::write(out, &bytes).map_err(|e| Failure::Input(format!("cannot write {out:?}: {e}")))?;
    eprintln!("wrote {out} ({} bytes)", bytes.len());
    Ok(())
}

fn inflate(args: &[String]) -> Result<(), Failure> {
    let a = Args::new(args, &["--target-mb"]);
    let (input, out) = (a.positional(0, "IN")?, a.positional(1, "OUT")?);
    let mb: u64 = a
        .value("--target-mb")
        .ok_or_else(|| Failure::Usage(format!("inflate needs --target-mb N\n{USAGE}")))?
        .parse()
        .map_err(|_| Failure::Usage("--target-mb takes a whole number".into()))?;
    let raw = read(input)?;
    let json = kinetoscope::input::decode(raw, &mut |_| {}).json;
    let file = std::fs::File::create(out).map_err(|e| Failure::Input(format!("cannot create {out:?}: {e}")))?;
    let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
    let started = Instant::now();
    let stats = kinetoscope::synth::inflate::inflate(&json, mb * 1_000_000, &mut writer).map_err(Failure::Input)?;
    std::io::Write::flush(&mut writer).map_err(|e| Failure::Input(format!("cannot write {out:?}: {e}")))?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "wrote {out}: {} copies, {} events, {:.1} MB in {secs:.1} s ({:.0} MB/s)",
        stats.copies,
        stats.events_written,
        stats.bytes_written as f64 / 1e6,
        stats.bytes_written as f64 / 1e6 / secs
    );
    Ok(())
}
