//! CI gates of `kinetoscope diff --fail-if EXPR`: an expression parsed into a small typed
//! [`Gate`], checked against a [`Comparison`] and its findings diff (docs/ci.md).
//!
//! Grammar (whitespace between tokens is ignored):
//!
//! ```text
//! gate      = metric cmp threshold | "new-finding" cmp severity
//! metric    = a `summary[].key` of `diff --json` (step_time_mean, self_cuda_time_total, ...)
//! cmp       = ">" | "<" | ">=" | "<="
//! threshold = sign? number "%"          relative change, (candidate - base) / base
//!           | sign? number unit         absolute delta, candidate - base
//! unit      = ns | us | ms | s          time metrics
//!           | pp                        percent metrics (percentage points)
//!           | B | KB | MB | GB | KiB | MiB | GiB   memory (1 MB = 10^6 B, as `report` prints; 1 MiB = 2^20 B)
//!           | (none)                    counts (kernels_per_step)
//! severity  = info | warn | alert
//! ```
//!
//! A metric gate **fails** when `change cmp threshold` holds (`step_time_mean>+5%` fails on a
//! 5.1% slower mean step). A finding gate fails when a rule fires only in the candidate with a
//! severity for which `severity cmp threshold` holds (`new-finding>=warn`).
//!
//! **Why** a gate that cannot be evaluated (a side lacks the metric, or a relative threshold on
//! a base of 0 with a non-zero delta) is an error, not a pass: a gate that silently passes
//! guards nothing. The CLI reports it as bad input (exit 2), so exit 1 always means a gate
//! failed.

use crate::compare::summary::METRICS;
use crate::compare::{Comparison, Metric, Unit};
use crate::finding::Severity;
use protocol::FindingsDiff;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `>`
    Gt,
    /// `<`
    Lt,
    /// `>=`
    Ge,
    /// `<=`
    Le,
}

impl Cmp {
    /// Whether `left cmp right` holds.
    pub fn holds<T: PartialOrd>(self, left: T, right: T) -> bool {
        match self {
            Self::Gt => left > right,
            Self::Lt => left < right,
            Self::Ge => left >= right,
            Self::Le => left <= right,
        }
    }

    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gt => ">",
            Self::Lt => "<",
            Self::Ge => ">=",
            Self::Le => "<=",
        }
    }
}

/// The right-hand side of a metric gate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// A relative change as a fraction (`+5%` is 0.05).
    Relative(f64),
    /// An absolute delta in the metric's own unit (ns, percentage points, bytes, count).
    Absolute(f64),
}

/// One parsed `--fail-if` expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Gate {
    /// A summary metric's change against a threshold.
    Metric {
        /// The summary metric.
        metric: Metric,
        /// How the change compares.
        cmp: Cmp,
        /// The threshold.
        threshold: Threshold,
    },
    /// Findings that fire only in the candidate, by severity.
    NewFinding {
        /// How a new finding's severity compares.
        cmp: Cmp,
        /// The severity threshold.
        severity: Severity,
    },
}

/// Why an expression did not parse or a gate could not be evaluated; `hint` is a suggestion
/// shown on its own line (clap's `tip:`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateError {
    /// One line: what is wrong, the user's text last.
    pub message: String,
    /// How to fix it, when there is a likely fix.
    pub hint: Option<String>,
}

impl std::fmt::Display for GateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n\n  tip: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for GateError {}

fn error(message: String, hint: Option<String>) -> GateError {
    GateError { message, hint }
}

/// The `new-finding` pseudo-metric.
const NEW_FINDING: &str = "new-finding";

/// Short names accepted for summary metrics: the issue and PyTorch users write
/// `self_cuda_total` (`key_averages()`'s column is "Self CUDA total"), the JSON key is longer.
const ALIASES: [(&str, Metric); 2] = [
    ("self_cuda_total", Metric::SelfDeviceTotal),
    ("self_cpu_total", Metric::SelfCpuTotal),
];

/// Parses one `--fail-if` expression (grammar in the module docs).
///
/// # Errors
/// No operator, an unknown metric (with the closest known one as a hint), a threshold that is
/// not a number, or a unit that does not fit the metric.
pub fn parse(text: &str) -> Result<Gate, GateError> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    // Two-character operators first, so `>=` is not read as `>` and a threshold `=...`.
    let ops = [
        (">=", Cmp::Ge),
        ("<=", Cmp::Le),
        (">", Cmp::Gt),
        ("<", Cmp::Lt),
    ];
    let split = compact.find(['>', '<']).and_then(|at| {
        let (name, rest) = compact.split_at(at);
        ops.into_iter()
            .find_map(|(op, cmp)| rest.strip_prefix(op).map(|rhs| (name, cmp, rhs)))
    });
    let (name, cmp, rhs) = split.ok_or_else(|| {
        error(
            format!("no comparison (>, <, >=, <=) in {text:?}"),
            Some(
                "write METRIC>THRESHOLD, e.g. 'step_time_mean>+5%' or 'new-finding>=warn'"
                    .to_owned(),
            ),
        )
    })?;
    if name == NEW_FINDING {
        let severity = parse_severity(rhs)?;
        return Ok(Gate::NewFinding { cmp, severity });
    }
    let metric = parse_metric(name)?;
    let threshold = parse_threshold(metric, rhs)?;
    Ok(Gate::Metric {
        metric,
        cmp,
        threshold,
    })
}

fn parse_severity(text: &str) -> Result<Severity, GateError> {
    Severity::parse(text).ok_or_else(|| {
        error(
            format!("new-finding compares with a severity, not {text:?}"),
            Some("one of info, warn, alert (e.g. 'new-finding>=warn')".to_owned()),
        )
    })
}

fn parse_metric(name: &str) -> Result<Metric, GateError> {
    if let Some(m) = METRICS.iter().copied().find(|m| m.key() == name) {
        return Ok(m);
    }
    if let Some(&(_, m)) = ALIASES.iter().find(|(alias, _)| *alias == name) {
        return Ok(m);
    }
    let keys = METRICS.iter().map(|m| m.key()).chain([NEW_FINDING]);
    let hint = match keys.clone().min_by_key(|k| edit_distance(k, name)) {
        Some(k) if edit_distance(k, name) <= k.len() / 2 => {
            format!("a similar metric exists: '{k}'")
        }
        _ => format!("metrics: {}", keys.collect::<Vec<_>>().join(", ")),
    };
    Err(error(format!("unknown metric {name:?}"), Some(hint)))
}

/// Levenshtein distance, for "did you mean" hints (names are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        // `row` has `b.len() + 1` entries and `j < b.len()`, so `j + 1` is in bounds.
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The absolute units of `unit`'s metrics with their size in the metric's own unit.
fn units(unit: Unit) -> &'static [(&'static str, f64)] {
    match unit {
        Unit::Ns => &[
            ("ns", 1.0),
            ("us", 1e3),
            ("µs", 1e3),
            ("ms", 1e6),
            ("s", 1e9),
        ],
        Unit::Pct => &[("pp", 1.0)],
        Unit::Bytes => &[
            ("B", 1.0),
            ("KB", 1e3),
            ("MB", 1e6),
            ("GB", 1e9),
            ("KiB", 1024.0),
            ("MiB", 1048576.0),
            ("GiB", 1073741824.0),
        ],
        Unit::Count => &[("", 1.0)],
    }
}

fn parse_threshold(metric: Metric, text: &str) -> Result<Threshold, GateError> {
    let end = text
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && (c == '+' || c == '-'))))
        .map_or(text.len(), |(i, _)| i);
    let (number, suffix) = text.split_at(end);
    let allowed = units(metric.unit());
    let unit_list = || {
        let names: Vec<&str> = allowed
            .iter()
            .map(|(u, _)| *u)
            .filter(|u| !u.is_empty())
            .collect();
        if names.is_empty() {
            "no unit".to_owned()
        } else {
            names.join(", ")
        }
    };
    let value: f64 = number.parse().map_err(|_| {
        error(
            format!("threshold of {} is not a number: {text:?}", metric.key()),
            Some(format!(
                "e.g. +5% (relative) or an absolute delta in {}",
                unit_list()
            )),
        )
    })?;
    if suffix == "%" {
        return Ok(Threshold::Relative(value / 100.0));
    }
    let scale = allowed
        .iter()
        .find(|(u, _)| *u == suffix)
        .map(|(_, s)| *s)
        .ok_or_else(|| {
            error(
                format!("unit {suffix:?} does not fit {} in {text:?}", metric.key()),
                Some(format!(
                    "{} takes % (relative) or {}",
                    metric.key(),
                    unit_list()
                )),
            )
        })?;
    Ok(Threshold::Absolute(value * scale))
}

impl Gate {
    /// `None` when the gate passes, else the reason it failed (one line, with the numbers).
    ///
    /// # Errors
    /// The gate cannot be evaluated on these traces (see the module docs).
    pub fn check(
        &self,
        c: &Comparison,
        findings: &FindingsDiff,
    ) -> Result<Option<String>, GateError> {
        match *self {
            Self::Metric {
                metric,
                cmp,
                threshold,
            } => check_metric(metric, cmp, threshold, c),
            Self::NewFinding { cmp, severity } => {
                let fired: Vec<String> = findings
                    .new
                    .iter()
                    .filter(|f| {
                        Severity::parse(&f.severity).is_some_and(|s| cmp.holds(s, severity))
                    })
                    .map(|f| format!("{} ({})", f.rule, f.severity))
                    .collect();
                Ok((!fired.is_empty()).then(|| format!("new findings {}", fired.join(", "))))
            }
        }
    }
}

fn check_metric(
    metric: Metric,
    cmp: Cmp,
    threshold: Threshold,
    c: &Comparison,
) -> Result<Option<String>, GateError> {
    let key = metric.key();
    let row = c.summary.iter().find(|r| r.metric == metric);
    let (base, cand) = match row.map(|r| (r.base, r.cand)) {
        Some((Some(b), Some(c))) => (b, c),
        Some((b, _)) => {
            let side = if b.is_none() {
                "the baseline"
            } else {
                "the candidate"
            };
            return Err(error(
                format!("cannot check {key}: {side} has no value for it"),
                None,
            ));
        }
        None => {
            return Err(error(
                format!("cannot check {key}: not in the comparison"),
                None,
            ))
        }
    };
    let delta = cand - base;
    let (change, shown) = match threshold {
        Threshold::Absolute(limit) => (cmp.holds(delta, limit), format_delta(metric.unit(), delta)),
        Threshold::Relative(limit) => {
            // An unchanged zero is a 0% change; a change from zero has no relative size.
            let rel = if delta == 0.0 {
                0.0
            } else if base == 0.0 {
                let hint = format!(
                    "use an absolute threshold, e.g. {key}{}{}",
                    cmp.as_str(),
                    example(metric.unit())
                );
                return Err(error(
                    format!("cannot check {key} relatively: its baseline is 0"),
                    Some(hint),
                ));
            } else {
                delta / base
            };
            (cmp.holds(rel, limit), format!("{:+.1}%", rel * 100.0))
        }
    };
    Ok(change.then(|| {
        let (b, c) = (
            format_value(metric.unit(), base),
            format_value(metric.unit(), cand),
        );
        format!("{key} {shown} ({b} -> {c})")
    }))
}

/// An absolute threshold in `unit`, for hints.
fn example(unit: Unit) -> &'static str {
    match unit {
        Unit::Ns => "+2ms",
        Unit::Pct => "+5pp",
        Unit::Bytes => "+64MB",
        Unit::Count => "+10",
    }
}

fn format_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Ns => super::time(v.round() as i64),
        Unit::Pct => format!("{v:.2} %"),
        Unit::Bytes => super::memory::bytes(v.round() as i64),
        Unit::Count => format!("{v:.2}"),
    }
}

fn format_delta(unit: Unit, d: f64) -> String {
    let sign = if d >= 0.0 { "+" } else { "" };
    match unit {
        Unit::Ns => crate::compare::verdict::signed_time(d),
        Unit::Pct => format!("{d:+.2} pp"),
        _ => format!("{sign}{}", format_value(unit, d)),
    }
}

/// The reasons of every failing gate in `gates` (empty when all pass), as `EXPR: reason`.
///
/// # Errors
/// The first gate that cannot be evaluated, prefixed by its expression.
pub fn failures(
    gates: &[(String, Gate)],
    c: &Comparison,
    findings: &FindingsDiff,
) -> Result<Vec<String>, GateError> {
    let mut failed = Vec::new();
    for (text, gate) in gates {
        let reason = gate.check(c, findings).map_err(|e| GateError {
            message: format!("--fail-if {text:?}: {}", e.message),
            hint: e.hint,
        })?;
        if let Some(reason) = reason {
            failed.push(format!("{text}: {reason}"));
        }
    }
    Ok(failed)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn metric(m: Metric, cmp: Cmp, threshold: Threshold) -> Gate {
        Gate::Metric {
            metric: m,
            cmp,
            threshold,
        }
    }

    #[test]
    fn parses_the_documented_forms() {
        let table = [
            (
                "step_time_mean>+5%",
                metric(Metric::StepMean, Cmp::Gt, Threshold::Relative(0.05)),
            ),
            (
                "self_cuda_time_total > 10%",
                metric(Metric::SelfDeviceTotal, Cmp::Gt, Threshold::Relative(0.1)),
            ),
            (
                "self_cuda_total>+10%",
                metric(Metric::SelfDeviceTotal, Cmp::Gt, Threshold::Relative(0.1)),
            ),
            (
                "self_cpu_total>+1ms",
                metric(Metric::SelfCpuTotal, Cmp::Gt, Threshold::Absolute(1e6)),
            ),
            (
                "gpu_utilization<-3%",
                metric(Metric::GpuUtilization, Cmp::Lt, Threshold::Relative(-0.03)),
            ),
            (
                "step_time_p95>=+2ms",
                metric(Metric::StepP95, Cmp::Ge, Threshold::Absolute(2e6)),
            ),
            (
                "step_time_median<=-1.5us",
                metric(Metric::StepMedian, Cmp::Le, Threshold::Absolute(-1500.0)),
            ),
            (
                "sm_efficiency<-5pp",
                metric(Metric::SmEfficiency, Cmp::Lt, Threshold::Absolute(-5.0)),
            ),
            (
                "peak_memory>+1GB",
                metric(
                    Metric::PeakMemory,
                    Cmp::Gt,
                    Threshold::Absolute(1e9),
                ),
            ),
            (
                "peak_memory>+1GiB",
                metric(
                    Metric::PeakMemory,
                    Cmp::Gt,
                    Threshold::Absolute(1073741824.0),
                ),
            ),
            (
                "kernels_per_step>+10",
                metric(Metric::KernelsPerStep, Cmp::Gt, Threshold::Absolute(10.0)),
            ),
            (
                "new-finding>=warn",
                Gate::NewFinding {
                    cmp: Cmp::Ge,
                    severity: Severity::Warn,
                },
            ),
            (
                "new-finding>info",
                Gate::NewFinding {
                    cmp: Cmp::Gt,
                    severity: Severity::Info,
                },
            ),
        ];
        for (text, want) in table {
            assert_eq!(parse(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn bad_inputs_say_what_is_wrong_and_hint_a_fix() {
        let table: [(&str, &str, Option<&str>); 9] = [
            (
                "step_time_mean",
                "no comparison (>, <, >=, <=) in \"step_time_mean\"",
                Some("write METRIC>THRESHOLD"),
            ),
            (
                "self_cuda_totl>+10%",
                "unknown metric \"self_cuda_totl\"",
                Some("a similar metric exists: 'self_cuda_time_total'"),
            ),
            (
                "new_finding>=warn",
                "unknown metric \"new_finding\"",
                Some("a similar metric exists: 'new-finding'"),
            ),
            (
                "zzz>1%",
                "unknown metric \"zzz\"",
                Some("metrics: step_time_mean, "),
            ),
            (
                "step_time_mean>fast",
                "threshold of step_time_mean is not a number: \"fast\"",
                Some("ns, us, µs, ms, s"),
            ),
            (
                "step_time_mean>+5pp",
                "unit \"pp\" does not fit step_time_mean in \"+5pp\"",
                Some("takes % (relative) or ns"),
            ),
            (
                "gpu_utilization<-3ms",
                "unit \"ms\" does not fit gpu_utilization in \"-3ms\"",
                Some("or pp"),
            ),
            (
                "new-finding>=severe",
                "new-finding compares with a severity, not \"severe\"",
                Some("info, warn, alert"),
            ),
            (
                "step_time_mean>>5%",
                "threshold of step_time_mean is not a number: \">5%\"",
                None,
            ),
        ];
        for (text, message, hint) in table {
            let e = parse(text).expect_err(text);
            assert_eq!(e.message, message, "{text}");
            if let Some(hint) = hint {
                assert!(
                    e.hint.as_deref().is_some_and(|h| h.contains(hint)),
                    "{text}: {:?}",
                    e.hint
                );
            }
        }
    }

    #[test]
    fn operators_compare_as_written() {
        assert!(Cmp::Gt.holds(0.06, 0.05) && !Cmp::Gt.holds(0.05, 0.05));
        assert!(Cmp::Ge.holds(0.05, 0.05) && Cmp::Le.holds(-0.03, -0.03));
        assert!(Cmp::Lt.holds(-0.04, -0.03) && !Cmp::Lt.holds(0.0, -0.03));
        assert!(
            Cmp::Ge.holds(Severity::Alert, Severity::Warn)
                && !Cmp::Ge.holds(Severity::Info, Severity::Warn)
        );
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("self_cuda_time_total", "self_cuda_total"), 5);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
