//! Where a snapshot's files come from ([`SnapshotFiles`]): a directory
//! ([`DirFiles`]) or memory ([`MemoryFiles`], files downloaded from object
//! storage); and a table file's bytes as the Parquet reader sees them
//! ([`TableBytes`]). The streaming loader reads a file on disk in place
//! with positioned reads: only the column chunks being decoded are in
//! memory (a whole snapshot is gigabytes at a million accounts), and
//! positioned reads share no seek position, so row groups decode in
//! parallel from one open file. The row reader reads each table whole.
use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};
use sha2::{Digest, Sha256};

use super::{SnapshotError, SnapshotErrorKind};

/// The manifest's file name in a snapshot directory.
pub(crate) const MANIFEST: &str = "manifest.json";

/// Where a snapshot's files come from: a directory, or memory (files
/// downloaded from elsewhere). `file` is a plain name in the snapshot.
pub trait SnapshotFiles: Sync {
    fn read(&self, file: &str) -> Result<Bytes, SnapshotError>;

    /// The file for the streaming loader, which reads it piece by piece.
    fn open(&self, file: &str) -> Result<TableBytes, SnapshotError> {
        self.read(file).map(TableBytes::Memory)
    }
}

/// The files of a snapshot directory.
pub struct DirFiles<'a>(pub &'a Path);

impl SnapshotFiles for DirFiles<'_> {
    fn read(&self, file: &str) -> Result<Bytes, SnapshotError> {
        match std::fs::read(self.0.join(file)) {
            Ok(bytes) => Ok(Bytes::from(bytes)),
            // A missing manifest says "cannot read" (the directory may be
            // no snapshot at all), a missing table "file is missing".
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && file != MANIFEST => {
                Err(missing(file, format!("file is missing: {e}")))
            }
            Err(e) => Err(cannot_read(file, e)),
        }
    }

    fn open(&self, file: &str) -> Result<TableBytes, SnapshotError> {
        match std::fs::File::open(self.0.join(file)).and_then(TableBytes::open) {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(missing(file, format!("file is missing: {e}")))
            }
            Err(e) => Err(cannot_read(file, e)),
        }
    }
}

fn missing(file: &str, reason: String) -> SnapshotError {
    SnapshotError::new(SnapshotErrorKind::MissingFile, file, reason)
}

/// "cannot read: <e>"; a file that is not there is still missing.
fn cannot_read(file: &str, e: std::io::Error) -> SnapshotError {
    let kind = match e.kind() {
        std::io::ErrorKind::NotFound => SnapshotErrorKind::MissingFile,
        _ => SnapshotErrorKind::Unreadable,
    };
    SnapshotError::new(kind, file, format!("cannot read: {e}"))
}

/// A snapshot's files held in memory, by name.
#[derive(Clone, Debug, Default)]
pub struct MemoryFiles(pub std::collections::HashMap<String, Bytes>);

impl SnapshotFiles for MemoryFiles {
    fn read(&self, file: &str) -> Result<Bytes, SnapshotError> {
        self.0.get(file).cloned().ok_or_else(|| {
            SnapshotError::new(SnapshotErrorKind::MissingFile, file, "file is missing")
        })
    }
}

/// A table file's bytes: held in memory, or an open file read in place.
#[derive(Clone)]
pub enum TableBytes {
    Memory(Bytes),
    /// The open file and its length when opened.
    File(Arc<File>, u64),
}

impl TableBytes {
    pub fn open(file: File) -> std::io::Result<TableBytes> {
        let len = file.metadata()?.len();
        Ok(TableBytes::File(Arc::new(file), len))
    }

    /// Lower-case hex SHA-256 of the whole file.
    pub fn sha256_hex(&self) -> std::io::Result<String> {
        let mut hasher = Sha256::new();
        match self {
            TableBytes::Memory(bytes) => hasher.update(bytes),
            TableBytes::File(file, len) => {
                let mut buf = vec![0u8; 1 << 20];
                let mut at = 0u64;
                while at < *len {
                    let n = buf.len().min((len - at) as usize);
                    file.read_exact_at(&mut buf[..n], at)?;
                    hasher.update(&buf[..n]);
                    at += n as u64;
                }
            }
        }
        Ok(faster_hex::hex_string(&hasher.finalize()))
    }

    fn check_range(&self, start: u64, length: u64) -> parquet::errors::Result<()> {
        match start.checked_add(length) {
            Some(end) if end <= self.len() => Ok(()),
            _ => Err(ParquetError::EOF(format!(
                "range {start}+{length} is past the end of the file ({} bytes)",
                self.len()
            ))),
        }
    }
}

impl Length for TableBytes {
    fn len(&self) -> u64 {
        match self {
            TableBytes::Memory(bytes) => bytes.len() as u64,
            TableBytes::File(_, len) => *len,
        }
    }
}

/// A reader from an offset to the end of a [`TableBytes`].
pub enum TableRead {
    Memory(bytes::buf::Reader<Bytes>),
    File(BufReader<FileAt>),
}

impl Read for TableRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            TableRead::Memory(r) => r.read(buf),
            TableRead::File(r) => r.read(buf),
        }
    }
}

/// Positioned reads of a shared file from a moving offset.
pub struct FileAt {
    file: Arc<File>,
    at: u64,
}

impl Read for FileAt {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl ChunkReader for TableBytes {
    type T = TableRead;

    fn get_read(&self, start: u64) -> parquet::errors::Result<TableRead> {
        self.check_range(start, 0)?;
        Ok(match self {
            TableBytes::Memory(bytes) => TableRead::Memory(bytes.slice(start as usize..).reader()),
            TableBytes::File(file, _) => TableRead::File(BufReader::new(FileAt {
                file: file.clone(),
                at: start,
            })),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.check_range(start, length as u64)?;
        match self {
            TableBytes::Memory(bytes) => {
                let start = start as usize;
                Ok(bytes.slice(start..start + length))
            }
            TableBytes::File(file, _) => {
                let mut buf = vec![0u8; length];
                file.read_exact_at(&mut buf, start)?;
                Ok(Bytes::from(buf))
            }
        }
    }
}
