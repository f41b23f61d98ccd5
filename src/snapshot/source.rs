//! A table file's bytes as the Parquet reader sees them: held in memory
//! (files fetched from object storage), or a file on disk read with
//! positioned reads. Reading a file in place keeps only the column chunks
//! being decoded in memory (a whole 1M-account snapshot is 1.7 GB), and
//! positioned reads share no seek position, so row groups decode in
//! parallel from one open file.
use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};
use sha2::{Digest, Sha256};

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
        let mut hex = String::with_capacity(64);
        super::push_hex(&mut hex, &hasher.finalize());
        Ok(hex)
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
