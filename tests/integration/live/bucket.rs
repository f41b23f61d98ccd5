//! The tail over a snapshot served from a bucket (SeaweedFS): a fold
//! reads the base's files again from the bucket, lays the live entities
//! over them into `--compact-dir`, and loses nothing.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{account, fresh_export, read_only_url, run_events, seeded_export, serve_tail};
use super::{assert_same_answers, targets, wait_for};
use crate::pg::Postgres;
use crate::s3::{Seaweed, BUCKET, SECRET};
use crate::support::{metric, parse_metrics, run_to_exit, Requests};

#[test]
fn folds_over_a_snapshot_in_a_bucket_lose_nothing() {
    let pg = Postgres::start();
    let (mut ix, local) = seeded_export(&pg);
    let weed = Seaweed::start();
    let root = format!("s3://{BUCKET}/live");
    let args: Vec<OsString> = vec![
        "publish".into(),
        local.path().join("snap-a").into_os_string(),
        root.clone().into(),
    ];
    let (status, _, stderr) = run_to_exit(&args, &weed.env(SECRET), Duration::from_secs(120));
    assert!(status.is_some_and(|s| s.success()), "{stderr}");
    // The local copy is gone: only the bucket holds the base's files.
    drop(local);

    let url = read_only_url(&pg);
    let live = serve_tail(
        Path::new(&root),
        &url,
        &["--compact-interval", "1", "--fold-interval", "0"],
        &weed.env(SECRET),
    );
    run_events(&mut ix, &live, 17, 40);
    let info = wait_for(&live, "a fold of everything", |i| {
        i["tail"]["entities_live"] == 0 && i["name"] != "snap-a"
    });
    assert!(info["tail"]["last_error"].is_null(), "{info}");
    let samples = parse_metrics(&live.get("/metrics").text());
    let folds = metric(&samples, "followgraph_compaction_folds_total", &[]);
    assert!(folds.is_some_and(|f| f >= 1.0), "{folds:?} folds");
    let (exported, _fresh) = fresh_export(&pg, "snap-b");
    let accounts: Vec<String> = (1..=45).map(account).collect();
    let tokens: Vec<u64> = ix.lists.keys().copied().chain([999]).collect();
    assert_same_answers(&live, &exported, &targets(&accounts, &tokens));
}
