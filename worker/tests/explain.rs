//! "Why is this step slow?" on a synthetic trace whose ground truth is known by construction
//! (`synth::run` with one rank): every step fetches from the DataLoader for 1 ms and runs four
//! phases of six 50 µs kernels and an all-reduce; step 7's last kernel of phase 2
//! (`reduce_kernel`) runs 3 ms longer and its DataLoader fetch 0.5 ms longer. Kernel times
//! jitter by less than 2 µs each.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kinetoscope::analysis::breakdown::Category;
use kinetoscope::analysis::explain::{explain, sentences, Which};
use kinetoscope::engine::Engine;
use kinetoscope::synth::run::{generate_rank, Delay, RunSpec};

const SLOW_KERNEL: &str = "void at::native::reduce_kernel<512, 1>";

fn engine() -> Engine {
    let spec = RunSpec {
        ranks: 1,
        world_size: 1,
        steps: 10,
        first_step: 0,
        kernel_ns: 50_000,
        delays: vec![Delay { rank: 0, step: 7, collective: 2, extra_ns: 3_000_000 }],
        dataloader_ns: 1_000_000,
        dataloader_delays: vec![(7, 500_000)],
        ..RunSpec::default()
    };
    let mut e = Engine::new();
    e.load("slow-step.json", generate_rank(&spec, 0), &mut |_, _, _| {}).unwrap();
    e
}

fn near(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= tol
}

#[test]
fn the_slowest_step_names_the_slow_kernel_and_the_dataloader_wait() {
    let e = engine();
    let session = e.session().unwrap();
    let steps = session.steps(None);
    let x = explain(session.trace(), &steps, Which::Slowest).unwrap();
    assert_eq!(x.step, 7);
    assert!(near(x.delta_ns(), 3_500_000.0, 50_000.0), "step delta {}", x.delta_ns());
    // The kernel: +3 ms, same call count, its longest slice in the step as the evidence.
    let k = &x.kernels[0];
    assert_eq!(k.name, SLOW_KERNEL);
    assert!(near(k.delta_ns(), 3_000_000.0, 20_000.0), "kernel delta {}", k.delta_ns());
    assert_eq!(f64::from(k.step_calls), k.median_calls);
    let t = session.trace();
    let slice = k.slice.unwrap() as usize;
    assert_eq!(t.strings.get(t.slices.name[slice]), SLOW_KERNEL);
    assert!(t.slices.dur_ns[slice] >= 3_050_000, "the 3 ms longer one");
    // The DataLoader: +0.5 ms in the step breakdown; the kernel category carries the 3 ms.
    let cat = |c: Category| x.categories.iter().find(|d| d.category == c).unwrap().delta_ns();
    assert!(near(cat(Category::DataLoader), 500_000.0, 1_000.0), "dataloader {}", cat(Category::DataLoader));
    assert!(near(cat(Category::Kernel), 3_000_000.0, 20_000.0), "kernel category {}", cat(Category::Kernel));
    let text = sentences(&x).join("\n");
    assert!(text.contains("ProfilerStep#7 took"), "{text}");
    assert!(text.contains("DataLoader +500.0 µs"), "{text}");
    assert!(text.contains("Kernel void at::native::reduce_kernel<512, 1> +3.0"), "{text}");
}

#[test]
fn an_ordinary_step_has_nothing_to_explain() {
    let e = engine();
    let session = e.session().unwrap();
    let steps = session.steps(None);
    let x = explain(session.trace(), &steps, Which::Number(3)).unwrap();
    assert!(x.delta_ns().abs() < 50_000.0, "{}", x.delta_ns());
    assert!(x.kernels.iter().chain(&x.ops).all(|i| i.delta_ns().abs() < 100_000.0), "{:?}", x.kernels);
    assert!(x.categories.iter().all(|c| c.delta_ns().abs() < 50_000.0), "{:?}", x.categories);
    let err = explain(session.trace(), &steps, Which::Number(99)).unwrap_err();
    assert!(err.contains("no ProfilerStep#99") && err.contains("0, 1, 2"), "{err}");
}
