//! Event categories the engine treats specially, today's Kineto names and 2021's.
//!
//! One table, so every analysis agrees on what a kernel or a launch call is
//! (docs/definitions.md §1: `kernel`/`Kernel`, `gpu_memcpy`/`Memcpy`,
//! `cuda_runtime`/`Runtime`, ...).

/// What role events of a category play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CatClass {
    /// Anything else (python_function, overhead, Trace, ...).
    #[default]
    Other,
    /// A PyTorch operator (`cpu_op`, 2021: `Operator`).
    CpuOp,
    /// `user_annotation` (record_function, ProfilerStep#N).
    Annotation,
    /// A host call that launches device work (`cuda_runtime`, `cuda_driver`, 2021: `Runtime`).
    Launch,
    /// A kernel on a device (`kernel`, `Kernel`).
    Kernel,
    /// A device copy (`gpu_memcpy`, `Memcpy`).
    Memcpy,
    /// A device memset (`gpu_memset`, `Memset`).
    Memset,
    /// Annotation mirrored on a GPU lane (`gpu_user_annotation`).
    GpuAnnotation,
}

impl CatClass {
    /// Classifies a category string.
    pub fn of(cat: &[u8]) -> Self {
        match cat {
            b"cpu_op" | b"Operator" | b"operator" => Self::CpuOp,
            b"user_annotation" => Self::Annotation,
            b"cuda_runtime" | b"cuda_driver" | b"Runtime" | b"runtime" | b"hip_runtime" => Self::Launch,
            b"kernel" | b"Kernel" => Self::Kernel,
            b"gpu_memcpy" | b"Memcpy" => Self::Memcpy,
            b"gpu_memset" | b"Memset" => Self::Memset,
            b"gpu_user_annotation" => Self::GpuAnnotation,
            _ => Self::Other,
        }
    }

    /// Work that runs on a device (kernels, copies, memsets).
    pub fn is_device_activity(self) -> bool {
        matches!(self, Self::Kernel | Self::Memcpy | Self::Memset)
    }

    /// Anything that only appears on GPU lanes.
    pub fn is_gpu_side(self) -> bool {
        self.is_device_activity() || self == Self::GpuAnnotation
    }
}
