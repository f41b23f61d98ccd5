//! One snapshot table being written while its rows stream in: rows are
//! gathered in small chunks that a writer thread encodes into Parquet, so
//! decoding the database's stream and encoding Parquet overlap on two
//! cores and memory holds a few chunks, whatever the table's size.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;
use std::time::Instant;

use super::error::ExportError;
use crate::snapshot::{Table, TableFileWriter, Tables, WrittenTable};

/// Rows handed to the writer thread at a time.
const CHUNK_ROWS: usize = 64 * 1024;
/// Rows per Parquet row group (what the loader decodes in parallel).
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Chunks queued for the writer thread before the reader waits.
const QUEUED_CHUNKS: usize = 2;

pub struct TableSink {
    pub table: Table,
    /// Rows not yet handed over; push rows of `table` only.
    pub chunk: Tables,
    rows: u64,
    tx: Option<SyncSender<Tables>>,
    writer: Option<JoinHandle<std::io::Result<WrittenTable>>>,
    progress: Option<Progress>,
}

struct Progress {
    started: Instant,
    last: Instant,
}

impl TableSink {
    /// Starts the writer thread for `dir/<table>.parquet`.
    pub fn start(dir: &Path, table: Table) -> Result<TableSink, ExportError> {
        let path = dir.join(table.file_name());
        let mut file = TableFileWriter::create(&path, table, ROW_GROUP_ROWS, true)
            .map_err(ExportError::io("create", &path))?;
        let (tx, rx) = sync_channel::<Tables>(QUEUED_CHUNKS);
        let writer = std::thread::Builder::new()
            .name(format!("write-{table}"))
            .spawn(move || {
                while let Ok(chunk) = rx.recv() {
                    file.write_rows(&chunk)?;
                }
                file.finish()
            })
            .map_err(ExportError::WriterThread)?;
        let progress = std::io::stderr().is_terminal().then(|| Progress {
            started: Instant::now(),
            last: Instant::now(),
        });
        Ok(TableSink {
            table,
            chunk: Tables::default(),
            rows: 0,
            tx: Some(tx),
            writer: Some(writer),
            progress,
        })
    }

    /// Rows kept in memory, no file: the tail's re-reads of a few
    /// entities go through the export's mapping into one of these.
    pub fn memory(table: Table) -> TableSink {
        TableSink {
            table,
            chunk: Tables::default(),
            rows: 0,
            tx: None,
            writer: None,
            progress: None,
        }
    }

    /// The rows of a [`TableSink::memory`] sink.
    pub fn into_rows(self) -> Tables {
        let mut this = self;
        std::mem::take(&mut this.chunk)
    }

    /// Call after pushing one row into `chunk`.
    #[inline]
    pub fn pushed(&mut self) -> Result<(), ExportError> {
        self.rows += 1;
        if self.tx.is_some() && self.rows.is_multiple_of(CHUNK_ROWS as u64) {
            self.hand_over()?;
            self.show_progress(false);
        }
        Ok(())
    }

    fn hand_over(&mut self) -> Result<(), ExportError> {
        let chunk = std::mem::take(&mut self.chunk);
        let tx = self.tx.as_ref().expect("sink not finished");
        // The writer thread keeps up or the stream waits: blocking here is
        // the back-pressure that bounds memory.
        let sent = tokio::task::block_in_place(|| tx.send(chunk).is_ok());
        if !sent {
            // The writer stopped on an error: finish() reports it.
            return Err(self.join_error());
        }
        Ok(())
    }

    fn join_error(&mut self) -> ExportError {
        self.tx = None;
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(Err(source))) => ExportError::Write {
                table: self.table,
                source,
            },
            Some(Err(_)) => ExportError::WriterPanicked(self.table),
            _ => ExportError::WriterGone(self.table),
        }
    }

    fn show_progress(&mut self, done: bool) {
        let Some(p) = &mut self.progress else {
            return;
        };
        if !done && p.last.elapsed().as_secs_f64() < 0.5 {
            return;
        }
        p.last = Instant::now();
        let secs = p.started.elapsed().as_secs_f64().max(1e-3);
        eprint!(
            "\r{:<17} {:>12} rows {:>10.0} rows/s{}",
            self.table,
            self.rows,
            self.rows as f64 / secs,
            if done { "\n" } else { "" }
        );
    }

    /// Hands over the last rows, waits for the file to be written and
    /// fsynced, and reports it.
    pub fn finish(mut self) -> Result<WrittenTable, ExportError> {
        self.hand_over()?;
        self.show_progress(true);
        self.tx = None;
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(Ok(written))) => Ok(written),
            Some(Ok(Err(source))) => Err(ExportError::Write {
                table: self.table,
                source,
            }),
            _ => Err(ExportError::WriterPanicked(self.table)),
        }
    }
}
