//! One column of a decoded batch, typed: the schema check a table file passes
//! once (every specified column present with an accepted Parquet type), then
//! per-row accessors that apply the value rules of docs/snapshot.md (nulls,
//! addresses, token ids, timestamps to milliseconds, JSON objects). A rule
//! broken gives a [`RowError`]; the caller adds the file and row, so a
//! valid row costs no allocation.
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Schema, TimeUnit};

use super::error::{ColumnError, RowError};
use super::schema::{ColumnKind as Kind, ColumnSpec as Spec};
use super::tables::{parse_address_any_case, Address};
use super::{SnapshotError, SnapshotErrorKind};

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// Checks the type of `spec`'s column.
fn check_type(spec: &Spec, t: &DataType) -> Result<(), ColumnError> {
    let ok = match spec.kind {
        Kind::Address | Kind::Text | Kind::Json => is_text(t),
        Kind::TokenId => matches!(t, DataType::UInt64 | DataType::Int64),
        Kind::Seq => *t == DataType::UInt64,
        Kind::Timestamp => match t {
            // docs/snapshot.md lists milli-, micro- and nanoseconds only.
            DataType::Timestamp(TimeUnit::Second, _) => false,
            DataType::Timestamp(_, Some(_)) => true,
            DataType::Timestamp(unit, None) => {
                return Err(ColumnError::NoTimeZone {
                    column: spec.name,
                    unit: *unit,
                })
            }
            _ => false,
        },
        Kind::Op => matches!(
            t,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        ),
        Kind::Int64 => *t == DataType::Int64,
        Kind::Int32 => *t == DataType::Int32,
        Kind::Integer => t.is_integer(),
    };
    if ok {
        return Ok(());
    }
    let expected = match spec.kind {
        Kind::Address => "Utf8 (an address)",
        Kind::Text | Kind::Json => "Utf8",
        Kind::TokenId => "UInt64 (or non-negative Int64)",
        Kind::Seq => "UInt64",
        Kind::Timestamp => "a Timestamp in milli-, micro- or nanoseconds adjusted to UTC",
        Kind::Op => "Binary",
        Kind::Int64 => "Int64",
        Kind::Int32 => "Int32",
        Kind::Integer => "an integer type",
    };
    Err(ColumnError::Type {
        column: spec.name,
        found: t.clone(),
        expected,
    })
}

/// A column missing or of a type docs/snapshot.md does not list.
pub(super) fn schema_error(file: &str, e: ColumnError) -> SnapshotError {
    SnapshotError::new(SnapshotErrorKind::Schema, file, e.to_string())
}

/// The schema check: every specified column present with an accepted type.
/// Returns the root column indices to decode.
pub(super) fn check_schema(
    file: &str,
    schema: &Schema,
    specs: &[Spec],
) -> Result<Vec<usize>, SnapshotError> {
    let mut roots = Vec::with_capacity(specs.len());
    for spec in specs {
        let index = schema
            .index_of(spec.name)
            .map_err(|_| schema_error(file, ColumnError::Missing(spec.name)))?;
        check_type(spec, schema.field(index).data_type()).map_err(|e| schema_error(file, e))?;
        roots.push(index);
    }
    roots.sort_unstable();
    roots.dedup();
    Ok(roots)
}

enum Data<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    Utf8View(&'a arrow_array::StringViewArray),
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    BinaryView(&'a arrow_array::BinaryViewArray),
    UInt64(&'a [u64]),
    Int64(&'a [i64]),
    Int32(&'a [i32]),
    /// The integer types only [`Kind::Integer`] accepts.
    Int8(&'a [i8]),
    Int16(&'a [i16]),
    UInt8(&'a [u8]),
    UInt16(&'a [u16]),
    UInt32(&'a [u32]),
    /// Raw values and the divisor to milliseconds (1 for milliseconds).
    Timestamp(&'a [i64], i64),
}

/// One column of one batch, typed.
pub(super) struct Column<'a> {
    name: &'static str,
    /// Rows in the batch.
    pub len: usize,
    /// Whether the spec lets this column hold nulls (the accessors used
    /// must agree: `opt_*` for nullable columns, the others otherwise).
    nullable: bool,
    /// The array when it holds any null (checked per row only then).
    nulls: Option<&'a dyn Array>,
    data: Data<'a>,
}

impl<'a> Column<'a> {
    pub fn new(batch: &'a RecordBatch, spec: &Spec) -> Result<Column<'a>, ColumnError> {
        let array = batch
            .column_by_name(spec.name)
            .ok_or(ColumnError::Missing(spec.name))?;
        check_type(spec, array.data_type())?;
        let data = match array.data_type() {
            DataType::Utf8 => Data::Utf8(array.as_string::<i32>()),
            DataType::LargeUtf8 => Data::LargeUtf8(array.as_string::<i64>()),
            DataType::Utf8View => Data::Utf8View(array.as_string_view()),
            DataType::Binary => Data::Binary(array.as_binary::<i32>()),
            DataType::LargeBinary => Data::LargeBinary(array.as_binary::<i64>()),
            DataType::BinaryView => Data::BinaryView(array.as_binary_view()),
            DataType::UInt64 => Data::UInt64(array.as_primitive::<UInt64Type>().values()),
            DataType::Int64 => Data::Int64(array.as_primitive::<Int64Type>().values()),
            DataType::Int32 => Data::Int32(array.as_primitive::<Int32Type>().values()),
            DataType::Int8 => Data::Int8(array.as_primitive::<Int8Type>().values()),
            DataType::Int16 => Data::Int16(array.as_primitive::<Int16Type>().values()),
            DataType::UInt8 => Data::UInt8(array.as_primitive::<UInt8Type>().values()),
            DataType::UInt16 => Data::UInt16(array.as_primitive::<UInt16Type>().values()),
            DataType::UInt32 => Data::UInt32(array.as_primitive::<UInt32Type>().values()),
            DataType::Timestamp(unit, _) => {
                let (values, divisor): (&[i64], _) = match unit {
                    TimeUnit::Millisecond => {
                        (array.as_primitive::<TimestampMillisecondType>().values(), 1)
                    }
                    TimeUnit::Microsecond => (
                        array.as_primitive::<TimestampMicrosecondType>().values(),
                        1000,
                    ),
                    TimeUnit::Nanosecond => (
                        array.as_primitive::<TimestampNanosecondType>().values(),
                        1_000_000,
                    ),
                    TimeUnit::Second => unreachable!("seconds rejected by check_type"),
                };
                Data::Timestamp(values, divisor)
            }
            // check_type accepts only the types above.
            other => {
                return Err(ColumnError::Type {
                    column: spec.name,
                    found: other.clone(),
                    expected: "a type docs/snapshot.md lists",
                })
            }
        };
        Ok(Column {
            name: spec.name,
            len: array.len(),
            nullable: spec.nullable,
            nulls: (array.null_count() > 0).then_some(array.as_ref()),
            data,
        })
    }

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        self.nulls.is_some_and(|a| a.is_null(i))
    }

    #[inline]
    fn required(&self, i: usize) -> Result<(), RowError> {
        debug_assert!(!self.nullable, "column `{}` is nullable", self.name);
        if self.is_null(i) {
            Err(RowError::Null(self.name))
        } else {
            Ok(())
        }
    }

    /// The text at `i`, which must not be null (checked by the caller).
    #[inline]
    fn str_unchecked_null(&self, i: usize) -> &'a str {
        match &self.data {
            Data::Utf8(a) => a.value(i),
            Data::LargeUtf8(a) => a.value(i),
            Data::Utf8View(a) => a.value(i),
            _ => unreachable!("text column checked by check_type"),
        }
    }

    #[inline]
    pub fn text(&self, i: usize) -> Result<&'a str, RowError> {
        self.required(i)?;
        Ok(self.str_unchecked_null(i))
    }

    #[inline]
    pub fn opt_text(&self, i: usize) -> Option<&'a str> {
        debug_assert!(self.nullable, "column `{}` is required", self.name);
        (!self.is_null(i)).then(|| self.str_unchecked_null(i))
    }

    pub fn opt_string(&self, i: usize) -> Option<String> {
        self.opt_text(i).map(str::to_owned)
    }

    #[inline]
    pub fn address(&self, i: usize) -> Result<Address, RowError> {
        let text = self.text(i)?;
        parse_address_any_case(text).ok_or_else(|| RowError::Address {
            column: self.name,
            text: text.to_owned(),
        })
    }

    #[inline]
    pub fn u64(&self, i: usize) -> Result<u64, RowError> {
        self.required(i)?;
        match &self.data {
            Data::UInt64(v) => Ok(v[i]),
            Data::Int64(v) => u64::try_from(v[i]).map_err(|_| RowError::Negative {
                column: self.name,
                value: v[i],
            }),
            _ => unreachable!("integer column checked by check_type"),
        }
    }

    #[inline]
    pub fn token_id(&self, i: usize) -> Result<u64, RowError> {
        let v = self.u64(i)?;
        if v == 0 {
            return Err(RowError::Zero(self.name));
        }
        Ok(v)
    }

    #[inline]
    pub fn i64(&self, i: usize) -> Result<i64, RowError> {
        self.required(i)?;
        match &self.data {
            Data::Int64(v) => Ok(v[i]),
            _ => unreachable!("Int64 column checked by check_type"),
        }
    }

    pub fn opt_i64(&self, i: usize) -> Option<i64> {
        debug_assert!(self.nullable, "column `{}` is required", self.name);
        match &self.data {
            Data::Int64(v) if !self.is_null(i) => Some(v[i]),
            _ => None,
        }
    }

    #[inline]
    pub fn i32(&self, i: usize) -> Result<i32, RowError> {
        self.required(i)?;
        match &self.data {
            Data::Int32(v) => Ok(v[i]),
            _ => unreachable!("Int32 column checked by check_type"),
        }
    }

    /// A [`Kind::Integer`] column's value as an `i64` (a UInt64 above
    /// `i64::MAX` is an error).
    pub fn integer(&self, i: usize) -> Result<i64, RowError> {
        self.required(i)?;
        Ok(match &self.data {
            Data::Int64(v) => v[i],
            Data::Int32(v) => v[i].into(),
            Data::Int16(v) => v[i].into(),
            Data::Int8(v) => v[i].into(),
            Data::UInt32(v) => v[i].into(),
            Data::UInt16(v) => v[i].into(),
            Data::UInt8(v) => v[i].into(),
            Data::UInt64(v) => i64::try_from(v[i]).map_err(|_| RowError::TooLarge {
                column: self.name,
                value: v[i],
            })?,
            _ => unreachable!("integer column checked by check_type"),
        })
    }

    /// A nullable timestamp in epoch milliseconds, finer units floored.
    pub fn opt_timestamp_ms(&self, i: usize) -> Option<i64> {
        debug_assert!(self.nullable, "column `{}` is required", self.name);
        match &self.data {
            Data::Timestamp(v, d) if !self.is_null(i) => Some(v[i].div_euclid(*d)),
            _ => None,
        }
    }

    /// Epoch milliseconds, finer units floored.
    #[inline]
    pub fn timestamp_ms(&self, i: usize) -> Result<i64, RowError> {
        self.required(i)?;
        match &self.data {
            Data::Timestamp(v, d) => Ok(v[i].div_euclid(*d)),
            _ => unreachable!("timestamp column checked by check_type"),
        }
    }

    #[inline]
    pub fn bytes(&self, i: usize) -> Result<&'a [u8], RowError> {
        self.required(i)?;
        Ok(match &self.data {
            Data::Binary(a) => a.value(i),
            Data::LargeBinary(a) => a.value(i),
            Data::BinaryView(a) => a.value(i),
            _ => unreachable!("binary column checked by check_type"),
        })
    }

    /// A nullable JSON-object column, kept as stored (key order, duplicate
    /// keys, number spelling and string escapes), only minified.
    pub fn json_object(&self, i: usize) -> Result<Option<String>, RowError> {
        let Some(text) = self.opt_text(i) else {
            return Ok(None);
        };
        // Validates the whole text without building values, so nothing is
        // lost to number ranges or nesting depth.
        if let Err(source) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            return Err(RowError::Json {
                column: self.name,
                source,
            });
        }
        match json_kind(text) {
            "an object" => Ok(Some(minify_json(text))),
            found => Err(RowError::NotObject {
                column: self.name,
                found,
            }),
        }
    }
}

/// Whether `text` is what a nullable JSON-object column may hold: valid
/// JSON whose value is an object (the loader's rule, shared with the
/// exporter so it never writes what the loader rejects).
pub fn is_json_object(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() && json_kind(text) == "an object"
}

/// What the valid JSON text `text` holds, from its first significant byte.
fn json_kind(text: &str) -> &'static str {
    match text.bytes().find(|b| !is_json_whitespace(*b)) {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

fn is_json_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The valid JSON text `text` without its insignificant whitespace: string
/// literals are copied byte for byte (escapes included), everything else
/// but whitespace is kept as it is.
fn minify_json(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for &b in text.as_bytes() {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !is_json_whitespace(b) {
            out.push(b);
            in_string = b == b'"';
        }
    }
    // Only ASCII bytes were dropped, so the text is still UTF-8.
    String::from_utf8(out).expect("removing ASCII whitespace keeps UTF-8")
}
