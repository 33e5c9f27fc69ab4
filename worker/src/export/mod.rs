//! Exports of the model for other tools: [`parquet`] tables of traces and runs, for dataframes
//! and SQL engines (`kinetoscope export`, `kinetoscope run --format parquet`). Native only.

pub mod parquet;
