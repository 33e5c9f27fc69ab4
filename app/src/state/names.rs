//! Short names for C++ kernel and op names that a table cell cannot show whole.
//!
//! Input: a name as the trace has it (`void at::native::vectorized_elementwise_kernel<4,
//! at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, ...)`). Output: the part
//! that tells it from its neighbours (`vectorized_elementwise_kernel<4, FillFunctor<float>,
//! Array<char*, 1>>`): the return type, namespaces, parameter lists and `operator()` frames
//! are dropped, lambdas become `λ#N`, template arguments are kept and shortened the same way.
//! A name that is not a C++ template (no `::` and `<`), or does not parse (unbalanced
//! brackets), is returned as it is.
//!
//! Why not cut the end or elide the middle by length: five demo kernels and eight of a dlrm
//! kernel diff share their first 35 characters and differ in a functor deep in the template
//! arguments, which a fixed-length cut loses. Names whose short forms collide in one list
//! ([`short_names`]) keep the part that tells them apart, the first of [`MORE`] that does:
//! lambda signatures, namespaces, parameter lists, or all three (the same kernel built by two
//! PyTorch versions differs only in `int` vs `long` parameters; DeepEP's `intranode::combine`
//! and `internode::combine` only in a namespace). Only when none does is the whole name shown,
//! which a narrow cell cuts to `void cutlass::device_kernel<…`. The whole name stays in the
//! cell's `title`.
//!
//! Cost: one pass over the name per bracket level; names are at most a few hundred bytes; a
//! colliding group is rendered again at most [`MORE`]`.len()` times.

use std::collections::HashMap;

/// What a short form keeps beyond the base form.
#[derive(Clone, Copy, Default)]
struct Detail {
    /// Lambdas as `λ(char*, long)#1` rather than `λ#1`.
    lambdas: bool,
    /// Namespaces (but `(anonymous namespace)`, which tells nothing).
    namespaces: bool,
    /// Parameter lists, shortened like template arguments.
    params: bool,
}

/// The details tried, in order, on names whose short forms collide.
const MORE: [Detail; 4] = [
    Detail { lambdas: true, namespaces: false, params: false },
    Detail { lambdas: false, namespaces: true, params: false },
    Detail { lambdas: false, namespaces: false, params: true },
    Detail { lambdas: true, namespaces: true, params: true },
];

/// Short forms of `names` (see the module docs): names whose short forms collide keep the
/// first detail of [`MORE`] that tells every one of them apart, else their whole text.
pub fn short_names<'a>(names: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
    let mut groups: HashMap<String, Vec<&str>> = HashMap::new();
    for name in names.clone() {
        if let Some(short) = short_with(name, Detail::default()) {
            let group = groups.entry(short).or_default();
            if !group.contains(&name) {
                group.push(name);
            }
        }
    }
    let mut chosen: HashMap<&str, String> = HashMap::new();
    for (short, group) in groups {
        if let [name] = group[..] {
            chosen.insert(name, short);
            continue;
        }
        let forms = MORE.iter().find_map(|&d| {
            let forms: Option<Vec<String>> = group.iter().map(|n| short_with(n, d)).collect();
            forms.filter(|f| distinct(f))
        });
        let forms = forms.unwrap_or_else(|| group.iter().map(|n| (*n).to_owned()).collect());
        chosen.extend(group.into_iter().zip(forms));
    }
    // A form chosen for one group can still equal another name's form: both show their
    // whole text then.
    let mut owners: HashMap<&str, usize> = HashMap::new();
    for form in chosen.values() {
        *owners.entry(form.as_str()).or_default() += 1;
    }
    names
        .map(|name| match chosen.get(name) {
            Some(form) if owners.get(form.as_str()) == Some(&1) => form.clone(),
            _ => name.to_owned(),
        })
        .collect()
}

/// Whether every form differs from the others.
fn distinct(forms: &[String]) -> bool {
    forms.iter().enumerate().all(|(k, f)| !forms[..k].contains(f))
}

/// The form of `name` keeping `detail`, or `None` when it is not shorter or not a template.
fn short_with(name: &str, detail: Detail) -> Option<String> {
    if !(name.contains("::") && name.contains('<')) {
        return None;
    }
    let body = name.strip_prefix("void ").unwrap_or(name);
    let short = path(body.trim(), detail)?;
    (short.len() < name.len()).then_some(short)
}

/// A qualified name `a::b<T>::c(args)`: namespaces before the first non-plain component
/// dropped (unless `detail` keeps them), each kept component shortened.
fn path(text: &str, detail: Detail) -> Option<String> {
    let parts = split_top(text, "::")?;
    let first_kept = if detail.namespaces {
        0
    } else {
        parts.iter().position(|p| !is_namespace(p)).unwrap_or(parts.len().saturating_sub(1))
    };
    let mut kept = Vec::new();
    for part in parts.get(first_kept..)? {
        if part.trim() == "(anonymous namespace)" {
            continue;
        }
        if let Some(c) = component(part.trim(), detail)? {
            kept.push(c);
        }
    }
    Some(kept.join("::"))
}

/// A namespace component: a plain identifier or `(anonymous namespace)`.
fn is_namespace(part: &str) -> bool {
    let part = part.trim();
    part == "(anonymous namespace)"
        || (!part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// One component: `Some(None)` for an `operator()` frame (dropped), `λ#N` for a lambda, else
/// the identifier with its shortened template arguments (and parameter list, when `detail`
/// keeps it).
fn component(part: &str, detail: Detail) -> Option<Option<String>> {
    if part.starts_with("operator()") {
        return Some(None);
    }
    if let Some(rest) = part.strip_prefix("{lambda") {
        let (sig, n) = rest.trim_end_matches('}').rsplit_once('#').unwrap_or((rest, ""));
        let sig = if detail.lambdas { list(sig, detail)? } else { String::new() };
        return Some(Some(format!("λ{sig}#{n}")));
    }
    let head_end = part.find(['<', '(']).unwrap_or(part.len());
    let head = part.get(..head_end)?.trim();
    let mut out = head.to_owned();
    let mut rest_at = head_end;
    if part.get(head_end..)?.starts_with('<') {
        let close = matching(part, head_end)?;
        out.push('<');
        out.push_str(&args(part.get(head_end + 1..close)?, detail)?);
        out.push('>');
        rest_at = close + 1;
    }
    let rest = part.get(rest_at..)?.trim_start();
    if detail.params && rest.starts_with('(') {
        let open = part.len() - rest.len();
        out.push_str(&list(part.get(open..=matching(part, open)?)?, detail)?);
    }
    Some(Some(out))
}

/// A parenthesized list `(a, b)` with each item shortened.
fn list(text: &str, detail: Detail) -> Option<String> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(format!("({})", args(inner, detail)?))
}

/// Comma-separated arguments, each shortened as a path when it is one.
fn args(text: &str, detail: Detail) -> Option<String> {
    let items: Vec<String> =
        split_top(text, ",")?.iter().map(|a| path(a.trim(), detail).unwrap_or_else(|| a.trim().to_owned())).collect();
    Some(items.join(", "))
}

/// Index of the bracket closing the one at `open`, or `None` when unbalanced.
fn matching(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices().skip_while(|&(i, _)| i < open) {
        depth += bracket(c);
        if depth == 0 {
            return Some(i);
        }
        if depth < 0 {
            return None;
        }
    }
    None
}

/// +1 for an opening bracket, -1 for a closing one, else 0.
fn bracket(c: char) -> i32 {
    match c {
        '<' | '(' | '{' | '[' => 1,
        '>' | ')' | '}' | ']' => -1,
        _ => 0,
    }
}

/// `text` split at `sep` outside brackets; `None` when the brackets do not balance.
fn split_top<'a>(text: &'a str, sep: &str) -> Option<Vec<&'a str>> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    let mut i = 0;
    while i < text.len() {
        let rest = text.get(i..)?;
        if depth == 0 && rest.starts_with(sep) {
            parts.push(text.get(start..i)?);
            i += sep.len();
            start = i;
            continue;
        }
        let c = rest.chars().next()?;
        depth += bracket(c);
        if depth < 0 {
            return None;
        }
        i += c.len_utf8();
    }
    (depth == 0).then_some(())?;
    parts.push(text.get(start..)?);
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The base short form of one name.
    fn short_name(name: &str) -> Option<String> {
        short_with(name, Detail::default())
    }

    /// Kernel names of the demo trace and the dlrm ranks (fixtures/real/param__dlrm_*), which
    /// share their first 35 characters.
    const KERNELS: [&str; 6] = [
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3>)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2>)",
        "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
        "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
    ];

    #[test]
    fn keeps_the_functor_and_template_arguments() {
        let shorts: Vec<String> = KERNELS.iter().filter_map(|k| short_name(k)).collect();
        assert_eq!(
            shorts,
            [
                "vectorized_elementwise_kernel<4, FillFunctor<float>, Array<char*, 1>>",
                "vectorized_elementwise_kernel<4, threshold_kernel_impl<float>::λ#1, Array<char*, 3>>",
                "vectorized_elementwise_kernel<4, launch_clamp_scalar::λ#1::λ#7::λ#1, Array<char*, 2>>",
                "vectorized_elementwise_kernel<4, AUnaryFunctor<float, float, float, MulFunctor<float>>, Array<char*, 2>>",
                "unrolled_elementwise_kernel<direct_copy_kernel_cuda::λ#2::λ#4::λ#1, Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, LoadWithCast<1>, StoreWithCast<1>>",
                "unrolled_elementwise_kernel<direct_copy_kernel_cuda::λ#2::λ#7::λ#1, Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, LoadWithCast<1>, StoreWithCast<1>>",
            ]
        );
    }

    #[test]
    fn other_names_stay_whole() {
        for name in [
            "ampere_sgemm_128x128_nt",
            "aten::addmm",
            "Memcpy HtoD (Pageable -> Device)",
            "ProfilerStep#3",
            "<built-in method cat of type object at 0x7f>",
            "void broken<a::b(",
        ] {
            assert_eq!(short_name(name), None, "{name}");
        }
    }

    /// Kernels whose short forms collide in the Compare tab's kernel diff of two real fixtures
    /// (`shared/fixtures/real`; a scan of every fixture found no collision inside one trace):
    /// the same kernel built by two PyTorch / cuDNN versions, differing only in parameter types
    /// or a lambda's signature. Before, each pair fell back to its whole name.
    const COLLIDING: [&str; 8] = [
        // kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, float*, long*)",
        // hta__benchmark_result_493459_1694039959_trace.json.gz
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)",
        // kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz
        "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float, cudnn::reduced_divisor, int, cudnn::reduced_divisor, cudnn::bnFwPersistentState*, int, float, float, float, int, float, float, cudnnStatus_t*, bool)",
        // partx__profiler_trace_single_sample.json
        "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<float>)",
        // hta__benchmark_result_493459_1694039959_trace.json.gz
        "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)",
        // partx__profiler_trace_single_sample.json
        "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float const, unsigned int>, at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)",
        // param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json
        "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1} const&)::{lambda(int)#1})",
        // partx__profiler_trace_single_sample.json
        "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&)::{lambda(int)#1})",
    ];

    #[test]
    fn colliding_real_kernels_keep_what_tells_them_apart() {
        let shorts = short_names(COLLIDING.iter().copied());
        for (pair, name) in shorts.chunks(2).zip(COLLIDING.chunks(2)) {
            assert_eq!(short_name(name[0]), short_name(name[1]), "the base forms collide");
            assert_ne!(pair[0], pair[1]);
            for (short, whole) in pair.iter().zip(name) {
                assert!(!short.starts_with("void ") && short.len() < whole.len(), "{short}");
            }
        }
        assert_eq!(
            shorts,
            [
                "max_pool_forward_nchw<float, float>(int, float const*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, float*, long*)",
                "max_pool_forward_nchw<float, float>(int, float const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)",
                "bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float, reduced_divisor, int, reduced_divisor, bnFwPersistentState*, int, float, float, float, int, float, float, cudnnStatus_t*, bool)",
                "bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(bn_fw_tr_1C11_args<float>)",
                "fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(TensorInfo<float, unsigned int>, TensorInfo<float, unsigned int>, TensorInfo<bool, unsigned int>, unsigned int, float, PhiloxCudaState)",
                "fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(TensorInfo<float const, unsigned int>, TensorInfo<float, unsigned int>, TensorInfo<bool, unsigned int>, unsigned int, float, PhiloxCudaState)",
                "index_elementwise_kernel<128, 4, gpu_index_kernel<index_kernel_impl<OpaqueType<4>>::λ(char*, char*, long)#1>::λ(int)#1>",
                "index_elementwise_kernel<128, 4, gpu_index_kernel<index_kernel_impl<OpaqueType<4>>::λ(char*, char const*, long)#1>::λ(int)#1>",
            ]
        );
    }

    #[test]
    fn colliding_short_forms_keep_the_first_detail_that_tells_them_apart() {
        let names = ["void a::k<a::F<int> >(int)", "void a::k<a::F<int> >(long)", "void a::k<a::G>(int)"];
        assert_eq!(short_names(names.iter().copied()), ["k<F<int>>(int)", "k<F<int>>(long)", "k<G>"]);
        // DeepEP-like kernels (the shape of a report on a trace not in the fixtures): only the
        // namespace tells them apart.
        let ep = ["void deep_ep::intranode::combine<4>(int)", "void deep_ep::internode::combine<4>(int)"];
        assert_eq!(short_names(ep.iter().copied()), ["deep_ep::intranode::combine<4>", "deep_ep::internode::combine<4>"]);
        let same = ["void a::k<a::G>(int)", "a::k<a::G>(int)"];
        assert_eq!(short_names(same.iter().copied()), same, "nothing tells them apart: whole names");
        assert_eq!(
            short_names(["void a::k<a::G>(int)"; 2].iter().copied()),
            ["k<G>", "k<G>"],
            "the same name twice is no collision"
        );
    }
}
