//! The tables of analysed runs, for `kinetoscope run --format parquet DIR`: the rows of
//! `run --format ndjson` split by kind, with the same columns and units, so docs/runs.md's
//! DuckDB queries read either (`tests/run_duckdb.rs` runs both recipes against `run --json`).
//!
//! | table | one row per | columns |
//! |---|---|---|
//! | `steps` | rank x step | `run`, `rank`, `step`, `dur_us`, `outlier` |
//! | `collectives` | collective instance x rank | `run`, `collective`, `key`, `name`, `step`, `index_in_step`, `rank`, `start_us`, `end_us`, `arrival_order`, `last`, `wait_us`, `clock` |
//! | `diagnostics` | diagnostic | `run`, `diagnostic`, `message` |
//!
//! `run` numbers the runs of one output from 0, as in the NDJSON rows.

use super::table::{Data, Table, Texts};
use crate::analysis::ops::us;
use crate::run::{rank_at, RunAnalysis};

/// The table names, in the order [`tables`] returns them.
pub const TABLES: [&str; 3] = ["steps", "collectives", "diagnostics"];

/// The three tables of `runs`, named as [`TABLES`].
pub fn tables(runs: &[RunAnalysis]) -> Vec<(&'static str, Table)> {
    vec![("steps", steps(runs)), ("collectives", collectives(runs)), ("diagnostics", diagnostics(runs))]
}

fn int(v: impl TryInto<i64>) -> i64 {
    v.try_into().unwrap_or(i64::MAX)
}

fn steps(runs: &[RunAnalysis]) -> Table {
    let (mut run, mut rank, mut step, mut dur, mut outlier) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, r) in runs.iter().enumerate() {
        for c in &r.steps {
            run.push(int(i));
            rank.push(rank_at(&r.ranks, c.member).map(i64::from));
            step.push(int(c.step));
            dur.push(us(c.dur_ns));
            outlier.push(c.outlier);
        }
    }
    Table::default()
        .column("run", Data::Int(run))
        .column("rank", Data::OptInt(rank))
        .column("step", Data::Int(step))
        .column("dur_us", Data::Float(dur))
        .column("outlier", Data::Bool(outlier))
}

/// Column vectors of the `collectives` table.
#[derive(Default)]
struct Collectives {
    run: Vec<i64>,
    collective: Vec<i64>,
    key: Texts,
    name: Texts,
    step: Vec<Option<i64>>,
    index_in_step: Vec<i64>,
    rank: Vec<Option<i64>>,
    start_us: Vec<f64>,
    end_us: Vec<f64>,
    arrival_order: Vec<i64>,
    last: Vec<bool>,
    wait_us: Vec<f64>,
    clock: Texts,
}

fn collectives(runs: &[RunAnalysis]) -> Table {
    let mut c = Collectives::default();
    for (i, r) in runs.iter().enumerate() {
        // Times from the run's first arrival, as the NDJSON rows give them.
        let t0 = r.times.iter().flat_map(|t| t.arrivals.iter().map(|a| a.start_ns)).min().unwrap_or(0);
        for (n, (inst, t)) in r.matching.instances.iter().zip(&r.times).enumerate() {
            for a in &t.arrivals {
                c.run.push(int(i));
                c.collective.push(int(n));
                c.key.push(&inst.key);
                c.name.push(&inst.name);
                c.step.push(inst.step.map(int));
                c.index_in_step.push(i64::from(inst.index_in_step));
                c.rank.push(rank_at(&r.ranks, a.member).map(i64::from));
                c.start_us.push(us(a.start_ns - t0));
                c.end_us.push(us(a.end_ns - t0));
                c.arrival_order.push(i64::from(a.order));
                c.last.push(t.last == a.member);
                c.wait_us.push(us(a.wait_ns));
                c.clock.push(r.clock.label());
            }
        }
    }
    Table::default()
        .column("run", Data::Int(c.run))
        .column("collective", Data::Int(c.collective))
        .column("key", Data::Text(c.key))
        .column("name", Data::Text(c.name))
        .column("step", Data::OptInt(c.step))
        .column("index_in_step", Data::Int(c.index_in_step))
        .column("rank", Data::OptInt(c.rank))
        .column("start_us", Data::Float(c.start_us))
        .column("end_us", Data::Float(c.end_us))
        .column("arrival_order", Data::Int(c.arrival_order))
        .column("last", Data::Bool(c.last))
        .column("wait_us", Data::Float(c.wait_us))
        .column("clock", Data::Text(c.clock))
}

fn diagnostics(runs: &[RunAnalysis]) -> Table {
    let (mut run, mut kind, mut message) = (Vec::new(), Texts::default(), Texts::default());
    for (i, r) in runs.iter().enumerate() {
        for d in &r.diagnostics {
            run.push(int(i));
            kind.push(d.kind);
            message.push(&d.message);
        }
    }
    Table::default().column("run", Data::Int(run)).column("diagnostic", Data::Text(kind)).column("message", Data::Text(message))
}
