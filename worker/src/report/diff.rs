//! `kinetoscope diff`: the comparison of two sessions, its rows ordered as asked (largest
//! |Δ| first by default, unchanged rows last), with the two sides' findings diff, rendered as
//! text, the stable `--json` form or Markdown for a PR comment; `--fail-if` gates check it.

use super::compare::{comparison_json, comparison_text, count, delta, ratio, value, Files, TextOptions};
use super::gate::{self, Gate, GateError};
use super::markdown::{text as md, Align, Table, NAME_CHARS};
use super::cut;
use crate::analysis::call_tree::{self, CallTreeDiff};
use crate::answer::comparison::findings_diff;
use crate::compare::{
    compare, headline_column, order, CompareOptions, Comparison, DiffRow, KernelColumn, OpColumn, SortKey, Status, Unit,
};
use crate::session::Session;
use protocol::{FindingChange, FindingsDiff};
use std::fmt::Write as _;

/// Name column of the `--tree` section, characters (`report --tree`'s).
const TREE_WIDTH: usize = 67;

/// How a diff is computed and ordered.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiffOptions {
    /// Ops matched by name and input shapes.
    pub by_shape: bool,
    /// Op row order; `None`: |Δ| of Self CUDA (Self CPU when neither trace has device time).
    pub op_sort: Option<SortKey<OpColumn>>,
    /// Kernel row order; `None`: |Δ| of total time.
    pub kernel_sort: Option<SortKey<KernelColumn>>,
    /// Rows per text table.
    pub top: usize,
    /// `--tree [--min-pct P]`: the call trees merged by path, nodes under P% left out.
    pub tree: Option<f64>,
}

/// A computed, ordered comparison with the names of its two traces.
pub struct DiffReport<'s> {
    base: &'s Session,
    cand: &'s Session,
    comparison: Comparison,
    op_sort: SortKey<OpColumn>,
    kernel_sort: SortKey<KernelColumn>,
    default_column: OpColumn,
    top: usize,
    /// The merged call trees and the share under which a node is left out.
    tree: Option<(CallTreeDiff, f64)>,
}

impl<'s> DiffReport<'s> {
    /// Compares `base` with `cand` and orders the rows.
    pub fn build(base: &'s Session, cand: &'s Session, options: DiffOptions) -> Self {
        let mut c = compare(base, cand, &CompareOptions { by_shape: options.by_shape });
        let default_column = headline_column(&c);
        let (op_sort, kernel_sort) = order(&mut c, (options.op_sort, options.kernel_sort));
        Self {
            base,
            cand,
            comparison: c,
            op_sort,
            kernel_sort,
            default_column,
            top: options.top,
            tree: options.tree.map(|min_pct| {
                let (b, c) = (base.trace(), cand.trace());
                (call_tree::diff((b, &call_tree::build(b, None)), (c, &call_tree::build(c, None))), min_pct)
            }),
        }
    }

    /// The stable `--json` form.
    pub fn json(&self) -> serde_json::Value {
        let mut json = comparison_json(&self.comparison, self.files());
        if let Some((d, min_pct)) = &self.tree {
            json["call_tree_diff"] = super::tree::diff_json(d, *min_pct);
        }
        json
    }

    /// The reasons of the `gates` that fail on this diff (`EXPR: reason`), empty when all pass.
    ///
    /// # Errors
    /// A gate that cannot be evaluated on these traces ([`gate`] module docs).
    pub fn failed_gates(&self, gates: &[(String, Gate)]) -> Result<Vec<String>, GateError> {
        // Findings run the cheatsheet over both whole traces: only when a gate reads them.
        let reads_findings = gates.iter().any(|(_, g)| matches!(g, Gate::NewFinding { .. }));
        let findings = if reads_findings { self.findings() } else { FindingsDiff::default() };
        gate::failures(gates, &self.comparison, &findings)
    }

    /// The two sides' findings by rule: new, gone, kept (detected on first use per session).
    fn findings(&self) -> FindingsDiff {
        findings_diff(self.base.findings(), self.cand.findings())
    }

    /// The op column shown with base / candidate / delta: the sort column, else the default.
    fn headline(&self) -> OpColumn {
        match self.op_sort {
            SortKey::Delta(k) | SortKey::AbsDelta(k) => k,
            SortKey::Name => self.default_column,
        }
    }

    /// The text report.
    pub fn text(&self) -> String {
        let headline = self.headline();
        let options = TextOptions {
            headline,
            op_order: order_title(self.op_sort, OpColumn::label),
            kernel_order: order_title(self.kernel_sort, KernelColumn::label),
            top: self.top,
        };
        let mut text = comparison_text(&self.comparison, self.files(), &options);
        if let Some((d, min_pct)) = &self.tree {
            text.push_str(&super::tree::diff_text(d, *min_pct, TREE_WIDTH));
        }
        text
    }

    /// The report as GitHub Markdown for a PR comment: verdict, summary deltas, the changed
    /// ops and kernels (at most `top` each), findings new and gone; `gates`: how many gates
    /// were checked and the reasons of those that failed, when `--fail-if` was given.
    pub fn markdown(&self, gates: Option<(usize, &[String])>) -> String {
        let c = &self.comparison;
        let mut out = format!(
            "### kinetoscope diff: {} → {}\n\n",
            md(self.base.name()),
            md(self.cand.name())
        );
        let _ = writeln!(out, "**Verdict:** {}\n", md(&c.verdict.text));
        if let Some((n, failed)) = gates {
            let _ = match failed.len() {
                0 => writeln!(out, "**Gates:** all {n} passed\n"),
                k => writeln!(out, "**Gates:** {k} of {n} failed\n"),
            };
            for f in failed {
                let _ = writeln!(out, "- {}", md(f));
            }
            if !failed.is_empty() {
                out.push('\n');
            }
        }
        out.push_str(&summary_md(c));
        out.push_str(&self.ops_md());
        out.push_str(&self.kernels_md());
        findings_md(&mut out, &self.findings());
        out
    }

    /// Changed op rows with the headline column's base, candidate, delta and ratio.
    fn ops_md(&self) -> String {
        let c = &self.comparison;
        let headline = self.headline();
        let unit = if headline == OpColumn::Calls {
            Unit::Count
        } else {
            Unit::Ns
        };
        let mut table = Table::new(&[
            ("Op", Align::Left),
            ("Status", Align::Left),
            ("Base", Align::Right),
            ("Cand", Align::Right),
            ("Delta", Align::Right),
            ("Ratio", Align::Right),
            ("Calls B", Align::Right),
            ("Calls C", Align::Right),
        ]);
        for r in c
            .ops
            .iter()
            .filter(|r| r.status != Status::Same)
            .take(self.top)
        {
            let p = r.pair(headline);
            let name = if c.by_shape && !r.input_shapes.is_empty() {
                format!("{} {}", r.name, r.input_shapes)
            } else {
                r.name.clone()
            };
            table.row(vec![
                md(&cut(&name, NAME_CHARS)),
                r.status.key().to_owned(),
                value(unit, Some(p.base)),
                value(unit, Some(p.cand)),
                delta(unit, Some(p.delta())),
                ratio(p),
                count(r.calls.base),
                count(r.calls.cand),
            ]);
        }
        let per = if c.per_step { "per step" } else { "totals" };
        format!(
            "#### Top op changes ({per}; {})\n\n{}",
            md(headline.label()),
            table.render()
        )
    }

    /// Changed kernel rows with total time and calls.
    fn kernels_md(&self) -> String {
        let c = &self.comparison;
        let mut table = Table::new(&[
            ("Kernel", Align::Left),
            ("Status", Align::Left),
            ("Total B", Align::Right),
            ("Total C", Align::Right),
            ("Δ Total", Align::Right),
            ("Ratio", Align::Right),
            ("Calls B", Align::Right),
            ("Calls C", Align::Right),
        ]);
        for r in c
            .kernels
            .iter()
            .filter(|r| r.status != Status::Same)
            .take(self.top)
        {
            let p = r.total_ns;
            table.row(vec![
                md(&cut(&r.name, NAME_CHARS)),
                r.status.key().to_owned(),
                value(Unit::Ns, Some(p.base)),
                value(Unit::Ns, Some(p.cand)),
                delta(Unit::Ns, Some(p.delta())),
                ratio(p),
                count(r.calls.base),
                count(r.calls.cand),
            ]);
        }
        let per = if c.per_step { "per step" } else { "totals" };
        format!("#### Top kernel changes ({per})\n\n{}", table.render())
    }

    fn files(&self) -> Files<'_> {
        Files { base: self.base.name(), cand: self.cand.name() }
    }
}

/// How a sort key orders rows, for a table title.
fn order_title<C: Copy>(key: SortKey<C>, label: fn(C) -> &'static str) -> String {
    match key {
        SortKey::Delta(c) => format!("Δ {} descending", label(c)),
        SortKey::AbsDelta(c) => format!("|Δ {}| descending", label(c)),
        SortKey::Name => "name".to_owned(),
    }
}

/// The summary rows with deltas and relative changes.
fn summary_md(c: &Comparison) -> String {
    let mut table = Table::new(&[
        ("Metric", Align::Left),
        ("Base", Align::Right),
        ("Candidate", Align::Right),
        ("Delta", Align::Right),
        ("Change", Align::Right),
    ]);
    for r in &c.summary {
        let unit = r.metric.unit();
        let rel = r
            .rel_delta
            .map_or_else(|| "-".to_owned(), |v| format!("{:+.1}%", v * 100.0));
        table.row(vec![
            md(r.metric.label()),
            value(unit, r.base),
            value(unit, r.cand),
            delta(unit, r.delta),
            rel,
        ]);
    }
    format!("#### Summary\n\n{}", table.render())
}

/// The findings diff as two lists: rules only the candidate fires, rules only the baseline did.
fn findings_md(out: &mut String, f: &FindingsDiff) {
    let item = |out: &mut String, x: &FindingChange, title: &Option<String>| {
        let title = title
            .as_deref()
            .map_or_else(String::new, |t| format!(": {}", md(t)));
        let _ = writeln!(out, "- **{}** {}{title}", x.severity, md(&x.rule));
    };
    let _ = writeln!(out, "#### Findings\n");
    if f.new.is_empty() && f.gone.is_empty() {
        let _ = writeln!(
            out,
            "No finding appeared or disappeared ({} in both).\n",
            f.kept.len()
        );
        return;
    }
    for (head, list, cand) in [("New", &f.new, true), ("Gone", &f.gone, false)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{head}:\n");
        for x in list {
            item(out, x, if cand { &x.cand_title } else { &x.base_title });
        }
        out.push('\n');
    }
}
