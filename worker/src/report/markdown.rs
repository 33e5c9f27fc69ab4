//! Markdown building blocks for `--format md` (GitHub-flavoured: a PR comment, a job summary):
//! escaped text and pipe tables whose number columns are right-aligned.
//!
//! **Why escape everything.** Op and kernel names come from the trace: `aten::add_` or a
//! templated kernel `void at::native::(anonymous)<float, 4>` holds `_`, `<`, `*`, `|` and
//! backticks that GitHub would read as emphasis, HTML or a column break. [`text`] makes any
//! name literal; numbers are written by the callers with the units `report` prints.

use std::fmt::Write as _;

/// Longest name shown in a table cell, in characters (cut with `...`, as the text report
/// does): templated kernel names run to 500 characters and would push the numbers off screen.
pub const NAME_CHARS: usize = 100;

/// `s` as literal Markdown text on one line: Markdown punctuation backslash-escaped, `<` / `>`
/// and `&` as entities, control characters (newlines too) as spaces.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '|' | '[' | ']' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Column alignment in a [`Table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// A pipe table: a header, an alignment row, then rows of cells already escaped.
#[derive(Clone, Debug, Default)]
pub struct Table {
    heads: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns; heads are escaped here.
    pub fn new(heads: &[(&str, Align)]) -> Self {
        Self {
            heads: heads.iter().map(|&(h, a)| (text(h), a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row of escaped cells (missing cells are empty, extra cells dropped).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table, cells padded to their column's width so the source reads as a table too;
    /// ends with a blank line.
    pub fn render(&self) -> String {
        let n = self.heads.len();
        let cell = |r: &Vec<String>, i: usize| r.get(i).cloned().unwrap_or_default();
        let widths: Vec<usize> = (0..n)
            .map(|i| {
                let head = self.heads.get(i).map_or(0, |(h, _)| h.chars().count());
                self.rows
                    .iter()
                    .map(|r| cell(r, i).chars().count())
                    .fold(head.max(3), usize::max)
            })
            .collect();
        let mut out = String::new();
        let line = |out: &mut String, cells: Vec<String>| {
            out.push('|');
            for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
                let right = self.heads.get(i).is_some_and(|(_, a)| *a == Align::Right);
                let _ = if right {
                    write!(out, " {c:>w$} |")
                } else {
                    write!(out, " {c:<w$} |")
                };
            }
            out.push('\n');
        };
        line(
            &mut out,
            self.heads.iter().map(|(h, _)| h.clone()).collect(),
        );
        let rule = self.heads.iter().zip(&widths).map(|((_, a), w)| match a {
            Align::Left => "-".repeat(*w),
            Align::Right => format!("{}:", "-".repeat(w.saturating_sub(1))),
        });
        line(&mut out, rule.collect());
        for r in &self.rows {
            line(&mut out, (0..n).map(|i| cell(r, i)).collect());
        }
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_literal() {
        assert_eq!(text("aten::add_"), "aten::add\\_");
        assert_eq!(text("a|b `c` <T*>"), "a\\|b \\`c\\` &lt;T\\*&gt;");
        assert_eq!(text("x\ny"), "x y");
    }

    #[test]
    fn numbers_align_right() {
        let mut t = Table::new(&[("Name", Align::Left), ("Calls", Align::Right)]);
        t.row(vec![text("a|b"), "12".into()]);
        t.row(vec!["c".into()]);
        assert_eq!(
            t.render(),
            "| Name | Calls |\n| ---- | ----: |\n| a\\|b |    12 |\n| c    |       |\n\n"
        );
    }
}
