//! Triton kernels to source (`analysis::source`, docs/definitions.md "Kernel sources"): the
//! `kernel_file` args on the launching `cpu_op`, attached to the kernels it launched, in the
//! kernel table and `report --json`. Counts checked against an independent python count over
//! the raw JSON (cpu_ops with a `kernel_file` arg; kernels whose correlation matches a runtime
//! call on the op's thread inside the op's span): hta triton_example 1 op, 1 kernel; vLLM
//! capture 48 ops, 0 kernels (the capture runs nothing).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods, clippy::disallowed_types)]

use crate::common;

use kinetoscope::analysis::kernels::kernel_table;
use kinetoscope::analysis::source::SourceKeys;
use kinetoscope::answer::details::slice_details;
use kinetoscope::model::{CatClass, Trace};
use kinetoscope::report::kernels::kernels_json;

/// (cpu_ops with a source, kernels with a source).
fn counts(t: &Trace) -> (usize, usize) {
    let keys = SourceKeys::default();
    let of = |c: CatClass| (0..t.slices.len() as u32).filter(move |&i| t.class(t.slices.cat[i as usize]) == c);
    let ops = of(CatClass::CpuOp).filter(|&i| keys.of_op(t, i).is_some()).count();
    let kernels = of(CatClass::Kernel).filter(|&i| keys.of_kernel(t, i).is_some()).count();
    (ops, kernels)
}

#[test]
fn hta_triton_example() {
    let engine = common::load_real("hta__triton_example.json.gz");
    let t = engine.session().unwrap().trace();
    assert!(SourceKeys::any(t));
    assert_eq!(counts(t), (1, 1));
    let table = kernel_table(t, None);
    let with: Vec<_> = table.rows.iter().filter(|r| r.source.is_some()).collect();
    assert_eq!(with.len(), 1);
    assert_eq!(with[0].name, "triton_poi_fused_add_cos_sin_0");
    let src = with[0].source.as_ref().unwrap();
    assert_eq!(src.file, "/tmp/torchinductor_bcoutinho/qa/cqaokwf2bph4egogzevc22vluasiyuui4i54zpemp6knbsggfbuu.py");
    assert_eq!((src.line, src.function.as_deref()), (None, None), "a bare path");
    assert_eq!(src.kernel_hash.as_deref(), Some("cqaokwf2bph4egogzevc22vluasiyuui4i54zpemp6knbsggfbuu"));
    assert_eq!((src.num_warps, src.num_stages), (None, None), "this trace writes neither");
    // The details panel of the kernel and of its op show the same source.
    let session = engine.session().unwrap();
    let kernel = (0..t.slices.len() as u32).find(|&i| t.class(t.slices.cat[i as usize]) == CatClass::Kernel && t.strings.get(t.slices.name[i as usize]) == with[0].name).unwrap();
    let shown = slice_details(t, session.index(), kernel).unwrap().source.unwrap();
    assert_eq!(shown.file, src.file);
    assert_eq!(shown.op.as_ref().map(|r| r.id), Some(src.op));
    assert_eq!(slice_details(t, session.index(), src.op).unwrap().source.unwrap().file, src.file);
    let json = kernels_json(&table.rows);
    let row = json.as_array().unwrap().iter().find(|r| r["name"] == "triton_poi_fused_add_cos_sin_0").unwrap();
    assert_eq!(row["source"]["file"], src.file.as_str());
    assert!(row["source"]["line"].is_null());
}

#[test]
fn vllm_capture_ops_carry_sources_their_kernels_never_ran() {
    let engine = common::load_real("tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz");
    let t = engine.session().unwrap().trace();
    assert_eq!(counts(t), (48, 0));
    let keys = SourceKeys::default();
    let first = (0..t.slices.len() as u32)
        .filter_map(|i| keys.of_op(t, i))
        .min_by_key(|s| t.slices.start_ns[s.op as usize])
        .unwrap();
    assert_eq!(first.kernel_name.as_deref(), Some("triton_poi_fused_0"));
    assert_eq!((first.num_warps, first.num_stages), (Some(8), Some(1)));
    assert!(kernel_table(t, None).rows.iter().all(|r| r.source.is_none()));
}

/// PyTorch >= 2.11's `path:line:fn` form, and a near miss: a kernel launched from an op
/// without `kernel_file` (beside one with it) has no source.
#[test]
fn path_line_function_and_a_kernel_without_source() {
    let (engine, _) = common::load_str(
        r#"[{"ph":"X","cat":"cpu_op","name":"triton_poi_fused_1","pid":1,"tid":1,"ts":0,"dur":20,"args":{"kernel_file":"/src/model.py:42:triton_poi_fused_1","num_warps":4,"num_stages":2}},
        {"ph":"X","cat":"cuda_runtime","name":"cuLaunchKernel","pid":1,"tid":1,"ts":1,"dur":5,"args":{"correlation":1}},
        {"ph":"X","cat":"kernel","name":"triton_poi_fused_1","pid":0,"tid":7,"ts":10,"dur":5,"args":{"correlation":1}},
        {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":30,"dur":20},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":31,"dur":5,"args":{"correlation":2}},
        {"ph":"X","cat":"kernel","name":"add_kernel","pid":0,"tid":7,"ts":40,"dur":5,"args":{"correlation":2}}]"#,
    );
    let t = engine.session().unwrap().trace();
    assert_eq!(counts(t), (1, 1));
    let table = kernel_table(t, None);
    let triton = table.rows.iter().find(|r| r.name == "triton_poi_fused_1").unwrap();
    let src = triton.source.as_ref().unwrap();
    assert_eq!((src.file.as_str(), src.line, src.function.as_deref()), ("/src/model.py", Some(42), Some("triton_poi_fused_1")));
    assert_eq!((src.num_warps, src.num_stages), (Some(4), Some(2)));
    assert!(table.rows.iter().find(|r| r.name == "add_kernel").unwrap().source.is_none());
}
