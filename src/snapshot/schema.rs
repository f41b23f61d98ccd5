//! The snapshot tables (eight required, `recommended` optional) and their columns, as docs/snapshot.md lists them
//! ("Tables"): one row per table below. Everything that names a table or its
//! columns derives from it: the manifest's entries, the reader's schema
//! checks, the writer's Arrow schema and the exporter's `--query` column
//! checks.
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

/// What a column holds; it decides the Parquet types the reader accepts
/// and the one the writer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// `0x` + 40 hex digits, as Utf8.
    Address,
    /// A list's id: UInt64 (non-negative Int64 accepted), > 0.
    TokenId,
    /// A timestamp adjusted to UTC (milli-, micro- or nanoseconds).
    Timestamp,
    /// `list_ops.seq`: UInt64.
    Seq,
    /// Raw op bytes: Binary.
    Op,
    Int64,
    Int32,
    /// Any integer type (signed or unsigned, 8 to 64 bits) that fits an
    /// `i64`; written as Int64.
    Integer,
    Text,
    /// Text holding a JSON object (checked per row).
    Json,
}

/// One column of a table: its name, kind, and whether it may hold nulls.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub kind: ColumnKind,
    pub nullable: bool,
}

const fn req(name: &'static str, kind: ColumnKind) -> ColumnSpec {
    ColumnSpec {
        name,
        kind,
        nullable: false,
    }
}

const fn opt(name: &'static str, kind: ColumnKind) -> ColumnSpec {
    ColumnSpec {
        name,
        kind,
        nullable: true,
    }
}

impl ColumnSpec {
    /// The Arrow type the writer gives this column.
    pub fn writer_type(&self) -> DataType {
        match self.kind {
            ColumnKind::Address | ColumnKind::Text | ColumnKind::Json => DataType::Utf8,
            ColumnKind::TokenId | ColumnKind::Seq => DataType::UInt64,
            ColumnKind::Timestamp => DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            ColumnKind::Op => DataType::Binary,
            ColumnKind::Int64 | ColumnKind::Integer => DataType::Int64,
            ColumnKind::Int32 => DataType::Int32,
        }
    }
}

/// Declares [`Table`] from one row per table: variant, manifest name, and
/// columns in file order (the readers index decoded columns by position in
/// this order).
macro_rules! tables {
    ($($variant:ident => $name:literal, $columns:expr;)*) => {
        /// One of the snapshot tables.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Table {
            $($variant,)*
        }

        impl Table {
            /// Every table, in manifest order (the order errors are
            /// reported in when several tables are broken).
            pub const ALL: [Table; [$(Table::$variant),*].len()] = [$(Table::$variant),*];

            /// The table's name in the manifest and in docs/snapshot.md.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Table::$variant => $name,)*
                }
            }

            /// The file name producers give the table (`<name>.parquet`);
            /// a reader follows the manifest's `file` instead.
            pub const fn file_name(self) -> &'static str {
                match self {
                    $(Table::$variant => concat!($name, ".parquet"),)*
                }
            }

            /// The table's columns, in file order.
            pub const fn columns(self) -> &'static [ColumnSpec] {
                match self {
                    $(Table::$variant => {
                        const COLUMNS: &[ColumnSpec] = {
                            use ColumnKind::*;
                            $columns
                        };
                        COLUMNS
                    })*
                }
            }
        }
    };
}

tables! {
    Lists => "lists", &[
        req("token_id", TokenId),
        req("user", Address),
        req("owner", Address),
        req("manager", Address),
    ];
    PrimaryLists => "primary_lists", &[req("address", Address), req("token_id", TokenId)];
    ListRecords => "list_records", &[
        req("token_id", TokenId),
        req("address", Address),
        req("updated_at", Timestamp),
    ];
    ListRecordTags => "list_record_tags", &[
        req("token_id", TokenId),
        req("address", Address),
        req("tag", Text),
        req("updated_at", Timestamp),
    ];
    ListOps => "list_ops", &[
        req("token_id", TokenId),
        req("seq", Seq),
        req("op", Op),
        req("updated_at", Timestamp),
    ];
    Ens => "ens", &[
        req("address", Address),
        req("name", Text),
        opt("avatar", Text),
        opt("header", Text),
        opt("display", Text),
        opt("records", Json),
        opt("chains", Json),
        opt("fresh", Int64),
        opt("resolver", Text),
        opt("errors", Json),
    ];
    BadgeEvents => "badge_events", &[
        req("event_id", Int64),
        req("position", Int32),
        req("fancy_id", Text),
        req("name", Text),
        req("event_url", Text),
        req("image_url", Text),
        req("country", Text),
        req("city", Text),
        req("description", Text),
        req("year", Int32),
        req("start_date", Text),
        req("end_date", Text),
        req("expiry_date", Text),
    ];
    Badges => "badges", &[
        req("address", Address),
        req("event_id", Int64),
        req("token_id", Text),
        req("owner", Text),
    ];
    Recommended => "recommended", &[
        req("position", Integer),
        req("address", Address),
        req("name", Text),
        opt("avatar", Text),
        opt("header", Text),
        opt("class", Text),
        opt("created_at", Timestamp),
    ];
}

impl Table {
    /// Whether a snapshot may leave the table out (no file, no manifest
    /// entry): it then has no rows. Writers always write it.
    pub const fn is_optional(self) -> bool {
        matches!(self, Table::Recommended)
    }
}

/// The table names in [`Table::ALL`] order.
pub const TABLE_NAMES: [&str; Table::ALL.len()] = {
    let mut names = [""; Table::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = Table::ALL[i].name();
        i += 1;
    }
    names
};

impl Table {
    /// The table called `name` in the manifest, if it is one of them.
    pub fn named(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The position of the table in [`Table::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The exact Arrow schema the writer uses for the table.
    pub fn schema(self) -> SchemaRef {
        let fields: Vec<Field> = self
            .columns()
            .iter()
            .map(|c| Field::new(c.name, c.writer_type(), c.nullable))
            .collect();
        Arc::new(Schema::new(fields))
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A name that is not one of the snapshot tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownTable(pub String);

impl fmt::Display for UnknownTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown snapshot table {:?}", self.0)
    }
}

impl std::error::Error for UnknownTable {}

impl FromStr for Table {
    type Err = UnknownTable;

    fn from_str(name: &str) -> Result<Table, UnknownTable> {
        Table::named(name).ok_or_else(|| UnknownTable(name.to_owned()))
    }
}

/// Lets the writer's entry points take a table by name as well (tests and
/// tools that build files by hand name tables by string).
impl TryFrom<&str> for Table {
    type Error = UnknownTable;

    fn try_from(name: &str) -> Result<Table, UnknownTable> {
        name.parse()
    }
}

/// `table`, or a panic naming the unknown table (the writer's entry points
/// are handed names from code, never from input).
pub(crate) fn expect_table<T>(table: T) -> Table
where
    T: TryInto<Table>,
    T::Error: fmt::Display,
{
    table.try_into().unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_order() {
        assert_eq!(
            TABLE_NAMES,
            [
                "lists",
                "primary_lists",
                "list_records",
                "list_record_tags",
                "list_ops",
                "ens",
                "badge_events",
                "badges",
                "recommended",
            ]
        );
        for (i, t) in Table::ALL.into_iter().enumerate() {
            assert_eq!(t.index(), i);
            assert_eq!(Table::named(t.name()), Some(t));
            assert_eq!(t.file_name(), format!("{t}.parquet"));
        }
        assert_eq!(Table::named("nope"), None);
        assert_eq!(
            "nope".parse::<Table>().unwrap_err().to_string(),
            "unknown snapshot table \"nope\""
        );
    }
}
