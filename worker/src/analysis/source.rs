//! Triton and compiled kernels to their source: the `kernel_file` (and `kernel_name`,
//! `kernel_hash`, `num_warps`, `num_stages`) args PyTorch writes on the `cpu_op` that launches a
//! Triton kernel (docs/definitions.md, "Kernel sources").
//!
//! `kernel_file` is a bare path in the traces we have (Inductor's generated module,
//! `/tmp/torchinductor_<user>/<xx>/<hash>.py`); PyTorch >= 2.11 may write `path:line:fn`. Both
//! are read: a trailing `:<digits>:<name>` is split off as line and function, anything else is
//! the path (a Windows drive letter's `C:` is not a line).
//!
//! A kernel's source is the one of the innermost op with a `kernel_file` among the ops that
//! enclose its launch call (kernel -> launch by correlation -> enclosing `cpu_op`s).
//!
//! Cost: one search of the args buffer ([`SourceKeys::any`]); where it hits, an args key search
//! per enclosing op and a JSON string decode for the ops that have one.

use super::args::ArgKey;
use crate::model::link::enclosing_op;
use crate::model::{Trace, NONE};

/// Where a compiled kernel comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelSource {
    /// The op that carries the args.
    pub op: u32,
    /// Path of the source file.
    pub file: String,
    /// Line, when `kernel_file` says `path:line:fn`.
    pub line: Option<u32>,
    /// Function, when `kernel_file` says `path:line:fn`.
    pub function: Option<String>,
    /// `kernel_name`.
    pub kernel_name: Option<String>,
    /// `kernel_hash`.
    pub kernel_hash: Option<String>,
    /// `num_warps`.
    pub num_warps: Option<i64>,
    /// `num_stages`.
    pub num_stages: Option<i64>,
}

/// Splits `kernel_file` into (path, line, function): `path:line:fn` or a bare path.
pub fn parse_kernel_file(raw: &str) -> (String, Option<u32>, Option<String>) {
    let mut parts = raw.rsplitn(3, ':');
    if let (Some(function), Some(line), Some(path)) = (parts.next(), parts.next(), parts.next()) {
        let named = !function.is_empty() && !function.contains(['/', '\\']);
        if let (true, false, Ok(line)) = (named, path.is_empty(), line.parse::<u32>()) {
            return (path.to_owned(), Some(line), Some(function.to_owned()));
        }
    }
    (raw.to_owned(), None, None)
}

/// The args lookups, prepared once.
pub struct SourceKeys {
    file: ArgKey,
    name: ArgKey,
    hash: ArgKey,
    warps: ArgKey,
    stages: ArgKey,
}

impl Default for SourceKeys {
    fn default() -> Self {
        Self {
            file: ArgKey::new("kernel_file"),
            name: ArgKey::new("kernel_name"),
            hash: ArgKey::new("kernel_hash"),
            warps: ArgKey::new("num_warps"),
            stages: ArgKey::new("num_stages"),
        }
    }
}

impl SourceKeys {
    /// Whether any event of `trace` has a `kernel_file` arg: one search over the args buffer,
    /// so traces without compiled kernels skip the per-kernel walk.
    pub fn any(trace: &Trace) -> bool {
        let mut found = false;
        trace.args.each_block(|_, raw| {
            found = memchr::memmem::find(raw, b"\"kernel_file\":").is_some();
            !found
        });
        found
    }

    /// The source args of slice `op`, if it carries a `kernel_file` string.
    pub fn of_op(&self, trace: &Trace, op: u32) -> Option<KernelSource> {
        let text = trace.args_text(*trace.slices.args.get(op as usize)?);
        let args = text.as_bytes();
        let text = |key: &ArgKey| {
            key.raw(args)
                .and_then(|raw| serde_json::from_slice::<String>(raw).ok())
        };
        let (file, line, function) = parse_kernel_file(&text(&self.file)?);
        Some(KernelSource {
            op,
            file,
            line,
            function,
            kernel_name: text(&self.name),
            kernel_hash: text(&self.hash),
            num_warps: self.warps.i64(args),
            num_stages: self.stages.i64(args),
        })
    }

    /// The source of device activity `k`: the innermost op enclosing its launch call that
    /// carries one.
    pub fn of_kernel(&self, trace: &Trace, k: u32) -> Option<KernelSource> {
        let launch = *trace.slices.launch.get(k as usize)?;
        if launch == NONE {
            return None;
        }
        let mut op = enclosing_op(trace, launch);
        while let Some(o) = op {
            if let Some(src) = self.of_op(trace, o) {
                return Some(src);
            }
            op = enclosing_op(trace, o);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::parse_kernel_file;

    #[test]
    fn bare_paths_and_path_line_function() {
        let bare = "/tmp/torchinductor_root/w2/cw2ucy7.py";
        assert_eq!(parse_kernel_file(bare), (bare.to_owned(), None, None));
        assert_eq!(
            parse_kernel_file("/tmp/torchinductor_root/w2/cw2ucy7.py:42:triton_poi_fused_0"),
            ("/tmp/torchinductor_root/w2/cw2ucy7.py".to_owned(), Some(42), Some("triton_poi_fused_0".to_owned()))
        );
        // Near misses: no line number, a drive letter, an empty path.
        assert_eq!(parse_kernel_file("/a/b.py:x:f").1, None);
        assert_eq!(parse_kernel_file(r"C:\k\b.py").1, None);
        assert_eq!(parse_kernel_file(":3:f").1, None);
    }
}
