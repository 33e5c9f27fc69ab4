//! One Parquet table: named, typed columns built in memory ([`Table`]) and appended to a file as
//! row groups ([`TableFile`]), with the `parquet` crate's low-level column writers (no Arrow).
//!
//! Columns are `INT64`, `DOUBLE`, `BOOLEAN` or UTF-8 `BYTE_ARRAY`, each required or optional
//! (`NULL` where the trace says nothing, never a sentinel). Text columns hold indices into a
//! dictionary of distinct values ([`Texts`]): a slice table's names come from the trace's string
//! pool as they are, and each value is written as a shared reference to its dictionary entry,
//! never copied per row. The writer dictionary-encodes them again on disk, so a name repeated a
//! million times costs a few bytes per row. Pages are Snappy-compressed (what pandas, polars,
//! DuckDB and Spark write by default).
//!
//! Invariants: every column of a table has [`Table::rows`] values (checked when appended);
//! a file's schema comes from the first table appended, and later tables must match it (same
//! names and types: one file per table kind, several traces or runs as row groups).
//!
//! Why not Arrow: the `arrow` feature brings six more crates (arrow-array, -buffer, -data,
//! -schema, -select, -ipc) into every build, for record batches we would build only to hand
//! to the writer.

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::types::{ColumnPath, Type};
use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

/// Rows per row group: bounds what a reader holds per column chunk (the crate's default).
const ROW_GROUP_ROWS: usize = 1 << 20;

/// Text values: indices into a dictionary of distinct strings.
#[derive(Clone, Debug, Default)]
pub struct Texts {
    dict: Vec<ByteArray>,
    seen: HashMap<String, u32>,
    /// Dictionary index per row; [`Texts::NULL`] for no value.
    ids: Vec<u32>,
}

impl Texts {
    /// The index that stands for "no value".
    pub const NULL: u32 = u32::MAX;

    /// Texts over a ready dictionary (a trace's string pool): rows then push its indices.
    pub fn with_dict(dict: Vec<ByteArray>) -> Self {
        Self { dict, seen: HashMap::new(), ids: Vec::new() }
    }

    /// Appends dictionary entry `id` (from [`Texts::with_dict`]) or [`Texts::NULL`].
    pub fn push_id(&mut self, id: u32) {
        self.ids.push(id);
    }

    /// `text` on each of `rows` rows (a table's `trace` column).
    pub fn repeat(text: &str, rows: usize) -> Self {
        Self { dict: vec![ByteArray::from(text.as_bytes().to_vec())], seen: HashMap::new(), ids: vec![0; rows] }
    }

    /// Appends `text`, adding it to the dictionary if new.
    pub fn push(&mut self, text: &str) {
        // Looked up before it is copied: most pushes repeat a known value.
        let id = match self.seen.get(text) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(self.dict.len()).unwrap_or(Self::NULL);
                self.dict.push(ByteArray::from(text.as_bytes().to_vec()));
                self.seen.insert(text.to_owned(), id);
                id
            }
        };
        self.ids.push(id);
    }

    /// Appends `text` or no value.
    pub fn push_opt(&mut self, text: Option<&str>) {
        match text {
            Some(t) => self.push(t),
            None => self.ids.push(Self::NULL),
        }
    }

    fn value(&self, id: u32) -> Option<ByteArray> {
        self.dict.get(id as usize).cloned()
    }
}

/// A column's values.
#[derive(Clone, Debug)]
pub enum Data {
    /// `INT64`, required.
    Int(Vec<i64>),
    /// `INT64`, optional.
    OptInt(Vec<Option<i64>>),
    /// `DOUBLE`, required.
    Float(Vec<f64>),
    /// `DOUBLE`, optional.
    OptFloat(Vec<Option<f64>>),
    /// `BOOLEAN`, required.
    Bool(Vec<bool>),
    /// UTF-8 text, required (a `NULL` id is written as the empty string).
    Text(Texts),
    /// UTF-8 text, optional.
    OptText(Texts),
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Self::Int(v) => v.len(),
            Self::OptInt(v) => v.len(),
            Self::Float(v) => v.len(),
            Self::OptFloat(v) => v.len(),
            Self::Bool(v) => v.len(),
            Self::Text(t) | Self::OptText(t) => t.ids.len(),
        }
    }

    fn schema(&self, name: &str) -> parquet::errors::Result<Type> {
        let (physical, optional) = match self {
            Self::Int(_) => (PhysicalType::INT64, false),
            Self::OptInt(_) => (PhysicalType::INT64, true),
            Self::Float(_) => (PhysicalType::DOUBLE, false),
            Self::OptFloat(_) => (PhysicalType::DOUBLE, true),
            Self::Bool(_) => (PhysicalType::BOOLEAN, false),
            Self::Text(_) => (PhysicalType::BYTE_ARRAY, false),
            Self::OptText(_) => (PhysicalType::BYTE_ARRAY, true),
        };
        let text = matches!(self, Self::Text(_) | Self::OptText(_));
        Type::primitive_type_builder(name, physical)
            .with_repetition(if optional { Repetition::OPTIONAL } else { Repetition::REQUIRED })
            .with_logical_type(text.then_some(LogicalType::String))
            .build()
    }

    /// Writes rows `rows` of this column.
    fn write(&self, rows: std::ops::Range<usize>, out: &mut SerializedColumnWriter<'_>) -> parquet::errors::Result<()> {
        // `typed` panics on a type other than the column's: the schema was built from this
        // same variant ([`Data::schema`]), so each arm names its own type.
        match self {
            Self::Int(v) => out.typed::<Int64Type>().write_batch(slice(v, &rows), None, None),
            Self::Float(v) => out.typed::<DoubleType>().write_batch(slice(v, &rows), None, None),
            Self::Bool(v) => out.typed::<BoolType>().write_batch(slice(v, &rows), None, None),
            Self::OptInt(v) => {
                let (values, defs) = present(slice(v, &rows).iter().copied());
                out.typed::<Int64Type>().write_batch(&values, Some(&defs), None)
            }
            Self::OptFloat(v) => {
                let (values, defs) = present(slice(v, &rows).iter().copied());
                out.typed::<DoubleType>().write_batch(&values, Some(&defs), None)
            }
            Self::Text(t) => {
                let values: Vec<ByteArray> =
                    slice(&t.ids, &rows).iter().map(|&id| t.value(id).unwrap_or_else(|| ByteArray::from(Vec::new()))).collect();
                out.typed::<ByteArrayType>().write_batch(&values, None, None)
            }
            Self::OptText(t) => {
                let (values, defs) = present(slice(&t.ids, &rows).iter().map(|&id| t.value(id)));
                out.typed::<ByteArrayType>().write_batch(&values, Some(&defs), None)
            }
        }
        .map(|_| ())
    }
}

fn slice<'a, T>(v: &'a [T], rows: &std::ops::Range<usize>) -> &'a [T] {
    v.get(rows.clone()).unwrap_or_default()
}

/// The present values and the definition levels (1 present, 0 null) of optional values.
fn present<T>(values: impl Iterator<Item = Option<T>>) -> (Vec<T>, Vec<i16>) {
    let mut out = Vec::new();
    let defs = values
        .map(|v| match v {
            Some(x) => {
                out.push(x);
                1
            }
            None => 0,
        })
        .collect();
    (out, defs)
}

/// A table: named columns of equal length.
#[derive(Clone, Debug, Default)]
pub struct Table {
    columns: Vec<(String, Data)>,
}

impl Table {
    /// Adds column `name` (columns keep this order in the file).
    #[must_use]
    pub fn column(mut self, name: impl Into<String>, data: Data) -> Self {
        self.columns.push((name.into(), data));
        self
    }

    /// Rows: the first column's length.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, d)| d.len())
    }

    fn schema(&self) -> Result<Type, String> {
        let fields = self
            .columns
            .iter()
            .map(|(name, data)| data.schema(name).map(Arc::new))
            .collect::<parquet::errors::Result<Vec<_>>>()
            .map_err(|e| e.to_string())?;
        Type::group_type_builder("schema").with_fields(fields).build().map_err(|e| e.to_string())
    }
}

/// A Parquet file being written: tables appended as row groups, closed by [`TableFile::finish`].
pub struct TableFile<W: Write + Send> {
    writer: Option<SerializedFileWriter<W>>,
    out: Option<W>,
    rows: u64,
}

impl<W: Write + Send> TableFile<W> {
    /// A file written to `out`; nothing is written before the first [`TableFile::append`].
    pub fn new(out: W) -> Self {
        Self { writer: None, out: Some(out), rows: 0 }
    }

    /// Appends `table` as row groups of at most [`ROW_GROUP_ROWS`].
    ///
    /// # Errors
    /// Columns of unequal length, a schema other than the first table's, or a write error.
    pub fn append(&mut self, table: &Table) -> Result<(), String> {
        let rows = table.rows();
        if let Some((name, _)) = table.columns.iter().find(|(_, d)| d.len() != rows) {
            return Err(format!("column {name} has not {rows} rows"));
        }
        let writer = match (&mut self.writer, self.out.take()) {
            (Some(writer), _) => writer,
            (None, Some(out)) => {
                // No min / max statistics on text: comparing every name cost a tenth of the
                // export, and nobody prunes row groups by a kernel name's order.
                let props = table
                    .columns
                    .iter()
                    .filter(|(_, d)| matches!(d, Data::Text(_) | Data::OptText(_)))
                    .fold(WriterProperties::builder().set_compression(Compression::SNAPPY), |b, (name, _)| {
                        b.set_column_statistics_enabled(ColumnPath::from(name.as_str()), EnabledStatistics::None)
                    })
                    .build();
                let writer = SerializedFileWriter::new(out, Arc::new(table.schema()?), Arc::new(props)).map_err(|e| e.to_string())?;
                self.writer.insert(writer)
            }
            (None, None) => return Err("the file was already closed".into()),
        };
        if writer.schema_descr().root_schema() != &table.schema()? {
            return Err("a table with other columns than the file's".into());
        }
        let mut start = 0;
        // An empty table writes no row group, but its schema goes into the footer: readers
        // still see the columns.
        while start < rows {
            let group = start..(start + ROW_GROUP_ROWS).min(rows);
            let mut row_group = writer.next_row_group().map_err(|e| e.to_string())?;
            for (_, data) in &table.columns {
                let mut column = row_group.next_column().map_err(|e| e.to_string())?.ok_or("more columns than the schema")?;
                data.write(group.clone(), &mut column).map_err(|e| e.to_string())?;
                column.close().map_err(|e| e.to_string())?;
            }
            row_group.close().map_err(|e| e.to_string())?;
            start = group.end;
        }
        self.rows += rows as u64;
        Ok(())
    }

    /// Writes the footer; the rows written. A file nothing was appended to is left unwritten.
    ///
    /// # Errors
    /// A write error.
    pub fn finish(self) -> Result<u64, String> {
        if let Some(writer) = self.writer {
            writer.close().map_err(|e| e.to_string())?;
        }
        Ok(self.rows)
    }
}
