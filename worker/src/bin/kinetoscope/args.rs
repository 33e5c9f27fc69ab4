//! The CLI's arguments (clap derive): every command, flag and value parser. Unknown flags and
//! bad values are clap errors (exit 2, with a hint).

use clap::{Parser, Subcommand};
use kinetoscope::analysis::critical_path::Edit;
use kinetoscope::analysis::explain::Which;
use kinetoscope::report::gate::{Gate, GateError};
use std::path::PathBuf;

/// Read PyTorch profiler (Kineto) traces: summaries, op / kernel / step tables, findings and
/// comparisons, with the same numbers as the Kinetoscope page.
#[derive(Parser)]
#[command(name = "kinetoscope", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Trace summary (the numbers the page shows after a load).
    Info {
        /// Trace file (`.json` or `.json.gz`), or `-` for stdin (JSON or gzip).
        trace: PathBuf,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Op, kernel and step tables, GPU metrics, memory, idle time and findings of one trace.
    Report {
        /// Trace file (`.json` or `.json.gz`), or `-` for stdin (JSON or gzip).
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
        #[arg(long, default_value_t = 20, value_parser = parse_top)]
        top: usize,
        /// Widest Name column of the op and kernel tables; longer names are cut with `...`
        /// (PyTorch's `table()` default: 55).
        #[arg(long, default_value_t = kinetoscope::report::NAME_WIDTH, value_parser = parse_name_width)]
        name_width: usize,
        /// Explain why a step is slow: `slowest` or a ProfilerStep number (its time against
        /// the median step, by category, kernel and op).
        #[arg(long, value_name = "N|slowest", value_parser = parse_explain_step)]
        explain_step: Option<Which>,
        /// Steps are this annotation's slices (exact name, or a prefix ending in `*`), numbered
        /// 0, 1, ... in time order: for traces without ProfilerStep#N.
        #[arg(long, value_name = "NAME")]
        step_marker: Option<String>,
        /// Print the stable JSON form (keys in docs/cli.md; same as `--format json`).
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Output format; `md`: GitHub Markdown (a PR comment or a CI job summary); `html`: one
        /// self-contained file with inline SVG charts (the page's Export report).
        #[arg(long, value_parser = ["text", "json", "md", "html"])]
        format: Option<String>,
        /// With `--format html`: the address that opens this trace in the viewer (e.g.
        /// `https://host/?url=run1.json.gz`); findings, evidence and steps link to their view.
        #[arg(long, value_name = "URL")]
        viewer_url: Option<String>,
        /// The GPU's peaks, over the peak table's (or for a GPU not in it): dense TFLOP/s
        /// `fp32`, `tf32`, `bf16` (= `fp16`), `fp8`, `fp4` and memory `gbps`, e.g.
        /// `bf16=989,fp32=67,gbps=3350`; used by %Peak, Bound, MFU and `low-mfu`.
        #[arg(long, value_name = "KEY=VALUE,...", value_parser = parse_gpu_peak)]
        gpu_peak: Option<String>,
        /// The call tree: callers -> callees over Python frames, ranges, ops and runtime calls,
        /// with CPU and GPU time (`call_tree` of `--json`); with `--step N`, that step's.
        #[arg(long)]
        tree: bool,
        /// With `--tree`: leave out nodes under this % of the total CPU and GPU time.
        #[arg(long, value_name = "P", default_value_t = kinetoscope::report::tree::DEFAULT_MIN_PCT, requires = "tree")]
        min_pct: f64,
        /// Samples per step (the batch): each step's samples/s and the run's, next to MFU
        /// (`throughput` of `--json`).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        batch_size: Option<u64>,
        /// Tokens per step (batch x sequence length): each step's tokens/s and the run's.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        tokens_per_step: Option<u64>,
        /// What bounds each step: its critical path's length, bound-by shares and the slices on
        /// it (the `critical_path` key of `--json` is always there).
        #[arg(long)]
        critical_path: bool,
        /// Each step's phases: data loading, forward, backward, optimizer and the
        /// communication they do not hide, CPU and GPU time (the `phases` key of `--json` is
        /// always there).
        #[arg(long)]
        phases: bool,
        /// The `nn.Module` tree: per module (name and id) its calls, operators, host and device
        /// time, total and self, and the backward device time tied to it; siblings in call
        /// order or by `--sort` (the `modules` key of `--json` is always there).
        #[arg(long)]
        modules: bool,
        /// With `--modules`: show this many levels below the roots.
        #[arg(long, value_name = "N", requires = "modules")]
        depth: Option<usize>,
        /// Every step recomputed from its critical-path graph with this change (repeatable;
        /// combined): `gemm*0.5`, `launch=0`, `comm=0`, `sync=0`, `kernel:TEXT*F`, `op:TEXT=0`
        /// (grammar in docs/cli.md).
        #[arg(long = "what-if", value_name = "EDIT", value_parser = parse_what_if)]
        what_if: Vec<Edit>,
        /// What holds memory: each step's peak by category (parameter, optimizer state,
        /// gradient, activation, ...), the live allocations at the highest peak, leaks (the
        /// `memory[]` keys of `--json` are always there).
        #[arg(long)]
        memory: bool,
        /// The kernel names the roofline leaves off, longest first, each with the reason (no
        /// op, no shapes, no FLOP rule, bytes only, ...) (the `roofline` key of `--json` is
        /// always there).
        #[arg(long)]
        roofline: bool,
    },
    /// Compare two traces: verdict, summary, op and kernel diffs, findings new and gone.
    Diff {
        /// The baseline trace (`-`: stdin).
        base: PathBuf,
        /// The candidate trace (`-`: stdin).
        cand: PathBuf,
        /// Match ops by name and input shapes.
        #[arg(long)]
        by_shape: bool,
        /// Row order: `name`, `COLUMN`, `abs:COLUMN` or `delta:COLUMN`; op columns `calls`,
        /// `self_cpu`, `self_cuda`, `cuda_total`, kernel columns `calls`, `total`, `mean`.
        #[arg(long, value_parser = parse_diff_sort)]
        sort: Option<kinetoscope::compare::SortKeys>,
        /// Rows per table.
        #[arg(long, default_value_t = 20, value_parser = parse_top)]
        top: usize,
        /// Print the stable JSON form (same as `--format json`).
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Output format; `md`: GitHub Markdown for a PR comment.
        #[arg(long, value_parser = ["text", "json", "md"])]
        format: Option<String>,
        /// A CI gate, e.g. `step_time_mean>+5%`, `step_time_p95>+2ms`, `new-finding>=warn`
        /// (repeatable; grammar in docs/ci.md): exit 1 with the reason when one holds.
        #[arg(long = "fail-if", value_name = "EXPR", value_parser = parse_gate)]
        fail_if: Vec<(String, Gate)>,
        /// The two call trees merged by call path: each node's CPU and GPU total in both, grown,
        /// shrunk or the same within 2% (`call_tree_diff` of `--json`).
        #[arg(long)]
        tree: bool,
        /// With `--tree`: leave out nodes under this % of both sides' CPU and GPU totals.
        #[arg(long, value_name = "P", default_value_t = kinetoscope::report::tree::DEFAULT_MIN_PCT, requires = "tree")]
        min_pct: f64,
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
        /// x rank, for DuckDB or Spark over many runs (queries in docs/runs.md); `parquet`: the
        /// same rows as DIR/steps.parquet, collectives.parquet and diagnostics.parquet, DIR
        /// being the last argument; `md`: GitHub Markdown (a PR comment or a CI job summary).
        #[arg(long, value_parser = ["text", "json", "ndjson", "parquet", "md"])]
        format: Option<String>,
        /// Ranks loaded at once (memory grows with this, not with the rank count); default:
        /// the machine's cores.
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
    },
    /// Write traces as Parquet tables into DIR (slices, kernels, ops, steps, flows, counters,
    /// memory: one DIR/TABLE.parquet each, every trace's rows led by its file name; docs/cli.md).
    Export {
        /// Trace files (`.json` or `.json.gz`; `-`: stdin), then DIR, the output folder
        /// (created; its TABLE.parquet files are replaced).
        #[arg(required = true, value_name = "TRACE... DIR")]
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, required = true, value_parser = ["parquet"])]
        format: String,
        /// Steps are this annotation's slices (as `report --step-marker`).
        #[arg(long, value_name = "NAME")]
        step_marker: Option<String>,
    },
    /// Serve the page and every trace under LOGDIR (runs = directories), read-only, on
    /// 127.0.0.1; the page lists them (docs/deploy.md). Without LOGDIR the page opens its demo.
    Serve {
        /// The log directory (scanned again on every listing: the page shows new traces live,
        /// those still being written marked `writing`).
        logdir: Option<PathBuf>,
        /// Port (0 picks a free one).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Address to bind; anything but loopback makes the traces readable by anyone who
        /// can reach the port.
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
        /// The built site (default: dist/ of the repository, see README).
        #[arg(long)]
        site: Option<PathBuf>,
    },
    /// Write a static folder for any static host, at any sub-path: the site, every trace under
    /// LOGDIR, `index.json` and one `run.json` per run.
    Publish {
        /// The log directory.
        logdir: PathBuf,
        /// Output folder (created; must not be inside LOGDIR, nor hold it). Files under
        /// OUT/logs that LOGDIR no longer has are removed, unless `--keep`.
        out: PathBuf,
        /// The built site (default: dist/ of the repository, see README).
        #[arg(long)]
        site: Option<PathBuf>,
        /// Keep traces under OUT/logs that are no longer in LOGDIR (by default OUT mirrors it).
        #[arg(long)]
        keep: bool,
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
        /// Also time Python's `json.load` of the file after each streamed run, with this
        /// interpreter (e.g. `python3`), and print the ratio (the anchor).
        #[arg(long, value_name = "PYTHON")]
        python: Option<String>,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// `slowest` or a step number.
/// A `--gpu-peak` spec, checked now so a typo is a usage error.
fn parse_what_if(s: &str) -> Result<Edit, String> {
    s.parse().map_err(|e: kinetoscope::analysis::critical_path::EditError| e.to_string())
}

fn parse_gpu_peak(s: &str) -> Result<String, String> {
    kinetoscope::analysis::work::peaks::Peaks::with_overrides(None, s).map(|_| s.to_owned())
}

fn parse_explain_step(s: &str) -> Result<Which, String> {
    match s {
        "slowest" => Ok(Which::Slowest),
        n => n.parse().map(Which::Number).map_err(|_| format!("expected `slowest` or a step number, got `{n}`")),
    }
}

/// `--range T0:T1` (µs from the trace start) in ns; an empty or reversed window is an error,
/// not an empty report.
fn parse_range(text: &str) -> Result<(i64, i64), String> {
    let bad = || "takes T0:T1 in µs from the trace start, e.g. 1500:2500".to_owned();
    let (t0, t1) = text.split_once(':').ok_or_else(bad)?;
    let us = |t: &str| t.trim().parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(bad);
    let (t0, t1) = (us(t0)?, us(t1)?);
    if t0 < 0.0 {
        return Err(format!("T0 is {t0} µs: the window starts at 0 (the trace start) or later"));
    }
    if t1 <= t0 {
        return Err(format!("T1 ({t1} µs) must be after T0 ({t0} µs)"));
    }
    Ok(((t0 * 1000.0).round() as i64, (t1 * 1000.0).round() as i64))
}

/// `--top N`: at least one row (0 would print empty tables).
fn parse_top(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1 (rows per table)".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// `--name-width N`: room for at least a few characters and the `...`.
fn parse_name_width(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 8 => Ok(n),
        Ok(n) => Err(format!("{n} is too narrow: at least 8 characters")),
        Err(e) => Err(e.to_string()),
    }
}

/// `diff --fail-if`: the expression as written (for messages) and its parsed gate.
fn parse_gate(text: &str) -> Result<(String, Gate), GateError> {
    kinetoscope::report::gate::parse(text).map(|g| (text.trim().to_owned(), g))
}

/// `report --sort`.
fn parse_op_sort(text: &str) -> Result<kinetoscope::report::SortKey, String> {
    kinetoscope::report::SortKey::parse(text)
        .ok_or_else(|| "one of self_cpu, cpu_total, self_cuda, cuda_total, calls, self_cpu_mem, cpu_mem, self_cuda_mem, cuda_mem".to_owned())
}

/// `diff --sort`.
fn parse_diff_sort(text: &str) -> Result<kinetoscope::compare::SortKeys, String> {
    kinetoscope::compare::parse_sort(text).ok_or_else(|| {
        "name, COLUMN, abs:COLUMN or delta:COLUMN; columns calls, self_cpu, self_cuda, cuda_total, total, mean".to_owned()
    })
}
