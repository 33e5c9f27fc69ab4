//! The charts tab: step time stacked by breakdown, GPU utilization over the trace, allocated
//! memory over the trace, one kernel's duration histogram and the kernels' roofline, drawn with
//! plotters on `<canvas>` elements (`plotters_canvas::CanvasBackend`).
//!
//! Inputs: [`ChartState`] (filled by the worker's answers, see `control::charts`), the page
//! theme and window resizes. Output: pixels only; each chart redraws in an effect when its data,
//! the theme or the window size changes. Canvas size is its CSS box times `devicePixelRatio`,
//! and the [`Palette`] scales fonts and margins by the same ratio.
//!
//! Why canvas and not SVG strings: trace names (kernel names in the select and heading) stay DOM
//! text nodes, and canvas text is drawn with `fillText`, so nothing from the trace is ever parsed
//! as markup. Aggregation happens in the worker; a chart draws at most a few hundred shapes.
//!
//! Test ids: `charts`, `chart-steps` (with `chart-steps-stack`, the stack select, and
//! `chart-steps-note`, why a phase is empty), `chart-gpu`, `chart-memory` (with `memory-device`,
//! `memory-live`, `memory-peak`, `memory-live-row`, `live-col-<key>`: see `live`), `chart-kernel-hist`,
//! `chart-kernel-select`, `chart-error`, `chart-roofline` (hidden while the GPU's peaks are
//! unknown or no kernel is plotted) with `roofline-caption`, `roofline-empty` (no kernel to
//! plot, said first), `roofline-unknown` (`data-device`: what is said in the chart's place),
//! `data-circles` on `chart-roofline` (the points' circles as drawn, `[[x, y, r]]` in CSS px),
//! `roofline-tip` (the hovered point, `data-name`; a click searches its name on the timeline),
//! the left-off list `roofline-left-off` (rows `roofline-left-off-row`: `data-name`,
//! `data-reason`, `data-total-ns`) and the peaks form `roofline-peaks` (inputs `peak-bf16`,
//! `peak-fp32`, `peak-fp8`, `peak-fp4`, `peak-gbps`; buttons `peaks-apply`, `peaks-reset`;
//! `peaks-error`). Files: one per chart, shared drawing helpers here.
//! The charts it draws: docs/viewer.md#charts.

mod gpu;
pub mod heatmap;
mod histogram;
mod live;
mod memory;
mod roofline;
mod steps;

use crate::control::Controller;
use crate::state::charts::{ChartState, StepStack};
use crate::state::format;
use crate::state::roofline as rules;
use crate::timeline::theme::Theme;
use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

/// A chart's drawing area: the whole canvas.
type Area = DrawingArea<CanvasBackend, Shift>;
/// What a chart's draw function returns: what it drew (hit areas), or why it could not.
type Drawing<R> = Result<R, Box<dyn std::error::Error>>;
/// What a chart's draw function returns when nothing it drew is kept.
type Drawn = Drawing<()>;

/// Width of the legend column beside a plot, CSS px.
const LEGEND_W_PX: f64 = 170.0;

/// Colors and sizes for one theme at one device pixel ratio.
pub struct Palette {
    /// Card background.
    pub background: RGBColor,
    /// Axes and labels.
    pub ink: RGBColor,
    /// Secondary text.
    pub muted: RGBColor,
    /// Grid lines.
    pub grid: RGBColor,
    /// Series colors, in series order.
    pub series: [RGBColor; 8],
    /// Device pixels per CSS pixel.
    pub scale: f64,
}

impl Palette {
    /// The colors of `theme` (matching `style.css`'s variables) at `scale`.
    pub fn new(theme: Theme, scale: f64) -> Self {
        let scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        match theme {
            Theme::Light => Palette {
                background: RGBColor(0xff, 0xff, 0xff),
                ink: RGBColor(0x1d, 0x23, 0x30),
                muted: RGBColor(0x66, 0x70, 0x85),
                grid: RGBColor(0xe4, 0xe7, 0xec),
                series: [
                    RGBColor(0x2f, 0x6f, 0xde),
                    RGBColor(0xf0, 0x8c, 0x2e),
                    RGBColor(0xd4, 0xb1, 0x06),
                    RGBColor(0x8e, 0x4e, 0xc6),
                    RGBColor(0xd9, 0x3f, 0x3f),
                    RGBColor(0x2e, 0x9e, 0x5b),
                    RGBColor(0x1c, 0x9a, 0xa8),
                    RGBColor(0x98, 0xa2, 0xb3),
                ],
                scale,
            },
            Theme::Dark => Palette {
                background: RGBColor(0x1d, 0x21, 0x28),
                ink: RGBColor(0xe4, 0xe7, 0xec),
                muted: RGBColor(0x98, 0xa2, 0xb3),
                grid: RGBColor(0x32, 0x38, 0x43),
                series: [
                    RGBColor(0x5b, 0x8f, 0xf0),
                    RGBColor(0xf5, 0xa2, 0x55),
                    RGBColor(0xe8, 0xc8, 0x3a),
                    RGBColor(0xb0, 0x7c, 0xe8),
                    RGBColor(0xf9, 0x70, 0x66),
                    RGBColor(0x4c, 0xc3, 0x7e),
                    RGBColor(0x3c, 0xc2, 0xcf),
                    RGBColor(0x7a, 0x84, 0x96),
                ],
                scale,
            },
        }
    }

    /// Series color `i` (wraps around).
    pub fn color(&self, i: usize) -> RGBColor {
        self.series[i % self.series.len()]
    }

    /// `css_px` in device pixels.
    pub fn px(&self, css_px: f64) -> u32 {
        (css_px * self.scale).round() as u32
    }

    /// The page's UI font at `css_px`, in `color` (the family the page and the timeline use,
    /// so no font lookup of its own; see style.css on the type scale).
    pub fn font(&self, css_px: f64, color: RGBColor) -> TextStyle<'static> {
        ("system-ui", css_px * self.scale)
            .into_font()
            .color(&color)
    }
}

/// The charts tab.
#[component]
pub fn ChartsPanel(ctl: Controller, theme: ReadSignal<Theme>) -> impl IntoView {
    let charts = ctl.charts.read_only();
    let resized = RwSignal::new(0u32);
    let listener = window_event_listener(leptos::ev::resize, move |_| {
        resized.update(|n| *n = n.wrapping_add(1));
    });
    on_cleanup(move || listener.remove());
    let steps_ref = NodeRef::<Canvas>::new();
    let gpu_ref = NodeRef::<Canvas>::new();
    let memory_ref = NodeRef::<Canvas>::new();
    let hist_ref = NodeRef::<Canvas>::new();
    let redraw = Redraw { theme, resized };
    redraw.on(
        steps_ref,
        Memo::new(move |_| charts.with(|c| c.steps.clone())),
        steps::draw,
    );
    let counters = Memo::new(move |_| charts.with(|c| c.counters.clone()));
    redraw.on(gpu_ref, counters, gpu::draw);
    let memory_pic = Memo::new(move |_| {
        charts.with(|c| memory::Picture {
            data: c.memory.data.clone(),
            at_ns: c.memory.live().map(|l| l.at_ns),
        })
    });
    redraw.on(memory_ref, memory_pic, memory::draw);
    let hist = Memo::new(move |_| charts.with(|c| c.histogram.clone()));
    redraw.on(hist_ref, hist, histogram::draw);
    let roofline_ref = NodeRef::<Canvas>::new();
    let roof = Memo::new(move |_| charts.with(|c| c.roofline.clone()));
    let circles = StoredValue::new(Vec::<rules::Circle>::new());
    redraw.on_then(roofline_ref, roof, roofline::draw, move |drawn: Vec<rules::Circle>| {
        // For tests and tools: the circles' centers and radii in CSS px, in the points' order.
        if let Some(canvas) = roofline_ref.get_untracked() {
            let scale = f64::from(canvas.width()) / f64::from(canvas.client_width().max(1));
            let css: Vec<[f64; 3]> = drawn.iter().map(|c| [c.x / scale, c.y / scale, c.r / scale]).collect();
            let _ = canvas.set_attribute("data-circles", &serde_json::to_string(&css).unwrap_or_default());
        }
        circles.set_value(drawn);
    });
    // The hovered point: its index and where the tip goes (CSS px in the canvas).
    let hovered = RwSignal::new(None::<(usize, f64, f64)>);
    let point_at = move |ev: &leptos::ev::MouseEvent| {
        let canvas = roofline_ref.get_untracked()?;
        let scale = f64::from(canvas.width()) / f64::from(canvas.client_width().max(1));
        let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let i = circles.with_value(|c| rules::hit(c, x * scale, y * scale, scale))?;
        Some((i, x, y))
    };
    let on_move = move |ev: leptos::ev::MouseEvent| hovered.set(point_at(&ev));
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let name = point_at(&ev).and_then(|(i, _, _)| roof.with_untracked(|r| Some(r.as_ref()?.points.get(i)?.name.clone())));
        if let Some(name) = name {
            ctl.highlight_name(name);
        }
    };
    let tip = move || {
        let (i, x, y) = hovered.get()?;
        let lines = roof.with(|r| r.as_ref()?.points.get(i).map(rules::tip))?;
        let [name, work, rates] = lines;
        let testname = name.clone();
        // Beside the pointer, on the side with room (a long name would leave the card).
        let width = roofline_ref.get_untracked().map_or(0.0, |c| f64::from(c.client_width()));
        let side = if x > width / 2.0 { format!("right: {}px", width - x + 12.0) } else { format!("left: {}px", x + 12.0) };
        let style = format!("{side}; top: {}px", y + 12.0);
        Some(view! {
            <div class="roofline-tip" data-testid="roofline-tip" data-name=testname style=style>
                <b>{name}</b><br/>{work}<br/>{rates}
            </div>
        })
    };
    let error = move || {
        charts.with(|c| c.error.clone()).map(|message| {
            view! { <p class="card error" data-testid="chart-error" role="alert">{message}</p> }
        })
    };
    view! {
        <section class="charts" data-testid="charts">
            {error}
            <figure class="card chart">
                <h2>"Step time " <span class="muted">{move || charts.with(|c| c.step_stack.label())}</span></h2>
                {step_stack_select(ctl, charts)}
                <canvas data-testid="chart-steps" node_ref=steps_ref></canvas>
                {move || charts.with(|c| {
                    let notes = c.steps.as_ref().map(|s| s.notes.join(" ")).filter(|n| !n.is_empty())?;
                    Some(view! { <p class="muted" data-testid="chart-steps-note">{notes}</p> })
                })}
            </figure>
            <figure class="card chart">
                <h2>"GPU utilization " <span class="muted">"whole trace"</span></h2>
                <canvas data-testid="chart-gpu" node_ref=gpu_ref></canvas>
            </figure>
            <figure class="card chart wide">
                <h2>"Memory " <span class="muted">"by category, whole trace"</span></h2>
                {live::device_select(ctl, charts)}
                <canvas data-testid="chart-memory" node_ref=memory_ref
                    on:mousemove=move |ev| {
                        let px = f64::from(ev.offset_x()) * window().device_pixel_ratio();
                        if let Some(at_ns) = memory::ns_at(px) {
                            ctl.memory_hover(at_ns);
                        }
                    }></canvas>
                {live::live_list(ctl, charts)}
            </figure>
            <figure class="card chart">
                <h2>"Kernel durations " <span class="muted">{move || hist_caption(&charts.read())}</span></h2>
                {kernel_select(ctl, charts)}
                <canvas data-testid="chart-kernel-hist" node_ref=hist_ref></canvas>
            </figure>
            <figure class="card chart wide">
                <h2>"Roofline " <span class="muted" data-testid="roofline-caption">
                    {move || roof.with(|r| r.as_ref().map(rules::caption).unwrap_or_default())}
                </span></h2>
                {move || roof.with(|r| r.as_ref().and_then(|d| {
                    let text = rules::empty_message(d)?;
                    Some(view! { <p class="roofline-unknown" data-testid="roofline-empty">{text}</p> })
                }))}
                {move || roof.with(|r| r.as_ref().and_then(|d| {
                    let text = rules::unknown_message(d)?;
                    Some(view! { <p class="roofline-unknown" data-testid="roofline-unknown" data-device=d.device.clone()>{text}</p> })
                }))}
                <div class="roofline-plot">
                    <canvas data-testid="chart-roofline" node_ref=roofline_ref
                        class:pointing=move || hovered.with(Option::is_some)
                        on:mousemove=on_move on:mouseleave=move |_| hovered.set(None) on:click=on_click
                        hidden=move || roof.with(|r| r.as_ref().is_some_and(|d| d.peaks.is_none() || d.points.is_empty()))></canvas>
                    {tip}
                </div>
                {move || roof.with(|r| r.as_ref().map(left_off_list))}
                {peaks_form(ctl, roof)}
            </figure>
        </section>
    }
}

/// What the step bars stack: categories, or phases by CPU or GPU time.
fn step_stack_select(ctl: Controller, charts: ReadSignal<ChartState>) -> impl IntoView {
    let options = StepStack::ALL
        .into_iter()
        .map(|m| view! { <option value=m.key()>{m.label()}</option> })
        .collect_view();
    view! {
        <select
            data-testid="chart-steps-stack"
            title="What the step bars stack"
            prop:value=move || charts.with(|c| c.step_stack.key())
            on:change=move |ev| ctl.stack_steps(event_target_value(&ev))
        >
            {options}
        </select>
    }
}

/// The kernel select: the top kernels by total time, the one shown selected.
fn kernel_select(ctl: Controller, charts: ReadSignal<ChartState>) -> impl IntoView {
    let options = move || {
        charts.with(|c| {
            let shown = c.kernel.clone();
            c.kernels
                .iter()
                .flatten()
                .map(|k| {
                    let text = format!("{} · {}", k.name, format::span_us(k.total_ns as f64 / 1e3));
                    view! {
                        <option value=k.name.clone() selected=shown.as_ref() == Some(&k.name)>{text}</option>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <select
            data-testid="chart-kernel-select"
            title="Kernels by total time"
            prop:value=move || charts.with(|c| c.kernel.clone().unwrap_or_default())
            on:change=move |ev| ctl.select_chart_kernel(event_target_value(&ev))
        >
            {options}
        </select>
    }
}

/// The kernel names the roofline leaves off, longest first: name, total time, share, reason.
fn left_off_list(d: &protocol::RooflineData) -> impl IntoView + use<> {
    let rows = d
        .left_off
        .iter()
        .map(|k| {
            view! {
                <tr data-testid="roofline-left-off-row" data-name=k.name.clone() data-reason=k.reason.clone()
                    data-total-ns=k.total_ns.to_string()>
                    <td class="name" title=k.name.clone()>{k.name.clone()}</td>
                    <td class="num">{format::span_us(k.total_ns as f64 / 1e3)}</td>
                    <td class="num">{format!("{:.1}%", k.share * 100.0)}</td>
                    <td>{k.why.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    let heading = format!(
        "Left off: {} of {}",
        d.left_off.len(),
        format::plural((d.left_off.len() + d.points.len()) as u64, "kernel name", "kernel names")
    );
    (!d.left_off.is_empty()).then(|| {
        view! {
            <details class="left-off" data-testid="roofline-left-off" open=d.points.is_empty()>
                <summary>{heading}</summary>
                <table>
                    <thead><tr><th>"Kernel"</th><th>"Time"</th><th>"Share"</th><th>"Why not plotted"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </details>
        }
    })
}

/// The GPU peaks the roofline is drawn against, editable: bf16, fp32, fp8 and fp4 TFLOP/s and
/// memory GB/s ([`rules::FIELDS`]), filled with the peaks in use; Apply sends them to the worker
/// (`ToWorker::SetPeaks`), Table peaks goes back to the peak table's. Checked here first, so the
/// worker only sees positive numbers.
fn peaks_form(ctl: Controller, roof: Memo<Option<protocol::RooflineData>>) -> impl IntoView {
    let values: [RwSignal<String>; rules::FIELDS.len()] = std::array::from_fn(|_| RwSignal::new(String::new()));
    let error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        roof.with(|r| {
            for ((key, _), value) in rules::FIELDS.iter().zip(values) {
                let v = r.as_ref().and_then(|d| rules::field_value(d, key));
                value.set(v.map(|v| v.to_string()).unwrap_or_default());
            }
        });
    });
    let apply = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match rules::peaks_spec(&values.map(|v| v.get_untracked())) {
            Ok(spec) => {
                error.set(None);
                ctl.set_peaks(spec);
            }
            Err(why) => error.set(Some(why)),
        }
    };
    let inputs = rules::FIELDS
        .iter()
        .zip(values)
        .map(|((key, label), value)| {
            view! {
                <label>{*label}" "
                    <input type="text" inputmode="decimal" size="7" data-testid=format!("peak-{key}")
                        prop:value=move || value.get()
                        on:input=move |ev| value.set(event_target_value(&ev)) />
                </label>
            }
        })
        .collect_view();
    view! {
        <form class="peaks" data-testid="roofline-peaks" on:submit=apply>
            <span class="muted">"GPU peaks:"</span>
            {inputs}
            <button type="submit" data-testid="peaks-apply">"Apply"</button>
            <button type="button" data-testid="peaks-reset" title="The peak table's numbers for this GPU"
                on:click=move |_| {
                    error.set(None);
                    ctl.set_peaks(None);
                }>"Table peaks"</button>
            {move || error.get().map(|e| view! { <span class="error" data-testid="peaks-error" role="alert">{e}</span> })}
        </form>
    }
}

/// `N launches · median X` for the histogram shown.
fn hist_caption(c: &ChartState) -> String {
    match &c.histogram {
        Some(h) if h.total > 0 => format!(
            "{} launches · median {}",
            h.total,
            format::span_us(h.median_ns as f64 / 1e3)
        ),
        _ => String::new(),
    }
}

/// What makes every chart redraw: the theme and window resizes.
#[derive(Clone, Copy)]
struct Redraw {
    theme: ReadSignal<Theme>,
    resized: RwSignal<u32>,
}

impl Redraw {
    /// Draws `data` on the canvas of `node` with `draw`, again whenever the data, the theme or
    /// the window size change.
    fn on<T>(self, node: NodeRef<Canvas>, data: Memo<T>, draw: fn(&Area, &T, &Palette) -> Drawn)
    where
        T: Clone + PartialEq + Send + Sync + 'static,
    {
        self.on_then(node, data, draw, |()| {});
    }

    /// [`Redraw::on`] for a `draw` that returns what it drew (hit areas), handed to `drawn`.
    fn on_then<T, R>(
        self,
        node: NodeRef<Canvas>,
        data: Memo<T>,
        draw: fn(&Area, &T, &Palette) -> Drawing<R>,
        drawn: impl Fn(R) + 'static,
    ) where
        T: Clone + PartialEq + Send + Sync + 'static,
        R: 'static,
    {
        Effect::new(move |_| {
            let theme = self.theme.get();
            self.resized.track();
            let Some(canvas) = node.get() else {
                return;
            };
            let scale = window().device_pixel_ratio();
            let palette = Palette::new(theme, scale);
            canvas.set_width(palette.px(f64::from(canvas.client_width())).max(1));
            canvas.set_height(palette.px(f64::from(canvas.client_height())).max(1));
            let Some(backend) = CanvasBackend::with_canvas_object(canvas) else {
                return;
            };
            let root = backend.into_drawing_area();
            let result = data.with(|d| {
                root.fill(&palette.background)?;
                let out = draw(&root, d, &palette)?;
                root.present()?;
                Ok::<R, Box<dyn std::error::Error>>(out)
            });
            match result {
                Ok(out) => drawn(out),
                Err(e) => web_sys::console::warn_1(&format!("chart not drawn: {e}").into()),
            }
        });
    }
}

/// Tick label for `v` on an axis spanning `span`: as few decimals as the span needs (plotters'
/// default prints one decimal everywhere, which crowds long time axes).
fn tick(v: f64, span: f64) -> String {
    let decimals = if span >= 20.0 {
        0
    } else if span >= 2.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$}")
}

/// Draws `text` centered in `area` (no data yet, or none to show).
fn message(area: &Area, p: &Palette, text: &str) -> Drawn {
    let (w, h) = area.dim_in_pixel();
    let style = p
        .font(13.0, p.muted)
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Center,
        ));
    area.draw(&Text::new(
        text.to_owned(),
        ((w / 2) as i32, (h / 2) as i32),
        style,
    ))?;
    Ok(())
}

/// Splits off the legend column at the right and draws `entries` (label, color) in it; returns
/// the plot area.
fn with_legend(
    area: &Area,
    p: &Palette,
    entries: &[(String, RGBColor)],
) -> Result<Area, Box<dyn std::error::Error>> {
    let noted: Vec<(String, &str, RGBColor)> =
        entries.iter().map(|(l, c)| (l.clone(), "", *c)).collect();
    with_noted_legend(area, p, &noted)
}

/// [`with_legend`] whose entries may carry a note, a muted second line saying what the series
/// measures (empty: none).
fn with_noted_legend(
    area: &Area,
    p: &Palette,
    entries: &[(String, &str, RGBColor)],
) -> Result<Area, Box<dyn std::error::Error>> {
    let (w, _) = area.dim_in_pixel();
    let legend_w = p.px(LEGEND_W_PX).min(w / 3);
    let (plot, legend) = area.split_horizontally(w.saturating_sub(legend_w));
    let row = p.px(18.0) as i32;
    let swatch = p.px(10.0) as i32;
    let text_x = swatch + p.px(6.0) as i32;
    let mut y = p.px(14.0) as i32;
    for (label, note, color) in entries {
        legend.draw(&Rectangle::new(
            [(0, y), (swatch, y + swatch)],
            color.filled(),
        ))?;
        legend.draw(&Text::new(label.clone(), (text_x, y - 1), p.font(12.0, p.ink)))?;
        if !note.is_empty() {
            y += p.px(15.0) as i32;
            legend.draw(&Text::new(note.to_string(), (text_x, y - 1), p.font(11.0, p.muted)))?;
        }
        y += row;
    }
    Ok(plot)
}

/// The mesh every chart shares, ready for more options and `.draw()`: axes muted, bold grid
/// lines faint, light ones hidden, labels in ink, axis descriptions with units.
macro_rules! mesh {
    ($chart:expr, $p:expr, $x_desc:expr, $y_desc:expr) => {
        $chart
            .configure_mesh()
            .axis_style($p.muted)
            .bold_line_style($p.grid)
            .light_line_style($p.background)
            .label_style($p.font(11.0, $p.ink))
            .axis_desc_style($p.font(12.0, $p.ink))
            .x_desc($x_desc)
            .y_desc($y_desc)
    };
}
use mesh;
