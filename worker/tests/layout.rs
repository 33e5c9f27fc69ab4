//! The timeline's lane order (issue 45): GPU streams first, then the process whose thread
//! holds `ProfilerStep#N` with that thread first, on every real fixture.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use common::for_each_real_fixture;
use kinetoscope::analysis::steps::profiler_steps;

#[test]
fn gpu_streams_come_first_then_the_step_thread() {
    for_each_real_fixture(|path| {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (e, _) = common::load(path);
        let (trace, layout) = (e.trace().unwrap(), e.layout().unwrap());
        let kinds: Vec<&str> = layout.groups.iter().map(|g| g.kind.as_str()).collect();
        let gpus = kinds.iter().take_while(|k| **k == "gpu").count();
        assert!(kinds[gpus..].iter().all(|k| *k == "cpu"), "{name}: GPU groups first: {kinds:?}");
        // Every device stream, communication ones included, is in those first groups.
        let shown: usize = layout.groups[..gpus].iter().map(|g| g.lanes.len()).sum();
        let device_lanes: usize = trace.processes.iter().filter(|p| p.kind == kinetoscope::model::ProcessKind::Gpu).map(|p| p.lanes.len()).sum();
        assert_eq!(shown, device_lanes, "{name}");
        if let Some(step) = profiler_steps(trace).first() {
            let lane = trace.slices.lane[step.slice as usize].0;
            let first_cpu = layout.groups.get(gpus).and_then(|g| g.lanes.first()).map(|l| l.lane);
            assert_eq!(first_cpu, Some(lane), "{name}: the ProfilerStep thread leads the CPU lanes");
        }
    });
}
