//! The snapshot root served: `--snapshot` as given, else `bench-data/m1`
//! (1,000,000 accounts) or `bench-data/n<N>`, generated with the binary's
//! `generate` subcommand (seed 1) unless it already holds that snapshot.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::options::Opts;
use crate::{die, ROOT};

fn snapshot_root(o: &Opts) -> PathBuf {
    if let Some(p) = &o.snapshot {
        return p.clone();
    }
    let name = if o.accounts == 1_000_000 {
        "m1".to_owned()
    } else {
        format!("n{}", o.accounts)
    };
    Path::new(ROOT).join("bench-data").join(name)
}

/// The root to serve, and the seconds spent generating it (`None` when
/// given or reused).
pub fn ensure_snapshot(o: &Opts) -> (PathBuf, Option<f64>) {
    let root = snapshot_root(o);
    if o.snapshot.is_some() {
        return (root, None);
    }
    let name = format!("gen-{}-1", o.accounts);
    let current = std::fs::read_to_string(root.join("CURRENT")).unwrap_or_default();
    if current.trim() == name && root.join(&name).join("manifest.json").is_file() {
        eprintln!("snapshot: reusing {}", root.join(&name).display());
        return (root, None);
    }
    eprintln!(
        "snapshot: generating {} accounts into {} (1M: ~1 min, ~1.8 GB)",
        o.accounts,
        root.display()
    );
    let started = Instant::now();
    let status = Command::new(&o.binary)
        .args([
            "generate",
            "--accounts",
            &o.accounts.to_string(),
            "--seed",
            "1",
        ])
        .arg("--out")
        .arg(&root)
        .status()
        .unwrap_or_else(|e| die(&format!("cannot run generate: {e}")));
    if !status.success() {
        die("generate failed");
    }
    (root, Some(started.elapsed().as_secs_f64()))
}
