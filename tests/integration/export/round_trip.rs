//! Round trip: generate -> database -> export -> serve. The exported
//! snapshot holds the generated rows, and both snapshots answer a seeded
//! draw of requests over the seven endpoints and 43-47 byte for byte alike.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use followgraph::snapshot::{Address, Tables};

use crate::pg::Postgres;
use crate::support::{run_to_exit, Rng};

use super::{export_ok, skipped, sorted};

fn hex_address(addr: &Address) -> String {
    followgraph::snapshot::format_address(addr)
}

/// Request targets over the seven endpoints and 43-47 and their parameters, drawn
/// from the generated tables (known and unknown accounts, names in any
/// case, tags, every sort, opcode and interval, paging, bad values).
fn draw_requests(t: &Tables, created_at_ms: i64, count: usize) -> Vec<String> {
    let mut d = Rng(42);
    let mut accounts: Vec<String> = Vec::new();
    for l in t.lists.iter().step_by(3) {
        accounts.push(hex_address(&l.user));
    }
    for r in t.list_records.iter().step_by(97) {
        accounts.push(hex_address(&r.address));
    }
    for e in t.ens.iter().step_by(5) {
        accounts.push(e.name.clone());
        accounts.push(e.name.to_uppercase());
    }
    accounts.extend(
        [
            "0x123",
            "nobody.eth",
            "0x9999999999999999999999999999999999999999",
        ]
        .map(String::from),
    );
    // Followed hubs: the accounts with many followers make long pages.
    let mut by_target: BTreeMap<Address, usize> = BTreeMap::new();
    for r in &t.list_records {
        *by_target.entry(r.address).or_default() += 1;
    }
    let mut hubs: Vec<(usize, Address)> = by_target.into_iter().map(|(a, n)| (n, a)).collect();
    hubs.sort_unstable_by(|a, b| b.cmp(a));
    accounts.extend(hubs.iter().take(20).map(|(_, a)| hex_address(a)));
    let mut tokens: Vec<String> = t
        .lists
        .iter()
        .step_by(4)
        .map(|l| l.token_id.to_string())
        .collect();
    tokens.extend(["0", "abc", "99999999", "18446744073709551616"].map(String::from));
    let mut tags: Vec<String> = t
        .list_record_tags
        .iter()
        .step_by(11)
        .map(|r| r.tag.clone())
        .collect();
    tags.extend(["top8", "block", "mute", "nope"].map(String::from));
    let terms: Vec<String> = t
        .ens
        .iter()
        .step_by(7)
        .map(|e| e.name.chars().take(4).collect::<String>())
        .chain(
            t.lists
                .iter()
                .step_by(50)
                .map(|l| hex_address(&l.user)[2..7].to_owned()),
        )
        .chain(["eth", " ", "", "ZZZ"].map(String::from))
        .collect();
    let start_s = created_at_ms / 1000;
    let enc = |s: &str| {
        s.replace('%', "%25")
            .replace(' ', "%20")
            .replace('&', "%26")
            .replace('+', "%2B")
            .replace('#', "%23")
    };
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut q: Vec<String> = Vec::new();
        let page = |d: &mut Rng, q: &mut Vec<String>| {
            if d.chance(60) {
                q.push(format!("limit={}", d.pick_item(&[0, 1, 3, 10, 50, 200])));
            }
            if d.chance(40) {
                q.push(format!("offset={}", d.pick_item(&[0, 1, 5, 20, 1000])));
            }
        };
        let path = match d.below(9) {
            7 => {
                page(&mut d, &mut q);
                let details = *d.pick_item(&["", "/details"]);
                if d.chance(50) {
                    let a = enc(d.pick_item(&accounts).as_str());
                    format!("/api/v1/users/{a}/recommended{details}")
                } else {
                    let id = d.pick_item(&tokens);
                    format!("/api/v1/lists/{id}/recommended{details}")
                }
            }
            8 => {
                page(&mut d, &mut q);
                "/api/v1/discover".to_owned()
            }
            0 => format!("/api/v1/lists/{}/details", d.pick_item(&tokens)),
            1 => format!(
                "/api/v1/users/{}/badges",
                enc(d.pick_item(&accounts).as_str())
            ),
            2 => format!("/api/v1/lists/{}/badges", d.pick_item(&tokens)),
            3 => {
                q.push(format!("term={}", enc(d.pick_item(&terms).as_str())));
                page(&mut d, &mut q);
                "/api/v1/leaderboard/search".to_owned()
            }
            4 => {
                if d.chance(70) {
                    q.push(format!("opcode={}", d.below(6)));
                }
                let interval = *d.pick_item(&["hour", "day", "week", "month", "all", "MONTH"]);
                q.push(format!("interval={interval}"));
                if interval != "all" || d.chance(50) {
                    let back =
                        *d.pick_item(&[0i64, 3600, 86_400, 7 * 86_400, 30 * 86_400, 90 * 86_400]);
                    q.push(format!("start={}", start_s - back));
                }
                if d.chance(30) {
                    q.push(format!("tag={}", enc(d.pick_item(&tags).as_str())));
                }
                page(&mut d, &mut q);
                format!(
                    "/api/v1/users/{}/notifications",
                    enc(d.pick_item(&accounts).as_str())
                )
            }
            kind => {
                if d.chance(40) {
                    let n = 1 + d.below(2);
                    let chosen: Vec<String> =
                        (0..n).map(|_| enc(d.pick_item(&tags).as_str())).collect();
                    q.push(format!("tags={}", chosen.join(",")));
                }
                if d.chance(70) {
                    q.push(format!(
                        "sort={}",
                        d.pick_item(&["latest", "earliest", "followers", "FOLLOWERS", "x"])
                    ));
                }
                page(&mut d, &mut q);
                if kind == 5 {
                    format!(
                        "/api/v1/users/{}/followers",
                        enc(d.pick_item(&accounts).as_str())
                    )
                } else {
                    format!("/api/v1/lists/{}/followers", d.pick_item(&tokens))
                }
            }
        };
        if d.chance(20) {
            q.push("cache=fresh".to_owned());
        }
        out.push(if q.is_empty() {
            path
        } else {
            format!("{path}?{}", q.join("&"))
        });
    }
    out
}

fn assert_same_rows<T: Ord + Clone + std::fmt::Debug>(table: &str, a: &[T], b: &[T]) {
    let (a, b) = (sorted(a), sorted(b));
    if a != b {
        let first = a
            .iter()
            .zip(&b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        panic!(
            "{table}: generated {} rows, exported {}; first difference at sorted row {first}:\n  generated {:?}\n  exported  {:?}",
            a.len(),
            b.len(),
            a.get(first),
            b.get(first)
        );
    }
}

#[test]
fn round_trip_generate_into_the_database_export_and_serve_byte_identically() {
    const ACCOUNTS: &str = "1500";
    const SEED: &str = "7";
    let pg = Postgres::start();
    let work = tempfile::tempdir().unwrap();
    let root_a = work.path().join("a");
    let root_b = work.path().join("b");
    for target in [
        vec!["--out".into(), root_a.as_os_str().to_owned()],
        vec!["--indexer-database-url".into(), pg.url().into()],
    ] {
        let mut args: Vec<OsString> = vec![
            "generate".into(),
            "--accounts".into(),
            ACCOUNTS.into(),
            "--seed".into(),
            SEED.into(),
        ];
        args.extend(target);
        let (status, _, stderr) = run_to_exit(&args, &[], Duration::from_secs(300));
        assert!(
            status.is_some_and(|s| s.success()),
            "generate failed:\n{stderr}"
        );
    }
    let queries = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/indexer/queries");
    export_ok(
        &pg.url(),
        &root_b,
        &[
            "--query",
            &format!(
                "badge_events={}",
                queries.join("badge_events.sql").display()
            ),
            "--query",
            &format!("badges={}", queries.join("badges.sql").display()),
        ],
    );
    assert!(
        skipped(&root_b).is_empty(),
        "generated rows are all exportable: {:?}",
        skipped(&root_b)
    );

    // Table by table first: a failure names the table and the row.
    let a = followgraph::snapshot::load(&root_a).unwrap();
    let b = followgraph::snapshot::load(&root_b).unwrap();
    let (ta, tb) = (&a.tables, &b.tables);
    assert!(ta.list_ops.len() > 1000 && ta.list_record_tags.len() > 100 && ta.badges.len() > 10);
    assert_same_rows("lists", &ta.lists, &tb.lists);
    assert_same_rows("primary_lists", &ta.primary_lists, &tb.primary_lists);
    assert_same_rows("list_records", &ta.list_records, &tb.list_records);
    assert_same_rows(
        "list_record_tags",
        &ta.list_record_tags,
        &tb.list_record_tags,
    );
    assert_eq!(ta.list_ops, tb.list_ops, "list_ops, in seq order");
    assert_same_rows("ens", &ta.ens, &tb.ens);
    assert_same_rows("badge_events", &ta.badge_events, &tb.badge_events);
    assert_same_rows("badges", &ta.badges, &tb.badges);
    assert!(ta.recommended.len() > 5);
    assert_same_rows("recommended", &ta.recommended, &tb.recommended);

    // Then over HTTP: every answer byte-identical, except the leaderboard's
    // timestamps, which are each snapshot's created_at (generate's fixed
    // one; the export's is its transaction time).
    let (created_a, created_b) = (
        followgraph::time::format_iso_ms(a.created_at_ms),
        followgraph::time::format_iso_ms(b.created_at_ms),
    );
    assert_ne!(created_a, created_b);
    let requests = draw_requests(ta, a.created_at_ms, 3000);
    drop((a, b));
    let serve = |root: &Path| {
        crate::support::TestServer::spawn(
            tempfile::tempdir().unwrap(),
            &crate::support::serve_args(root),
            &[],
        )
    };
    let (server_a, server_b) = (serve(&root_a), serve(&root_b));
    let mut conn_a = crate::support::Conn::new(server_a.port);
    let mut conn_b = crate::support::Conn::new(server_b.port);
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    let mut nonempty = 0;
    for target in &requests {
        let ra = conn_a.get(target).unwrap();
        let rb = conn_b.get(target).unwrap();
        let body_a = String::from_utf8(ra.body).unwrap();
        let body_b = String::from_utf8(rb.body)
            .unwrap()
            .replace(&created_b, &created_a);
        assert_eq!((ra.status, &body_a), (rb.status, &body_b), "GET {target}");
        *statuses.entry(ra.status).or_default() += 1;
        if body_a.len() > 200 {
            nonempty += 1;
        }
    }
    // The draw reaches answers with data and the error paths alike.
    assert!(
        statuses[&200] > 1500 && statuses.contains_key(&400) && statuses.contains_key(&404),
        "{statuses:?}"
    );
    assert!(nonempty > 1000, "only {nonempty} answers carried data");
}
