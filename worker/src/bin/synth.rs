//! `kinetoscope-synth`: writes synthetic and repeated traces (the demo, a distributed run with a
//! designed straggler, a trace repeated along time) for benchmarks and the demo. Built only with
//! the `synth` feature (`cargo run -p kinetoscope --features synth --bin kinetoscope-synth`), so
//! the shipped CLI and wasm worker never carry the generators; ground truth in worker/src/synth/.
//!
//! Exit codes: 0 ok, 1 the output could not be written or the input read, 2 usage error.

// Writing files and timing them is this binary's job (worker/clippy.toml keeps them out of the engine).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use clap::{Parser, Subcommand};
use kinetoscope::budget::Budget;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Synthetic and repeated Kineto traces for benchmarks and the demo.
#[derive(Parser)]
#[command(name = "kinetoscope-synth", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Demo { out } => demo(&out),
        Command::DemoRun { out, ranks, mb_per_rank, straggler } => demo_run(&out, ranks, mb_per_rank, straggler),
        Command::Inflate { input, out, target_mb } => inflate(&input, &out, target_mb),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("kinetoscope-synth: {msg}");
            ExitCode::from(1)
        }
    }
}

/// What could not be written or read, as one line.
type Failure = String;

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
    let json = kinetoscope::input::decode(std::fs::read(input).map_err(|e| format!("cannot read {input:?}: {e}"))?, Budget::UNLIMITED, &mut |_| {})
        .map_err(|t| t.sentence(&input.to_string_lossy()))?
        .json;
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
