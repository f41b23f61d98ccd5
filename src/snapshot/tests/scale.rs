//! Load time of a big generated snapshot (run by hand: cargo test --release
//! --lib snapshot::tests::scale -- --ignored --nocapture).

use super::*;

#[test]
#[ignore]
fn big_snapshot_load_time() {
    let n_lists = 200_000u64;
    let mut t = Tables::default();
    let a = |i: u64| -> Address {
        let mut out = [0u8; 20];
        out[..8].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
        out[8..16].copy_from_slice(&i.to_be_bytes());
        out
    };
    t.lists = (1..=n_lists)
        .map(|i| ListRow {
            token_id: i,
            user: a(i),
            owner: a(i),
            manager: a(i),
        })
        .collect();
    t.primary_lists = (1..=n_lists)
        .map(|i| PrimaryListRow {
            address: a(i),
            token_id: i,
        })
        .collect();
    t.list_records = (0..20_000_000u64)
        .map(|i| RecordRow {
            token_id: 1 + i % n_lists,
            address: a(i / n_lists + 7_000_000),
            updated_at: T0 + i as i64,
        })
        .collect();
    t.list_record_tags = (0..1_000_000u64)
        .map(|i| TagRow {
            token_id: 1 + i % n_lists,
            address: a(i / n_lists),
            tag: "top8".into(),
            updated_at: T0,
        })
        .collect();
    t.list_ops = (0..30_000_000u64)
        .map(|i| op_row(1 + i % n_lists, i, 1 + (i % 2) as u8, a(i), ""))
        .collect();
    // BIG_SNAPSHOT_DIR keeps the written snapshot between runs.
    let tmp = tempfile::tempdir().unwrap();
    let dir =
        std::env::var_os("BIG_SNAPSHOT_DIR").map_or_else(|| tmp.path().join("big"), PathBuf::from);
    if !dir.join("manifest.json").is_file() {
        let start = std::time::Instant::now();
        write_snapshot(&dir, CREATED, &t, &WriteOptions::default()).unwrap();
        eprintln!("write: {:?}", start.elapsed());
    }
    for _ in 0..2 {
        let cpu = || -> f64 {
            let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
            let f: Vec<&str> = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            f.get(11..13).map_or(0.0, |v| {
                v.iter()
                    .map(|x| x.parse::<f64>().unwrap_or(0.0))
                    .sum::<f64>()
                    / 100.0
            })
        };
        let (start, cpu0) = (std::time::Instant::now(), cpu());
        let snap = read_snapshot(&dir).unwrap();
        eprintln!("read: {:?} wall, {:.2}s cpu", start.elapsed(), cpu() - cpu0);
        assert_eq!(snap.tables.list_ops.len(), t.list_ops.len());
    }
}
