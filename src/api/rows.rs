//! JSON pieces several endpoints print: an address, a time, the ens
//! object of endpoint 1 and the short one, name/avatar/header, a
//! leaderboard row, a follower entry and its parts. Each appends to the
//! response `String` in the field order of the API reference
//! (docs/openapi.yaml).

use crate::graph::{AccountId, Graph, Profile, Record, FLAG_BLOCK, FLAG_MUTE};
use crate::json::{address_literal, push_key, push_num_str, push_opt_str, push_str};
use crate::snapshot::Address;

/// `"0x…"`, lower-case.
#[inline]
pub fn push_address(out: &mut String, a: &Address) {
    address_literal(a).push_from(out, 0);
}

/// `"2024-10-14T19:45:38.617Z"`.
pub fn push_time(out: &mut String, ms: i64) {
    out.push('"');
    crate::time::write_iso_ms(out, ms);
    out.push('"');
}

/// `"name":…,"avatar":…,"header":…` from a profile (nulls without one).
pub fn push_name_avatar_header(out: &mut String, p: Option<Profile<'_>>) {
    push_name_avatar(out, p);
    out.push(',');
    push_key(out, "header");
    push_opt_str(out, p.and_then(|p| p.header()));
}

/// The ens object of endpoint 1: the `ens` row without its address, the
/// stored JSON objects as stored (`{}` when null), all null without a row.
pub fn push_ens(out: &mut String, p: Option<Profile<'_>>) {
    out.push('{');
    push_name_avatar_header(out, p);
    out.push(',');
    push_key(out, "display");
    push_opt_str(out, p.and_then(|p| p.display()));
    out.push(',');
    push_key(out, "records");
    out.push_str(p.and_then(|p| p.records()).unwrap_or("{}"));
    out.push(',');
    push_key(out, "chains");
    out.push_str(p.and_then(|p| p.chains()).unwrap_or("{}"));
    out.push(',');
    push_key(out, "fresh");
    match p.and_then(|p| p.fresh()) {
        Some(f) => crate::json::push_int(out, f),
        None => out.push_str("null"),
    }
    out.push(',');
    push_key(out, "resolver");
    push_opt_str(out, p.and_then(|p| p.resolver()));
    out.push(',');
    push_key(out, "errors");
    out.push_str(p.and_then(|p| p.errors()).unwrap_or("{}"));
    out.push('}');
}

/// A row of endpoint 4, or with `top8` of endpoint 38 (`top8_rank` after
/// `blocks_rank`, `top8` after `blocks`).
pub fn push_leaderboard_row(out: &mut String, g: &Graph, id: AccountId, top8: bool) {
    let s = g.stats(id);
    let p = g.profile(id);
    out.push('{');
    push_key(out, "address");
    push_address(out, g.address(id));
    out.push(',');
    push_name_avatar_header(out, p);
    let ranks = [
        ("mutuals_rank", s.mutuals_rank),
        ("followers_rank", s.followers_rank),
        ("following_rank", s.following_rank),
        ("blocks_rank", s.blocks_rank),
        ("top8_rank", s.top8_rank),
    ];
    let counts = [
        ("mutuals", s.mutuals),
        ("following", s.following),
        ("followers", s.followers),
        ("blocks", s.blocks),
        ("top8", s.top8),
    ];
    let shown = if top8 { 5 } else { 4 };
    for (key, n) in ranks[..shown].iter().chain(&counts[..shown]) {
        out.push(',');
        push_key(out, key);
        push_num_str(out, u64::from(*n));
    }
    out.push(',');
    push_key(out, "updated_at");
    push_str(out, &g.created_at);
    out.push('}');
}

/// A record's tags, `["block","top8"]` (ascending by bytes, as the set
/// holds them).
pub fn push_tagset(out: &mut String, g: &Graph, set: u32) {
    out.push('[');
    for (j, &tag) in g.tagset(set).iter().enumerate() {
        if j > 0 {
            out.push(',');
        }
        push_str(out, g.tag_text(tag));
    }
    out.push(']');
}

/// A follower entry of endpoints 6 and 7: follower `f`, its `record` of
/// T, and T's record of F (`back`) for the `is_*` flags.
pub fn push_follower(
    out: &mut String,
    g: &Graph,
    f: AccountId,
    record: &Record,
    back: Option<&Record>,
) {
    out.push('{');
    push_follower_head(out, g, f);
    out.push(',');
    push_follower_tags_and_flags(out, g, record, back);
    out.push(',');
    push_key(out, "updated_at");
    push_time(out, record.updated_at);
    out.push('}');
}

/// `"svc_list_nft_token_id":"…","address":"0x…"` of follower `f`.
pub fn push_follower_head(out: &mut String, g: &Graph, f: AccountId) {
    push_key(out, "svc_list_nft_token_id");
    push_num_str(out, g.primary_list(f).unwrap_or(0));
    out.push(',');
    push_key(out, "address");
    push_address(out, g.address(f));
}

/// `"tags":[…],"is_following":…,"is_blocked":…,"is_muted":…`: the tags
/// of F's `record` of T, the flags from T's record of F (`back`); the
/// tail of a follower entry (6, 7, 23, 24).
pub fn push_follower_tags_and_flags(
    out: &mut String,
    g: &Graph,
    record: &Record,
    back: Option<&Record>,
) {
    push_key(out, "tags");
    push_tagset(out, g, record.tagset);
    out.push(',');
    push_follower_flags(out, g, back);
}

/// `"is_following":…,"is_blocked":…,"is_muted":…` from T's record of F.
fn push_follower_flags(out: &mut String, g: &Graph, back: Option<&Record>) {
    // T's record of F: 0x80 = it exists, plus its block/mute flags.
    let back = back.map_or(0, |r| g.tagset_flags(r.tagset) | 0x80);
    let is_following = back & 0x80 != 0 && back & (FLAG_BLOCK | FLAG_MUTE) == 0;
    out.push_str(if is_following {
        "\"is_following\":true,"
    } else {
        "\"is_following\":false,"
    });
    out.push_str(if back & FLAG_BLOCK != 0 {
        "\"is_blocked\":true,"
    } else {
        "\"is_blocked\":false,"
    });
    out.push_str(if back & FLAG_MUTE != 0 {
        "\"is_muted\":true"
    } else {
        "\"is_muted\":false"
    });
}

/// `"name":…,"avatar":…` of the `ens` row (nulls without one).
pub fn push_name_avatar(out: &mut String, p: Option<Profile<'_>>) {
    push_key(out, "name");
    push_opt_str(out, p.map(|p| p.name()));
    out.push(',');
    push_key(out, "avatar");
    push_opt_str(out, p.and_then(|p| p.avatar()));
}

/// The short ens object: `{"name":…,"avatar":…}` (nulls without a row).
pub fn push_short_ens(out: &mut String, p: Option<Profile<'_>>) {
    out.push('{');
    push_name_avatar(out, p);
    out.push('}');
}
