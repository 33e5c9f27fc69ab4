//! `kinetoscope` CLI: arguments -> a loaded [`Session`] -> the library's report -> stdout.
//! Every analysis and its rendering live in the library (`report`), so the CLI and the page
//! read the same session code; this file only parses arguments, reads files and times loads.
//!
//! Exit codes: 0 ok, 1 the input could not be loaded, 2 usage error (clap's, with a hint).
//! `kinetoscope help COMMAND` or `COMMAND --help` documents each command (docs/cli.md too).

// The CLI is where files, clocks and threads belong (worker/clippy.toml keeps them out of the engine).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

#[path = "kinetoscope/bench.rs"]
mod bench;

use clap::{CommandFactory, Parser, Subcommand};
use kinetoscope::engine::Engine;
use kinetoscope::analysis::explain::Which;
use kinetoscope::report::diff::{DiffOptions, DiffReport};
use kinetoscope::report::trace::{ReportOptions, TraceReport};
use kinetoscope::session::Session;
use protocol::TraceSummary;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// Read PyTorch profiler (Kineto) traces: summaries, op / kernel / step tables, findings and
/// comparisons, with the same numbers as the Kinetoscope page.
#[derive(Parser)]
#[command(name = "kinetoscope", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Trace summary (the numbers the page shows after a load).
    Info {
        /// Trace file (`.json` or `.json.gz`).
        trace: PathBuf,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Op, kernel and step tables, GPU metrics, memory, idle time and findings of one trace.
    Report {
        /// Trace file (`.json` or `.json.gz`).
        trace: PathBuf,
        /// Only this ProfilerStep (its number).
        #[arg(long, conflicts_with = "range")]
        step: Option<u64>,
        /// Only `T0:T1`, in µs from the trace start.
        #[arg(long, value_parser = parse_range)]
        range: Option<(i64, i64)>,
        /// Group ops by input shape.
        #[arg(long)]
        by_shape: bool,
        /// One op table sorted by this column.
        #[arg(long, value_parser = parse_op_sort)]
        sort: Option<kinetoscope::report::SortKey>,
        /// Rows per table.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// Explain why a step is slow: `slowest` or a ProfilerStep number (its time against
        /// the median step, by category, kernel and op).
        #[arg(long, value_name = "N|slowest", value_parser = parse_explain_step)]
        explain_step: Option<Which>,
        /// Print the stable JSON form (keys in docs/cli.md).
        #[arg(long)]
        json: bool,
    },
    /// Compare two traces: verdict, summary, op and kernel diffs, findings new and gone.
    Diff {
        /// The baseline trace.
        base: PathBuf,
        /// The candidate trace.
        cand: PathBuf,
        /// Match ops by name and input shapes.
        #[arg(long)]
        by_shape: bool,
        /// Row order: `name`, `COLUMN`, `abs:COLUMN` or `delta:COLUMN`; op columns `calls`,
        /// `self_cpu`, `self_cuda`, `cuda_total`, kernel columns `calls`, `total`, `mean`.
        #[arg(long, value_parser = parse_diff_sort)]
        sort: Option<kinetoscope::compare::SortKeys>,
        /// Rows per table.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// Print the stable JSON form.
        #[arg(long)]
        json: bool,
    },
    /// The ranks of a distributed run: rank table, step heatmap data, collectives matched across
    /// ranks, stragglers and why, clock offsets, run findings (docs/runs.md).
    Run {
        /// Trace files and directories (searched recursively for `*.json` / `*.json.gz`).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print the stable JSON form (same as `--format json`).
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Output format; `ndjson`: one row per diagnostic, rank x step and collective instance
        /// x rank, for DuckDB or Spark over many runs (queries in docs/runs.md).
        #[arg(long, value_parser = ["text", "json", "ndjson"])]
        format: Option<String>,
        /// Ranks loaded at once (memory grows with this, not with the rank count); default:
        /// the machine's cores.
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
    },
    /// Parse + index throughput, one JSON line per run (then first-view and op-table timings).
    Bench {
        /// Trace file.
        trace: PathBuf,
        /// How many times to parse.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Parse threads.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
        threads: u16,
    },
    /// Write the built-in demo trace (gzip when OUT ends in `.gz`).
    Demo {
        /// Output file.
        out: PathBuf,
    },
    /// Write a synthetic distributed run, one `rank-N.json` per rank, with a designed straggler:
    /// rank `--straggler` computes 5 ms more before the third all-reduce of the fifth step
    /// (benchmark and demo inputs for `run`; ground truth in worker/src/synth/run.rs).
    DemoRun {
        /// Output directory (created).
        out: PathBuf,
        /// Ranks to write.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
        ranks: u32,
        /// About this many MB per rank.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        mb_per_rank: u32,
        /// The slow rank (default: ranks / 3).
        #[arg(long)]
        straggler: Option<u32>,
    },
    /// Repeat a trace along time until it is about N MB (benchmark inputs).
    Inflate {
        /// Input trace.
        input: PathBuf,
        /// Output file.
        out: PathBuf,
        /// Target size in MB.
        #[arg(long)]
        target_mb: u64,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info { trace, json } => info(&trace, json),
        Command::Report { trace, step, range, by_shape, sort, top, explain_step, json } => {
            report(&trace, step, range, ReportOptions { range: None, by_shape, sort, top }, explain_step, json)
        }
        Command::Diff { base, cand, by_shape, sort, top, json } => {
            let (op_sort, kernel_sort) = sort.unwrap_or((None, None));
            diff(&base, &cand, DiffOptions { by_shape, op_sort, kernel_sort, top }, json)
        }
        Command::Run { paths, json, format, threads } => run(&paths, json, format.as_deref(), threads),
        Command::Bench { trace, runs, threads } => read(&trace).and_then(|raw| bench::run(&trace, &raw, runs, threads.into())),
        Command::Demo { out } => demo(&out),
        Command::DemoRun { out, ranks, mb_per_rank, straggler } => demo_run(&out, ranks, mb_per_rank, straggler),
        Command::Inflate { input, out, target_mb } => inflate(&input, &out, target_mb),
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
    let bytes = read(path)?;
    let name = path.file_name().map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy()).into_owned();
    let mut engine = Engine::new();
    let started = Instant::now();
    let mut summary = engine
        .load(&name, bytes, &mut |_, _, _| {})
        .map_err(|e| format!("{}: {}", path.display(), e.message))?;
    summary.parse_ms = started.elapsed().as_secs_f64() * 1000.0;
    let session = engine.session().cloned().ok_or_else(|| format!("{}: no trace loaded", path.display()))?;
    Ok((session, summary))
}

fn print_json(value: &impl serde::Serialize) -> Result<(), Failure> {
    println!("{}", serde_json::to_string_pretty(value).map_err(|e| e.to_string())?);
    Ok(())
}

fn info(path: &Path, json: bool) -> Result<(), Failure> {
    let (_, summary) = load(path)?;
    if json {
        return print_json(&summary);
    }
    print!("{}", kinetoscope::answer::summary::text(&summary));
    Ok(())
}

fn report(
    path: &Path,
    step: Option<u64>,
    range: Option<(i64, i64)>,
    mut options: ReportOptions,
    explain_step: Option<Which>,
    json: bool,
) -> Result<(), Failure> {
    let (session, _) = load(path)?;
    options.range = match step {
        Some(n) => Some(step_range(session.trace(), n)?),
        None => range,
    };
    let explanation = explain_step.map(|w| session.explain(w)).transpose()?;
    let report = TraceReport::build(&session, options);
    if json {
        let mut value = report.json();
        if let (Some(e), Some(map)) = (&explanation, value.as_object_mut()) {
            map.insert("explanation".into(), kinetoscope::report::explain::json(e));
        }
        return print_json(&value);
    }
    print!("{}", report.text());
    if let Some(e) = &explanation {
        print!("\n{}", kinetoscope::report::explain::text(e));
    }
    Ok(())
}

/// `slowest` or a step number.
fn parse_explain_step(s: &str) -> Result<Which, String> {
    match s {
        "slowest" => Ok(Which::Slowest),
        n => n.parse().map(Which::Number).map_err(|_| format!("expected `slowest` or a step number, got `{n}`")),
    }
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

fn diff(base: &Path, cand: &Path, options: DiffOptions, json: bool) -> Result<(), Failure> {
    let (base, _) = load(base)?;
    let (cand, _) = load(cand)?;
    let report = DiffReport::build(&base, &cand, options);
    if json {
        return print_json(&report.json());
    }
    print!("{}", report.text());
    Ok(())
}

fn run(paths: &[PathBuf], json: bool, format: Option<&str>, threads: Option<u16>) -> Result<(), Failure> {
    use kinetoscope::run::Format;
    let format = if json { Format::Json } else { format.and_then(Format::parse).unwrap_or(Format::Text) };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = threads.map_or(cores, usize::from);
    let out = kinetoscope::run::run_files(paths, threads, format).map_err(|e| e.to_string())?;
    print!("{out}");
    if !out.ends_with('\n') {
        println!();
    }
    Ok(())
}

fn demo(out: &Path) -> Result<(), Failure> {
    let gzip = out.extension().is_some_and(|e| e == "gz");
    let bytes = if gzip { kinetoscope::synth::demo::generate_gzip() } else { kinetoscope::synth::demo::generate() };
    std::fs::write(out, &bytes).map_err(|e| format!("cannot write {out:?}: {e}"))?;
    eprintln!("wrote {} ({} bytes)", out.display(), bytes.len());
    Ok(())
}

fn demo_run(out: &Path, ranks: u32, mb_per_rank: u32, straggler: Option<u32>) -> Result<(), Failure> {
    use kinetoscope::synth::run::{write_dir, Delay, RunSpec};
    // 10 steps x 8 all-reduces; one compute kernel with its launch is about 536 bytes of JSON.
    let (steps, collectives) = (10, 8);
    let kernels = (u64::from(mb_per_rank) * 1_000_000 / (steps * collectives * 536)).max(1);
    let spec = RunSpec {
        ranks,
        world_size: ranks,
        steps: steps as u32,
        collectives_per_step: collectives as u32,
        kernels_per_collective: u32::try_from(kernels).unwrap_or(u32::MAX),
        kernel_ns: 20_000,
        delays: vec![Delay { rank: straggler.unwrap_or(ranks / 3), step: 4, collective: 2, extra_ns: 5_000_000 }],
        ..RunSpec::default()
    };
    let paths = write_dir(&spec, out).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!("wrote {} ranks to {}", paths.len(), out.display());
    Ok(())
}

fn inflate(input: &Path, out: &Path, target_mb: u64) -> Result<(), Failure> {
    let json = kinetoscope::input::decode(read(input)?, &mut |_| {}).json;
    let file = std::fs::File::create(out).map_err(|e| format!("cannot create {out:?}: {e}"))?;
    let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
    let started = Instant::now();
    let stats = kinetoscope::synth::inflate::inflate(&json, target_mb * 1_000_000, &mut writer)?;
    std::io::Write::flush(&mut writer).map_err(|e| format!("cannot write {out:?}: {e}"))?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "wrote {}: {} copies, {} events, {:.1} MB in {secs:.1} s ({:.0} MB/s)",
        out.display(),
        stats.copies,
        stats.events_written,
        stats.bytes_written as f64 / 1e6,
        stats.bytes_written as f64 / 1e6 / secs
    );
    Ok(())
}

/// `--range T0:T1` (µs from the trace start) in ns.
fn parse_range(text: &str) -> Result<(i64, i64), String> {
    let bad = || "takes T0:T1 in µs from the trace start, e.g. 1500:2500".to_owned();
    let (t0, t1) = text.split_once(':').ok_or_else(bad)?;
    let ns = |t: &str| t.trim().parse::<f64>().map(|v| (v * 1000.0).round() as i64).map_err(|_| bad());
    Ok((ns(t0)?, ns(t1)?))
}

/// `report --sort`.
fn parse_op_sort(text: &str) -> Result<kinetoscope::report::SortKey, String> {
    kinetoscope::report::SortKey::parse(text)
        .ok_or_else(|| "one of self_cpu, cpu_total, self_cuda, cuda_total, calls".to_owned())
}

/// `diff --sort`.
fn parse_diff_sort(text: &str) -> Result<kinetoscope::compare::SortKeys, String> {
    kinetoscope::compare::parse_sort(text).ok_or_else(|| {
        "name, COLUMN, abs:COLUMN or delta:COLUMN; columns calls, self_cpu, self_cuda, cuda_total, total, mean".to_owned()
    })
}
