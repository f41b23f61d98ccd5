//! GET /users/{addressOrENS}/qr (48). Each answer is parsed as XML,
//! rendered, inverted and decoded (`support::read_qr`) to exactly the
//! payload; the label and the avatar URL are checked as the parser reads
//! them, and as the escaped bytes of the body.

use followgraph::snapshot::{EnsRow, Tables};

use crate::fixtures::*;
use crate::support::*;

/// A long name with every character XML escapes: 22 characters, so the
/// label is its first 18 and `…`.
const HOSTILE_NAME: &str = "<b>&\"Quote's\"</b>.eth";
const HOSTILE_LABEL: &str = "<b>&\"Quote's\"</b>.…";
const HOSTILE_LABEL_BYTES: &str = "&lt;b&gt;&amp;&quot;Quote&apos;s&quot;&lt;/b&gt;.…";
const HOSTILE_AVATAR: &str = "https://x.test/a.png?\"><script>alert(1)</script>&q='1'";
const HOSTILE_HREF_BYTES: &str =
    "https://x.test/a.png?&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;q=&apos;1&apos;";
/// An account named with exactly 18 characters.
const EIGHTEEN: &str = "0x1818181818181818181818181818181818181818";
/// An account with no data at all.
const NOBODY: &str = "0x98310000000000000000000000000000000a6744";

/// fixtures::graph (A alice.eth with an avatar, C Çarol.eth, D Dave.eth
/// with an avatar, G ghost.eth) and E named [`HOSTILE_NAME`]; F's avatar
/// is not an http(s) URL, B's is over 2,048 bytes, H's name has control
/// characters.
fn tables() -> Tables {
    let mut t = graph();
    let ens = |who: &str, name: &str, avatar: Option<String>| EnsRow {
        address: addr(who),
        name: name.into(),
        avatar,
        ..EnsRow::default()
    };
    t.ens.push(ens(E, HOSTILE_NAME, s(HOSTILE_AVATAR)));
    t.ens.push(ens(F, "frank.eth", s("ipfs://QmFrank")));
    let long = format!("https://x.test/{}", "a".repeat(2049 - 15));
    t.ens.push(ens(B, "bob.eth", Some(long)));
    t.ens.push(ens(H, "h\u{1}\u{1b}.eth", None));
    t
}

/// What `who`'s answer shows, its status and headers checked.
fn qr(srv: &impl Requests, who: &str) -> Seen {
    let resp = srv.get(&format!("/api/v1/users/{who}/qr"));
    assert_eq!(resp.status, 200, "{}: {}", resp.request, resp.text());
    assert_eq!(
        resp.header("content-type"),
        Some("image/svg+xml; charset=utf-8")
    );
    assert_eq!(resp.header("access-control-allow-origin"), Some("*"));
    assert!(resp.body.len() <= 32 * 1024, "{} bytes", resp.body.len());
    let svg = resp.text();
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "),
        "{svg}"
    );
    let seen = read_qr(&svg);
    if seen.href.is_some() {
        // The avatar's box, drawn opaque in the background colour.
        assert_eq!(seen.centre, [0x33, 0x33, 0x33], "{svg}");
    }
    Seen {
        payload: seen.payload,
        label: seen.label,
        href: seen.href,
    }
}

/// The payload, label and avatar URL (unescaped).
#[derive(Debug, PartialEq)]
struct Seen {
    payload: String,
    label: String,
    href: Option<String>,
}

fn seen(payload_address: &str, label: &str, href: Option<&str>) -> Seen {
    Seen {
        payload: format!("https://ethfollow.xyz/{payload_address}"),
        label: label.to_owned(),
        href: href.map(str::to_owned),
    }
}

#[test]
fn the_payload_is_the_profile_url_of_the_lower_case_address() {
    let srv = TestService::start(&tables());
    // By name, in any case: the address, not the name.
    let alice = seen(A, "alice.eth", Some("https://example.com/alice.png"));
    assert_eq!(qr(&srv, "ALICE.eth"), alice);
    assert_eq!(qr(&srv, &A.to_uppercase().replacen("0X", "0x", 1)), alice);
    assert_eq!(qr(&srv, "çarol.ETH"), seen(C, "Çarol.eth", None));
}

#[test]
fn names_and_avatars_are_escaped() {
    let srv = TestService::start(&tables());
    assert_eq!(qr(&srv, E), seen(E, HOSTILE_LABEL, Some(HOSTILE_AVATAR)));
    let body = srv.get(&format!("/api/v1/users/{E}/qr")).text();
    assert!(
        body.contains(&format!(">{HOSTILE_LABEL_BYTES}</text>")),
        "{body}"
    );
    assert!(
        body.contains(&format!(" href=\"{HOSTILE_HREF_BYTES}\"/>")),
        "{body}"
    );
    assert!(!body.contains("<script") && !body.contains("<b>"), "{body}");
    // Characters XML 1.0 forbids become U+FFFD (the parser accepted it).
    assert_eq!(qr(&srv, H), seen(H, "h\u{FFFD}\u{FFFD}.eth", None));
}

#[test]
fn labels_are_cut_after_18_characters() {
    let mut t = tables();
    t.ens.push(EnsRow {
        address: addr(EIGHTEEN),
        name: "eighteen-chars.eth".into(),
        ..EnsRow::default()
    });
    let srv = TestService::start(&t);
    let g2 = EIGHTEEN;
    assert_eq!(qr(&srv, g2), seen(g2, "eighteen-chars.eth", None));
    assert_eq!(
        qr(&srv, "0x2222222222222222222222222222222222222222").label,
        "bob.eth"
    );
}

#[test]
fn only_short_http_avatars_are_drawn() {
    let srv = TestService::start(&tables());
    // ipfs:// is not fetched by a browser as is.
    assert_eq!(qr(&srv, F), seen(F, "frank.eth", None));
    // 2,049 bytes.
    assert_eq!(qr(&srv, B), seen(B, "bob.eth", None));
    assert_eq!(
        qr(&srv, D),
        seen(D, "Dave.eth", Some("https://example.com/dave.png"))
    );
}

#[test]
fn an_account_without_data_is_labelled_by_its_short_address() {
    let srv = TestService::start(&tables());
    assert_eq!(qr(&srv, NOBODY), seen(NOBODY, "0x9831…6744", None));
    // An account with data but no ens row.
    let list_user_only = "0x8888888888888888888888888888888888888888";
    assert_eq!(
        qr(&srv, list_user_only),
        seen(list_user_only, "0x8888…8888", None)
    );
    assert_bad_ens(&srv.get("/api/v1/users/nobody.eth/qr"));
    assert_bad_ens(&srv.get("/api/v1/users/0x123/qr"));
}

#[test]
fn the_prefix_is_a_setting() {
    let srv = TestService::start_args(&tables(), &["--qr-url-prefix", "http://localhost:3000/u/"]);
    assert_eq!(
        qr(&srv, "alice.eth").payload,
        format!("http://localhost:3000/u/{A}")
    );
}

#[test]
fn answers_are_deterministic_and_head_matches_get() {
    let srv = TestService::start(&tables());
    let path = format!("/api/v1/users/{A}/qr");
    let first = srv.get(&path);
    let fresh = srv.get(&format!("{path}?cache=fresh"));
    assert_eq!(first.body, fresh.body);
    // Another service, another cache: the same bytes.
    assert_eq!(TestService::start(&tables()).get(&path).body, first.body);
    let head = srv.head(&path);
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("content-type"), first.header("content-type"));
}
