//! One Parquet file of rows of one struct, a row group per trace.

use crate::error::{Error, Result};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::record::RecordWriter;
use std::fs::File;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;

pub struct Table<R> {
    path: String,
    writer: SerializedFileWriter<File>,
    rows: PhantomData<R>,
}

impl<R> Table<R>
where
    for<'a> &'a [R]: RecordWriter<R>,
{
    pub fn create(path: &Path) -> Result<Table<R>> {
        let name = path.display().to_string();
        let err = |cause: String| Error::Parquet {
            path: name.clone(),
            cause,
        };
        let empty: &[R] = &[];
        let schema = empty.schema().map_err(|e| err(e.to_string()))?;
        // zstd: the text columns (details, summaries) repeat a lot; level 3 costs little time.
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let file = File::create(path).map_err(|e| err(e.to_string()))?;
        let writer = SerializedFileWriter::new(file, schema, Arc::new(props))
            .map_err(|e| err(e.to_string()))?;
        Ok(Table {
            path: name,
            writer,
            rows: PhantomData,
        })
    }

    /// Appends `rows` as one row group (nothing for none).
    pub fn write(&mut self, rows: &[R]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let written = self.writer.next_row_group().and_then(|mut group| {
            rows.write_to_row_group(&mut group)?;
            group.close().map(drop)
        });
        written.map_err(|e| Error::Parquet {
            path: self.path.clone(),
            cause: e.to_string(),
        })
    }

    pub fn close(self) -> Result<()> {
        let path = self.path;
        self.writer.close().map_err(|e| Error::Parquet {
            path,
            cause: e.to_string(),
        })?;
        Ok(())
    }
}
