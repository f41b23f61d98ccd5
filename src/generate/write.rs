//! The streaming path of [`super::generate`]: the eight table files of a
//! snapshot directory written as the rows are made (each batch encoded by
//! the eight writers in parallel), then the manifest; and the progress line
//! on standard error.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use rayon::prelude::*;

use super::pipeline::generate_with;
use super::GenerateOptions;
use crate::snapshot::{
    start_snapshot_dir, write_manifest, Table, TableEntry, TableFileWriter, Tables, WriteOptions,
};

/// Writes the tables and the manifest of `opts` into `dir`.
pub(super) fn write_generated(
    opts: &GenerateOptions,
    dir: &Path,
    bar: &mut ProgressBar,
) -> std::io::Result<()> {
    start_snapshot_dir(dir)?;
    let row_group_rows = WriteOptions::default().row_group_rows;
    let writers = Table::ALL
        .iter()
        .map(|&table| {
            let path = dir.join(table.file_name());
            Ok((
                table,
                TableFileWriter::create(&path, table, row_group_rows, true)?,
            ))
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    // The eight files are encoded in parallel, chunk after chunk.
    let writers = std::cell::RefCell::new(writers);
    let write = |chunk: Tables| -> std::io::Result<()> {
        writers
            .borrow_mut()
            .par_iter_mut()
            .try_for_each(|(_, writer)| writer.write_rows(&chunk))
    };
    let bar = std::cell::RefCell::new(bar);
    let mut ops_written = 0u64;
    generate_with(
        opts,
        &mut |done, total| bar.borrow_mut().accounts(done, total),
        &mut |rows| write(rows),
        &mut |ops, total| {
            ops_written += ops.len() as u64;
            let phase = format!("writing list_ops ({ops_written} of {total})");
            bar.borrow_mut().phase(&phase);
            write(Tables {
                list_ops: ops,
                ..Tables::default()
            })
        },
    )?;
    let writers = writers.into_inner();
    let mut entries = BTreeMap::new();
    for (table, writer) in writers {
        let written = writer.finish()?;
        let entry = TableEntry {
            file: table.file_name().to_owned(),
            rows: written.rows,
            sha256: written.sha256,
        };
        entries.insert(table.name().to_owned(), entry);
    }
    write_manifest(dir, opts.created_at_ms, entries, None)
}

/// Hand-rolled in-place progress line on stderr (`\r`, no crate).
pub(super) struct ProgressBar {
    enabled: bool,
    last_len: usize,
    last_pct: Option<u64>,
}

impl ProgressBar {
    pub fn new(enabled: bool) -> Self {
        ProgressBar {
            enabled,
            last_len: 0,
            last_pct: None,
        }
    }

    fn draw(&mut self, line: &str) {
        if !self.enabled {
            return;
        }
        let len = line.chars().count();
        let pad = self.last_len.saturating_sub(len);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}{:pad$}", "");
        let _ = err.flush();
        self.last_len = len;
    }

    fn accounts(&mut self, done: u64, total: u64) {
        let pct = (done * 100).checked_div(total).unwrap_or(100);
        if self.last_pct == Some(pct) {
            return;
        }
        self.last_pct = Some(pct);
        const WIDTH: usize = 30;
        let filled = (pct as usize * WIDTH) / 100;
        let line = format!(
            "generating [{}{}] {pct:3}% {done}/{total} accounts",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled)
        );
        self.draw(&line);
    }

    fn phase(&mut self, what: &str) {
        self.draw(what);
    }

    pub fn finish(&mut self, what: &str) {
        if self.enabled {
            self.draw(what);
            eprintln!();
        }
    }
}
