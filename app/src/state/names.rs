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
//! arguments, which a fixed-length cut loses. [`short_names`] falls back to the whole name
//! for names whose short forms collide, so two rows never read alike. The whole name stays in
//! the cell's `title`.
//!
//! Cost: one pass over the name per bracket level; names are at most a few hundred bytes.

use std::collections::HashMap;

/// Short forms of `names` (see the module docs); a name whose short form another name also
/// has keeps its whole text.
pub fn short_names<'a>(names: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
    let shorts: Vec<Option<String>> = names.clone().map(short_name).collect();
    let mut owners: HashMap<&str, &str> = HashMap::new();
    let mut clash: HashMap<&str, bool> = HashMap::new();
    for (name, short) in names.clone().zip(&shorts) {
        if let Some(short) = short.as_deref() {
            match owners.insert(short, name) {
                Some(other) if other != name => {
                    clash.insert(short, true);
                }
                _ => {}
            }
        }
    }
    names
        .zip(&shorts)
        .map(|(name, short)| match short {
            Some(s) if !clash.contains_key(s.as_str()) => s.clone(),
            _ => name.to_owned(),
        })
        .collect()
}

/// The short form of one C++ name, or `None` when it is not shorter or not a template.
pub fn short_name(name: &str) -> Option<String> {
    if !(name.contains("::") && name.contains('<')) {
        return None;
    }
    let body = name.strip_prefix("void ").unwrap_or(name);
    let short = path(body.trim())?;
    (short.len() < name.len()).then_some(short)
}

/// A qualified name `a::b<T>::c(args)`: namespaces before the first non-plain component
/// dropped, each kept component shortened.
fn path(text: &str) -> Option<String> {
    let parts = split_top(text, "::")?;
    let first_kept = parts
        .iter()
        .position(|p| !is_namespace(p))
        .unwrap_or(parts.len().saturating_sub(1));
    let mut kept = Vec::new();
    for part in parts.get(first_kept..)? {
        if let Some(c) = component(part.trim())? {
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
/// the identifier with its shortened template arguments and without its parameter list.
fn component(part: &str) -> Option<Option<String>> {
    if part.starts_with("operator()") {
        return Some(None);
    }
    if let Some(rest) = part.strip_prefix("{lambda") {
        let n = rest.rsplit_once('#').map_or("", |(_, n)| n.trim_end_matches('}'));
        return Some(Some(format!("λ#{n}")));
    }
    let head_end = part.find(['<', '(']).unwrap_or(part.len());
    let head = part.get(..head_end)?.trim();
    let mut out = head.to_owned();
    if part.get(head_end..)?.starts_with('<') {
        let close = matching(part, head_end)?;
        let args = split_top(part.get(head_end + 1..close)?, ",")?;
        let args: Vec<String> = args
            .iter()
            .map(|a| path(a.trim()).unwrap_or_else(|| a.trim().to_owned()))
            .collect();
        out.push('<');
        out.push_str(&args.join(", "));
        out.push('>');
    }
    Some(Some(out))
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

    #[test]
    fn colliding_short_forms_keep_the_whole_name() {
        let names = [
            "void a::k<a::F<int> >(int)",
            "void a::k<a::F<int> >(long)",
            "void a::k<a::G>(int)",
        ];
        assert_eq!(
            short_names(names.iter().copied()),
            [names[0].to_owned(), names[1].to_owned(), "k<G>".to_owned()]
        );
        assert_eq!(
            short_names(["void a::k<a::G>(int)"; 2].iter().copied()),
            ["k<G>", "k<G>"],
            "the same name twice is no collision"
        );
    }
}
