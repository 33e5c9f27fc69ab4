//! The canvas backend: the only timeline code that calls `CanvasRenderingContext2d`. It gets
//! a timeline canvas's context scaled to device pixels ([`context`]) and replays a
//! [`DrawList`] on it ([`replay`]), one canvas call per command part, in the list's order.
//!
//! Fill style, stroke style and line width are set only when they change: a style crosses the
//! wasm boundary as a string, and a frame has hundreds of labels in the same color.

use super::draw_list::{Cmd, DrawList, Point, Rect, LABEL_FONT};
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::CanvasRenderingContext2d as Ctx;

/// The canvas's 2D context scaled to device pixels, with the canvas size in CSS px and the
/// device pixel ratio; `None` when the canvas is gone (a frame scheduled just before it
/// unmounted).
pub fn context(canvas: NodeRef<html::Canvas>) -> Option<(Ctx, f64, f64, f64)> {
    let canvas = canvas.try_get_untracked().flatten()?;
    let ctx = canvas
        .get_context_with_context_options("2d", &context_options())
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<Ctx>().ok())?;
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    Some((ctx, f64::from(canvas.width()) / dpr, f64::from(canvas.height()) / dpr, dpr))
}

/// 2D context options: opaque (every frame fills every pixel, so the compositor need not
/// blend) and desynchronized (frames go to the screen without waiting for the page's commit).
fn context_options() -> JsValue {
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"alpha".into(), &JsValue::FALSE);
    let _ = js_sys::Reflect::set(&options, &"desynchronized".into(), &JsValue::TRUE);
    options.into()
}

/// Draws `list` on `ctx`, in order.
pub fn replay(ctx: &Ctx, list: &DrawList) {
    ctx.set_font(LABEL_FONT);
    ctx.set_text_baseline("middle");
    let mut pen = Pen::default();
    for cmd in &list.cmds {
        match cmd {
            Cmd::Clip(r) => {
                ctx.save();
                ctx.begin_path();
                ctx.rect(r.x, r.y, r.w, r.h);
                ctx.clip();
            }
            Cmd::Unclip => {
                ctx.restore();
                // The context's styles are back to those at the clip.
                pen = Pen::default();
            }
            Cmd::Fill { color, rect: r } => {
                pen.fill(ctx, color);
                ctx.fill_rect(r.x, r.y, r.w, r.h);
            }
            Cmd::FillRects { color, rects } => {
                pen.fill(ctx, color);
                path_of_rects(ctx, rects);
                ctx.fill();
            }
            Cmd::StrokeRect { color, width, rect: r } => {
                pen.stroke(ctx, color, *width);
                ctx.stroke_rect(r.x, r.y, r.w, r.h);
            }
            Cmd::StrokeRects { color, width, rects } => {
                pen.stroke(ctx, color, *width);
                path_of_rects(ctx, rects);
                ctx.stroke();
            }
            Cmd::Lines { color, width, lines } => {
                pen.stroke(ctx, color, *width);
                ctx.begin_path();
                for [x0, y0, x1, y1] in lines {
                    ctx.move_to(*x0, *y0);
                    ctx.line_to(*x1, *y1);
                }
                ctx.stroke();
            }
            Cmd::Polygon { color, points } => {
                pen.fill(ctx, color);
                polygon(ctx, points);
            }
            Cmd::Curve { color, width, points: [a, b, c, d] } => {
                pen.stroke(ctx, color, *width);
                ctx.begin_path();
                ctx.move_to(a.0, a.1);
                ctx.bezier_curve_to(b.0, b.1, c.0, c.1, d.0, d.1);
                ctx.stroke();
            }
            Cmd::Text { color, text, x, y } => {
                pen.fill(ctx, color);
                let _ = ctx.fill_text(text, *x, *y);
            }
        }
    }
}

fn path_of_rects(ctx: &Ctx, rects: &[Rect]) {
    ctx.begin_path();
    for r in rects {
        ctx.rect(r.x, r.y, r.w, r.h);
    }
}

fn polygon(ctx: &Ctx, points: &[Point]) {
    let Some((first, rest)) = points.split_first() else { return };
    ctx.begin_path();
    ctx.move_to(first.0, first.1);
    for p in rest {
        ctx.line_to(p.0, p.1);
    }
    ctx.close_path();
    ctx.fill();
}

/// The styles last set on the context (`None`: unknown).
#[derive(Default)]
struct Pen {
    fill: Option<&'static str>,
    stroke: Option<(&'static str, f64)>,
}

impl Pen {
    fn fill(&mut self, ctx: &Ctx, color: &'static str) {
        if self.fill != Some(color) {
            ctx.set_fill_style_str(color);
            self.fill = Some(color);
        }
    }

    fn stroke(&mut self, ctx: &Ctx, color: &'static str, width: f64) {
        let (old_color, old_width) = self.stroke.unzip();
        if old_color != Some(color) {
            ctx.set_stroke_style_str(color);
        }
        if old_width != Some(width) {
            ctx.set_line_width(width);
        }
        self.stroke = Some((color, width));
    }
}
