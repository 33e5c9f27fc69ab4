//! Peak throughput of the GPUs we know: dense TFLOP/s per precision and memory GB/s, each
//! from the vendor's datasheet (the `source` column). Sparse figures are halved to dense; fp32
//! is the CUDA-core (NVIDIA) or vector (AMD) rate, the one an fp32 GEMM without tf32 gets.
//!
//! Matching is by the `deviceProperties` name, most specific row first (`H100 PCIe` before
//! `H100`). A GPU not in the table gets peaks estimated from its compute capability and SM count
//! (`super::device_peaks`, `super::estimated`: labelled as estimates), or none; its peaks can be given on
//! the command line (`--gpu-peak bf16=989,gbps=3350`) or in the page.

use super::dtype::PeakClass;

/// Peaks of one GPU model.
#[derive(Clone, Debug, PartialEq)]
pub struct Peaks {
    /// The model, as we print it (`NVIDIA H100 SXM`).
    pub model: String,
    /// Dense TFLOP/s for fp32, tf32, bf16/fp16, fp8, fp4 (`None`: no such unit).
    pub tflops: [Option<f64>; 5],
    /// Memory bandwidth, GB/s (10^9 bytes per second).
    pub gbps: Option<f64>,
    /// Where the numbers come from.
    pub source: String,
}

impl Peaks {
    /// The dense TFLOP/s for `class`, falling back to the nearest slower unit the GPU has
    /// (fp8 on a GPU without fp8 runs at its bf16 rate, tf32 without tf32 at fp32).
    pub fn tflops(&self, class: PeakClass) -> Option<f64> {
        let order: &[PeakClass] = match class {
            PeakClass::Fp4 => &[PeakClass::Fp4, PeakClass::Fp8, PeakClass::Bf16],
            PeakClass::Fp8 => &[PeakClass::Fp8, PeakClass::Bf16],
            PeakClass::Bf16 => &[PeakClass::Bf16],
            PeakClass::Tf32 => &[PeakClass::Tf32, PeakClass::Fp32],
            PeakClass::Fp32 => &[PeakClass::Fp32],
        };
        order.iter().find_map(|&c| self.tflops[c as usize])
    }

    /// Peaks given by hand: `key=value` pairs (`fp32`, `tf32`, `bf16`, `fp16`, `fp8`, `fp4` in
    /// TFLOP/s, `gbps` in GB/s), comma-separated or repeated, over `base` when given.
    ///
    /// # Errors
    /// An unknown key or a value that is not a positive number.
    pub fn with_overrides(base: Option<&Peaks>, spec: &str) -> Result<Peaks, String> {
        let mut peaks = base.cloned().unwrap_or_else(|| Peaks {
            model: "given peaks".to_owned(),
            tflops: [None; 5],
            gbps: None,
            source: String::new(),
        });
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| format!("{part:?}: expected KEY=VALUE"))?;
            let value: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v > 0.0)
                .ok_or_else(|| format!("{part:?}: the value must be a positive number"))?;
            let slot = match key.trim() {
                "gbps" => {
                    peaks.gbps = Some(value);
                    continue;
                }
                "fp16" | "bf16" => PeakClass::Bf16,
                k => PeakClass::ALL
                    .into_iter()
                    .find(|c| c.key() == k)
                    .ok_or_else(|| format!("{k:?}: expected one of fp32, tf32, bf16, fp16, fp8, fp4, gbps"))?,
            };
            peaks.tflops[slot as usize] = Some(value);
        }
        peaks.source = if base.is_some() { format!("{} (some peaks given by hand)", peaks.source) } else { "given by hand".to_owned() };
        Ok(peaks)
    }
}

/// One row of the table: name tokens that must all appear, then the numbers.
struct Row {
    all_of: &'static [&'static str],
    model: &'static str,
    /// fp32, tf32, bf16, fp8, fp4 dense TFLOP/s.
    tflops: [Option<f64>; 5],
    gbps: f64,
    source: &'static str,
}

const H100_SRC: &str = "NVIDIA H100 Tensor Core GPU datasheet (2023), SXM column; sparse figures halved";
const H200_SRC: &str = "NVIDIA H200 Tensor Core GPU datasheet (2024), SXM column; sparse figures halved";
const A100_SRC: &str = "NVIDIA A100 Tensor Core GPU datasheet (2021); sparse figures halved";
const H800_SRC: &str = "NVIDIA H800 Tensor Core GPU datasheet (2023), SXM column (H100 SXM compute); sparse figures halved";

/// Most specific first.
const TABLE: &[Row] = &[
    Row { all_of: &["H100", "PCIe"], model: "NVIDIA H100 PCIe", tflops: [Some(51.2), Some(378.0), Some(756.0), Some(1513.0), None], gbps: 2000.0, source: "NVIDIA H100 Tensor Core GPU datasheet (2023), PCIe column; sparse figures halved" },
    Row { all_of: &["H100", "NVL"], model: "NVIDIA H100 NVL", tflops: [Some(60.0), Some(417.5), Some(835.5), Some(1670.5), None], gbps: 3900.0, source: "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 NVL column; sparse figures halved" },
    Row { all_of: &["H800", "PCIe"], model: "NVIDIA H800 PCIe", tflops: [Some(51.2), Some(378.0), Some(756.0), Some(1513.0), None], gbps: 2000.0, source: "NVIDIA H800 Tensor Core GPU datasheet (2023), PCIe column (H100 PCIe compute); sparse figures halved" },
    Row { all_of: &["H800"], model: "NVIDIA H800 SXM", tflops: [Some(67.0), Some(494.7), Some(989.4), Some(1978.9), None], gbps: 3350.0, source: H800_SRC },
    Row { all_of: &["H20"], model: "NVIDIA H20", tflops: [Some(44.0), Some(74.0), Some(148.0), Some(296.0), None], gbps: 4000.0, source: "NVIDIA HGX H20 product brief (2024): FP32 44, TF32 74, BF16 148, FP8 296 TFLOPS dense; 4.0 TB/s" },
    Row { all_of: &["GH200"], model: "NVIDIA GH200 (96 GB HBM3)", tflops: [Some(67.0), Some(494.7), Some(989.4), Some(1978.9), None], gbps: 4000.0, source: "NVIDIA GH200 Grace Hopper Superchip datasheet (2023), GPU figures, 96 GB HBM3 (the 144 GB HBM3e part: 4.9 TB/s); sparse figures halved" },
    Row { all_of: &["H100"], model: "NVIDIA H100 SXM", tflops: [Some(67.0), Some(494.7), Some(989.4), Some(1978.9), None], gbps: 3350.0, source: H100_SRC },
    Row { all_of: &["H200"], model: "NVIDIA H200 SXM", tflops: [Some(67.0), Some(494.7), Some(989.4), Some(1978.9), None], gbps: 4800.0, source: H200_SRC },
    Row { all_of: &["GB200"], model: "NVIDIA GB200 (per GPU)", tflops: [Some(80.0), Some(1250.0), Some(2500.0), Some(5000.0), Some(10000.0)], gbps: 8000.0, source: "NVIDIA GB200 NVL72 datasheet (2024), per GPU (rack figures / 72); sparse figures halved" },
    Row { all_of: &["B300"], model: "NVIDIA B300", tflops: [Some(75.0), Some(1125.0), Some(2250.0), Some(4500.0), Some(13500.0)], gbps: 8000.0, source: "NVIDIA HGX B300 datasheet (2025), per GPU (8-GPU figures / 8; FP4 108 PFLOPS dense); sparse figures halved" },
    Row { all_of: &["B200"], model: "NVIDIA B200", tflops: [Some(75.0), Some(1125.0), Some(2250.0), Some(4500.0), Some(9000.0)], gbps: 8000.0, source: "NVIDIA HGX B200 datasheet (2024), per GPU (8-GPU figures / 8); sparse figures halved" },
    Row { all_of: &["A100", "PCIE", "40GB"], model: "NVIDIA A100 PCIe 40GB", tflops: [Some(19.5), Some(156.0), Some(312.0), None, None], gbps: 1555.0, source: A100_SRC },
    Row { all_of: &["A100", "PCIE"], model: "NVIDIA A100 PCIe 80GB", tflops: [Some(19.5), Some(156.0), Some(312.0), None, None], gbps: 1935.0, source: A100_SRC },
    Row { all_of: &["A100", "80GB"], model: "NVIDIA A100 SXM 80GB", tflops: [Some(19.5), Some(156.0), Some(312.0), None, None], gbps: 2039.0, source: A100_SRC },
    // PG509-200 is the SXM4 40 GB board (the 8-GPU HGX of the HTA traces).
    Row { all_of: &["A100"], model: "NVIDIA A100 SXM 40GB", tflops: [Some(19.5), Some(156.0), Some(312.0), None, None], gbps: 1555.0, source: A100_SRC },
    Row { all_of: &["L40S"], model: "NVIDIA L40S", tflops: [Some(91.6), Some(183.0), Some(362.05), Some(733.0), None], gbps: 864.0, source: "NVIDIA L40S GPU datasheet (2023); sparse figures halved" },
    Row { all_of: &["A10"], model: "NVIDIA A10", tflops: [Some(31.2), Some(62.5), Some(125.0), None, None], gbps: 600.0, source: "NVIDIA A10 Tensor Core GPU datasheet (2021); sparse figures halved" },
    Row { all_of: &["RTX", "4090"], model: "NVIDIA GeForce RTX 4090", tflops: [Some(82.6), Some(82.6), Some(165.2), Some(330.3), None], gbps: 1008.0, source: "NVIDIA Ada Lovelace GPU architecture whitepaper (2023), RTX 4090 column: tensor rates with FP32 accumulate (GeForce halves them); sparse figures halved" },
    Row { all_of: &["RTX", "5090"], model: "NVIDIA GeForce RTX 5090", tflops: [Some(104.8), Some(104.8), Some(209.5), Some(419.0), Some(1676.0)], gbps: 1792.0, source: "NVIDIA RTX Blackwell GPU architecture whitepaper (2025), RTX 5090 column: tensor rates with FP32 accumulate; sparse figures halved" },
    Row { all_of: &["L4"], model: "NVIDIA L4", tflops: [Some(30.3), Some(60.0), Some(121.0), Some(242.5), None], gbps: 300.0, source: "NVIDIA L4 Tensor Core GPU datasheet (2023); sparse figures halved" },
    Row { all_of: &["V100", "PCIE"], model: "NVIDIA V100 PCIe", tflops: [Some(14.0), None, Some(112.0), None, None], gbps: 900.0, source: "NVIDIA V100 Tensor Core GPU datasheet (2020), PCIe column; fp16 tensor" },
    Row { all_of: &["V100"], model: "NVIDIA V100 SXM2", tflops: [Some(15.7), None, Some(125.0), None, None], gbps: 900.0, source: "NVIDIA V100 Tensor Core GPU datasheet (2020), SXM2 column; fp16 tensor" },
    Row { all_of: &["T4"], model: "NVIDIA T4", tflops: [Some(8.1), None, Some(65.0), None, None], gbps: 320.0, source: "NVIDIA T4 Tensor Core GPU datasheet (2019); fp16 tensor" },
    Row { all_of: &["MI355X"], model: "AMD Instinct MI355X", tflops: [Some(157.3), None, Some(2516.6), Some(5033.2), Some(10066.3)], gbps: 8000.0, source: "AMD Instinct MI355X data sheet (2025): fp32 vector, fp16/bf16, fp8, MXFP4 matrix dense (no TF32)" },
    Row { all_of: &["MI325X"], model: "AMD Instinct MI325X", tflops: [Some(163.4), Some(653.7), Some(1307.4), Some(2614.9), None], gbps: 6000.0, source: "AMD Instinct MI325X data sheet (2024): fp32 vector, tf32/bf16/fp8 matrix dense" },
    Row { all_of: &["MI300X"], model: "AMD Instinct MI300X", tflops: [Some(81.7), Some(653.7), Some(1307.4), Some(2614.9), None], gbps: 5300.0, source: "AMD Instinct MI300X data sheet (2023): fp32 vector, tf32/bf16/fp8 matrix dense" },
    Row { all_of: &["MI250X"], model: "AMD Instinct MI250X", tflops: [Some(47.9), None, Some(383.0), None, None], gbps: 3276.8, source: "AMD Instinct MI250X data sheet (2021): fp32 vector, fp16/bf16 matrix" },
    Row { all_of: &["MI250"], model: "AMD Instinct MI250", tflops: [Some(45.3), None, Some(362.1), None, None], gbps: 3276.8, source: "AMD Instinct MI250 data sheet (2021): fp32 vector, fp16/bf16 matrix" },
    Row { all_of: &["MI210"], model: "AMD Instinct MI210", tflops: [Some(22.6), None, Some(181.0), None, None], gbps: 1638.4, source: "AMD Instinct MI210 data sheet (2022): fp32 vector, fp16/bf16 matrix" },
];

/// The peaks of the GPU named `name` in `deviceProperties`, if it is in the table.
///
/// Whole tokens (split at spaces and dashes) are compared, so `L4` is not `L40S` and `MI250`
/// is not `MI250X`.
pub fn lookup(name: &str) -> Option<Peaks> {
    let upper = name.to_ascii_uppercase();
    let tokens: Vec<&str> = upper.split([' ', '-', '_']).filter(|t| !t.is_empty()).collect();
    let row = TABLE
        .iter()
        .find(|r| r.all_of.iter().all(|part| tokens.iter().any(|t| t.eq_ignore_ascii_case(part))))?;
    Some(Peaks { model: row.model.to_owned(), tflops: row.tflops, gbps: Some(row.gbps), source: row.source.to_owned() })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fixture_names_match_their_rows() {
        let model = |n: &str| lookup(n).map(|p| p.model);
        assert_eq!(model("NVIDIA H100 80GB HBM3").as_deref(), Some("NVIDIA H100 SXM"));
        assert_eq!(model("NVIDIA H100 PCIe").as_deref(), Some("NVIDIA H100 PCIe"));
        assert_eq!(model("NVIDIA A100-SXM4-80GB").as_deref(), Some("NVIDIA A100 SXM 80GB"));
        assert_eq!(model("NVIDIA A100-PCIE-40GB").as_deref(), Some("NVIDIA A100 PCIe 40GB"));
        assert_eq!(model("NVIDIA A100-PG509-200").as_deref(), Some("NVIDIA A100 SXM 40GB"));
        assert_eq!(model("Tesla V100-SXM2-32GB").as_deref(), Some("NVIDIA V100 SXM2"));
        assert_eq!(model("AMD Instinct MI300X VF").as_deref(), Some("AMD Instinct MI300X"));
        assert_eq!(model("AMD Instinct MI210").as_deref(), Some("AMD Instinct MI210"));
        assert_eq!(model("NVIDIA B200").as_deref(), Some("NVIDIA B200"));
        assert_eq!(model("AMD Radeon Graphics"), None);
        assert_eq!(model(""), None);
    }

    #[test]
    fn fallbacks_and_overrides() {
        let v100 = lookup("Tesla V100-SXM2-32GB").unwrap();
        assert_eq!(v100.tflops(PeakClass::Tf32), Some(15.7));
        assert_eq!(v100.tflops(PeakClass::Fp8), Some(125.0));
        let given = Peaks::with_overrides(None, "bf16=100, gbps=2000").unwrap();
        assert_eq!((given.tflops(PeakClass::Bf16), given.gbps), (Some(100.0), Some(2000.0)));
        assert_eq!(given.tflops(PeakClass::Fp32), None);
        let h100 = Peaks::with_overrides(lookup("H100").as_ref(), "gbps=3000").unwrap();
        assert_eq!((h100.tflops(PeakClass::Bf16), h100.gbps), (Some(989.4), Some(3000.0)));
        assert!(Peaks::with_overrides(None, "int8=5").is_err());
        assert!(Peaks::with_overrides(None, "bf16=-1").is_err());
    }
}
