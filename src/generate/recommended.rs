//! The `recommended` table: a curated list the way an operator keeps
//! one. Account 0 is on it (a viewer offered itself), so are the most
//! followed accounts (most viewers follow some of them and not others), a
//! few accounts at random and an address nothing else names; positions
//! come in pairs (ties the address breaks), and one name needs escaping
//! in JSON and XML.

use super::model::{stream_seed, Ctx, STREAM_RECOMMENDED};
use crate::rng::SplitMix64;
use crate::snapshot::{Address, RecommendedRow};

/// Popular accounts on the list.
const POPULAR: u64 = 12;
/// Random accounts on the list.
const RANDOM: usize = 8;
const CLASSES: &[&str] = &["A", "B", "C"];

pub(super) fn gen_recommended(ctx: &Ctx) -> Vec<RecommendedRow> {
    let mut rng = SplitMix64::new(stream_seed(ctx.seed, STREAM_RECOMMENDED, 0));
    let mut picked: Vec<Address> = vec![ctx.addr(0)];
    picked.extend((0..ctx.n.min(POPULAR)).map(|rank| ctx.addr(ctx.popular(rank))));
    picked.extend((0..RANDOM).map(|_| ctx.addr(ctx.random_account(&mut rng))));
    picked.push(ctx.unnamed_address());
    let mut seen = std::collections::HashSet::new();
    picked.retain(|a| seen.insert(*a));
    let last = picked.len() - 1;
    picked
        .into_iter()
        .enumerate()
        .map(|(k, address)| {
            let name = if k == 1 {
                "\"Quoted\" & <b>'s\\ pick.eth".to_owned()
            } else {
                format!("pick{k}.eth")
            };
            let url = |kind: &str| format!("https://euc.li/{name}/{kind}");
            RecommendedRow {
                // After the first, pairs share a position; the address
                // orders them.
                position: k.div_ceil(2) as i64,
                address,
                avatar: rng.chance(0.8).then(|| url("avatar")),
                // The address nothing else names has no header: an
                // export fills a missing one from the name-service
                // profile, which only that address lacks.
                header: (k != last).then(|| url("header")),
                class: rng.chance(0.9).then(|| rng.pick(CLASSES).to_string()),
                created_at: rng
                    .chance(0.9)
                    .then(|| ctx.created_at - (k as i64 + 1) * 3_600_000),
                name,
            }
        })
        .collect()
}
