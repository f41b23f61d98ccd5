//! PostgreSQL's binary COPY format, parsed straight from the stream's
//! chunks: no per-row allocation, values handed out as byte slices.

use bytes::Bytes;
use futures_util::StreamExt;
use tokio_postgres::Client;

use super::error::{CopyError, ExportError, ValueError};

const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";
/// Most columns any query of the exporter returns.
pub const MAX_FIELDS: usize = 16;

/// One tuple: up to [`MAX_FIELDS`] values, `None` for SQL NULL.
pub struct Tuple<'a> {
    data: &'a [u8],
    fields: [(u32, i32); MAX_FIELDS],
    len: usize,
}

impl<'a> Tuple<'a> {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        let (start, len) = self.fields[i];
        (len >= 0).then(|| &self.data[start as usize..start as usize + len as usize])
    }
}

pub fn int8(v: Option<&[u8]>, column: &str) -> Result<Option<i64>, ValueError> {
    match v {
        None => Ok(None),
        Some(b) => b
            .try_into()
            .map(|b| Some(i64::from_be_bytes(b)))
            .map_err(|_| ValueError::NotInt8 {
                column: column.to_owned(),
                len: b.len(),
            }),
    }
}

pub fn text<'a>(v: Option<&'a [u8]>, column: &str) -> Result<Option<&'a str>, ValueError> {
    match v {
        None => Ok(None),
        Some(b) => std::str::from_utf8(b)
            .map(Some)
            .map_err(|_| ValueError::NotUtf8(column.to_owned())),
    }
}

/// Microseconds between 1970-01-01 and PostgreSQL's epoch, 2000-01-01.
const PG_EPOCH_MS: i64 = 946_684_800_000;

/// A TIMESTAMPTZ as epoch milliseconds (floored); `Err` for the infinities.
pub fn timestamp_ms(v: Option<&[u8]>, column: &str) -> Result<Option<i64>, ValueError> {
    let Some(us) = int8(v, column)? else {
        return Ok(None);
    };
    if us == i64::MAX || us == i64::MIN {
        return Err(ValueError::InfiniteTimestamp(column.to_owned()));
    }
    Ok(Some(us.div_euclid(1000) + PG_EPOCH_MS))
}

/// Runs `COPY (query) TO STDOUT (FORMAT binary)` and calls `row` for every
/// tuple, in order. `Err` carries the database's or the row's reason.
pub async fn copy_out<F>(client: &Client, query: &str, mut row: F) -> Result<u64, ExportError>
where
    F: FnMut(&Tuple<'_>) -> Result<(), ExportError>,
{
    let statement = format!("COPY ({query}) TO STDOUT (FORMAT binary)");
    let stream = client
        .copy_out(statement.as_str())
        .await
        .map_err(ExportError::Database)?;
    futures_util::pin_mut!(stream);
    let mut parser = Parser::default();
    let mut rows = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(ExportError::Database)?;
        rows += parser.feed(chunk, &mut row)?;
    }
    if !parser.finished {
        return Err(CopyError::NoTrailer.into());
    }
    Ok(rows)
}

/// Incremental parser: tuples may span chunks (PostgreSQL sends one per
/// chunk, but nothing promises it); only an incomplete tail is copied.
#[derive(Default)]
struct Parser {
    header_done: bool,
    finished: bool,
    pending: Vec<u8>,
}

enum Step {
    Tuple(usize),
    Trailer(usize),
    NeedMore,
}

impl Parser {
    fn feed<F>(&mut self, chunk: Bytes, row: &mut F) -> Result<u64, ExportError>
    where
        F: FnMut(&Tuple<'_>) -> Result<(), ExportError>,
    {
        let owned;
        let data: &[u8] = if self.pending.is_empty() {
            &chunk
        } else {
            self.pending.extend_from_slice(&chunk);
            owned = std::mem::take(&mut self.pending);
            &owned
        };
        let mut pos = 0;
        if !self.header_done {
            if data.len() < SIGNATURE.len() + 8 {
                self.pending = data.to_vec();
                return Ok(0);
            }
            if !data.starts_with(SIGNATURE) {
                return Err(CopyError::NotBinary.into());
            }
            let ext = u32::from_be_bytes(data[15..19].try_into().expect("4 bytes")) as usize;
            if data.len() < 19 + ext {
                self.pending = data.to_vec();
                return Ok(0);
            }
            pos = 19 + ext;
            self.header_done = true;
        }
        let mut rows = 0;
        let mut tuple = Tuple {
            data,
            fields: [(0, -1); MAX_FIELDS],
            len: 0,
        };
        while pos < data.len() {
            if self.finished {
                return Err(CopyError::AfterTrailer.into());
            }
            match parse_tuple(data, pos, &mut tuple)? {
                Step::Tuple(next) => {
                    row(&tuple)?;
                    rows += 1;
                    pos = next;
                }
                Step::Trailer(next) => {
                    self.finished = true;
                    pos = next;
                }
                Step::NeedMore => break,
            }
        }
        if pos < data.len() {
            self.pending = data[pos..].to_vec();
        }
        Ok(rows)
    }
}

fn parse_tuple(data: &[u8], mut pos: usize, tuple: &mut Tuple<'_>) -> Result<Step, CopyError> {
    let Some(count) = data.get(pos..pos + 2) else {
        return Ok(Step::NeedMore);
    };
    let count = i16::from_be_bytes(count.try_into().expect("2 bytes"));
    pos += 2;
    if count == -1 {
        return Ok(Step::Trailer(pos));
    }
    let count = usize::try_from(count).map_err(|_| CopyError::FieldCount(count))?;
    if count > MAX_FIELDS {
        return Err(CopyError::TooManyFields {
            count,
            max: MAX_FIELDS,
        });
    }
    for i in 0..count {
        let Some(len) = data.get(pos..pos + 4) else {
            return Ok(Step::NeedMore);
        };
        let len = i32::from_be_bytes(len.try_into().expect("4 bytes"));
        pos += 4;
        if len < 0 {
            tuple.fields[i] = (0, -1);
            continue;
        }
        if data.len() < pos + len as usize {
            return Ok(Step::NeedMore);
        }
        tuple.fields[i] = (pos as u32, len);
        pos += len as usize;
    }
    tuple.len = count;
    Ok(Step::Tuple(pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(rows: &[&[Option<&[u8]>]]) -> Vec<u8> {
        let mut out = SIGNATURE.to_vec();
        out.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(&0u32.to_be_bytes());
        for row in rows {
            out.extend_from_slice(&(row.len() as i16).to_be_bytes());
            for v in *row {
                match v {
                    None => out.extend_from_slice(&(-1i32).to_be_bytes()),
                    Some(b) => {
                        out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                        out.extend_from_slice(b);
                    }
                }
            }
        }
        out.extend_from_slice(&(-1i16).to_be_bytes());
        out
    }

    fn collect(data: &[u8], split: usize) -> Vec<Vec<Option<Vec<u8>>>> {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        for piece in data.chunks(split) {
            parser
                .feed(Bytes::copy_from_slice(piece), &mut |t: &Tuple<'_>| {
                    out.push((0..t.len()).map(|i| t.get(i).map(<[u8]>::to_vec)).collect());
                    Ok(())
                })
                .unwrap();
        }
        assert!(parser.finished);
        out
    }

    #[test]
    fn tuples_split_anywhere_parse_the_same() {
        let data = stream(&[
            &[Some(b"abc"), None, Some(&7i64.to_be_bytes())],
            &[Some(b""), Some(b"x"), None],
        ]);
        let whole = collect(&data, data.len());
        assert_eq!(
            whole,
            vec![
                vec![
                    Some(b"abc".to_vec()),
                    None,
                    Some(7i64.to_be_bytes().to_vec())
                ],
                vec![Some(vec![]), Some(b"x".to_vec()), None],
            ]
        );
        for split in 1..data.len() {
            assert_eq!(collect(&data, split), whole, "split every {split} bytes");
        }
    }

    #[test]
    fn timestamps_floor_to_milliseconds() {
        // 2000-01-01T00:00:00.001999Z and one microsecond before the epoch.
        assert_eq!(
            timestamp_ms(Some(&1999i64.to_be_bytes()), "t").unwrap(),
            Some(PG_EPOCH_MS + 1)
        );
        assert_eq!(
            timestamp_ms(Some(&(-1i64).to_be_bytes()), "t").unwrap(),
            Some(PG_EPOCH_MS - 1)
        );
        assert!(timestamp_ms(Some(&i64::MAX.to_be_bytes()), "t").is_err());
        assert_eq!(timestamp_ms(None, "t").unwrap(), None);
    }
}
