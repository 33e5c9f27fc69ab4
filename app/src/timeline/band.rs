//! The band marking a collective instance on a stacked rank's panel: its kernel's span on that
//! rank, shaded across the lanes and outlined, as draw-list commands appended after the panel's
//! picture (at least [`MIN_BAND_PX`] wide, so a kernel shorter than a pixel at this zoom still
//! shows). Kept out of `draw_list` because only the ranks timeline has it; time in the panel's
//! own trace ns.

use super::draw_list::{Cmd, Rect, Surface, RULER_H};
use super::theme::Theme;
use crate::state::timeline::TimelineState;

/// Narrowest band drawn, CSS px.
const MIN_BAND_PX: f64 = 3.0;

/// The commands drawing band `[start_ns, end_ns]` of `t`'s trace below the ruler; none when it
/// is out of view.
pub fn cmds(t: &TimelineState, (start_ns, end_ns): (f64, f64), theme: Theme, surface: Surface) -> Vec<Cmd> {
    let (x0, x1) = (t.view.x_of(start_ns), t.view.x_of(end_ns));
    if x1 < 0.0 || x0 > surface.width {
        return Vec::new();
    }
    let w = (x1 - x0).max(MIN_BAND_PX);
    let x = (x0 + x1 - w) / 2.0;
    let h = surface.height - RULER_H;
    let c = theme.colors();
    vec![
        Cmd::Clip(Rect::new(0.0, RULER_H, surface.width, h)),
        Cmd::Fill { color: c.range, rect: Rect::new(x, RULER_H, w, h) },
        Cmd::StrokeRect { color: c.matched, width: 2.0, rect: Rect::new(x, RULER_H + 1.0, w, h - 2.0) },
        Cmd::Unclip,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::viewport::Viewport;

    #[test]
    fn a_band_spans_its_kernel_and_a_short_one_stays_visible() {
        let mut t = TimelineState::default();
        t.view = Viewport { start: 0.0, end: 1000.0, width: 100.0, trace_end: 1000.0 };
        let surface = Surface { width: 100.0, height: 200.0, dpr: 1.0 };
        let fill = |cmds: &[Cmd]| cmds.iter().find_map(|c| match c {
            Cmd::Fill { rect, .. } => Some(*rect),
            _ => None,
        });
        let wide = cmds(&t, (200.0, 500.0), Theme::Light, surface);
        assert_eq!(fill(&wide), Some(Rect::new(20.0, RULER_H, 30.0, 200.0 - RULER_H)));
        assert_eq!((wide.first(), wide.last()), (Some(&Cmd::Clip(Rect::new(0.0, RULER_H, 100.0, 168.0))), Some(&Cmd::Unclip)));
        let short = cmds(&t, (600.0, 601.0), Theme::Light, surface);
        assert_eq!(fill(&short).map(|r| (r.x, r.w)), Some((58.55, MIN_BAND_PX)));
        assert!(cmds(&t, (2000.0, 2100.0), Theme::Light, surface).is_empty(), "out of view");
    }
}
