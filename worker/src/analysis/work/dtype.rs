//! Tensor element types as the trace's `Input type` spells them (`float`, `c10::BFloat16`,
//! ...), with their size in bytes and the peak-throughput column they run at.

/// Which peak of a GPU a computation in this type is measured against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PeakClass {
    /// fp32 without tensor cores (also fp64 and integers: no dedicated column).
    Fp32,
    /// tf32 tensor cores (fp32 GEMMs with `allow_tf32`, named so by the kernel).
    Tf32,
    /// bf16 / fp16 tensor cores.
    Bf16,
    /// fp8 tensor cores.
    Fp8,
    /// fp4 tensor cores.
    Fp4,
}

impl PeakClass {
    /// The key used in tables, JSON and `--gpu-peak` (`fp32`, `tf32`, `bf16`, `fp8`, `fp4`).
    pub fn key(self) -> &'static str {
        match self {
            Self::Fp32 => "fp32",
            Self::Tf32 => "tf32",
            Self::Bf16 => "bf16",
            Self::Fp8 => "fp8",
            Self::Fp4 => "fp4",
        }
    }

    /// Every class, in table order.
    pub const ALL: [PeakClass; 5] = [Self::Fp32, Self::Tf32, Self::Bf16, Self::Fp8, Self::Fp4];
}

/// One element type: its size and its peak class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dtype {
    /// Bytes per element (fp4 packs two per byte: `c10::Float4_e2m1fn_x2` is one byte).
    pub bytes: u64,
    /// The peak it runs at.
    pub peak: PeakClass,
}

/// The element type of a tensor argument written as `text`, or `None` for non-tensor
/// arguments (`Scalar`, `ScalarList`, `""`) and types we do not know.
pub fn parse(text: &str) -> Option<Dtype> {
    let (bytes, peak) = match text.strip_prefix("c10::").unwrap_or(text) {
        "float" => (4, PeakClass::Fp32),
        "double" | "long int" | "long" | "int64_t" => (8, PeakClass::Fp32),
        "int" | "unsigned int" => (4, PeakClass::Fp32),
        "Half" | "BFloat16" => (2, PeakClass::Bf16),
        "short int" | "short" | "unsigned short" => (2, PeakClass::Fp32),
        "signed char" | "unsigned char" | "bool" | "qint8" | "quint8" => (1, PeakClass::Fp32),
        "Float8_e4m3fn" | "Float8_e5m2" | "Float8_e4m3fnuz" | "Float8_e5m2fnuz" | "Float8_e8m0fnu" => {
            (1, PeakClass::Fp8)
        }
        "Float4_e2m1fn_x2" => (1, PeakClass::Fp4),
        "complex<float>" => (8, PeakClass::Fp32),
        "complex<double>" => (16, PeakClass::Fp32),
        _ => return None,
    };
    Some(Dtype { bytes, peak })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_spellings() {
        assert_eq!(parse("float"), Some(Dtype { bytes: 4, peak: PeakClass::Fp32 }));
        assert_eq!(parse("c10::BFloat16"), Some(Dtype { bytes: 2, peak: PeakClass::Bf16 }));
        assert_eq!(parse("c10::Half").map(|d| d.bytes), Some(2));
        assert_eq!(parse("c10::Float8_e4m3fn").map(|d| d.peak), Some(PeakClass::Fp8));
        assert_eq!(parse("long int").map(|d| d.bytes), Some(8));
        assert_eq!(parse("Scalar"), None);
        assert_eq!(parse(""), None);
    }
}
