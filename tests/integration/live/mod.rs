//! The tail against a real PostgreSQL (docs/live.md): a stand-in indexer
//! (`indexer.rs`) commits random events with their derived rows while
//! `serve --database-url` follows the database, with a role that may only
//! SELECT. Checked: every `cache=fresh` request sent right after a commit
//! reflects it; after the run every endpoint answers byte for byte as a
//! server on a fresh export does; a snapshot swapped in under the tail
//! never undoes a live follow; the database stopped and started again
//! loses nothing while answers stay 200; folds over a snapshot served
//! from a bucket (`bucket.rs`).

mod bucket;
mod indexer;

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use indexer::{account, slot, Indexer, Slot, BASE};

use crate::export::{current, export_ok, indexer as create_schema};
use crate::pg::Postgres;
use crate::support::{metric, parse_metrics, serve_args_with, Requests, Rng, TestServer};

/// A role that can read the indexer's tables and nothing else.
fn read_only_url(pg: &Postgres) -> String {
    pg.execute(
        "CREATE ROLE tail_reader LOGIN PASSWORD 'tail-pw'; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO tail_reader;",
    );
    format!(
        "postgres://tail_reader:tail-pw@127.0.0.1:{}/indexer",
        pg.port()
    )
}

/// Six lists with users, primary lists and a few follows; lists 5 and 6
/// store their records on a second chain.
fn seed(ix: &mut Indexer<'_>) {
    for t in 1..=6u64 {
        let user = account(t);
        ix.mint(t, &user);
        let chain = if t >= 5 { 10 } else { BASE };
        let at: Slot = (chain, slot(t));
        ix.set_location(t, &at);
        ix.set_role(&at, "user", &user);
        ix.set_primary(&user, t);
    }
    for t in 1..=4u64 {
        let at = ix.lists[&t].clone().expect("located");
        ix.op(&at, 1, &account(t % 6 + 1), "", false);
        ix.op(&at, 1, &account(20 + t), "", false);
    }
}

/// The operator's curated accounts (43-46 leave out what the live
/// records hold): accounts 1-12 and 25-30, positions tied in threes.
fn recommend(pg: &Postgres) {
    let rows: Vec<String> = (1..=12u64)
        .chain(25..=30)
        .map(|n| format!("({}, 'pick {n}', '{}', NULL)", n % 4, account(n)))
        .collect();
    pg.execute(&format!(
        "INSERT INTO efp_recommended (\"index\", name, address, created_at) VALUES {};",
        rows.join(", ")
    ));
}

/// The indexer's schema, the seed, and its export as snapshot `snap-a`.
fn seeded_export(pg: &Postgres) -> (Indexer<'_>, tempfile::TempDir) {
    create_schema(pg);
    recommend(pg);
    let mut ix = Indexer::new(pg);
    seed(&mut ix);
    let root = tempfile::tempdir().expect("tempdir");
    export_ok(&pg.url(), root.path(), &["--name", "snap-a"]);
    (ix, root)
}

/// The tail's server; its compactions go under `compactions/` of its own
/// temporary directory; `envs`: a bucket's credentials.
fn serve_tail(root: &Path, url: &str, extra: &[&str], envs: &[(&str, OsString)]) -> TestServer {
    let home = tempfile::tempdir().expect("tempdir");
    let compactions = home.path().join("compactions");
    let compactions = compactions.to_str().expect("a UTF-8 path");
    let mut flags = vec![
        "--compact-dir",
        compactions,
        "--database-url",
        url,
        "--tail-interval",
        "150",
        "--fresh-wait",
        "10000",
        "--poll-interval",
        "0",
    ];
    flags.extend_from_slice(extra);
    let args = serve_args_with(root, &flags);
    TestServer::spawn(home, &args, envs)
}

fn sorted_addresses(body: &serde_json::Value) -> Vec<String> {
    let mut v: Vec<String> = body
        .as_array()
        .expect("an array")
        .iter()
        .map(|a| a.as_str().expect("address").to_owned())
        .collect();
    v.sort();
    v
}

/// One random event; returns the list whose records it may change.
fn random_event(ix: &mut Indexer<'_>, d: &mut Rng, next_token: &mut u64) -> Option<u64> {
    let tokens: Vec<u64> = ix
        .lists
        .iter()
        .filter(|(_, at)| at.is_some())
        .map(|(t, _)| *t)
        .collect();
    let token = *d.pick_item(&tokens);
    let at = ix.lists[&token].clone().expect("located");
    let target = account(1 + d.below(30) as u64);
    let late = d.chance(15);
    match d.below(100) {
        0..=44 => {
            let opcode = if ix.follows(&at, &target) { 2 } else { 1 };
            ix.op(&at, opcode, &target, "", late);
        }
        45..=64 => {
            let tag = *d.pick_item(&["top8", "block", "mute", "friend"]);
            let opcode = if ix.tagged(&at, &target, tag) { 4 } else { 3 };
            ix.op(&at, opcode, &target, tag, late);
        }
        65..=72 => {
            let who = account(1 + d.below(8) as u64);
            ix.set_primary(&who, *d.pick_item(&tokens));
            return None;
        }
        73..=80 => {
            let key = *d.pick_item(&["user", "manager"]);
            ix.set_role(&at, key, &account(1 + d.below(8) as u64));
        }
        81..=88 => {
            // A mint, placed at a new location or at another list's.
            let t = *next_token;
            *next_token += 1;
            ix.mint(t, &account(1 + d.below(8) as u64));
            let place: Slot = if d.chance(50) {
                (if d.chance(50) { BASE } else { 10 }, slot(t))
            } else {
                at.clone()
            };
            ix.set_location(t, &place);
            ix.set_role(&place, "user", &account(1 + d.below(8) as u64));
            return Some(t);
        }
        89..=94 => {
            // A storage-location move, to a fresh location or another's.
            let other = *d.pick_item(&tokens);
            let place: Slot = if d.chance(50) {
                (BASE, slot(100 + d.below(1000) as u64))
            } else {
                ix.lists[&other].clone().expect("located")
            };
            ix.set_location(token, &place);
        }
        _ => ix.transfer(token, &account(token), &account(40 + d.below(5) as u64)),
    }
    Some(token)
}

/// Request targets over the live endpoints for every account and list.
fn targets(accounts: &[String], tokens: &[u64]) -> Vec<String> {
    let mut out = Vec::new();
    for a in accounts {
        for path in [
            "followers",
            "following",
            "allFollowing",
            "allFollowers",
            "latestFollowers",
            "stats",
            "lists",
            "primary-list",
            "account",
            "details",
            "tags",
            "taggedAs",
            "notifications?interval=all",
            "followers?sort=followers",
            "followers?sort=earliest&offset=1",
            "following?sort=earliest",
            "following?tags=top8,friend",
            "searchFollowers?term=000",
            "searchFollowing?term=000&offset=1",
            "commonFollowers?leader=0x0000000000000000000000000000000000000001",
            "recommended?limit=1000",
            "recommended?offset=2&limit=3",
            "recommended/details?limit=1000",
        ] {
            out.push(format!("/api/v1/users/{a}/{path}"));
        }
        out.push(format!("/api/v1/users/{a}/{}/followerState", accounts[0]));
    }
    for t in tokens {
        for path in [
            "details",
            "followers",
            "following",
            "allFollowing",
            "allFollowingAddresses",
            "stats",
            "account",
            "tags",
            "taggedAs",
            "latestFollowers",
            "recommended?limit=1000",
            "recommended/details?offset=1&limit=4",
        ] {
            out.push(format!("/api/v1/lists/{t}/{path}"));
        }
        out.push(format!("/api/v1/exportState/{t}"));
        for a in accounts.iter().take(8) {
            out.push(format!("/api/v1/lists/{t}/{a}/buttonState"));
        }
    }
    out.extend(
        [
            "/api/v1/leaderboard/ranked",
            "/api/v1/leaderboard/all",
            "/api/v1/leaderboard/count",
            "/api/v1/leaderboard/search?term=0x00",
            "/api/v1/leaderboard/search?term=01&offset=1",
            "/api/v1/stats",
            "/api/v1/discover?limit=1000",
            "/api/v1/discover?offset=3&limit=4",
        ]
        .map(String::from),
    );
    out
}

fn with_fresh(target: &str) -> String {
    let sep = if target.contains('?') { '&' } else { '?' };
    format!("{target}{sep}cache=fresh")
}

/// `body` with the leaderboard's `last_updated` (the snapshot's
/// `created_at`: the compacting poll's time on one side, the later export's
/// on the other) blanked, wherever it appears (its rows' `updated_at`);
/// everything else byte for byte.
fn without_snapshot_time(body: String) -> String {
    const KEY: &str = "\"last_updated\":\"";
    match body.find(KEY) {
        Some(at) => {
            let start = at + KEY.len();
            let end = start + body[start..].find('"').expect("closing quote");
            let time = format!("\"{}\"", &body[start..end]);
            body.replace(&time, "\"…\"")
        }
        None => body,
    }
}

/// Both servers answer every target alike (the live one read through its
/// barrier first; nothing is committed meanwhile).
fn assert_same_answers(live: &TestServer, exported: &TestServer, targets: &[String]) {
    assert_eq!(live.get(&with_fresh("/api/v1/stats")).status, 200);
    for target in targets {
        let a = live.get(target);
        let b = exported.get(target);
        assert_eq!(
            (a.status, without_snapshot_time(a.text())),
            (b.status, without_snapshot_time(b.text())),
            "{target}: the live server differs from a fresh export"
        );
    }
}

/// `steps` random events, each checked right after its commit through
/// the barrier (c).
fn run_events(ix: &mut Indexer<'_>, live: &TestServer, seed: u64, steps: usize) {
    let mut d = Rng(seed);
    let mut next_token = 7;
    for step in 0..steps {
        let Some(token) = random_event(ix, &mut d, &mut next_token) else {
            continue;
        };
        let at = ix.lists[&token].clone().expect("located");
        let body = live.get(&format!(
            "/api/v1/lists/{token}/allFollowingAddresses?cache=fresh"
        ));
        assert_eq!(body.header("cache-control"), Some("no-store"));
        assert_eq!(body.header("x-followgraph-lag-ms"), None, "step {step}");
        if body.status == 200 {
            let expected: Vec<String> = ix
                .records
                .get(&at)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .collect();
            assert_eq!(
                sorted_addresses(&body.json()),
                expected,
                "step {step}: list {token}"
            );
        }
    }
}

/// A server on a fresh export of the database, as snapshot `name`.
fn fresh_export(pg: &Postgres, name: &str) -> (TestServer, tempfile::TempDir) {
    let fresh = tempfile::tempdir().expect("tempdir");
    export_ok(&pg.url(), fresh.path(), &["--name", name]);
    let server = TestServer::spawn(
        tempfile::tempdir().expect("tempdir"),
        &serve_args_with(fresh.path(), &["--poll-interval", "0"]),
        &[],
    );
    (server, fresh)
}

#[test]
fn live_answers_follow_every_commit_and_match_a_fresh_export() {
    let pg = Postgres::start();
    let (mut ix, root) = seeded_export(&pg);
    let url = read_only_url(&pg);
    let live = serve_tail(root.path(), &url, &["--compact-interval", "0"], &[]);
    run_events(&mut ix, &live, 7, 45);

    // (a) byte for byte a fresh export's answers.
    let (exported, fresh) = fresh_export(&pg, "snap-b");
    let accounts: Vec<String> = (1..=45).map(account).collect();
    let tokens: Vec<u64> = ix.lists.keys().copied().chain([999]).collect();
    assert_same_answers(&live, &exported, &targets(&accounts, &tokens));

    let info = live.get("/snapshot").json();
    assert!(
        info["tail"]["events_applied"].as_u64().unwrap() > 0,
        "{info}"
    );
    assert!(info["tail"]["last_error"].is_null(), "{info}");
    assert_eq!(current(fresh.path()).as_deref(), Some("snap-b"));
    // Compactions refreshed the compacted values in memory (the entities
    // stay held over the base's files), but for those that had to fold.
    let samples = parse_metrics(&live.get("/metrics").text());
    let compactions = metric(
        &samples,
        "followgraph_compactions_total",
        &[("result", "ok")],
    );
    let folds = metric(&samples, "followgraph_compaction_folds_total", &[]).unwrap_or(0.0);
    assert!(
        compactions.is_some_and(|c| c >= 20.0 && folds < c / 2.0),
        "{compactions:?} compactions, {folds} folds:\n{}",
        live.stderr_log()
    );
    assert!(info["tail"]["entities_live"].as_u64() > Some(0), "{info}");
}

#[test]
fn compactions_while_events_arrive_lose_nothing() {
    // Compactions every second run beside the polls, each folding the
    // entities into files; each takes over what later polls held. Once
    // the last one lands, every answer, compacted values included, is a
    // fresh export's.
    let pg = Postgres::start();
    let (mut ix, root) = seeded_export(&pg);
    let url = read_only_url(&pg);
    let mut live = serve_tail(
        root.path(),
        &url,
        &["--compact-interval", "1", "--fold-interval", "0"],
        &[],
    );
    let compactions = live.root().join("compactions");
    run_events(&mut ix, &live, 13, 60);
    let info = wait_for(&live, "a compaction of everything", |i| {
        i["tail"]["entities_live"] == 0 && i["name"] != "snap-a"
    });
    let (exported, _fresh) = fresh_export(&pg, "snap-b");
    let accounts: Vec<String> = (1..=45).map(account).collect();
    let tokens: Vec<u64> = ix.lists.keys().copied().chain([999]).collect();
    assert_same_answers(&live, &exported, &targets(&accounts, &tokens));
    let metrics = live.get("/metrics").text();
    assert!(
        metrics.contains("followgraph_live_index_builds_total{result=\"ok\"}"),
        "{metrics}"
    );
    // Only the served base's files are kept, and none after a shutdown.
    let own = compactions.join(format!("followgraph-compactions-{}", live.pid()));
    let kept: Vec<String> = std::fs::read_dir(&own)
        .expect("the compactions' directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(kept, [info["name"].as_str().expect("a name")]);
    live.signal("TERM");
    assert!(live.wait_exit(Duration::from_secs(30)).is_some());
    assert!(!own.exists());
}

/// Whether a target's answer holds compacted values (docs/live.md): the
/// leaderboard, `/stats`, ranks, the counts of `/discover`, and orders
/// by a count.
fn compacted(target: &str) -> bool {
    target.contains("/leaderboard/")
        || target.ends_with("/api/v1/stats")
        || target.contains("/details")
        || target.contains("/discover")
        || target.contains("sort=followers")
        || target.contains("commonFollowers")
}

/// `body`'s arrays with their elements sorted: who is in an answer,
/// whatever its order.
fn members(body: &str) -> serde_json::Value {
    fn sort(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Array(items) => {
                let mut items: Vec<serde_json::Value> = items.into_iter().map(sort).collect();
                items.sort_by_key(|i| i.to_string());
                serde_json::Value::Array(items)
            }
            serde_json::Value::Object(map) => {
                serde_json::Value::Object(map.into_iter().map(|(k, v)| (k, sort(v))).collect())
            }
            other => other,
        }
    }
    sort(serde_json::from_str(body).expect("JSON"))
}

/// `body` without its `ranks` object (and `mutuals_rank` fields).
fn without_ranks(body: &str) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                map.remove("ranks");
                map.remove("mutuals_rank");
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::from_str(body).expect("JSON");
    strip(&mut v);
    v
}

#[test]
fn live_entities_without_a_compaction_match_a_fresh_export_and_the_base() {
    // (b) Every account the events name is in the base (list 1 follows
    // accounts 7 to 45).
    without_a_compaction(11, true);
}

#[test]
fn new_accounts_are_live_without_a_compaction() {
    // (b) with accounts the base lacks: most of those the events follow.
    without_a_compaction(12, false);
}

/// Random events with compaction far off: the live endpoints equal a
/// fresh export, the compacted values the base, and no compaction ran.
fn without_a_compaction(seed_events: u64, every_account: bool) {
    let pg = Postgres::start();
    create_schema(&pg);
    recommend(&pg);
    let mut ix = Indexer::new(&pg);
    seed(&mut ix);
    let at = ix.lists[&1].clone().expect("located");
    for a in (7..=45).filter(|_| every_account) {
        if !ix.follows(&at, &account(a)) {
            ix.op(&at, 1, &account(a), "", false);
        }
    }
    // List 50, account 1's but not its primary list: its ops are hidden
    // in the base until account 1 makes it primary.
    let second: Slot = (BASE, slot(50));
    ix.mint(50, &account(1));
    ix.set_location(50, &second);
    ix.set_role(&second, "user", &account(1));
    for (a, tag) in [(2, ""), (3, ""), (30, ""), (3, "friend")] {
        ix.op(
            &second,
            if tag.is_empty() { 1 } else { 3 },
            &account(a),
            tag,
            false,
        );
    }
    // A blocked record of a list's user in the base (see the end).
    let l5 = ix.lists[&5].clone().expect("located");
    ix.op(&l5, 1, &account(4), "", false);
    ix.op(&l5, 3, &account(4), "block", false);
    // Beyond the lookback of the tail's replay from the anchor: the live
    // index brings them in, not a re-read of the list's history.
    ix.skip_blocks(BASE, 1000);
    let opcode = if ix.follows(&at, &account(29)) { 2 } else { 1 };
    ix.op(&at, opcode, &account(29), "", false);
    let root = tempfile::tempdir().expect("tempdir");
    export_ok(&pg.url(), root.path(), &["--name", "snap-a"]);
    let base = TestServer::spawn(
        tempfile::tempdir().expect("tempdir"),
        &serve_args_with(root.path(), &["--poll-interval", "0"]),
        &[],
    );
    let url = read_only_url(&pg);
    let live = serve_tail(root.path(), &url, &["--compact-interval", "3600"], &[]);
    ix.set_primary(&account(1), 50);
    run_events(&mut ix, &live, seed_events, 80);
    ix.set_role(&second, "user", &account(1));
    ix.set_primary(&account(1), 50);
    ix.op(&second, 1, &account(31), "", false);
    // List 2 changes user while it stays a primary list: its base ops
    // change actor.
    ix.set_primary(&account(3), 2);
    let l2 = ix.lists[&2].clone().expect("located");
    ix.set_role(&l2, "user", &account(3));
    // The blocked record of the base, then another change of the
    // blocking list: the hidden followers of 12 are counted again.
    let l5 = ix.lists[&5].clone().expect("located");
    if !ix.follows(&l5, &account(4)) {
        ix.op(&l5, 1, &account(4), "", false);
    }
    if !ix.tagged(&l5, &account(4), "block") {
        ix.op(&l5, 3, &account(4), "block", false);
    }
    let opcode = if ix.follows(&l5, &account(28)) { 2 } else { 1 };
    ix.op(&l5, opcode, &account(28), "", false);

    let (exported, _fresh) = fresh_export(&pg, "snap-b");
    assert_eq!(live.get(&with_fresh("/api/v1/stats")).status, 200);
    let info = live.get("/snapshot").json();
    assert_eq!(info["name"], "snap-a", "no compaction: {info}");
    assert!(
        info["tail"]["entities_live"].as_u64().unwrap() > 0,
        "{info}"
    );
    let accounts: Vec<String> = (1..=45).map(account).collect();
    let tokens: Vec<u64> = ix.lists.keys().copied().chain([999]).collect();
    for target in targets(&accounts, &tokens) {
        let (l, e) = (live.get(&target), exported.get(&target));
        let what = format!("{target}: live {}", l.text());
        if !compacted(&target) {
            assert_eq!((l.status, l.text()), (e.status, e.text()), "{what}");
        } else if target.contains("/leaderboard/") || target.ends_with("/api/v1/stats") {
            let b = base.get(&target);
            assert_eq!((l.status, l.text()), (b.status, b.text()), "{what}");
        } else if target.contains("/recommended/details") {
            // Who and their counts are live, their ranks the base's.
            assert_eq!(l.status, e.status, "{what}");
            if l.status == 200 {
                assert_eq!(without_ranks(&l.text()), without_ranks(&e.text()), "{what}");
                for card in l.json()["recommended"].as_array().unwrap() {
                    let address = card["address"].as_str().unwrap();
                    let b = base.get(&format!("/api/v1/users/{address}/details"));
                    assert_eq!(card["ranks"], b.json()["ranks"], "{what}");
                }
            }
        } else if target.contains("/discover") {
            // Who and in what order are live, the counts compacted.
            assert_eq!(l.status, e.status, "{what}");
            assert_eq!(
                without_counts(&l.text()),
                without_counts(&e.text()),
                "{what}"
            );
        } else if target.ends_with("/details") {
            // The subject is live, its ranks the base's.
            assert_eq!(l.status, e.status, "{what}");
            if l.status == 200 {
                let address = l.json()["address"].as_str().unwrap().to_owned();
                let b = base.get(&format!("/api/v1/users/{address}/details"));
                assert_eq!(l.json()["ranks"], b.json()["ranks"], "{what}");
                assert_eq!(without_ranks(&l.text()), without_ranks(&e.text()), "{what}");
            }
        } else {
            // Orders by a count are compacted; who is in them is live.
            assert_eq!(l.status, e.status, "{what}");
            assert_eq!(
                members(&without_ranks(&l.text()).to_string()),
                members(&without_ranks(&e.text()).to_string()),
                "{what}"
            );
        }
    }
}

/// `/discover`'s body without the counts of its rows.
fn without_counts(body: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(body).expect("JSON");
    for row in v["latestFollows"].as_array_mut().expect("rows") {
        let row = row.as_object_mut().expect("a row");
        row.remove("followers");
        row.remove("following");
    }
    v
}

/// Waits until `/snapshot` answers what `pred` wants; that answer.
fn wait_for(
    server: &TestServer,
    what: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let info = server.get("/snapshot").json();
        if pred(&info) {
            return info;
        }
        assert!(Instant::now() < deadline, "{what}: {info}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_older_snapshot_swapped_in_never_undoes_a_live_follow() {
    let pg = Postgres::start();
    let (mut ix, root) = seeded_export(&pg);
    let live = serve_tail(root.path(), &pg.url(), &["--compact-interval", "3600"], &[]);
    let at = ix.lists[&1].clone().expect("located");
    let target = account(33);
    ix.op(&at, 1, &target, "", false);
    let shown = live.get("/api/v1/lists/1/allFollowingAddresses?cache=fresh");
    assert!(shown.text().contains(&target), "{}", shown.text());
    // The same old snapshot again: replayed from its anchor before the swap.
    let generation = live.get("/snapshot").json()["generation"].as_u64().unwrap();
    live.signal("HUP");
    wait_for(&live, "the reload", |i| {
        i["generation"].as_u64().unwrap() > generation
    });
    let after = live.get("/api/v1/lists/1/allFollowingAddresses");
    assert!(after.text().contains(&target), "{}", after.text());
}

#[test]
fn the_database_stopped_keeps_answers_and_loses_nothing() {
    let mut pg = Postgres::start();
    let (mut ix, root) = seeded_export(&pg);
    let url = pg.url();
    let args = serve_args_with(
        root.path(),
        &[
            "--database-url",
            &url,
            "--tail-interval",
            "150",
            "--fresh-wait",
            "700",
            "--compact-interval",
            "0",
        ],
    );
    let live = TestServer::spawn(tempfile::tempdir().expect("tempdir"), &args, &[]);
    wait_for(&live, "a first poll", |i| {
        !i["tail"]["last_poll_at"].is_null()
    });
    // A commit the tail may not have read yet, then the database stops.
    let at = ix.lists[&2].clone().expect("located");
    let target = account(34);
    ix.op(&at, 1, &target, "", false);
    pg.stop();
    std::thread::sleep(Duration::from_millis(1500));
    let r = live.get("/api/v1/lists/2/allFollowingAddresses?cache=fresh");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let lag: u64 = r
        .header("x-followgraph-lag-ms")
        .expect("a lag header while the database is down")
        .parse()
        .unwrap();
    assert!(lag >= 500, "{lag}");
    assert_eq!(live.get("/ready").status, 200);
    let info = live.get("/snapshot").json();
    assert!(!info["tail"]["last_error"].is_null(), "{info}");
    let metrics = live.get("/metrics").text();
    assert!(
        metrics.contains("followgraph_tail_polls_total{result=\"error\"}"),
        "{metrics}"
    );
    pg.restart();
    // The tail backs off, then catches up: the commit is there.
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let r = live.get("/api/v1/lists/2/allFollowingAddresses?cache=fresh");
        if r.text().contains(&target) {
            break;
        }
        assert!(Instant::now() < deadline, "never caught up: {}", r.text());
    }
}
