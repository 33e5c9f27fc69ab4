//! The machine-readable contract of every `--json` output (`info`, `report`, `diff`, `run`):
//! each document opens with `"schema": "kinetoscope.<cmd>"` and `"schema_version": N`, and
//! matches the JSON Schema (draft 2020-12) `docs/schema/<cmd>.schema.json`.
//!
//! **Versions.** Adding a key keeps the version; renaming or removing one, or changing a
//! type or unit, bumps it (and the schema file). A consumer checks both keys before reading.
//!
//! **Why** the two keys are written by [`to_json`] around an unchanged body instead of being
//! added to each document: the page reads the same bodies (`TraceSummary`, `run_json`), and
//! the wire types stay free of a CLI concern. `serde(flatten)` puts them first in the output,
//! ahead of the body's keys, so a reader sees them in the first lines.

use serde::Serialize;

/// A `--json` document kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    /// `kinetoscope info --json`: the protocol's `TraceSummary`.
    Info,
    /// `kinetoscope report --json`.
    Report,
    /// `kinetoscope diff --json`.
    Diff,
    /// `kinetoscope run --json` (each run object).
    Run,
}

impl Schema {
    /// The `schema` value: `kinetoscope.info`, `kinetoscope.report`, ...
    pub fn id(self) -> &'static str {
        match self {
            Self::Info => "kinetoscope.info",
            Self::Report => "kinetoscope.report",
            Self::Diff => "kinetoscope.diff",
            Self::Run => "kinetoscope.run",
        }
    }

    /// The `schema_version` value (see the module docs for when it changes).
    pub fn version(self) -> u32 {
        match self {
            Self::Info | Self::Report | Self::Diff | Self::Run => 1,
        }
    }
}

/// A body with the two contract keys in front.
#[derive(Serialize)]
pub struct Stamped<'a, T: Serialize> {
    schema: &'static str,
    schema_version: u32,
    #[serde(flatten)]
    body: &'a T,
}

/// `body` (which must serialize as a JSON object) stamped as a `schema` document.
pub fn stamp<T: Serialize>(schema: Schema, body: &T) -> Stamped<'_, T> {
    Stamped {
        schema: schema.id(),
        schema_version: schema.version(),
        body,
    }
}

/// `body` stamped as a `schema` document, pretty-printed.
///
/// # Errors
/// `body` does not serialize as a JSON object (a bug, not an input error).
pub fn to_json<T: Serialize>(schema: Schema, body: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&stamp(schema, body))
}
