//! Badges: ten fixed badge events and the badges of ~20% of the accounts
//! (earlier events more popular), with the owner address in the mixed case
//! a badge issuer might report.

use super::model::{stream_seed, Ctx, STREAM_BADGE_TOKENS};
use crate::rng::{mix64, SplitMix64};
use crate::snapshot::{Address, BadgeEventRow, BadgeRow};

/// (event_id, position, fancy_id, name, country, city, description, year,
/// start, end, expiry).
type EventSpec = (
    i64,
    i32,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    i32,
    &'static str,
    &'static str,
    &'static str,
);
#[rustfmt::skip]
const EVENTS: &[EventSpec] = &[
    (177709, 3, "efp-beta-tester-2024", "EFP Beta Tester", "", "", "Thank you for testing the Ethereum Follow Protocol beta!", 2024, "06-Sep-2024", "21-Sep-2024", "21-Sep-2025"),
    (178064, 1, "efp-mainnet-launch-2024", "EFP Mainnet Launch", "", "", "Minted a list on the day EFP launched on mainnet.", 2024, "01-Oct-2024", "01-Oct-2024", "01-Oct-2025"),
    (178065, 7, "efp-devcon-sea-2024", "EFP @ Devcon SEA", "Thailand", "Bangkok", "Met the EFP team at Devcon 7 in Bangkok.", 2024, "12-Nov-2024", "15-Nov-2024", "15-Nov-2025"),
    (175276, 2, "efp-early-follower-2024", "EFP Early Follower", "", "", "One of the first thousand accounts to follow on EFP.", 2024, "15-Aug-2024", "31-Aug-2024", "31-Aug-2025"),
    (179880, 9, "efp-ethdenver-2025", "EFP @ ETHDenver 2025", "United States", "Denver", "Said hi at the EFP booth at ETHDenver.", 2025, "23-Feb-2025", "02-Mar-2025", "02-Mar-2026"),
    (181002, 5, "efp-one-year-2025", "EFP One Year", "", "", "Celebrating one year of the Ethereum Follow Protocol.", 2025, "01-Oct-2025", "07-Oct-2025", "07-Oct-2026"),
    (176543, 10, "efp-ethcc-2025", "EFP @ EthCC[8]", "France", "Cannes", "Attended the EFP meetup at EthCC.", 2025, "30-Jun-2025", "03-Jul-2025", "03-Jul-2026"),
    (182450, 4, "efp-devconnect-2025", "EFP @ Devconnect", "Argentina", "Buenos Aires", "Devconnect ARG follow party.", 2025, "17-Nov-2025", "22-Nov-2025", "22-Nov-2026"),
    (183999, 8, "efp-top8-club-2026", "Top 8 Club", "", "", "Filled your top 8 on EFP.", 2026, "14-Feb-2026", "14-Feb-2026", "14-Feb-2027"),
    (180120, 6, "efp-community-call-2025", "EFP Community Call", "", "Online", "Joined an EFP community call.", 2025, "10-Apr-2025", "10-Apr-2025", "10-Apr-2026"),
];

/// The `badge_events` table: the same ten events whatever the options.
pub(super) fn badge_events() -> Vec<BadgeEventRow> {
    EVENTS
        .iter()
        .map(
            |&(event_id, position, fancy, name, country, city, desc, year, start, end, expiry)| {
                BadgeEventRow {
                    event_id,
                    position,
                    fancy_id: fancy.to_owned(),
                    name: name.to_owned(),
                    event_url: format!("https://efp.app/events/{fancy}"),
                    image_url: format!("https://assets.poap.xyz/{fancy}-logo.png"),
                    country: country.to_owned(),
                    city: city.to_owned(),
                    description: desc.to_owned(),
                    year,
                    start_date: start.to_owned(),
                    end_date: end.to_owned(),
                    expiry_date: expiry.to_owned(),
                }
            },
        )
        .collect()
}

/// Mixed-case (EIP-55-like, hash-driven) form of an address, as a badge
/// issuer might report it.
fn checksum_like(addr: &Address) -> String {
    let lower = crate::snapshot::format_address(addr);
    let mut bits = mix64(u64::from_be_bytes(addr[..8].try_into().expect("8 bytes")) ^ 0xeeee);
    let mut out = String::with_capacity(42);
    for (i, c) in lower.chars().enumerate() {
        if i >= 2 && c.is_ascii_alphabetic() && bits & 1 == 1 {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c);
        }
        if i >= 2 {
            bits = bits.rotate_right(1);
        }
    }
    out
}

/// Appends the badges of account `i` (one to four events) to `out`.
pub(super) fn gen_badges(ctx: &Ctx, rng: &mut SplitMix64, out: &mut Vec<BadgeRow>, i: u64) {
    let address = ctx.addr(i);
    let count = match rng.unit() {
        u if u < 0.5 => 1,
        u if u < 0.8 => 2,
        u if u < 0.95 => 3,
        _ => 4,
    };
    let mut held: Vec<usize> = Vec::with_capacity(count);
    while held.len() < count {
        // Earlier events in EVENTS are more popular.
        let e = (rng.unit() * rng.unit() * EVENTS.len() as f64) as usize;
        if !held.contains(&e) {
            held.push(e);
        }
    }
    held.sort_unstable();
    for e in held {
        let event_id = EVENTS[e].0;
        let token = 100_000
            + mix64(stream_seed(ctx.seed, STREAM_BADGE_TOKENS, i) ^ event_id as u64) % 9_000_000;
        out.push(BadgeRow {
            address,
            event_id,
            token_id: token.to_string(),
            owner: checksum_like(&address),
        });
    }
}
