//! Vertical layout of the timeline: group headers, lanes (one row per nesting level) and counter
//! tracks, stacked top to bottom in the trace's display order.
//!
//! Inputs: the worker's [`Layout`], which groups are collapsed, and the counter series (tracks
//! appear under their GPU once the series arrive). Output: [`Track`]s with `y` and `height` in
//! CSS pixels from the top of the content; the canvas and the DOM lane labels both read them,
//! so labels and drawings always line up.

use protocol::{CounterSet, Layout};

/// Height of one slice row.
pub const ROW_H: f64 = 18.0;
/// Space above and below a lane's rows.
pub const LANE_PAD: f64 = 3.0;
/// Height of a group header.
pub const GROUP_H: f64 = 22.0;
/// Height of a counter track.
pub const COUNTER_H: f64 = 30.0;

/// What a track shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrackKind {
    /// A process / device header; `collapsed` hides its lanes; `pinned`: the user moved it to
    /// the top.
    Group { group: usize, collapsed: bool, pinned: bool },
    /// A thread or stream: its slice rows `first_row..first_row + rows`.
    Lane { lane: u32, rows: u16, first_row: u16 },
    /// Series `series` of the counter set.
    Counter { series: usize },
}

/// One horizontal band of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Track {
    /// What it shows.
    pub kind: TrackKind,
    /// Label text.
    pub label: String,
    /// Top, CSS px from the content top.
    pub y: f64,
    /// Height, CSS px.
    pub height: f64,
    /// Index of the owning group.
    pub group: usize,
}

/// The tracks of `layout`, groups in `pinned` first (in that order) then the others in layout
/// order, groups in `collapsed` folded; counter series are placed under
/// the group of their device (GPU series by device id, memory by its `cuda:N` / `cpu` label).
pub fn build(layout: &Layout, collapsed: &[bool], pinned: &[usize], counters: Option<&CounterSet>) -> Vec<Track> {
    let mut out = Vec::new();
    let mut y = 0.0;
    let rest = (0..layout.groups.len()).filter(|g| !pinned.contains(g));
    let order = pinned.iter().copied().filter(|&g| g < layout.groups.len()).chain(rest);
    for (g, group) in order.filter_map(|g| Some((g, layout.groups.get(g)?))) {
        let folded = collapsed.get(g).copied().unwrap_or(false);
        let mut push = |kind, label: String, height: f64, y: &mut f64| {
            out.push(Track {
                kind,
                label,
                y: *y,
                height,
                group: g,
            });
            *y += height;
        };
        push(
            TrackKind::Group {
                group: g,
                collapsed: folded,
                pinned: pinned.contains(&g),
            },
            group.name.clone(),
            GROUP_H,
            &mut y,
        );
        if folded {
            continue;
        }
        if let Some(set) = counters {
            for (i, s) in set.series.iter().enumerate() {
                if series_group(layout, s) == Some(g) {
                    push(TrackKind::Counter { series: i }, s.label.clone(), COUNTER_H, &mut y);
                }
            }
        }
        for lane in &group.lanes {
            let rows = lane.rows.max(1);
            let height = f64::from(rows) * ROW_H + 2.0 * LANE_PAD;
            push(
                TrackKind::Lane {
                    lane: lane.lane,
                    rows,
                    first_row: lane.first_row,
                },
                lane.name.clone(),
                height,
                &mut y,
            );
        }
    }
    out
}

/// The group a counter series belongs under.
fn series_group(layout: &Layout, s: &protocol::CounterSeries) -> Option<usize> {
    let gpu = |d: i64| {
        layout
            .groups
            .iter()
            .position(|g| g.kind == "gpu" && g.device == Some(d))
    };
    if s.metric != "memory" {
        return gpu(s.device);
    }
    match s.label.split_once(':') {
        Some((kind, _)) if kind != "cpu" => gpu(s.device),
        // Host memory goes under the busiest CPU process (the one running the model).
        _ => layout
            .groups
            .iter()
            .enumerate()
            .filter(|(_, g)| g.kind == "cpu")
            .max_by_key(|(i, g)| (g.lanes.iter().map(|l| l.slices).sum::<u64>(), std::cmp::Reverse(*i)))
            .map(|(i, _)| i),
    }
}

/// Total content height.
pub fn content_height(tracks: &[Track]) -> f64 {
    tracks.last().map_or(0.0, |t| t.y + t.height)
}

/// The slice row at content height `y` inside a lane track, if `y` falls on one.
pub fn row_at(track: &Track, y: f64) -> Option<u16> {
    let TrackKind::Lane { rows, first_row, .. } = track.kind else {
        return None;
    };
    let r = ((y - track.y - LANE_PAD) / ROW_H).floor();
    (r >= 0.0 && r < f64::from(rows)).then(|| first_row.saturating_add(r as u16))
}

/// Top of slice row `row` of a lane track, content px.
pub fn row_y(track: &Track, row: u16) -> f64 {
    let first = match track.kind {
        TrackKind::Lane { first_row, .. } => first_row,
        _ => 0,
    };
    track.y + LANE_PAD + f64::from(row.saturating_sub(first)) * ROW_H
}

/// True when `track` shows slice row `row` of lane `lane`.
pub fn shows(track: &Track, lane: u32, row: u16) -> bool {
    matches!(track.kind, TrackKind::Lane { lane: l, rows, first_row } if l == lane && row >= first_row && row - first_row < rows)
}

/// The track at content height `y`.
pub fn track_at(tracks: &[Track], y: f64) -> Option<&Track> {
    let i = tracks.partition_point(|t| t.y + t.height <= y);
    tracks.get(i).filter(|t| t.y <= y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{CounterSeries, LaneGroup, LaneInfo};

    fn layout() -> Layout {
        let lane = |lane, rows| LaneInfo {
            lane,
            name: format!("l{lane}"),
            rows,
            first_row: 0,
            slices: 1,
        };
        Layout {
            end_ns: 10,
            groups: vec![
                LaneGroup {
                    name: "cpu".into(),
                    kind: "cpu".into(),
                    device: None,
                    folded: false,
                    lanes: vec![lane(0, 3), lane(1, 1)],
                },
                LaneGroup {
                    name: "gpu 0".into(),
                    kind: "gpu".into(),
                    device: Some(0),
                    folded: false,
                    lanes: vec![lane(2, 2)],
                },
            ],
            steps: Vec::new(),
            focus: None,
            origin_ns: 0,
        }
    }

    #[test]
    fn tracks_stack_and_fold() {
        let l = layout();
        let t = build(&l, &[], &[], None);
        assert_eq!(t.len(), 5);
        assert_eq!(t[1].y, GROUP_H);
        assert_eq!(t[1].height, 3.0 * ROW_H + 2.0 * LANE_PAD);
        assert_eq!(track_at(&t, t[2].y + 1.0).map(|t| t.label.as_str()), Some("l1"));
        assert_eq!(row_at(&t[1], t[1].y + LANE_PAD + ROW_H * 2.5), Some(2));
        assert_eq!(row_at(&t[1], t[1].y + 1.0), None);
        let folded = build(&l, &[true], &[], None);
        assert_eq!(folded.len(), 3);
        assert_eq!(content_height(&folded), 2.0 * GROUP_H + 2.0 * ROW_H + 2.0 * LANE_PAD);
    }

    #[test]
    fn pinned_groups_come_first_in_pin_order() {
        let mut l = layout();
        let mut third = l.groups[0].clone();
        third.name = "third".into();
        l.groups.push(third);
        let groups = |t: &[Track]| t.iter().filter_map(|x| matches!(x.kind, TrackKind::Group { .. }).then_some(x.group)).collect::<Vec<_>>();
        assert_eq!(groups(&build(&l, &[], &[], None)), vec![0, 1, 2]);
        let t = build(&l, &[], &[2, 1, 9], None);
        assert_eq!(groups(&t), vec![2, 1, 0], "an out-of-range pin is ignored");
        assert_eq!(t[0].y, 0.0);
        assert!(matches!(t[0].kind, TrackKind::Group { group: 2, pinned: true, .. }));
        assert!(t.iter().any(|x| matches!(x.kind, TrackKind::Group { group: 0, pinned: false, .. })));
    }

    #[test]
    fn a_python_stack_track_shows_the_rows_below_the_ops() {
        let mut l = layout();
        let mut python = l.groups[0].clone();
        python.lanes = vec![LaneInfo { first_row: 3, rows: 5, ..python.lanes[0].clone() }];
        l.groups.insert(1, python);
        let t = build(&l, &[], &[], None);
        let stack = &t[4];
        assert_eq!(stack.kind, TrackKind::Lane { lane: 0, rows: 5, first_row: 3 });
        assert_eq!(stack.height, 5.0 * ROW_H + 2.0 * LANE_PAD);
        assert_eq!(row_at(stack, stack.y + LANE_PAD + ROW_H * 0.5), Some(3));
        assert_eq!(row_y(stack, 4), stack.y + LANE_PAD + ROW_H);
        assert!(shows(stack, 0, 7) && !shows(stack, 0, 2) && !shows(stack, 0, 8));
        assert!(shows(&t[1], 0, 2) && !shows(&t[1], 0, 3));
    }

    #[test]
    fn counters_go_under_their_device() {
        let l = layout();
        let series = |device, metric: &str, label: &str| CounterSeries {
            device,
            metric: metric.into(),
            label: label.into(),
            values: vec![],
            max: 1.0,
        };
        let set = CounterSet {
            start_ns: 0,
            bucket_ns: 1,
            series: vec![
                series(0, "utilization", "GPU 0 utilization"),
                series(0, "memory", "cuda:0 allocated"),
                series(-1, "memory", "cpu allocated"),
            ],
        };
        let t = build(&l, &[], &[], Some(&set));
        let kinds: Vec<String> = t.iter().map(|t| t.label.clone()).collect();
        assert_eq!(
            kinds,
            ["cpu", "cpu allocated", "l0", "l1", "gpu 0", "GPU 0 utilization", "cuda:0 allocated", "l2"]
        );
    }
}
