//! What an export reports: the rows it skipped (per source and reason,
//! with the first few source keys) and the summary of a published round,
//! printed on standard error and written as `export.json`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::snapshot::Table;

/// Rows skipped per (source, reason), with the first few source keys.
#[derive(Debug, Default, Clone)]
pub struct Skips {
    entries: BTreeMap<(&'static str, &'static str), SkipEntry>,
}

#[derive(Debug, Clone)]
pub struct SkipEntry {
    pub table: &'static str,
    pub reason: &'static str,
    pub count: u64,
    pub examples: Vec<String>,
}

/// Source keys shown per reason.
const EXAMPLES: usize = 3;

impl Skips {
    pub fn add(&mut self, table: &'static str, reason: &'static str, key: impl FnOnce() -> String) {
        let entry = self
            .entries
            .entry((table, reason))
            .or_insert_with(|| SkipEntry {
                table,
                reason,
                count: 0,
                examples: Vec::new(),
            });
        entry.count += 1;
        if entry.examples.len() < EXAMPLES {
            entry.examples.push(key());
        }
    }

    pub fn entries(&self) -> impl Iterator<Item = &SkipEntry> {
        self.entries.values()
    }

    pub fn total(&self) -> u64 {
        self.entries.values().map(|e| e.count).sum()
    }
}

/// What one published export did: printed on standard error and written
/// as `export.json` beside the manifest.
#[derive(Debug, Clone)]
pub struct Summary {
    pub name: String,
    pub path: PathBuf,
    pub created_at_ms: i64,
    pub rows: BTreeMap<Table, u64>,
    pub skips: Skips,
    pub bytes_written: u64,
    pub phases: Vec<(String, f64)>,
    /// CPU seconds of this process (the database's and the verification
    /// child's are not included).
    pub cpu_seconds: Option<f64>,
    /// Peak resident bytes of this process and of the verification load.
    pub peak_rss: Option<u64>,
    pub verify_peak_rss: Option<u64>,
    pub notes: Vec<String>,
}

impl Summary {
    pub fn to_json(&self) -> serde_json::Value {
        let rows: serde_json::Map<String, serde_json::Value> = Table::ALL
            .iter()
            .map(|t| {
                (
                    t.name().to_owned(),
                    self.rows.get(t).copied().unwrap_or(0).into(),
                )
            })
            .collect();
        let skipped: Vec<serde_json::Value> = self
            .skips
            .entries()
            .map(|e| {
                serde_json::json!({
                    "source": e.table, "reason": e.reason, "count": e.count,
                    "examples": e.examples,
                })
            })
            .collect();
        let seconds: serde_json::Map<String, serde_json::Value> = self
            .phases
            .iter()
            .map(|(p, s)| (p.clone(), ((s * 1000.0).round() / 1000.0).into()))
            .collect();
        serde_json::json!({
            "name": self.name,
            "path": self.path.display().to_string(),
            "created_at": crate::time::format_iso_ms(self.created_at_ms),
            "rows": rows,
            "skipped": skipped,
            "bytes_written": self.bytes_written,
            "seconds": seconds,
            "peak_rss_bytes": {"export": self.peak_rss, "verify": self.verify_peak_rss},
            "cpu_seconds": self.cpu_seconds.map(|s| (s * 100.0).round() / 100.0),
            "notes": self.notes,
        })
    }

    pub fn render(&self) -> String {
        let mut out = format!(
            "export: published {} (created_at {})\n",
            self.path.display(),
            crate::time::format_iso_ms(self.created_at_ms)
        );
        let rows: Vec<String> = Table::ALL
            .iter()
            .map(|t| format!("{t} {}", self.rows.get(t).copied().unwrap_or(0)))
            .collect();
        out.push_str(&format!("  rows: {}\n", rows.join(", ")));
        out.push_str(&format!("  skipped: {} rows\n", self.skips.total()));
        for e in self.skips.entries() {
            out.push_str(&format!(
                "    {}: {}: {} (first: {})\n",
                e.table,
                e.reason,
                e.count,
                e.examples.join("; ")
            ));
        }
        out.push_str(&format!("  bytes written: {}\n", self.bytes_written));
        let phases: Vec<String> = self
            .phases
            .iter()
            .map(|(p, s)| format!("{p} {s:.2}"))
            .collect();
        out.push_str(&format!("  seconds: {}\n", phases.join(", ")));
        let mib = |b: Option<u64>| {
            b.map_or("?".to_owned(), |b| {
                format!("{:.0} MiB", b as f64 / 1048576.0)
            })
        };
        out.push_str(&format!(
            "  peak RSS: export {}, verification load {}; export CPU {}\n",
            mib(self.peak_rss),
            mib(self.verify_peak_rss),
            self.cpu_seconds
                .map_or("?".to_owned(), |s| format!("{s:.1} s"))
        ));
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        out
    }
}
