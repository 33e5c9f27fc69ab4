//! The memory chart's DOM parts: the device select (each device's allocated and reserved
//! peaks) and the list of allocations live at the moment shown (the highest step peak, or
//! the moment hovered on the chart): size, the op that made it, category, phase / module and
//! age, sortable by any column; a row's click selects its op on the timeline.
//!
//! Test ids: `memory-device` (select), `memory-live` (`data-at` ns, `data-count`,
//! `data-bytes`, `data-hovered`), `memory-peak` (button back to the peak), `live-col-<key>`
//! (headers, `aria-sort` on the sorted one), `memory-live-row` (`data-bytes`, `data-op` slice
//! id, `data-category`).

use crate::control::Controller;
use crate::state::charts::ChartState;
use crate::state::format;
use crate::state::memory::{op_name, LiveKey};
use leptos::prelude::*;
use protocol::LiveAllocation;

/// The device select; hidden with fewer than two devices.
pub fn device_select(ctl: Controller, charts: ReadSignal<ChartState>) -> impl IntoView {
    let options = move || {
        charts.with(|c| {
            let data = c.memory.data.as_ref()?;
            let shown = data.device.clone();
            Some(
                data.devices
                    .iter()
                    .map(|d| {
                        let text = format!(
                            "{} · peak {} allocated, {} reserved",
                            d.label,
                            format::bytes(d.peak_allocated.max(0) as u64),
                            format::bytes(d.peak_reserved.max(0) as u64)
                        );
                        view! { <option value=d.label.clone() selected=d.label == shown>{text}</option> }
                    })
                    .collect_view(),
            )
        })
    };
    view! {
        <select
            data-testid="memory-device"
            title="Memory of this device"
            hidden=move || charts.with(|c| c.memory.data.as_ref().is_none_or(|d| d.devices.len() < 2))
            prop:value=move || charts.with(|c| c.memory.data.as_ref().map(|d| d.device.clone()).unwrap_or_default())
            on:change=move |ev| ctl.pick_memory_device(event_target_value(&ev))
        >
            {options}
        </select>
    }
}

/// The live allocations at the moment shown.
pub fn live_list(ctl: Controller, charts: ReadSignal<ChartState>) -> impl IntoView {
    let caption = move || {
        charts.with(|c| {
            let live = c.memory.live()?;
            let when = if c.memory.hovered.is_some() { "at the moment hovered" } else { "at the highest step peak" };
            Some(format!(
                "{} live {when}, {} · {} allocations, largest {} listed",
                format::bytes(live.bytes.max(0) as u64),
                format::span_us(live.at_ns as f64 / 1e3),
                format::count(live.count),
                live.rows.len()
            ))
        })
    };
    let headers = move || {
        let sort = charts.with(|c| c.memory.sort);
        LiveKey::ALL
            .iter()
            .map(|&key| {
                let aria = (sort.0 == key).then_some(if sort.1 { "descending" } else { "ascending" });
                view! {
                    <th data-testid=format!("live-col-{}", key.key()) aria-sort=aria
                        on:click=move |_| ctl.sort_memory_live(key)>{key.label()}</th>
                }
            })
            .collect_view()
    };
    let rows = move || {
        charts.with(|c| {
            let at = c.memory.live().map_or(0, |l| l.at_ns);
            c.memory.rows().into_iter().map(|a| row(ctl, a, at)).collect_view()
        })
    };
    view! {
        <div class="memory-live" data-testid="memory-live"
            data-at=move || charts.with(|c| c.memory.live().map(|l| l.at_ns))
            data-count=move || charts.with(|c| c.memory.live().map(|l| l.count))
            data-bytes=move || charts.with(|c| c.memory.live().map(|l| l.bytes))
            data-hovered=move || charts.with(|c| c.memory.hovered.is_some().to_string())>
            <p class="muted">{caption}" "
                <button type="button" data-testid="memory-peak"
                    hidden=move || charts.with(|c| c.memory.hovered.is_none())
                    on:click=move |_| ctl.memory_back_to_peak()>"Back to the peak"</button>
            </p>
            <table class="live-table">
                <thead><tr>{headers}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// One live allocation; a click selects the op that made it.
fn row(ctl: Controller, a: LiveAllocation, at_ns: i64) -> impl IntoView {
    let op = a.op.clone();
    let where_ = match (&a.phase, &a.module) {
        (Some(p), Some(m)) => format!("{p} · {m}"),
        (Some(p), None) => p.clone(),
        (None, Some(m)) => m.clone(),
        (None, None) => "-".into(),
    };
    let name = op_name(&a).to_owned();
    let shown = if name.is_empty() { "-".to_owned() } else { name.clone() };
    view! {
        <tr data-testid="memory-live-row" data-bytes=a.bytes data-op=a.op.as_ref().map(|o| o.id)
            data-category=a.category.clone() class:clickable=op.is_some()
            on:click=move |_| {
                if let Some(op) = op.clone() {
                    ctl.select_ref(op);
                }
            }>
            <td class="num">{format::bytes(a.bytes.max(0) as u64)}</td>
            <td title=name>{shown}</td>
            <td>{a.category.replace('_', " ")}</td>
            <td>{where_}</td>
            <td class="num">{format::span_us((at_ns - a.at_ns) as f64 / 1e3)}</td>
        </tr>
    }
}
