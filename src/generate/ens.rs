//! `ens` rows: a profile for ~80% of the accounts plus a few addresses
//! that hold no list. Names are unique case-insensitively; records, avatar
//! and header URLs, resolvers and errors vary the way real profiles do,
//! within what the indexer's `ens_metadata` table can hold.

use super::model::Ctx;
use crate::rng::SplitMix64;
use crate::snapshot::EnsRow;

const WORDS: &[&str] = &[
    "vitalik", "brantly", "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
    "ivan", "judy", "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor",
    "walter", "satoshi", "hal", "nick", "punk", "ape", "wizard", "degen", "based", "onchain",
    "gwei", "block", "merkle", "zk", "rollup", "solidity", "vyper", "ether", "moon", "lambo",
    "anon", "fren", "maxi", "builder", "dao", "mint", "wagmi", "frog", "cat", "doge", "owl", "fox",
    "bear", "bull", "whale", "shrimp", "crab", "node", "relay", "oracle", "vault", "quest",
];
const EMOJI_NAMES: &[&str] = &["🔥", "🦄", "💎", "🌈", "👀", "🐸"];
const DESCRIPTIONS: &[&str] = &[
    "building onchain",
    "gm ☀️",
    "Ethereum maximalist",
    "core dev, opinions my own",
    "collector of \"weird\" NFTs",
    "DeFi / L2 / ZK",
    "just here for the memes",
    "Founder @ somewhere",
    "artist 🎨 & musician",
    "she/her • onchain since 2017",
];
const PUBLIC_RESOLVER: &str = "0x231b0ee14048e9dccd1d247744d114a4eb5e8e63";

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// An `ens` row for address index `i`. Names are `<word>` (first accounts),
/// `<word><i>` or `<emoji><i>`, so they are unique case-insensitively: the
/// prefix holds no digits and `i` is unique.
pub(super) fn gen_ens(ctx: &Ctx, rng: &mut SplitMix64, i: u64) -> EnsRow {
    let address = ctx.addr(i);
    let u = rng.unit();
    let mut base = if (i as usize) < WORDS.len() {
        WORDS[i as usize].to_owned()
    } else if u < 0.01 {
        format!("{}{i}", rng.pick(EMOJI_NAMES))
    } else {
        format!("{}{i}", rng.pick(WORDS))
    };
    if rng.chance(0.06) {
        base = capitalize(&base);
    }
    let name = format!("{base}.eth");
    let avatar = match rng.unit() {
        u if u < 0.55 => Some(format!("https://euc.li/{name}")),
        u if u < 0.75 => Some(format!(
            "https://i.imgur.com/{:08x}.png",
            rng.next_u64() as u32
        )),
        _ => None,
    };
    let header = rng
        .chance(0.3)
        .then(|| format!("https://euc.li/{name}/h?v={}", rng.below(10)));
    let display = rng.chance(0.9).then(|| name.clone());

    let records = rng.chance(0.7).then(|| {
        let mut m = serde_json::Map::new();
        if let Some(a) = &avatar {
            m.insert("avatar".into(), a.clone().into());
        }
        if rng.chance(0.6) {
            m.insert("description".into(), (*rng.pick(DESCRIPTIONS)).into());
        }
        if rng.chance(0.5) {
            m.insert("com.twitter".into(), base.to_lowercase().into());
        }
        if rng.chance(0.3) {
            m.insert(
                "url".into(),
                format!("https://{}.xyz", base.to_lowercase()).into(),
            );
        }
        if rng.chance(0.2) {
            m.insert(
                "com.github".into(),
                format!("{}-dev", base.to_lowercase()).into(),
            );
        }
        if let Some(h) = &header {
            m.insert("header".into(), h.clone().into());
        }
        if rng.chance(0.1) {
            m.insert(
                "email".into(),
                format!("{}@example.com", base.to_lowercase()).into(),
            );
        }
        serde_json::Value::Object(m).to_string()
    });
    // The indexer has no header column: an export reads the header from
    // `records->>'header'`, so a header exists only inside the records
    // (the draw above stays, so every later value is unchanged).
    let header = if records.is_some() { header } else { None };
    // The indexer's `chains` column is never filled and an export always
    // writes it as null; the draw is kept so every later value is unchanged.
    let _chains_draw = rng.unit();
    let chains = None;
    let fresh = rng
        .chance(0.95)
        .then(|| ctx.created_at - rng.below(30 * 86_400_000) as i64);
    let resolver = match rng.unit() {
        u if u < 0.85 => Some(PUBLIC_RESOLVER.to_owned()),
        u if u < 0.9 => Some(crate::snapshot::format_address(
            &ctx.addr(ctx.random_account(rng)),
        )),
        _ => None,
    };
    let errors = match rng.unit() {
        u if u < 0.7 => Some("{}".to_owned()),
        u if u < 0.75 => Some("{\"avatar\":\"Failed to resolve avatar\"}".to_owned()),
        _ => None,
    };
    EnsRow {
        address,
        name,
        avatar,
        header,
        display,
        records,
        chains,
        fresh,
        resolver,
        errors,
    }
}
