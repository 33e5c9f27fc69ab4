//! A scrolling table that builds only the rows in view, as Perfetto's and most large-table views
//! do. Built whole, a table of a few hundred rows made main-thread tasks of 50-240 ms on a
//! 2-core machine: building its cells, laying them out, and removing them again on the next tab.
//!
//! Every body row is one line of [`ROW_H`] px (long names end in an ellipsis and carry their full
//! text in `title`), so the rows above and below the built ones are two spacer rows of known
//! height, and the scrollbar is that of the whole table. Text cells hold at most
//! [`SHOWN_CHARS`] characters. Columns have fixed widths
//! (`table-layout: fixed`) so they do not move as other rows come into view.
//!
//! Test contract: the `<table>` carries `aria-rowcount` (rows + the header row), each body row
//! its `aria-rowindex` (2 for the first); the e2e page object scrolls through to read them all.
//! A text cell's whole text is its `title`.

use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;

/// Height of a body row in px; `.data-table` in `style.css` gives every body row this height.
pub const ROW_H: f64 = 24.0;

/// The scroll box's height at most, in `vh`; rows are built for this much until it scrolls.
const BOX_VH: f64 = 70.0;

/// Rows built beyond each edge of the visible ones, so a wheel step lands on built rows.
const OVERSCAN: usize = 4;

/// The widest fixed column, in `ch`; longer text ends in an ellipsis.
const MAX_CH: usize = 48;

/// Room the flexible column keeps, in `ch`, before the table scrolls sideways.
const FLEX_MIN_CH: usize = 32;

/// Characters of a text cell that are drawn; its `title` holds the whole text. The browser
/// shapes a cell's whole text even where it shows an ellipsis: kernel names of hundreds of
/// characters made the first layout of a table 50-70 ms.
const SHOWN_CHARS: usize = 160;

/// `text` cut to what a cell can show (at most [`SHOWN_CHARS`], then "…").
pub fn shown_text(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// A column's width in `ch`: its header `label` (with room for the sort mark) or its longest
/// text (`text_lens`, in chars), whichever is wider, plus the cell padding. A letter of the
/// header's semibold sans font is about 0.9 of a digit (`ch`).
pub fn width_ch(label: &str, text_lens: impl Iterator<Item = usize>) -> usize {
    let widest = text_lens.max().unwrap_or(0);
    let label = (label.chars().count() * 9).div_ceil(10) + 2;
    widest.max(label).min(MAX_CH) + 2
}

/// The table `testid` inside a `.data-table` scroll box: `widths` per column (`None`: the one
/// flexible column, which takes what is left), the header row `head`, and `rows` body rows in
/// display order, of which only those in view are built, by `build(position)`. `build` returns
/// the `<tr>`; [`row_index`] gives its `aria-rowindex`.
pub fn scroll_table(
    testid: &'static str,
    kind: Option<String>,
    widths: Vec<Option<usize>>,
    head: AnyView,
    rows: usize,
    build: impl Fn(usize) -> AnyView + Send + Sync + 'static,
) -> impl IntoView {
    let build = Arc::new(build);
    let scroll: NodeRef<html::Div> = NodeRef::new();
    // The box's height is read once it scrolls; until then it is at most BOX_VH.
    let window_h = window()
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(900.0);
    let initial = window_h * BOX_VH / 100.0;
    let view_box = RwSignal::new((0.0, initial));
    let span = Memo::new(move |_| {
        let (top, height) = view_box.get();
        let first = ((top / ROW_H).floor().max(0.0) as usize).saturating_sub(OVERSCAN);
        let shown = (height / ROW_H).ceil().max(0.0) as usize + 2 * OVERSCAN;
        (first.min(rows), (first + shown).min(rows))
    });
    let measure = move || {
        if let Some(el) = scroll.get_untracked() {
            view_box.set((f64::from(el.scroll_top()), f64::from(el.client_height())));
        }
    };
    let on_scroll = move |_| measure();
    // A taller window makes a taller box, which shows more rows.
    let resize = window_event_listener(leptos::ev::resize, move |_| measure());
    on_cleanup(move || resize.remove());
    let columns = widths.len();
    let min_ch: usize = widths.iter().map(|w| w.unwrap_or(FLEX_MIN_CH)).sum();
    let cols = widths
        .into_iter()
        .map(|w| view! { <col style:width=w.map(|w| format!("{w}ch")) /> })
        .collect_view();
    let spacer = move |height: Signal<f64>| {
        view! {
            <tr class="spacer" aria-hidden="true">
                <td colspan=columns style:height=move || format!("{}px", height.get())></td>
            </tr>
        }
    };
    let above = Signal::derive(move || span.get().0 as f64 * ROW_H);
    let below = Signal::derive(move || (rows - span.get().1) as f64 * ROW_H);
    view! {
        <div class="data-table" node_ref=scroll on:scroll=on_scroll
            style:max-height=format!("{BOX_VH}vh") style:contain-intrinsic-size=format!("auto {BOX_VH}vh")>
            <table
                data-testid=testid
                data-kind=kind
                aria-rowcount=rows + 1
                style:min-width=format!("{min_ch}ch")
            >
                <colgroup>{cols}</colgroup>
                <thead>{head}</thead>
                <tbody>
                    {spacer(above)}
                    <For
                        each=move || { let (a, b) = span.get(); a..b }
                        key=|k| *k
                        children=move |k| build(k)
                    />
                    {spacer(below)}
                </tbody>
            </table>
        </div>
    }
}

/// The `aria-rowindex` of the body row at display position `k` (the header row is 1).
pub fn row_index(k: usize) -> usize {
    k + 2
}
