//! Hand-written snapshots. Every expected answer in the tests is worked out
//! by hand from the rows below (see the comments next to each fixture).

use followgraph::snapshot::{
    parse_address, Address, BadgeEventRow, BadgeRow, EnsRow, ListRow, Op, OpRow, PrimaryListRow,
    RecordRow, Tables, TagRow,
};

pub fn addr(text: &str) -> Address {
    parse_address(text).unwrap_or_else(|| panic!("bad test address {text}"))
}

#[derive(Default)]
pub struct Builder {
    pub t: Tables,
}

impl Builder {
    pub fn new() -> Self {
        Builder::default()
    }

    /// A list whose user, owner and manager are `user`.
    pub fn list(&mut self, token_id: u64, user: &str) -> &mut Self {
        let user = addr(user);
        self.t.lists.push(ListRow {
            token_id,
            user,
            owner: user,
            manager: user,
        });
        self
    }

    /// A list whose user, owner and manager differ (`user` may be the
    /// zero address: a list without a user).
    pub fn list_roles(
        &mut self,
        token_id: u64,
        user: &str,
        owner: &str,
        manager: &str,
    ) -> &mut Self {
        self.t.lists.push(ListRow {
            token_id,
            user: addr(user),
            owner: addr(owner),
            manager: addr(manager),
        });
        self
    }

    pub fn primary(&mut self, who: &str, token_id: u64) -> &mut Self {
        self.t.primary_lists.push(PrimaryListRow {
            address: addr(who),
            token_id,
        });
        self
    }

    /// A list that is `user`'s primary list.
    pub fn primary_list(&mut self, token_id: u64, user: &str) -> &mut Self {
        self.list(token_id, user).primary(user, token_id)
    }

    pub fn record(&mut self, token_id: u64, target: &str, at: i64) -> &mut Self {
        self.t.list_records.push(RecordRow {
            token_id,
            address: addr(target),
            updated_at: at,
        });
        self
    }

    pub fn tag(&mut self, token_id: u64, target: &str, tag: &str, at: i64) -> &mut Self {
        self.t.list_record_tags.push(TagRow {
            token_id,
            address: addr(target),
            tag: tag.to_owned(),
            updated_at: at,
        });
        self
    }

    pub fn op(
        &mut self,
        token_id: u64,
        seq: u64,
        opcode: u8,
        target: &str,
        tag: &str,
        at: i64,
    ) -> &mut Self {
        self.t.list_ops.push(OpRow {
            token_id,
            seq,
            op: Op {
                opcode,
                target: addr(target),
                tag: tag.to_owned(),
            },
            updated_at: at,
        });
        self
    }

    /// An ens row with only a name.
    pub fn ens_name(&mut self, who: &str, name: &str) -> &mut Self {
        self.ens(EnsRow {
            address: addr(who),
            name: name.to_owned(),
            ..Default::default()
        })
    }

    pub fn ens(&mut self, row: EnsRow) -> &mut Self {
        self.t.ens.push(row);
        self
    }

    pub fn build(&mut self) -> Tables {
        std::mem::take(&mut self.t)
    }
}

pub fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

// ===================================================================== graph
//
// Used by details, leaderboard and protocol tests.
//
// Accounts: A 0x11.., B 0x22.., C 0x33.., D 0x44.., E 0x55.., F 0x66..,
// G 0x77.. (ens only), H 0x99.. (primary_lists row naming a missing list).
//
// lists: 1 A (primary), 2 B (primary), 3 C (primary), 4 D (primary),
//        5 A (not primary: A's primary is 1), 6 E (not primary: E's
//        primary_lists row names list 1, whose user is A -> ignored),
//        7 F (primary, no records), 8 user zero address (no user), owner
//        and manager G (no records).
//
// Records in primary lists:
//   1 (A): D, B, C         2 (B): D, A         3 (C): D, A, B
//   4 (D): D (self), A, B
// Invisible: list 5 (A): E (+ tag block); list 6 (E): A; list 2 tag block
// on C (no record of C in list 2); list 99 (not in lists): record of C.
//
// followers: A 3 (B,C,D)  B 3 (A,C,D)  C 1 (A)  D 4 (A,B,C,D)  F 0
//   rank:    A 2          B 2          C 4      D 1           F 0
// following: A 3  B 2  C 3  D 3  F 0 -> ranks A 1, B 4, C 1, D 1, F 0
// mutuals:   A {B,C,D}=3  B {A,D}=2  C {A}=1  D {A,B,D}=3  F 0
//   rank:    A 1  B 3  C 4  D 1  F 0
// blocks (tag block): B by C and D = 2, C by A = 1 -> ranks B 1, C 2, A 0, D 0
// top8: D by A,B,C = 3, A by C,D = 2 -> ranks D 1, A 2, B 0, C 0
// Leaderboard accounts: A, B, C, D, F (E, G, H are not on it).
pub const A: &str = "0x1111111111111111111111111111111111111111";
pub const B: &str = "0x2222222222222222222222222222222222222222";
pub const C: &str = "0x3333333333333333333333333333333333333333";
pub const D: &str = "0x4444444444444444444444444444444444444444";
pub const E: &str = "0x5555555555555555555555555555555555555555";
pub const F: &str = "0x6666666666666666666666666666666666666666";
pub const G: &str = "0x7777777777777777777777777777777777777777";
pub const H: &str = "0x9999999999999999999999999999999999999999";

/// 2024-10-14T00:00:00.000Z (date -u -d 2024-10-14T00:00:00Z +%s = 1728864000).
pub const S_SECS: i64 = 1_728_864_000;
pub const S: i64 = S_SECS * 1000;

pub fn graph() -> Tables {
    let mut b = Builder::new();
    b.primary_list(1, A)
        .primary_list(2, B)
        .primary_list(3, C)
        .primary_list(4, D)
        .list(5, A)
        .list(6, E)
        .primary(E, 1)
        .primary_list(7, F)
        .list_roles(8, ZERO, G, G)
        .primary(H, 99);
    b.record(1, D, S)
        .record(1, B, S + 1)
        .record(1, C, S + 2)
        .record(2, D, S + 3)
        .record(2, A, S + 4)
        .record(3, D, S + 5)
        .record(3, A, S + 6)
        .record(3, B, S + 7)
        .record(4, D, S + 8)
        .record(4, A, S + 9)
        .record(4, B, S + 10)
        // invisible
        .record(5, E, S + 11)
        .record(6, A, S + 12)
        .record(99, C, S + 13);
    b.tag(3, B, "block", S)
        .tag(4, B, "block", S)
        .tag(1, C, "block", S)
        .tag(1, D, "top8", S)
        .tag(2, D, "top8", S)
        .tag(3, D, "top8", S)
        .tag(3, A, "top8", S)
        .tag(4, A, "top8", S)
        // invisible
        .tag(2, C, "block", S)
        .tag(5, E, "block", S)
        .tag(6, A, "top8", S);
    b.ens(EnsRow {
        address: addr(A),
        name: "alice.eth".into(),
        avatar: s("https://example.com/alice.png"),
        header: None,
        display: s("Alice.eth"),
        records: s(r#"{"com.twitter":"alice","avatar":"https://example.com/alice.png"}"#),
        chains: s(r#"{"eth":"0x1111111111111111111111111111111111111111","btc":"bc1qalice"}"#),
        fresh: Some(1_726_680_254_493),
        resolver: s("0x4976fb03c32e5b8cfe2b6ccb31c09ba78ebaba41"),
        errors: s(r#"{"header":"not found","avatar":"timeout"}"#),
    })
    .ens(EnsRow {
        address: addr(C),
        name: "Çarol.eth".into(),
        ..Default::default()
    })
    .ens(EnsRow {
        address: addr(D),
        name: "Dave.eth".into(),
        avatar: s("https://example.com/dave.png"),
        header: s("https://example.com/dave-header.png"),
        display: s("dave.eth"),
        records: s("{}"),
        // Stored with spaces; nested values in errors.
        chains: s(
            r#"{ "eth" : "0x4444444444444444444444444444444444444444" , "btc" : "bc1qdave" }"#,
        ),
        fresh: Some(0),
        resolver: None,
        errors: s(r#"{"z":{"code":500,"detail":"timeout"},"a":[1,"x",null]}"#),
    })
    .ens_name(G, "ghost.eth");
    b.build()
}

// ==================================================================== badges
//
// P holds 177709 (owner stored checksummed) and 200000 (owner lower-case);
// Q holds 178064. Event positions: 178064 -> 10, 177709 -> 20, 200000 -> 30
// (rows written out of position order).
// lists: 10 P (primary), 11 Q (primary), 12 P (not primary), 14 user
// zero address (no user), owner P.
pub const P: &str = "0xc9c3a4337a1bba75d0860a1a81f7b990dc607334";
pub const P_MIXED: &str = "0xC9C3A4337a1bBa75D0860A1A81f7B990dc607334";
pub const Q: &str = "0x00000000000000000000000000000000000000aa";

pub fn badges() -> Tables {
    let mut b = Builder::new();
    b.primary_list(10, P)
        .primary_list(11, Q)
        .list(12, P)
        .list_roles(14, ZERO, P, P);
    b.ens_name(P, "Bob12.eth").ens_name(Q, "Über.eth");
    b.t.badge_events = vec![
        BadgeEventRow {
            event_id: 177709,
            position: 20,
            fancy_id: "devcon-7-2024".into(),
            name: "Devcon 7".into(),
            event_url: "https://devcon.org".into(),
            image_url: "https://assets.example/177709.png".into(),
            country: "".into(),
            city: "".into(),
            description: "Devcon \"7\" attendee\nBangkok".into(),
            year: 2024,
            start_date: "06-Sep-2024".into(),
            end_date: "21-Sep-2024".into(),
            expiry_date: "21-Sep-2025".into(),
        },
        BadgeEventRow {
            event_id: 178064,
            position: 10,
            fancy_id: "efp-beta".into(),
            name: "EFP Beta".into(),
            event_url: "https://efp.app".into(),
            image_url: "https://assets.example/178064.png".into(),
            country: "Thailand".into(),
            city: "Bangkok".into(),
            description: "Early tester".into(),
            year: 2023,
            start_date: "01-Jan-2023".into(),
            end_date: "02-Jan-2023".into(),
            expiry_date: "01-Jan-2024".into(),
        },
        BadgeEventRow {
            event_id: 200000,
            position: 30,
            fancy_id: "x".into(),
            name: "X".into(),
            event_url: "".into(),
            image_url: "".into(),
            country: "".into(),
            city: "".into(),
            description: "".into(),
            year: 2025,
            start_date: "31-Dec-2025".into(),
            end_date: "31-Dec-2025".into(),
            expiry_date: "31-Dec-2026".into(),
        },
    ];
    b.t.badges = vec![
        BadgeRow {
            address: addr(P),
            event_id: 177709,
            token_id: "7189762".into(),
            owner: P_MIXED.into(),
        },
        BadgeRow {
            address: addr(Q),
            event_id: 178064,
            token_id: "1".into(),
            owner: "0x00000000000000000000000000000000000000AA".into(),
        },
        BadgeRow {
            address: addr(P),
            event_id: 200000,
            token_id: "99".into(),
            owner: P.into(),
        },
    ];
    b.build()
}

// ============================================================= notifications
//
// Target T. Actors: U1 (list 21, primary, ens ulysses.eth), U2 (list 22,
// primary, no ens), U3 (list 23, NOT primary), T itself (list 24, primary).
// Window end S = 2024-10-14T00:00:00.000Z (start=1728864000).
//
//  n   seq list op                 at
//  n1  10  21   follow T           S - 720h - 1ms  (only in `all`)
//  n2  11  21   unfollow T         S - 720h        (month lower bound)
//  n3  12  22   follow T           S - 168h        (week lower bound)
//  n4  13  22   tag T "top8"       S - 24h         (day lower bound)
//  n5  14  24   follow T (self)    S - 1h          (hour lower bound)
//  n7  15  21   untag T "dev"      S               (upper bound)
//  n6  16  21   tag T "Dev"        S               (upper bound, higher seq)
//  n8  17  22   follow T           S + 1ms         (after the window)
// Invisible / other: seq 18 list 23 follow T (S - 10ms); seq 19 list 21
// follow O (S - 10ms); seq 20 list 99 (not in lists) follow T (S - 5ms).
pub const T: &str = "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd";
pub const T_UPPER: &str = "0xABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD";
pub const U1: &str = "0x1111111111111111111111111111111111111111";
pub const U2: &str = "0x2222222222222222222222222222222222222222";
pub const U3: &str = "0x3333333333333333333333333333333333333333";
pub const O: &str = "0x5555555555555555555555555555555555555555";

pub const HOUR: i64 = 3_600_000;

pub fn notifications() -> Tables {
    let mut b = Builder::new();
    b.primary_list(21, U1)
        .primary_list(22, U2)
        .list(23, U3)
        .primary_list(24, T);
    b.ens(EnsRow {
        address: addr(U1),
        name: "ulysses.eth".into(),
        avatar: s("https://example.com/u1.png"),
        ..Default::default()
    })
    .ens_name(T, "target.eth");
    b.op(21, 10, 1, T, "", S - 720 * HOUR - 1)
        .op(21, 11, 2, T, "", S - 720 * HOUR)
        .op(22, 12, 1, T, "", S - 168 * HOUR)
        .op(22, 13, 3, T, "top8", S - 24 * HOUR)
        .op(24, 14, 1, T, "", S - HOUR)
        .op(21, 15, 4, T, "dev", S)
        .op(21, 16, 3, T, "Dev", S)
        .op(22, 17, 1, T, "", S + 1)
        .op(23, 18, 1, T, "", S - 10)
        .op(21, 19, 1, O, "", S - 10)
        .op(99, 20, 1, T, "", S - 5);
    b.build()
}

// ================================================================= followers
//
// Target T6 = 0x66.. (list 30, primary, ens Target.eth).
// Followers F1..F5 (lists 31..35 primary) and T6 itself.
// F7 (list 37 primary) has only a tag row on T6 (no record): not a follower.
// F8's list 38 is not primary (F8's primary_lists row names missing 40).
// F1's list 36 is not primary (record + tag "secret" on T6: invisible).
// W (0xaa..) has no primary list (its primary_lists row names list 31,
// F1's); W's own list 39 (not primary) has a record of F1.
// List 41's user is the zero address (owner F1): its record of T6 is
// invisible.
//
// records (updated_at relative to S, ms):
//   30 (T6): T6 +0, F1, F2 [mute], F3 [block], F5 [block, mute]
//   31 (F1): T6 +3123 [top8, apple, Zed], F4, F5, W +7000
//   32 (F2): T6 +5000 [block], F5
//   33 (F3): T6 +1000 [top8, mute], F2
//   34 (F4): T6 +3123, F5
//   35 (F5): T6 +4000 [friend]
//   T6's own record of itself: +2000
// followers counts: T6 6, F5 4 (T6,F1,F2,F4), F2 2 (T6,F3), F1 1, F3 1,
// F4 1 (F1), W 1 (F1).
pub const T6: &str = "0x6666666666666666666666666666666666666666";
pub const F1: &str = "0x1111111111111111111111111111111111111111";
pub const F2: &str = "0x2222222222222222222222222222222222222222";
pub const F3: &str = "0x3333333333333333333333333333333333333333";
pub const F4: &str = "0x4444444444444444444444444444444444444444";
pub const F5: &str = "0x5555555555555555555555555555555555555555";
pub const F7: &str = "0x7777777777777777777777777777777777777777";
pub const F8: &str = "0x8888888888888888888888888888888888888888";
pub const W: &str = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
pub const W_UPPER: &str = "0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

pub fn followers() -> Tables {
    let mut b = Builder::new();
    b.primary_list(30, T6)
        .primary_list(31, F1)
        .primary_list(32, F2)
        .primary_list(33, F3)
        .primary_list(34, F4)
        .primary_list(35, F5)
        .list(36, F1)
        .primary_list(37, F7)
        .list(38, F8)
        .primary(F8, 40)
        .list(39, W)
        .primary(W, 31)
        .list_roles(41, ZERO, F1, F1);
    b.ens_name(T6, "Target.eth");
    // T6's list
    b.record(30, T6, S + 2000)
        .record(30, F1, S + 100)
        .record(30, F2, S + 100)
        .tag(30, F2, "mute", S)
        .record(30, F3, S + 100)
        .tag(30, F3, "block", S)
        .record(30, F5, S + 100)
        .tag(30, F5, "mute", S)
        .tag(30, F5, "block", S);
    // F1
    b.record(31, T6, S + 3123)
        .tag(31, T6, "top8", S)
        .tag(31, T6, "apple", S)
        .tag(31, T6, "Zed", S)
        .record(31, F4, S + 100)
        .record(31, F5, S + 100)
        .record(31, W, S + 7000);
    // F2
    b.record(32, T6, S + 5000)
        .tag(32, T6, "block", S)
        .record(32, F5, S + 100);
    // F3
    b.record(33, T6, S + 1000)
        .tag(33, T6, "top8", S)
        .tag(33, T6, "mute", S)
        .record(33, F2, S + 100);
    // F4
    b.record(34, T6, S + 3123).record(34, F5, S + 100);
    // F5
    b.record(35, T6, S + 4000).tag(35, T6, "friend", S);
    // invisible
    b.record(36, T6, S + 9000)
        .tag(36, T6, "secret", S)
        .tag(37, T6, "friend", S)
        .record(38, T6, S + 9000)
        .record(39, F1, S + 100)
        .record(41, T6, S + 9000);
    b.build()
}

// ====================================================================== bulk
//
// Z = 0xeeee.. is followed by 60 accounts N(i) = [i; 20] for i in 1..=60,
// each with primary list 1000 + i whose only record is Z at S + i seconds,
// and one follow op (seq i) at S + i seconds.
// Leaderboard: Z (60 followers) then N(1).. N(60) (0 followers, address asc).
pub const Z: &str = "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";

pub fn n(i: u8) -> String {
    let mut s = String::from("0x");
    for _ in 0..20 {
        s.push_str(&format!("{i:02x}"));
    }
    s
}

pub fn bulk() -> Tables {
    let mut b = Builder::new();
    for i in 1..=60u8 {
        let who = n(i);
        let list = 1000 + u64::from(i);
        let at = S + i64::from(i) * 1000;
        b.primary_list(list, &who)
            .record(list, Z, at)
            .op(list, u64::from(i), 1, Z, "", at);
    }
    b.build()
}

// ================================================================== accounts
//
// Used by account, stats, ranked and details (endpoint 10) tests.
//
// Accounts: K1 0x10.. (full ens kay.eth), K2 0x20.. (no ens), K3 0x30..
// (three.eth), K4 0x40.. (no ens), K5 0x50.. (five.eth, no primary list:
// its primary_lists row names list 1, K1's -> ignored), K6 0x60.. (six.eth,
// only ever an owner), K7 0x70.. (only ever a manager), K8 0x80..
// (Eight.eth, a target only), K9 0x90.. (target in the zero-user list
// only), K10 0xa0.. (record only in list 999, which is not in lists), ZERO.
//
// lists (token user owner manager):
//   1 K1 K1 K1 (primary)     2 K2 K6 K2 (primary)   3 K3 K3 K7 (primary)
//   4 K4 K4 K4 (primary)     10 K1 K1 K7 (K1's, not primary)
//   20 K5 K5 K5 (not primary; K5 has none)   300 ZERO K6 K7 (no user)
//
// Records in primary lists [visible tags]:
//   1 (K1): K2 [top8], K3 [block], K4 [block], K8 [top8]
//           (+ tag row top8 on K10 without a record: invisible)
//   2 (K2): K1 [top8], K3 [block], K8 [mute, top8]
//   3 (K3): K1 [top8], K2 [mute]
//   4 (K4): K1 [mute], K5 [block]
// Own records of other lists: 10: K2, K5, K6 [block], K7 [mute];
//   20: K1, K3 [block]; 300: K9. List 999 (not in lists): K10.
//
// followers: K1 3 (K2,K3,K4)  K2 2 (K1,K3)  K3 2 (K1,K2)  K4 1 (K1)
//            K5 1 (K4)  K8 2 (K1,K2) -> ranks K1 1, K2/K3/K8 2, K4/K5 5
// following: K1 4  K2 3  K3 2  K4 2 -> ranks K1 1, K2 2, K3/K4 3
// mutuals:   K1 3 {K2,K3,K4}  K2 2 {K1,K3}  K3 2 {K1,K2}  K4 1 {K1}
//            -> ranks K1 1, K2/K3 2, K4 4
// blocks:    K3 2 (by K1,K2)  K4 1 (K1)  K5 1 (K4) -> ranks K3 1, K4/K5 2
// top8:      K1 2 (K2,K3)  K8 2 (K1,K2)  K2 1 (K1) -> ranks K1/K8 1, K2 3
// Leaderboard: K1 K2 K3 K4 K5 K8 (6). K6, K7, K9, K10 are not on it.
//
// Shown counts (records carrying block/mute left out):
//   following (11, 15): K1 2 (K2,K8)  K2 1 (K1)  K3 1 (K1)  K4 0
//   own records (12, 17): list 10: 2 (K2,K5); list 20: 1 (K1)
//   followers without block/mute (12, 7): K1 2 (K2,K3; K4 mutes K1)
//     K2 1 (K1; K3 mutes K2)  K4 0  K5 0 (K4 blocks K5)
//
// /stats: address_count 9 (K1..K9: list 999's K10 is not counted, nor a
// tag row), list_count 7, list_op_count 4 (ops on lists 1, 1, 10, 300;
// not the op on 999), user_count 5 (owners K1, K6, K3, K4, K5).
pub const K1: &str = "0x1010101010101010101010101010101010101010";
pub const K2: &str = "0x2020202020202020202020202020202020202020";
pub const K3: &str = "0x3030303030303030303030303030303030303030";
pub const K4: &str = "0x4040404040404040404040404040404040404040";
pub const K5: &str = "0x5050505050505050505050505050505050505050";
pub const K6: &str = "0x6060606060606060606060606060606060606060";
pub const K7: &str = "0x7070707070707070707070707070707070707070";
pub const K8: &str = "0x8080808080808080808080808080808080808080";
pub const K9: &str = "0x9090909090909090909090909090909090909090";
pub const K10: &str = "0xa0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0";
pub const ZERO: &str = "0x0000000000000000000000000000000000000000";

pub fn accounts() -> Tables {
    let mut b = Builder::new();
    b.primary_list(1, K1)
        .list_roles(2, K2, K6, K2)
        .primary(K2, 2)
        .list_roles(3, K3, K3, K7)
        .primary(K3, 3)
        .primary_list(4, K4)
        .list_roles(10, K1, K1, K7)
        .list(20, K5)
        .primary(K5, 1)
        .list_roles(300, ZERO, K6, K7);
    b.record(1, K2, S)
        .tag(1, K2, "top8", S)
        .record(1, K3, S)
        .tag(1, K3, "block", S)
        .record(1, K4, S)
        .tag(1, K4, "block", S)
        .record(1, K8, S)
        .tag(1, K8, "top8", S)
        .tag(1, K10, "top8", S);
    b.record(2, K1, S)
        .tag(2, K1, "top8", S)
        .record(2, K3, S)
        .tag(2, K3, "block", S)
        .record(2, K8, S)
        .tag(2, K8, "top8", S)
        .tag(2, K8, "mute", S);
    b.record(3, K1, S)
        .tag(3, K1, "top8", S)
        .record(3, K2, S)
        .tag(3, K2, "mute", S);
    b.record(4, K1, S)
        .tag(4, K1, "mute", S)
        .record(4, K5, S)
        .tag(4, K5, "block", S);
    b.record(10, K2, S)
        .record(10, K5, S)
        .record(10, K6, S)
        .tag(10, K6, "block", S)
        .record(10, K7, S)
        .tag(10, K7, "mute", S)
        .record(20, K1, S)
        .record(20, K3, S)
        .tag(20, K3, "block", S)
        .record(300, K9, S)
        .record(999, K10, S);
    b.op(1, 1, 1, K2, "", S)
        .op(1, 2, 3, K2, "top8", S)
        .op(10, 3, 1, K6, "", S)
        .op(300, 4, 1, K9, "", S)
        .op(999, 5, 1, K10, "", S);
    b.ens(EnsRow {
        address: addr(K1),
        name: "kay.eth".into(),
        avatar: s("https://example.com/kay.png"),
        header: s("https://example.com/kay-h.png"),
        display: s("Kay.eth"),
        records: s(r#"{"com.twitter":"kay"}"#),
        chains: None,
        fresh: Some(5),
        resolver: None,
        errors: None,
    })
    .ens(EnsRow {
        address: addr(K3),
        name: "three.eth".into(),
        avatar: s("https://example.com/three.png"),
        ..Default::default()
    })
    .ens_name(K5, "five.eth")
    .ens_name(K6, "six.eth")
    .ens_name(K8, "Eight.eth");
    b.build()
}
