//! What the timeline draws for a known state: positions, culling, merging, labels, outlines
//! and ruler ticks, read off the draw list.

use super::*;
use crate::state::tiles::{name_hash, TileRequest, Tiles};
use crate::state::tracks::{GROUP_H, LANE_PAD};
use protocol::{LaneGroup, LaneInfo, SliceDetails, StepMark, TileSet, RECT_MATCH};

const SURFACE: Surface = Surface { width: 1000.0, height: 400.0, dpr: 1.0 };

/// A rect as the tile words carry it: lane-relative row, start and end ns, name index.
struct Slice {
    row: u32,
    start_ns: u32,
    end_ns: u32,
    name: u32,
    matched: bool,
}

fn slice(row: u32, start_ns: u32, end_ns: u32, name: u32) -> Slice {
    Slice { row, start_ns, end_ns, name, matched: false }
}

/// A GPU group with lane 0 (2 rows) and lane 1 (1 row), 1 ms long, viewed whole across
/// 1000 px (1 px = 1000 ns, time 0 at x 0); `lane0` holds tiles at 1 ns resolution.
fn state(names: &[&str], lane0: &[Slice]) -> TimelineState {
    let mut t = TimelineState::default();
    t.view.resize(SURFACE.width);
    t.height = SURFACE.height - RULER_H;
    let lane = |lane, rows| LaneInfo { lane, name: format!("stream {lane}"), rows, first_row: 0, slices: 1 };
    t.set_layout(Layout {
        end_ns: 1_000_000,
        groups: vec![LaneGroup {
            name: "GPU 0".into(),
            kind: "gpu".into(),
            device: Some(0),
            lanes: vec![lane(0, 2), lane(1, 1)],
            ..Default::default()
        }],
        steps: vec![StepMark { number: 7, start_ns: 200_000, end_ns: 600_000 }],
        ..Default::default()
    });
    t.view.set(0.0, 1_000_000.0);
    let words = lane0
        .iter()
        .flat_map(|s| [s.row, s.start_ns, s.end_ns, 0, s.name | if s.matched { RECT_MATCH } else { 0 }, 1])
        .collect();
    let set = TileSet {
        start_ns: 0,
        end_ns: 1_000_000,
        resolution_ns: 1,
        lanes: vec![(0, lane0.len() as u32)],
        names: names.iter().map(|&n| n.to_owned()).collect(),
    };
    t.tiles = Tiles::new(set, words, None);
    t
}

/// Top of row `row` of lane 0 (the first lane, under the group header), canvas px.
fn row_top(row: u16) -> f64 {
    RULER_H + GROUP_H + LANE_PAD + f64::from(row) * ROW_H
}

/// Every slice rect drawn, with its fill color.
fn slice_rects(list: &DrawList) -> Vec<(&'static str, Rect)> {
    list.cmds
        .iter()
        .flat_map(|c| match c {
            Cmd::FillRects { color, rects } => rects.iter().map(|r| (*color, *r)).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// Every text drawn, with its position.
fn texts(list: &DrawList) -> Vec<(&str, f64, f64)> {
    list.cmds
        .iter()
        .filter_map(|c| match c {
            Cmd::Text { text, x, y, .. } => Some((text.as_str(), *x, *y)),
            _ => None,
        })
        .collect()
}

/// Every single filled rect of `color`.
fn fills(list: &DrawList, color: &str) -> Vec<Rect> {
    list.cmds
        .iter()
        .filter_map(|c| match c {
            Cmd::Fill { color: c, rect } if *c == color => Some(*rect),
            _ => None,
        })
        .collect()
}

fn fill_of(name: &str) -> &'static str {
    Theme::Light.palette()[theme::slot(name_hash(name))].0.as_str()
}

#[test]
fn a_slice_lands_at_its_time_and_row() {
    let t = state(&["aten::mm"], &[slice(1, 100_000, 300_000, 0)]);
    let list = draw_list(&t, Theme::Light, SURFACE);
    let rect = Rect::new(100.0, row_top(1) + 1.0, 200.0, ROW_H - 2.0);
    assert_eq!(slice_rects(&list), [(fill_of("aten::mm"), rect)]);
}

#[test]
fn tracks_stack_below_the_ruler_and_follow_the_scroll() {
    let mut t = state(&[], &[]);
    let c = Theme::Light.colors();
    let list = draw_list(&t, Theme::Light, SURFACE);
    assert_eq!(fills(&list, c.header), [Rect::new(0.0, RULER_H, 1000.0, GROUP_H)]);
    // Stripes on every other track: the third track is lane 1, below lane 0's two rows.
    let lane1_y = RULER_H + GROUP_H + 2.0 * ROW_H + 2.0 * LANE_PAD;
    assert_eq!(fills(&list, c.stripe), [Rect::new(0.0, lane1_y, 1000.0, ROW_H + 2.0 * LANE_PAD)]);
    assert_eq!(list.cmds.get(1), Some(&Cmd::Clip(Rect::new(0.0, RULER_H, 1000.0, 400.0 - RULER_H))));

    t.height = 20.0;
    t.scroll_by(10.0);
    let scrolled = draw_list(&t, Theme::Light, SURFACE);
    assert_eq!(fills(&scrolled, c.header), [Rect::new(0.0, RULER_H - 10.0, 1000.0, GROUP_H)]);
    assert_eq!(fills(&scrolled, c.stripe)[0].y, lane1_y - 10.0);
}

#[test]
fn only_the_background_before_a_layout() {
    let list = draw_list(&TimelineState::default(), Theme::Dark, SURFACE);
    let background = Cmd::Fill { color: Theme::Dark.colors().background, rect: Rect::new(0.0, 0.0, 1000.0, 400.0) };
    assert_eq!(list.cmds, [background]);
}

#[test]
fn off_screen_slices_and_tracks_are_culled() {
    // Left of the view, right of it, and on the screen.
    let lane0 = [slice(0, 0, 50_000, 0), slice(0, 250_000, 260_000, 0), slice(1, 150_000, 160_000, 0)];
    let mut t = state(&["a"], &lane0);
    t.view.set(100_000.0, 200_000.0);
    let rects = slice_rects(&draw_list(&t, Theme::Light, SURFACE));
    assert_eq!(rects.len(), 1);
    assert_eq!((rects[0].1.x, rects[0].1.w), (500.0, 100.0));
    // A canvas ending above lane 1: its stripe is not drawn.
    let short = Surface { height: RULER_H + GROUP_H + 10.0, ..SURFACE };
    assert!(fills(&draw_list(&t, Theme::Light, short), Theme::Light.colors().stripe).is_empty());
}

#[test]
fn slices_hanging_over_the_edges_are_cut_to_just_outside() {
    let mut t = state(&["a"], &[slice(0, 0, 1_000_000, 0)]);
    t.view.set(400_000.0, 600_000.0);
    let rects = slice_rects(&draw_list(&t, Theme::Light, SURFACE));
    assert_eq!((rects[0].1.x, rects[0].1.w), (-2.0, 1004.0));
}

#[test]
fn sub_pixel_slices_of_a_row_merge_into_one_pixel_wide_rect() {
    // Three 0.2 px slices touching, one 0.2 px slice 10 px further, one on the other row.
    let lane0 = [
        slice(0, 500_000, 500_200, 0),
        slice(0, 500_300, 500_500, 1),
        slice(0, 500_600, 500_800, 0),
        slice(0, 510_000, 510_200, 1),
        slice(1, 500_000, 500_200, 0),
    ];
    let t = state(&["a", "b"], &lane0);
    let rects = slice_rects(&draw_list(&t, Theme::Light, SURFACE));
    let mut got: Vec<(&str, f64, f64, f64)> = rects.iter().map(|(c, r)| (*c, r.x, r.y, r.w)).collect();
    got.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.1.total_cmp(&b.1)));
    assert_eq!(
        got,
        [
            // The merged run takes the first slice's color.
            (fill_of("a"), 500.0, row_top(0) + 1.0, 1.0),
            (fill_of("b"), 510.0, row_top(0) + 1.0, 1.0),
            (fill_of("a"), 500.0, row_top(1) + 1.0, 1.0),
        ]
    );
}

#[test]
fn edges_snap_to_device_pixels() {
    let t = state(&["a"], &[slice(0, 100_300, 200_600, 0)]);
    let rects = slice_rects(&draw_list(&t, Theme::Light, Surface { dpr: 2.0, ..SURFACE }));
    assert_eq!((rects[0].1.x, rects[0].1.w), (100.5, 100.0));
}

#[test]
fn labels_are_cut_to_their_slice() {
    let names = ["aten::convolution_backward", "aten::mm"];
    // In a view from 20 µs: 100 px, 40 px (too narrow for a label), 80 px starting 20 px left
    // of the view.
    let lane0 = [slice(0, 120_000, 220_000, 0), slice(0, 320_000, 360_000, 1), slice(1, 0, 80_000, 1)];
    let mut t = state(&names, &lane0);
    t.view.set(20_000.0, 1_020_000.0);
    let list = draw_list(&t, Theme::Light, SURFACE);
    let ink = Theme::Light.palette()[0].1;
    assert!(list.cmds.iter().any(|c| matches!(c, Cmd::Text { color, .. } if *color == ink)));
    let labels: Vec<_> = texts(&list).into_iter().filter(|(_, _, y)| *y > RULER_H).collect();
    assert_eq!(
        labels,
        [
            // 92 px of room at 6.4 px a character: 13 characters and the ellipsis.
            ("aten::convolu…", 104.0, row_top(0) + ROW_H / 2.0),
            ("aten::mm", 4.0, row_top(1) + ROW_H / 2.0),
        ]
    );
    assert_eq!(label("aten::mm", 100.0), "aten::mm");
    assert_eq!(label("aten::convolution", 20.0), "");
}

#[test]
fn a_search_outlines_matches_and_fades_the_rest() {
    let mut lane0 = [slice(0, 100_000, 200_000, 0), slice(0, 300_000, 400_000, 0)];
    lane0[1].matched = true;
    let mut t = state(&["aten::mm"], &lane0);
    t.search.text = "mm".into();
    let request = TileRequest { lanes: vec![0], start_ns: 0, end_ns: 1, resolution_ns: 1, search: Some("mm".into()) };
    t.tiles.request = Some(request);
    let list = draw_list(&t, Theme::Light, SURFACE);
    let palette = Theme::Light.palette();
    let slot = theme::slot(name_hash("aten::mm"));
    let colors: Vec<&str> = slice_rects(&list).iter().map(|(c, _)| *c).collect();
    assert_eq!(colors, [palette[slot].0.as_str(), palette[slot + theme::SLOTS].0.as_str()]);
    let outline = Cmd::StrokeRects {
        color: Theme::Light.colors().matched,
        width: 2.0,
        rects: vec![Rect::new(301.0, row_top(0) + 1.5, 98.0, ROW_H - 3.0)],
    };
    assert!(list.cmds.contains(&outline));
}

#[test]
fn the_selection_is_outlined_with_its_flow_arrows() {
    let mut t = state(&[], &[]);
    let at = |lane, row, start_ns, dur_ns| protocol::SliceRef { lane, row, start_ns, dur_ns, ..Default::default() };
    t.selected = Some(SliceDetails {
        slice: at(0, 1, 100_000, 50_000),
        flows_out: vec![at(1, 0, 400_000, 1_000)],
        ..Default::default()
    });
    let list = draw_list(&t, Theme::Light, SURFACE);
    let c = Theme::Light.colors();
    let outline = Rect::new(100.0, row_top(1) + 0.5, 50.0, ROW_H - 1.0);
    assert!(list.cmds.contains(&Cmd::StrokeRect { color: c.selection, width: 2.0, rect: outline }));
    let (from, to) = ((100.0, row_top(1) + ROW_H / 2.0), (400.0, row_top(0) + 2.0 * ROW_H + 2.0 * LANE_PAD + ROW_H / 2.0));
    let curve = Cmd::Curve { color: c.flow, width: 1.5, points: [from, (220.0, from.1), (280.0, to.1), to] };
    assert!(list.cmds.contains(&curve));
    assert!(list.cmds.iter().any(|c| matches!(c, Cmd::Polygon { points, .. } if points.first() == Some(&to))));
    // Drawn after the slices and before the ruler, which is not clipped.
    let at_cmd = |want: &dyn Fn(&Cmd) -> bool| list.cmds.iter().position(want);
    assert!(at_cmd(&|c| matches!(c, Cmd::StrokeRect { .. })) < at_cmd(&|c| *c == Cmd::Unclip));
}

#[test]
fn a_graph_nodes_launch_arrows_are_drawn_on_request() {
    let mut t = state(&[], &[]);
    let at = |row, start_ns| protocol::SliceRef { lane: 0, row, start_ns, dur_ns: 10_000, ..Default::default() };
    let edges = vec![(at(0, 100_000), at(1, 300_000)), (at(1, 300_000), at(0, 600_000))];
    t.selected = Some(SliceDetails {
        slice: at(0, 100_000),
        graph: Some(protocol::GraphNode { edges_total: 2, edges, ..Default::default() }),
        ..Default::default()
    });
    let curves = |t: &TimelineState| draw_list(t, Theme::Light, SURFACE).cmds.iter().filter(|c| matches!(c, Cmd::Curve { .. })).count();
    assert_eq!(curves(&t), 0, "off by default: the node has no flows of its own here");
    t.graph_arrows = true;
    assert_eq!(curves(&t), 2, "every edge of the launch");
}

#[test]
fn a_finding_outline_is_at_least_three_pixels_wide() {
    let mut t = state(&[], &[]);
    t.highlight = vec![protocol::SliceRef { lane: 0, row: 0, start_ns: 500_000, dur_ns: 100, ..Default::default() }];
    let list = draw_list(&t, Theme::Light, SURFACE);
    let rect = Rect::new(499.0, row_top(0) + 0.5, 3.0, ROW_H - 1.0);
    assert!(list.cmds.contains(&Cmd::StrokeRect { color: Theme::Light.colors().matched, width: 2.5, rect }));
}

#[test]
fn the_range_is_shaded_under_the_ruler() {
    let mut t = state(&[], &[]);
    t.range = Some((250_000.0, 500_000.0));
    let list = draw_list(&t, Theme::Light, SURFACE);
    assert_eq!(fills(&list, Theme::Light.colors().range), [Rect::new(250.0, RULER_H, 250.0, 400.0 - RULER_H)]);
}

#[test]
fn ruler_ticks_fall_on_round_times() {
    let t = state(&[], &[]);
    let list = draw_list(&t, Theme::Light, SURFACE);
    let ink = Theme::Light.colors().ink;
    // 1000 ns a pixel, ticks at least 90 px apart: every 100 µs.
    let ticks = list.cmds.iter().find_map(|c| match c {
        Cmd::Lines { color, lines, .. } if *color == ink => Some(lines.clone()),
        _ => None,
    });
    let want: Vec<[f64; 4]> = (0..=10).map(|i| f64::from(i) * 100.0 + 0.5).map(|x| [x, 0.0, x, 14.0]).collect();
    assert_eq!(ticks, Some(want));
    let ruler_texts: Vec<_> = texts(&list).into_iter().filter(|(_, _, y)| *y < RULER_H).collect();
    assert_eq!(ruler_texts.first(), Some(&("0.0 ms", 3.5, 8.0)));
    assert_eq!(ruler_texts.get(3), Some(&("0.3 ms", 303.5, 8.0)));
    // The step mark under the ticks, with its number.
    assert!(ruler_texts.contains(&("step 7", 203.0, RULER_H - 10.0)));
    let step = fills(&list, Theme::Light.colors().step);
    assert_eq!(step, [Rect::new(200.0, RULER_H - 3.0, 400.0, 3.0)]);
}

#[test]
fn ruler_labels_count_from_the_origin() {
    let mut t = state(&[], &[]);
    t.origin_ns = 250_000.0;
    let list = draw_list(&t, Theme::Light, SURFACE);
    let ruler_texts: Vec<_> = texts(&list).into_iter().filter(|(_, _, y)| *y < RULER_H).collect();
    assert_eq!(ruler_texts.first(), Some(&("-0.2 ms", 53.5, 8.0)));
    assert!(ruler_texts.contains(&("0.0 ms", 253.5, 8.0)));
}

#[test]
fn warm_up_touches_every_color_then_clears() {
    let list = warm_up(Theme::Light, 300.0, 200.0);
    assert_eq!(list.cmds.len(), 2 * Theme::Light.palette().len() + 1);
    let background = Cmd::Fill { color: Theme::Light.colors().background, rect: Rect::new(0.0, 0.0, 300.0, 200.0) };
    assert_eq!(list.cmds.last(), Some(&background));
}
