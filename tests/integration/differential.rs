//! Differential property test: a naive model of the API reference
//! (docs/openapi.yaml; straight loops over the raw table rows,
//! `differential/model.rs` and a file per family of endpoints under
//! `differential/model/`) against the real engine (`api::answer`: route,
//! parse, resolve and render, in process; `api::answer_with_body` for
//! 32's POST), over many random small snapshots and random request
//! targets for every endpoint but 42, named by the endpoint table's rows
//! (`target::MODEL_ENDPOINTS`; `gen.rs`: 1-7, `gen_more.rs`: 8-14 and
//! 38-41, `gen_follow.rs`: 15-37, `gen_rec.rs`: 43-48). Bodies are compared as exact strings
//! (the model's `serde_json::Value` serialised compactly, key order
//! kept); 48's SVG as what a reader sees in it (`support::read_qr`: the
//! decoded symbol, the label, the avatar's URL). On every snapshot the engine's endpoints are also checked
//! against each other by the API reference's Invariants
//! (`check_invariants`).
//!
//! Some snapshots also make a round trip through Parquet
//! (`write_snapshot` + `read_snapshot` + `Graph::build`), which checks that
//! the generator only produces valid snapshots and that the reader keeps
//! every row (JSON object columns are then stored with spaces).

mod gen;
mod gen_follow;
mod gen_more;
mod gen_rec;
mod gen_snap;
mod model;
mod target;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

use followgraph::api::RenderEnv;
use followgraph::error::ApiError;
use followgraph::graph::Graph;
use followgraph::snapshot::{Address, Tables};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestError, TestRunner};
use serde_json::Value;

use gen::{build_req, req_spec};
use gen_snap::{build_snap, snap_spec, Snap, NOW_MS};
use model::{addr_text, iso, Model};
use target::{encode, Req};

/// Snapshots per run (`DIFFERENTIAL_CASES` overrides it for a longer soak),
/// and requests per snapshot: to endpoints 1-7, to 8-14 and 38-41, and to
/// 15-37.
const CASES: u32 = 768;
const REQUESTS: std::ops::RangeInclusive<usize> = 40..=60;
const MORE_REQUESTS: std::ops::RangeInclusive<usize> = 10..=16;
const FOLLOW_REQUESTS: std::ops::RangeInclusive<usize> = 20..=30;
const REC_REQUESTS: std::ops::RangeInclusive<usize> = 6..=10;

fn build_graph(snap: &Snap) -> Graph {
    if !snap.via_parquet {
        return Graph::from_tables("diff".into(), snap.created_at_ms, snap.tables.clone())
            .expect("graph builds");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("snap");
    followgraph::snapshot::write_snapshot(
        &path,
        snap.created_at_ms,
        &snap.tables,
        &followgraph::snapshot::WriteOptions::default(),
    )
    .expect("write_snapshot");
    let loaded = followgraph::snapshot::read_snapshot(&path)
        .unwrap_or_else(|e| panic!("generated snapshot rejected: {e}\n{}", describe(snap)));
    assert_eq!(loaded.created_at_ms, snap.created_at_ms);
    Graph::build(loaded).expect("graph builds")
}

/// The engine's answer: status and body. A path the engine routes goes
/// to the row the model answers for.
fn engine(g: &Graph, req: &Req) -> (u16, String) {
    if let Some(route) = followgraph::api::route(&req.path).1 {
        assert_eq!(route.endpoint, req.endpoint, "{}", req.path);
    }
    let answer = match &req.body {
        None => followgraph::api::answer(g, &req.path, &req.query, 1000, RenderEnv::at(NOW_MS)),
        Some(body) => followgraph::api::answer_with_body(
            g,
            &req.path,
            &req.query,
            body,
            1000,
            RenderEnv::at(NOW_MS),
        ),
    };
    match answer {
        Ok(body) => (200, body),
        Err(ApiError::UnknownPath(_)) => panic!("{} is a known path", req.path),
        Err(e) => (e.status(), e.body()),
    }
}

/// A readable dump of a snapshot: addresses as `a0..a9` with a legend.
fn describe(snap: &Snap) -> String {
    let t: &Tables = &snap.tables;
    let name = |a: &Address| match snap.addrs.iter().position(|x| x == a) {
        Some(i) => format!("a{i}"),
        None => addr_text(a),
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "snapshot (created_at {}, via_parquet {}):",
        iso(snap.created_at_ms),
        snap.via_parquet
    );
    for (i, a) in snap.addrs.iter().enumerate() {
        let _ = writeln!(s, "  a{i} = {}", addr_text(a));
    }
    for l in &t.lists {
        let _ = writeln!(
            s,
            "  list {} user {} owner {} manager {}",
            l.token_id,
            name(&l.user),
            name(&l.owner),
            name(&l.manager)
        );
    }
    for p in &t.primary_lists {
        let _ = writeln!(s, "  primary_list {} -> {}", name(&p.address), p.token_id);
    }
    for r in &t.list_records {
        let _ = writeln!(
            s,
            "  record list {} -> {} at {}",
            r.token_id,
            name(&r.address),
            iso(r.updated_at)
        );
    }
    for g in &t.list_record_tags {
        let _ = writeln!(
            s,
            "  tag list {} -> {} {:?} at {}",
            g.token_id,
            name(&g.address),
            g.tag,
            iso(g.updated_at)
        );
    }
    for o in &t.list_ops {
        let _ = writeln!(
            s,
            "  op seq {} list {} opcode {} target {} tag {:?} at {}",
            o.seq,
            o.token_id,
            o.op.opcode,
            name(&o.op.target),
            o.op.tag,
            iso(o.updated_at)
        );
    }
    for e in &t.ens {
        let _ = writeln!(s, "  ens {} {:?}", name(&e.address), e);
    }
    for r in &t.recommended {
        let _ = writeln!(s, "  recommended {} {:?}", name(&r.address), r);
    }
    for e in &t.badge_events {
        let _ = writeln!(s, "  badge_event {} position {}", e.event_id, e.position);
    }
    for b in &t.badges {
        let _ = writeln!(
            s,
            "  badge {} event {} token {:?} owner {:?}",
            name(&b.address),
            b.event_id,
            b.token_id,
            b.owner
        );
    }
    s
}

fn check(snap: &Snap, reqs: &[Req]) -> Result<(), TestCaseError> {
    let graph = build_graph(snap);
    let model = Model::new(&snap.tables, snap.created_at_ms);
    if let Err(e) = check_invariants(snap, &graph, model.accounts()) {
        return Err(TestCaseError::fail(format!(
            "an invariant does not hold\n{}{e}",
            describe(snap)
        )));
    }
    for req in reqs {
        let mut expected = model.answer(req);
        let (status, mut body) = engine(&graph, req);
        if req.endpoint == followgraph::api::Endpoint::UserQr && status == 200 {
            static READ: AtomicUsize = AtomicUsize::new(0);
            let decode = READ.fetch_add(1, Ordering::Relaxed).is_multiple_of(4);
            body = qr_reading(&body, decode).to_string();
            if let (false, Some(fields)) = (decode, expected.body.as_object_mut()) {
                fields.shift_remove("payload");
            }
        }
        let expected_body = serde_json::to_string(&expected.body).unwrap();
        if std::env::var_os("DIFFERENTIAL_STATS").is_some() {
            stats::record(req.endpoint, status, &body);
            if std::env::var_os("DIFFERENTIAL_DUMP").is_some() {
                eprintln!("{} -> {status} {body}", req.describe());
            }
        }
        if status != expected.status || body != expected_body {
            return Err(TestCaseError::fail(format!(
                "engine and model disagree\n{}request: {}\n  decoded params {:?} {:?}, query {:?}\n\
                 expected: {} {}\nactual:   {} {}",
                describe(snap),
                req.describe(),
                req.param,
                req.param2,
                req.pairs,
                expected.status,
                expected_body,
                status,
                body
            )));
        }
    }
    Ok(())
}

/// 48's document as the model states it: what `read_qr` sees, as JSON.
/// The symbol is decoded in one answer of four (`decode`): the decoder
/// takes ~15 ms a symbol, which over every answer would lengthen this
/// test by a fifth (tests/integration/qr.rs decodes every answer of its
/// own); the label and the avatar are read in every one.
fn qr_reading(svg: &str, decode: bool) -> Value {
    if decode {
        let seen = crate::support::read_qr(svg);
        serde_json::json!({"payload": seen.payload, "label": seen.label, "avatar": seen.href})
    } else {
        let (label, href) = crate::support::read_qr_text(svg);
        serde_json::json!({"label": label, "avatar": href})
    }
}

/// The engine's answer to `target` (under `/api/v1`, query included).
fn get(g: &Graph, target: &str) -> (u16, String) {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    match followgraph::api::answer(
        g,
        &format!("/api/v1{path}"),
        query,
        1000,
        RenderEnv::at(NOW_MS),
    ) {
        Ok(body) => (200, body),
        Err(e) => (e.status(), e.body()),
    }
}

/// The API reference's Invariants (docs/openapi.yaml), engine against engine,
/// for every account the snapshot mentions and every list of it: the model
/// checks bodies one at a time, these that the endpoints agree with one
/// another (and they reach every account and list, which random requests do
/// not).
fn check_invariants(snap: &Snap, g: &Graph, accounts: &[Address]) -> Result<(), String> {
    let json = |target: &str| -> Result<(String, Value), String> {
        match get(g, target) {
            (200, body) => Ok((body.clone(), serde_json::from_str(&body).unwrap())),
            (status, body) => Err(format!("GET {target}: {status} {body}")),
        }
    };
    // Followers endpoints' entries: every one fits in one page here.
    let entries = |target: &str| -> Result<usize, String> {
        Ok(json(&format!("{target}?limit=1000"))?.1["followers"]
            .as_array()
            .unwrap()
            .len())
    };
    let following_entries = |target: &str| -> Result<usize, String> {
        Ok(json(&format!("{target}?limit=1000"))?.1["following"]
            .as_array()
            .unwrap()
            .len())
    };
    let ensure = |holds: bool, what: String| if holds { Ok(()) } else { Err(what) };
    // following(X) and followers(X) of every account whose count is above
    // 0 (the leaderboard's; 0 when not ranked).
    let (_, v38) = json("/leaderboard/ranked?sort=following&limit=1000")?;
    let ranked = v38["results"].as_array().unwrap();
    let (_, v38) = json("/leaderboard/ranked?sort=followers&limit=1000")?;
    let ranked_followers = v38["results"].as_array().unwrap();
    let count = |rows: &[Value], a: &str, key: &str| -> String {
        (rows.iter())
            .find(|row| row["address"] == a)
            .map_or("0", |row| row[key].as_str().unwrap())
            .to_owned()
    };
    // 32's body: every account, a name of each `ens` row (upper case),
    // an unknown name and a null; 31 for each, by the path.
    let mut items: Vec<Value> = accounts.iter().map(|a| Value::from(addr_text(a))).collect();
    items.extend(
        snap.tables
            .ens
            .iter()
            .map(|e| Value::from(e.name.to_uppercase())),
    );
    items.extend([Value::from("nobody.eth"), Value::Null]);
    let batch = serde_json::to_string(&items).unwrap();
    for x in accounts {
        let a = addr_text(x);
        let (_, stats) = json(&format!("/users/{a}/stats"))?;
        let n6 = entries(&format!("/users/{a}/followers"))?;
        ensure(
            stats["followers_count"] == n6,
            format!("{a}: 11 {stats} but 6 has {n6} entries"),
        )?;
        let n19 = entries(&format!("/users/{a}/allFollowers"))?;
        let followers = count(ranked_followers, &a, "followers");
        ensure(
            n19 == n6 && followers == n6.to_string(),
            format!("{a}: 6 has {n6} entries, 19 {n19}, followers(X) is {followers}"),
        )?;
        let (_, v6) = json(&format!("/users/{a}/followers?sort=latest&limit=1000"))?;
        let (_, v21) = json(&format!("/users/{a}/latestFollowers?limit=1000"))?;
        let cut: Vec<Value> = (v6["followers"].as_array().unwrap().iter())
            .map(|e| {
                serde_json::json!({
                    "address": e["address"],
                    "svc_list_nft_token_id": e["svc_list_nft_token_id"],
                    "updated_at": e["updated_at"],
                })
            })
            .collect();
        ensure(
            v21["followers"].as_array() == Some(&cut),
            format!("{a}: 21 {v21} but 6 with sort=latest {v6}"),
        )?;
        let n15 = following_entries(&format!("/users/{a}/following"))?;
        ensure(
            stats["following_count"] == n15,
            format!("{a}: 11 {stats} but 15 has {n15} entries"),
        )?;
        let following = count(ranked, &a, "following");
        let n16 = following_entries(&format!("/users/{a}/allFollowing"))?;
        ensure(
            following == n16.to_string(),
            format!("{a}: 16 has {n16} entries but the leaderboard's following is {following}"),
        )?;
        check_recommended(g, &format!("/users/{a}"), &a, "allFollowing")?;
        let (details, v10) = json(&format!("/users/{a}/details"))?;
        let (_, v13) = json(&format!("/users/{a}/lists"))?;
        let (_, v14) = json(&format!("/users/{a}/primary-list"))?;
        let primary = &v14["primary_list"];
        ensure(
            v10["primary_list"] == *primary && v13["primary_list"] == *primary,
            format!("{a}: primary_list differs: 10 {v10}, 13 {v13}, 14 {v14}"),
        )?;
        if let Some(p) = primary.as_str() {
            let (of_list, _) = json(&format!("/lists/{p}/details"))?;
            ensure(
                of_list == details,
                format!("{a}: 10 {details}\nbut 1 of {p} {of_list}"),
            )?;
        }
        // X's lists: those whose user X is (the zero address is no user).
        let lists = snap
            .tables
            .lists
            .iter()
            .filter(|l| l.user == *x && *x != [0; 20]);
        for id in lists.map(|l| l.token_id.to_string()) {
            let is_primary = primary.as_str() == Some(id.as_str());
            let (_, v9) = json(&format!("/lists/{id}/account"))?;
            ensure(
                v9["address"] == a
                    && v9["primary_list"] == *primary
                    && v9["is_primary_list"] == is_primary,
                format!("{a}: 9 of its list {id} {v9}, 14 {v14}"),
            )?;
            let (_, v12) = json(&format!("/lists/{id}/stats"))?;
            let n7 = entries(&format!("/lists/{id}/followers"))?;
            ensure(
                v12["followers_count"] == n7,
                format!("list {id}: 12 {v12} but 7 has {n7} entries"),
            )?;
            // Its own records are the primary list's: 15's entries.
            ensure(
                !is_primary || v12["following_count"] == stats["following_count"],
                format!("{a}: 11 {stats} but 12 of its primary list {id} {v12}"),
            )?;
            let n17 = following_entries(&format!("/lists/{id}/following"))?;
            ensure(
                v12["following_count"] == n17,
                format!("list {id}: 12 {v12} but 17 has {n17} entries"),
            )?;
            check_own_records(g, &id, &batch, &items)?;
            check_recommended(g, &format!("/lists/{id}"), &a, "allFollowing")?;
        }
    }
    let (_, v39) = json("/leaderboard/count")?;
    let (_, v40) = json("/leaderboard/all")?;
    let n40 = v40["results"].as_array().unwrap().len();
    // 39's count is a string.
    let n40_text = n40.to_string();
    ensure(
        v39["leaderboardCount"] == n40_text,
        format!("39 {v39} but 40 has {n40} entries"),
    )
}

/// The invariants of 43-46 for one subject (`/users/{a}` or
/// `/lists/{id}`, whose user is `own`): the addresses of `…/recommended/
/// details` are those of `…/recommended` for the same `limit` and
/// `offset`, and none of them is `own` or an entry of 16 (18).
fn check_recommended(g: &Graph, subject: &str, own: &str, all: &str) -> Result<(), String> {
    let json = |target: &str| -> Result<Value, String> {
        match get(g, target) {
            (200, body) => Ok(serde_json::from_str(&body).unwrap()),
            (status, body) => Err(format!("GET {target}: {status} {body}")),
        }
    };
    let addresses = |v: &Value, list: &str, key: &str| -> Vec<Value> {
        (v[list].as_array().unwrap().iter())
            .map(|e| e[key].clone())
            .collect()
    };
    let followed = addresses(
        &json(&format!("{subject}/{all}?limit=1000"))?,
        "following",
        "address",
    );
    for page in ["limit=1000", "limit=2&offset=1", "offset=3"] {
        let v43 = json(&format!("{subject}/recommended?{page}"))?;
        let v45 = json(&format!("{subject}/recommended/details?{page}"))?;
        let a43 = addresses(&v43, "recommended", "address");
        if a43 != addresses(&v45, "recommended", "address") {
            return Err(format!("{subject}?{page}: 43 {v43} but 45 {v45}"));
        }
        if let Some(bad) = a43.iter().find(|a| **a == own || followed.contains(a)) {
            return Err(format!("{subject}?{page}: 43 recommends {bad}: {v43}"));
        }
    }
    Ok(())
}

/// The invariants of one list's own records (a list with a user): 27 =
/// the addresses of 28 in order, and its length = entries of 18; item i
/// of 32 (POSTed `batch`, whose items are `items`) = 31 for that item (a
/// null state where 31 answers 404).
fn check_own_records(g: &Graph, id: &str, batch: &str, items: &[Value]) -> Result<(), String> {
    let json = |target: &str| -> Result<Value, String> {
        match get(g, target) {
            (200, body) => Ok(serde_json::from_str(&body).unwrap()),
            (status, body) => Err(format!("GET {target}: {status} {body}")),
        }
    };
    let v27 = json(&format!("/lists/{id}/allFollowingAddresses"))?;
    let v28 = json(&format!("/exportState/{id}"))?;
    let of_28: Vec<Value> = (v28["following"].as_array().unwrap().iter())
        .map(|e| e["address"].clone())
        .collect();
    if v27.as_array() != Some(&of_28) {
        return Err(format!("list {id}: 27 {v27} but 28 {v28}"));
    }
    let v18 = json(&format!("/lists/{id}/allFollowing?limit=1000"))?;
    let n18 = v18["following"].as_array().unwrap().len();
    if of_28.len() != n18 {
        return Err(format!("list {id}: 27 {v27} but 18 has {n18} entries"));
    }
    let path = format!("/api/v1/lists/{id}/buttonStateBatch");
    let v32: Value = match followgraph::api::answer_with_body(
        g,
        &path,
        "",
        batch.as_bytes(),
        1000,
        RenderEnv::at(NOW_MS),
    ) {
        Ok(body) => serde_json::from_str(&body).unwrap(),
        Err(e) => return Err(format!("POST {path} {batch}: {} {}", e.status(), e.body())),
    };
    let answers = v32.as_array().unwrap();
    if answers.len() != items.len() {
        return Err(format!("list {id}: 32 {v32} for {batch}"));
    }
    for (item, answer) in items.iter().zip(answers) {
        let one = match item.as_str() {
            Some(text) => get(
                g,
                &format!("/lists/{id}/{}/buttonState", encode(text, false, 0)),
            ),
            None => (404, String::new()),
        };
        let holds = match &one {
            (200, body) => serde_json::from_str::<Value>(body).unwrap() == *answer,
            _ => answer["state"].is_null() && answer["address"] == *item,
        };
        if !holds {
            return Err(format!(
                "list {id}: 32's item {item} {answer} but 31 {} {}",
                one.0, one.1
            ));
        }
    }
    Ok(())
}

/// Opt-in (`DIFFERENTIAL_STATS=1`, with `--nocapture`): how many answers of
/// each kind the random requests produced, to see what the test exercises.
mod stats {
    use std::sync::Mutex;

    use followgraph::api::Endpoint;

    static SEEN: Mutex<Vec<(Endpoint, u16, usize, usize)>> = Mutex::new(Vec::new());

    pub fn record(endpoint: Endpoint, status: u16, body: &str) {
        // Rough size of the answer: number of JSON objects in it.
        let objects = body.matches('{').count();
        SEEN.lock()
            .unwrap()
            .push((endpoint, status, objects, body.len()));
    }

    pub fn print() {
        let seen = SEEN.lock().unwrap();
        for endpoint in super::target::MODEL_ENDPOINTS {
            let of: Vec<_> = seen.iter().filter(|s| s.0 == endpoint).collect();
            let ok: Vec<_> = of.iter().filter(|s| s.1 == 200).collect();
            let mut hist = std::collections::BTreeMap::new();
            for s in &ok {
                *hist.entry(s.2.min(12)).or_insert(0) += 1;
            }
            eprintln!(
                "{}: {} requests, 200: {}, 400: {}, 404: {}; objects per 200 body: {hist:?}",
                endpoint.name(),
                of.len(),
                ok.len(),
                of.iter().filter(|s| s.1 == 400).count(),
                of.iter().filter(|s| s.1 == 404).count(),
            );
        }
    }
}

#[test]
fn differential_engine_matches_naive_model() {
    let config = Config {
        cases: std::env::var("DIFFERENTIAL_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(CASES),
        max_shrink_iters: 2048,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = (
        snap_spec(),
        gen_more::tweaks(),
        gen_follow::tweaks(),
        prop::collection::vec(req_spec(), REQUESTS),
        prop::collection::vec(gen_more::req_spec(), MORE_REQUESTS),
        prop::collection::vec(gen_follow::req_spec(), FOLLOW_REQUESTS),
        (
            gen_rec::rows(),
            prop::collection::vec(gen_rec::req_spec(), REC_REQUESTS),
        ),
    );
    let result = runner.run(&strategy, |args| {
        let (spec, tweaks, same_time, req_specs, more_specs, follow_specs, rec) = args;
        let (rec_rows, rec_specs) = rec;
        let mut snap = build_snap(&spec);
        gen_more::tweak_snap(&mut snap, &tweaks);
        gen_follow::tweak_snap(&mut snap, &same_time);
        gen_rec::add_recommended(&mut snap, &rec_rows);
        let reqs: Vec<Req> = (req_specs.iter().map(|r| build_req(r, &snap)))
            .chain(more_specs.iter().map(|r| gen_more::build_req(r, &snap)))
            .chain(follow_specs.iter().map(|r| gen_follow::build_req(r, &snap)))
            .chain(rec_specs.iter().map(|r| gen_rec::build_req(r, &snap)))
            .collect();
        check(&snap, &reqs)
    });
    if std::env::var_os("DIFFERENTIAL_STATS").is_some() {
        stats::print();
    }
    match result {
        Ok(()) => {}
        Err(TestError::Fail(reason, _)) => panic!("minimal failing case:\n{reason}"),
        Err(e) => panic!("{e}"),
    }
}

/// The model's own helpers, checked against hand-worked values so that a
/// disagreement is not the model's date arithmetic.
#[test]
fn differential_model_iso() {
    assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso(1_728_935_138_617), "2024-10-14T19:45:38.617Z");
    assert_eq!(iso(951_782_400_007), "2000-02-29T00:00:00.007Z");
    assert_eq!(iso(1_795_176_000_000), "2026-11-20T12:00:00.000Z");
    assert_eq!(iso(gen_snap::S), "2024-10-14T00:00:00.000Z");
    assert_eq!(iso(-1), "1969-12-31T23:59:59.999Z");
    assert_eq!(iso(-1_500), "1969-12-31T23:59:58.500Z");
    assert_eq!(iso(-86_400_001), "1969-12-30T23:59:59.999Z");
    assert_eq!(iso(-31_536_000_000), "1969-01-01T00:00:00.000Z");
}

/// The generators draw from every row of the endpoint table but 42 (the
/// OpenAPI document, the same for every snapshot), each once.
#[test]
fn differential_model_covers_every_endpoint() {
    use followgraph::api::Endpoint;
    for e in Endpoint::ALL {
        let n = target::MODEL_ENDPOINTS.iter().filter(|&&m| m == e).count();
        assert_eq!(n, usize::from(e != Endpoint::OpenApi), "{e:?}");
    }
}
