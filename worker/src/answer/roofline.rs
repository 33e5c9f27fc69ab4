//! The roofline on the wire: each kernel name with known FLOPs and bytes as a point
//! (arithmetic intensity, achieved TFLOP/s), the GPU's peaks for the two roofs, and one kernel
//! slice's work for the details panel. Every number is the session's work index
//! (`analysis::work`), so the chart, the kernel table and `report --json` agree.
//!
//! The compute roof is drawn for the *dominant* peak class: the one the most plotted kernel
//! time runs at (bf16 for a mixed-precision model whose GEMMs are bf16, even when small fp32
//! kernels outnumber them).

use super::slice_ref;
use crate::analysis::roofline;
use crate::analysis::work::dtype::PeakClass;
use crate::analysis::work::peaks::{self, Peaks};
use crate::session::Session;
use protocol::{LeftOffKernel, PeakSet, RooflineData, RooflinePoint, SliceWork};

/// The roofline of the whole trace.
pub fn roofline(session: &Session) -> RooflineData {
    let work = session.work();
    let table = session.kernels(None);
    let mut points = Vec::new();
    let mut left_off = Vec::new();
    let mut time_by_class = [0i64; PeakClass::ALL.len()];
    for row in &table.rows {
        let p = match roofline::point(row) {
            Ok(p) => p,
            Err(reason) => {
                left_off.push(LeftOffKernel {
                    name: row.name.clone(),
                    calls: row.calls(),
                    total_ns: row.total_ns,
                    share: row.share,
                    reason: reason.key().to_owned(),
                    why: reason.text(),
                });
                continue;
            }
        };
        let a = p.achieved;
        let peak = a.peak.unwrap_or(PeakClass::Fp32);
        time_by_class[peak as usize] += a.measured_ns;
        points.push(RooflinePoint {
            name: row.name.clone(),
            calls: row.calls(),
            total_ns: row.total_ns,
            flops: p.flops,
            bytes: p.bytes,
            intensity: p.flops / p.bytes,
            tflops: p.tflops,
            gbps: p.gbps,
            peak: peak.key().to_owned(),
            bound: a.bound.map(|b| b.key().to_owned()),
            peak_pct: a.peak_pct,
        });
    }
    let dominant = PeakClass::ALL
        .into_iter()
        .filter(|c| time_by_class[*c as usize] > 0)
        .max_by_key(|c| time_by_class[*c as usize]);
    let roof = work
        .peaks()
        .zip(dominant)
        .and_then(|(p, c)| Some((c.key().to_owned(), p.tflops(c)?)));
    RooflineData {
        device: work.device().to_owned(),
        known: peaks::lookup(work.device()).is_some(),
        peaks: work.peaks().map(peak_set),
        roof,
        points,
        left_off,
    }
}

/// The wire form of `p`.
fn peak_set(p: &Peaks) -> PeakSet {
    PeakSet {
        model: p.model.clone(),
        source: p.source.clone(),
        tflops: PeakClass::ALL
            .into_iter()
            .filter_map(|c| Some((c.key().to_owned(), p.tflops[c as usize]?)))
            .collect(),
        gbps: p.gbps,
    }
}

/// The work of kernel slice `id` with its rates over the slice's duration; `None` when it is
/// not a kernel with known work.
pub fn slice_work(session: &Session, id: u32) -> Option<SliceWork> {
    let work = session.work();
    let w = work.kernel(id)?;
    let trace = session.trace();
    let dur = *trace.slices.dur_ns.get(id as usize)?;
    let a = work.achieved([(id, dur)]);
    Some(SliceWork {
        flops: w.flops,
        bytes: w.bytes,
        tflops: a.tflops,
        gbps: a.gbps,
        peak_pct: a.peak_pct,
        bandwidth_pct: a.bandwidth_pct,
        bound: a.bound.map(|b| b.key().to_owned()),
        peak: w.peak.map(|p| p.key().to_owned()),
        op: slice_ref(trace, w.op),
    })
}
