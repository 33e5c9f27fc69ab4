//! The whole trace at a glance (the Summary tab): step time, GPU metrics and what bounds the
//! steps, from the session's cached analyses (the numbers of `report --json`'s `step_stats`,
//! `gpus` and `critical_path`).
//!
//! What bounds the steps: the critical-path class with the most path time summed over every
//! step (a long step weighs more than a short one, as it costs more), with how many steps it
//! bounds on its own.

use crate::analysis::critical_path::{BoundBy, StepPath};
use crate::session::Session;
use protocol::{BoundGlance, Glance, GpuGlance, StepGlance};

/// The glance of `session`'s whole trace.
pub fn glance(session: &Session) -> Glance {
    let steps = session.whole_steps().stats.as_ref().map(|st| StepGlance {
        count: st.duration.count as u64,
        mean_ns: st.duration.mean,
        p95_ns: st.duration.p95,
    });
    let gpus = session
        .gpus(None)
        .iter()
        .map(|m| GpuGlance {
            device: m.device,
            utilization_pct: m.utilization * 100.0,
            sm_efficiency_pct: m.sm_efficiency.map(|v| v * 100.0),
            achieved_occupancy_pct: m.occupancy_pct,
            tensor_core_pct: m.tensor_core_share.map(|v| v * 100.0),
        })
        .collect();
    Glance {
        steps,
        gpus,
        bound_by: bound_by(session.critical_paths()),
    }
}

/// The class holding most of all paths' time; `None` without a path.
fn bound_by(paths: &[StepPath]) -> Option<BoundGlance> {
    let mut total = [0i64; BoundBy::ALL.len()];
    for p in paths {
        for (t, s) in total.iter_mut().zip(p.shares.iter()) {
            *t += s;
        }
    }
    let all: i64 = total.iter().sum();
    if all <= 0 {
        return None;
    }
    let class = BoundBy::most(&total);
    Some(BoundGlance {
        class: class.as_str().to_owned(),
        label: class.label().to_owned(),
        share_pct: total[class.index()] as f64 * 100.0 / all as f64,
        steps_bound: paths.iter().filter(|p| p.bound_by() == class).count() as u32,
        steps: paths.len() as u32,
    })
}
