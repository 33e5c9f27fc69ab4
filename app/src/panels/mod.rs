//! Page panels: thin views over [`crate::state::LoadState`]. Trace text is always rendered as
//! text nodes, never as HTML.

mod bound_by;
mod compare;
mod details;
mod error;
mod explain;
mod findings;
mod flame;
mod gallery;
mod glance;
mod health;
mod loader;
mod modules;
mod run;
mod scroll_table;
mod step_marker;
mod step_pick;
mod summary;
mod tables;
mod throughput;
mod what_if;

/// Why step analyses are empty on a trace without steps (the CLI's `unavailable.steps`).
const NO_STEPS: &str = "No ProfilerStep#N in this trace (inference servers and scripts have none)";
/// The findings a trace without steps cannot have (`analysis::unavailable::STEP_RULES`).
const NO_STEP_RULES: &str =
    "the rules that compare steps (cold-start-step, kernel-time-variance, recompilation, slow-step) did not run";

pub use bound_by::BoundByPanel;
pub use compare::{CompareButton, ComparePanel};
pub use details::DetailsPanel;
pub use error::ErrorPanel;
pub use explain::StepExplain;
pub use findings::FindingsPanel;
pub use flame::FlamePanel;
pub use gallery::GalleryPanel;
pub use glance::GlancePanel;
pub use health::HealthPanel;
pub use loader::{DropZone, OpenButton, OpenFolderButton, ProgressPanel};
pub use modules::ModuleActions;
pub use run::{RunBack, RunBadge, RunPanel};
pub use step_pick::StepPicker;
pub use summary::{LoadNotices, SummaryPanel, TraceHeader};
pub use tables::{TablePanel, Tabs};
pub use what_if::WhatIfPanel;
