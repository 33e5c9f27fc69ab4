//! The tables of one loaded trace, for `kinetoscope export --format parquet`: the model as a
//! dataframe user expects it, one row per thing, every table led by `trace` (the file name) so
//! the tables of many traces stack.
//!
//! | table | one row per | from |
//! |---|---|---|
//! | `slices` | slice (CPU op, annotation, runtime call, kernel, copy...) | the model's slice columns |
//! | `kernels` | kernel call, with class, precision, grid / block, launch call and op | `analysis::kernels` |
//! | `ops` | op table row (`key_averages()`) | `Session::op_table` |
//! | `steps` | step, with its breakdown and what bounds it | `Session::whole_steps`, `critical_paths` |
//! | `flows` | flow bound at both ends | `Trace::flows` |
//! | `counters` | counter sample x series | `Trace::counters` (their args' numbers) |
//! | `memory` | `[memory]` event | `Session::memory` |
//!
//! Times are `i64` ns from the trace start, as in the model (`ts_ns`, `dur_ns`); slice ids are
//! the model's, so `kernels.launch`, `flows.from_slice` and `slices.parent` join `slices.slice`.
//! The numbers are the ones `report --json` prints (the same analyses): `tests/export_parquet.rs`
//! checks each table's row count and sums against it on every real fixture.
//!
//! Cost: one pass per table over its columns; the string pool is shared, not copied per row.

use super::table::{Data, Table, Texts};
use crate::analysis::breakdown::CATEGORIES;
use crate::analysis::critical_path::BoundBy;
use crate::analysis::kernel_context::KernelClasses;
use crate::analysis::kernels::LaunchArgs;
use crate::analysis::ops::OpOptions;
use crate::analysis::args::ArgKey;
use crate::analysis::kernel_class::TensorCores;
use crate::analysis::ops::OpKind;
use crate::model::{link::enclosing_op, Trace, NONE, NO_ID};
use crate::session::Session;
use parquet::data_type::ByteArray;

/// The table names.
pub const TABLES: [&str; 7] = ["slices", "kernels", "ops", "steps", "flows", "counters", "memory"];

/// Table `name` (one of [`TABLES`]) of `session`; `None` for another name. Each table is built
/// on its own (`Sink::append_each` builds them on threads of their own).
pub fn table(session: &Session, name: &str) -> Option<Table> {
    let file = session.name();
    let trace = session.trace();
    Some(match name {
        "slices" => slices(file, trace, &Pool::of(trace)),
        "kernels" => kernels(file, trace, &Pool::of(trace)),
        "ops" => ops(file, session),
        "steps" => steps(file, session),
        "flows" => flows(file, trace, &Pool::of(trace)),
        "counters" => counters(file, trace),
        "memory" => memory(file, session),
        _ => return None,
    })
}

/// The trace's string pool as a Parquet dictionary: every `StrId` is its own index.
struct Pool(Vec<ByteArray>);

impl Pool {
    fn of(trace: &Trace) -> Self {
        let strings = &trace.strings;
        let dict = (0..strings.len())
            .map(|i| ByteArray::from(strings.bytes_of(crate::model::StrId(u32::try_from(i).unwrap_or(u32::MAX))).to_vec()))
            .collect();
        Self(dict)
    }

    /// Texts over the pool, pushed by `StrId`.
    fn texts(&self) -> Texts {
        Texts::with_dict(self.0.clone())
    }
}

/// `trace` repeated `rows` times.
fn trace_column(name: &str, rows: usize) -> Data {
    Data::Text(Texts::repeat(name, rows))
}

fn id(v: u32) -> Option<i64> {
    (v != NO_ID).then_some(i64::from(v))
}

fn slice_ref(v: u32) -> Option<i64> {
    (v != NONE).then_some(i64::from(v))
}

fn slices(name: &str, trace: &Trace, pool: &Pool) -> Table {
    let s = &trace.slices;
    let (mut names, mut cats, mut pids, mut tids, mut lanes) = (pool.texts(), pool.texts(), pool.texts(), pool.texts(), pool.texts());
    for i in 0..s.len() {
        names.push_id(s.name[i].0);
        cats.push_id(s.cat[i].0);
        let lane = trace.lanes.get(s.lane[i].0 as usize);
        let process = lane.and_then(|l| trace.processes.get(l.process as usize));
        pids.push_id(process.map_or(Texts::NULL, |p| p.pid.0));
        tids.push_id(lane.map_or(Texts::NULL, |l| l.tid.0));
        lanes.push_id(lane.map_or(Texts::NULL, |l| l.name.0));
    }
    Table::default()
        .column("trace", trace_column(name, s.len()))
        .column("slice", Data::Int((0..s.len() as i64).collect()))
        .column("name", Data::Text(names))
        .column("cat", Data::Text(cats))
        .column("pid", Data::Text(pids))
        .column("tid", Data::Text(tids))
        .column("lane", Data::Text(lanes))
        .column("ts_ns", Data::Int(s.start_ns.clone()))
        .column("dur_ns", Data::Int(s.dur_ns.clone()))
        .column("depth", Data::Int(s.depth.iter().map(|&d| i64::from(d)).collect()))
        .column("parent", Data::OptInt(s.parent.iter().map(|&p| slice_ref(p)).collect()))
        .column("correlation", Data::OptInt(s.correlation.iter().map(|&c| id(c)).collect()))
        .column("external_id", Data::OptInt(s.external_id.iter().map(|&c| id(c)).collect()))
}

/// `[x, y, z]` of a launch-configuration arg (`grid`, `block`), each if present.
fn dims(key: &ArgKey, args: &[u8]) -> [Option<i64>; 3] {
    let mut out = [None; 3];
    let text = key.raw(args).and_then(|raw| std::str::from_utf8(raw).ok()).unwrap_or_default();
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
    for (slot, part) in out.iter_mut().zip(inner.split(',')) {
        *slot = part.trim().parse().ok();
    }
    out
}

fn kernels(name: &str, trace: &Trace, pool: &Pool) -> Table {
    let s = &trace.slices;
    let ids = trace.kernels_in(None);
    let launch_args = LaunchArgs::new();
    let (grid_key, block_key) = (ArgKey::new("grid"), ArgKey::new("block"));
    let mut reader = trace.args.reader();
    let (mut names, mut devices, mut streams, mut launch_names, mut ops) = (pool.texts(), pool.texts(), pool.texts(), pool.texts(), pool.texts());
    let (mut classes, mut precisions) = (Texts::default(), Texts::default());
    let mut dims_of: [Vec<Option<i64>>; 6] = Default::default();
    let mut kinds = std::collections::HashMap::new();
    let kernel_classes = KernelClasses::new(trace);
    let (mut tensor_cores, mut bps, mut occupancy, mut launches) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &k in &ids {
        let i = k as usize;
        names.push_id(s.name[i].0);
        let lane = trace.lanes.get(s.lane[i].0 as usize);
        streams.push_id(lane.map_or(Texts::NULL, |l| l.tid.0));
        devices.push_id(lane.and_then(|l| trace.processes.get(l.process as usize)).map_or(Texts::NULL, |p| p.pid.0));
        // Classed once per distinct name: a trace has millions of calls of a few hundred kernels.
        let kind = *kinds.entry(s.name[i]).or_insert_with(|| kernel_classes.kind(trace, s.name[i]));
        classes.push(kind.class.as_str());
        precisions.push(kind.precision.as_str());
        tensor_cores.push(kind.tensor_cores == TensorCores::Yes);
        let args = reader.bytes(s.args[i]);
        let (b, o) = launch_args.of(args);
        bps.push(b);
        occupancy.push(o);
        for (column, v) in dims_of.iter_mut().zip(dims(&grid_key, args).into_iter().chain(dims(&block_key, args))) {
            column.push(v);
        }
        let launch = s.launch[i];
        launches.push(slice_ref(launch));
        launch_names.push_id(s.name.get(launch as usize).map_or(Texts::NULL, |n| n.0));
        let op = (launch != NONE).then(|| enclosing_op(trace, launch)).flatten();
        ops.push_id(op.and_then(|o| s.name.get(o as usize)).map_or(Texts::NULL, |n| n.0));
    }
    let pick = |f: fn(i64) -> i64, v: &[i64]| -> Vec<i64> { ids.iter().map(|&k| v.get(k as usize).copied().map_or(0, f)).collect() };
    let [gx, gy, gz, bx, by, bz] = dims_of;
    Table::default()
        .column("trace", trace_column(name, ids.len()))
        .column("slice", Data::Int(ids.iter().map(|&k| i64::from(k)).collect()))
        .column("name", Data::Text(names))
        .column("device", Data::Text(devices))
        .column("stream", Data::Text(streams))
        .column("ts_ns", Data::Int(pick(|t| t, &s.start_ns)))
        .column("dur_ns", Data::Int(pick(|d| d, &s.dur_ns)))
        .column("class", Data::Text(classes))
        .column("precision", Data::Text(precisions))
        .column("tensor_cores", Data::Bool(tensor_cores))
        .column("grid_x", Data::OptInt(gx))
        .column("grid_y", Data::OptInt(gy))
        .column("grid_z", Data::OptInt(gz))
        .column("block_x", Data::OptInt(bx))
        .column("block_y", Data::OptInt(by))
        .column("block_z", Data::OptInt(bz))
        .column("blocks_per_sm", Data::OptFloat(bps))
        .column("occupancy_pct", Data::OptFloat(occupancy))
        .column("correlation", Data::OptInt(ids.iter().map(|&k| s.correlation.get(k as usize).and_then(|&c| id(c))).collect()))
        .column("launch", Data::OptInt(launches))
        .column("launch_name", Data::OptText(launch_names))
        .column("op", Data::OptText(ops))
}

fn ops(name: &str, session: &Session) -> Table {
    let table = session.op_table(&OpOptions { by_shape: false, range: None });
    let rows = &table.rows;
    let (mut names, mut kinds) = (Texts::default(), Texts::default());
    for r in rows {
        names.push(&r.name);
        kinds.push(match r.kind {
            OpKind::Op => "op",
            OpKind::Annotation => "annotation",
            OpKind::Runtime => "runtime",
            OpKind::Memory => "memory",
        });
    }
    let int = |f: fn(&crate::analysis::ops::OpRow) -> i64| Data::Int(rows.iter().map(f).collect());
    let opt = |f: fn(&crate::analysis::ops::OpRow) -> Option<u64>| {
        Data::OptInt(rows.iter().map(|r| f(r).map(|v| i64::try_from(v).unwrap_or(i64::MAX))).collect())
    };
    Table::default()
        .column("trace", trace_column(name, rows.len()))
        .column("name", Data::Text(names))
        .column("kind", Data::Text(kinds))
        .column("calls", int(|r| i64::try_from(r.calls).unwrap_or(i64::MAX)))
        .column("self_cpu_ns", int(|r| r.self_cpu_ns))
        .column("cpu_total_ns", int(|r| r.cpu_total_ns))
        .column("self_device_ns", int(|r| r.self_device_ns))
        .column("device_total_ns", int(|r| r.device_total_ns))
        .column("self_cpu_mem_bytes", int(|r| r.self_cpu_mem))
        .column("cpu_mem_bytes", int(|r| r.cpu_mem))
        .column("self_device_mem_bytes", int(|r| r.self_device_mem))
        .column("device_mem_bytes", int(|r| r.device_mem))
        .column("flops", opt(|r| r.flops))
        .column("bytes", opt(|r| r.bytes))
}

fn steps(name: &str, session: &Session) -> Table {
    let trace = session.trace();
    let steps = &session.whole_steps().steps;
    let paths = session.critical_paths();
    let path_of = |n: u64| paths.iter().find(|p| p.step == Some(n));
    let mfu = session.step_mfu(session.whole_steps());
    let (mut names, mut bound) = (Texts::default(), Texts::default());
    for s in steps {
        names.push(&crate::analysis::steps::step_name(trace, s.number));
        bound.push_opt(path_of(s.number).map(|p| p.bound_by().as_str()));
    }
    let int = |f: &dyn Fn(&crate::analysis::steps::StepSpan) -> i64| Data::Int(steps.iter().map(f).collect());
    let mut table = Table::default()
        .column("trace", trace_column(name, steps.len()))
        .column("step", int(&|s| i64::try_from(s.number).unwrap_or(i64::MAX)))
        .column("name", Data::Text(names))
        .column("start_ns", int(&|s| s.start_ns))
        .column("dur_ns", int(&|s| s.dur_ns()))
        .column("cpu_start_ns", int(&|s| s.cpu_start_ns))
        .column("cpu_dur_ns", int(&|s| s.cpu_dur_ns()))
        .column("gpu_start_ns", Data::OptInt(steps.iter().map(|s| s.gpu.map(|g| g.0)).collect()))
        .column("gpu_dur_ns", int(&|s| s.gpu_dur_ns()))
        .column("incomplete", Data::Bool(steps.iter().map(|s| s.incomplete).collect()))
        .column("mfu_pct", Data::OptFloat(steps.iter().enumerate().map(|(i, _)| mfu.get(i).copied().flatten()).collect()));
    for c in CATEGORIES {
        table = table.column(format!("{}_ns", c.key()), Data::Int(steps.iter().map(|s| s.breakdown.get(c)).collect()));
    }
    table = table.column("bound_by", Data::OptText(bound));
    for b in BoundBy::ALL {
        let shares = steps.iter().map(|s| path_of(s.number).map(|p| p.shares[b.index()])).collect();
        table = table.column(format!("path_{}_ns", b.as_str()), Data::OptInt(shares));
    }
    table
}

fn flows(name: &str, trace: &Trace, pool: &Pool) -> Table {
    let f = &trace.flows;
    let mut cats = pool.texts();
    f.iter().for_each(|x| cats.push_id(x.cat.0));
    let at = |i: u32| trace.slices.start_ns.get(i as usize).copied().unwrap_or(0);
    Table::default()
        .column("trace", trace_column(name, f.len()))
        .column("from_slice", Data::Int(f.iter().map(|x| i64::from(x.from)).collect()))
        .column("to_slice", Data::Int(f.iter().map(|x| i64::from(x.to)).collect()))
        .column("cat", Data::Text(cats))
        .column("from_ts_ns", Data::Int(f.iter().map(|x| at(x.from)).collect()))
        .column("to_ts_ns", Data::Int(f.iter().map(|x| at(x.to)).collect()))
}

fn counters(name: &str, trace: &Trace) -> Table {
    let c = &trace.counters;
    let mut reader = trace.args.reader();
    let (mut pids, mut names, mut series) = (Texts::default(), Texts::default(), Texts::default());
    let (mut ts, mut values) = (Vec::new(), Vec::new());
    for i in 0..c.ts_ns.len() {
        // A sample's args are one number per series (`{"allocated": 1.5, "reserved": 4}`);
        // values that are not numbers are not samples.
        let Ok(serde_json::Value::Object(map)) = serde_json::from_slice(reader.bytes(c.args[i])) else {
            continue;
        };
        let pid = trace.processes.get(c.process[i] as usize).map(|p| trace.strings.get(p.pid));
        let counter = trace.strings.get(c.name[i]);
        for (key, value) in map {
            let Some(v) = value.as_f64() else { continue };
            pids.push_opt(pid.as_deref());
            names.push(&counter);
            series.push(&key);
            ts.push(c.ts_ns[i]);
            values.push(v);
        }
    }
    Table::default()
        .column("trace", trace_column(name, ts.len()))
        .column("pid", Data::OptText(pids))
        .column("name", Data::Text(names))
        .column("series", Data::Text(series))
        .column("ts_ns", Data::Int(ts))
        .column("value", Data::Float(values))
}

fn memory(name: &str, session: &Session) -> Table {
    let mut devices = Texts::default();
    let (mut ts, mut bytes, mut allocated, mut reserved) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for d in &session.memory().devices {
        for m in &d.series {
            devices.push(&d.label);
            ts.push(m.ts_ns);
            bytes.push(m.bytes);
            allocated.push(m.allocated);
            reserved.push(m.reserved);
        }
    }
    Table::default()
        .column("trace", trace_column(name, ts.len()))
        .column("device", Data::Text(devices))
        .column("ts_ns", Data::Int(ts))
        .column("bytes", Data::Int(bytes))
        .column("allocated_bytes", Data::Int(allocated))
        .column("reserved_bytes", Data::Int(reserved))
}
