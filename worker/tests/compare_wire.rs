//! Comparison over the protocol (the Compare tab): `KeepAsBaseline` / `Compare` / `ClearBaseline`
//! through `Engine::query` on two dlrm ranks, checked against `compare::compare` and
//! each trace's own findings (`Session::findings`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::compare::{compare, CompareOptions, Pair};
use kinetoscope::engine::Engine;
use protocol::{Answer, ComparisonData, DeltaPair, Query};
use std::collections::BTreeSet;

const DLRM0: &str = "param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json";
const DLRM1: &str = "param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json";

/// One engine holding DLRM0 as the baseline and DLRM1 as the current trace.
fn engine_with_baseline() -> Engine {
    let mut engine = common::load_real(DLRM0);
    let (answer, _) = engine.query(&Query::KeepAsBaseline).unwrap();
    assert_eq!(answer, Answer::Baseline(Some(DLRM0.into())));
    engine
        .load(
            DLRM1,
            common::json_bytes(&common::real(DLRM1)),
            &mut |_, _, _| {},
        )
        .unwrap();
    engine
}

fn comparison(engine: &mut Engine, by_shape: bool) -> ComparisonData {
    match engine.query(&Query::Compare { by_shape }).unwrap().0 {
        Answer::Comparison(c) => *c,
        other => panic!("not a comparison: {other:?}"),
    }
}

fn same(p: DeltaPair, q: Pair) -> bool {
    p.base == q.base && p.cand == q.cand
}

#[test]
fn dlrm_ranks_over_the_wire_equal_compare_and_detect() {
    let mut engine = engine_with_baseline();
    let base = common::load_real(DLRM0);
    let cand = common::load_real(DLRM1);
    for by_shape in [false, true] {
        let wire = comparison(&mut engine, by_shape);
        let mut c = compare(base.session().unwrap(), cand.session().unwrap(), &CompareOptions { by_shape });
        kinetoscope::compare::order(&mut c, (None, None));
        assert_eq!((wire.base.as_str(), wire.cand.as_str()), (DLRM0, DLRM1));
        assert_eq!((wire.per_step, wire.by_shape), (c.per_step, by_shape));
        assert_eq!(
            (wire.base_steps, wire.cand_steps),
            (c.base_steps as u64, c.cand_steps as u64)
        );
        assert_eq!(wire.verdict, c.verdict.text);
        assert!(!wire.verdict.is_empty());
        assert_eq!(wire.summary.len(), c.summary.len());
        for (w, r) in wire.summary.iter().zip(&c.summary) {
            assert_eq!(w.key, r.metric.key());
            assert_eq!(
                (w.base, w.cand, w.delta, w.rel_delta),
                (r.base, r.cand, r.delta, r.rel_delta),
                "{}",
                w.key
            );
        }
        assert_eq!(wire.ops.len(), c.ops.len());
        assert!(!wire.ops.is_empty());
        for (w, r) in wire.ops.iter().zip(&c.ops) {
            assert_eq!(
                (w.name.as_str(), w.input_shapes.as_str(), w.status.as_str()),
                (r.name.as_str(), r.input_shapes.as_str(), r.status.key())
            );
            assert!(same(w.calls, r.calls) && same(w.self_cpu_ns, r.self_cpu_ns));
            assert!(
                same(w.self_device_ns, r.self_device_ns)
                    && same(w.device_total_ns, r.device_total_ns)
            );
        }
        assert_eq!(wire.kernels.len(), c.kernels.len());
        assert!(!wire.kernels.is_empty());
        for (w, r) in wire.kernels.iter().zip(&c.kernels) {
            assert_eq!(
                (w.name.as_str(), w.status.as_str(), w.tensor_cores),
                (r.name.as_str(), r.status.key(), r.tensor_cores)
            );
            assert!(
                same(w.calls, r.calls)
                    && same(w.total_ns, r.total_ns)
                    && same(w.mean_ns, r.mean_ns)
            );
        }
    }

    let rules = |t: &kinetoscope::session::Session| {
        t.findings()
            .iter()
            .map(|f| f.rule.to_owned())
            .collect::<BTreeSet<String>>()
    };
    let (b, c) = (rules(base.session().unwrap()), rules(cand.session().unwrap()));
    let names =
        |l: &[protocol::FindingChange]| l.iter().map(|f| f.rule.clone()).collect::<Vec<_>>();
    let wire = comparison(&mut engine, false);
    assert_eq!(
        names(&wire.findings.gone),
        b.difference(&c).cloned().collect::<Vec<_>>()
    );
    assert_eq!(
        names(&wire.findings.new),
        c.difference(&b).cloned().collect::<Vec<_>>()
    );
    assert_eq!(
        names(&wire.findings.kept),
        b.intersection(&c).cloned().collect::<Vec<_>>()
    );
    for f in &wire.findings.kept {
        assert!(
            f.base_title.is_some() && f.cand_title.is_some(),
            "{}",
            f.rule
        );
    }
}

#[test]
fn same_trace_both_sides_is_all_same() {
    let mut engine = common::load_real(DLRM0);
    engine.query(&Query::KeepAsBaseline).unwrap();
    let wire = comparison(&mut engine, false);
    assert!(wire.ops.iter().all(|r| r.status == "same"));
    assert!(wire.kernels.iter().all(|r| r.status == "same"));
    assert!(wire
        .summary
        .iter()
        .all(|r| r.delta.is_none_or(|d| d == 0.0)));
    assert!(wire.findings.new.is_empty() && wire.findings.gone.is_empty());
}

#[test]
fn baseline_survives_a_failed_load_and_clears() {
    let mut engine = Engine::new();
    assert!(
        engine.query(&Query::KeepAsBaseline).is_err(),
        "nothing loaded"
    );
    let mut engine2 = engine_with_baseline();
    assert!(engine2
        .load("empty.json", Vec::new(), &mut |_, _, _| {})
        .is_err());
    assert!(
        engine2.query(&Query::Compare { by_shape: false }).is_err(),
        "no candidate after a failed load"
    );
    engine2
        .load(
            DLRM1,
            common::json_bytes(&common::real(DLRM1)),
            &mut |_, _, _| {},
        )
        .unwrap();
    assert_eq!(
        comparison(&mut engine2, false).base,
        DLRM0,
        "the baseline survived"
    );
    let (answer, _) = engine2.query(&Query::ClearBaseline).unwrap();
    assert_eq!(answer, Answer::Baseline(None));
    let err = engine2
        .query(&Query::Compare { by_shape: false })
        .unwrap_err();
    assert!(err.contains("baseline"), "{err}");
    engine.query(&Query::ClearBaseline).unwrap();
}
