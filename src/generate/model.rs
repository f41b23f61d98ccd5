//! The accounts every table is drawn from, fixed before any row is made:
//! their addresses, their popularity ranking (follow targets are drawn
//! from it), and each account's plan (which lists and `primary_lists` row
//! it has, with token ids assigned in account order). [`Ctx`] holds them,
//! read-only, for the chunks generated in parallel.
//!
//! Every random value comes from a stream named by `(seed, stream, index)`
//! ([`stream_seed`]), so no value depends on the order or thread in which
//! chunks run.

use rayon::prelude::*;

use crate::rng::{keyed, mix64, SplitMix64, GOLDEN};
use crate::snapshot::Address;

/// The generator's independent streams (`stream` of [`stream_seed`]).
pub(super) const STREAM_ADDRESS_KEY: u64 = 0xadd7;
pub(super) const STREAM_PLANS: u64 = 1;
pub(super) const STREAM_RANKING: u64 = 2;
pub(super) const STREAM_NON_USER_ENS: u64 = 3;
pub(super) const STREAM_CHUNKS: u64 = 4;
pub(super) const STREAM_BADGE_TOKENS: u64 = 5;
pub(super) const STREAM_RECOMMENDED: u64 = 6;

/// A seed for stream `stream`, item `index` of the generator seeded `seed`.
pub(super) fn stream_seed(seed: u64, stream: u64, index: u64) -> u64 {
    keyed(seed ^ stream.wrapping_mul(GOLDEN), index)
}

/// Zipf exponent of follow-target popularity.
const ZIPF_S: f64 = 0.99;

/// Token ids of missing lists: far above any real one.
const MISSING_TOKEN_BASE: u64 = 1 << 40;

/// Distinct pseudo-random addresses: bytes 0..8 are a bijection of the index
/// (so distinct indices give distinct addresses), the rest hash noise.
fn make_address(seed: u64, index: u64) -> Address {
    let key = stream_seed(seed, STREAM_ADDRESS_KEY, 0);
    let head = mix64(index ^ key);
    let mut out = [0u8; 20];
    out[..8].copy_from_slice(&head.to_be_bytes());
    out[8..16].copy_from_slice(&mix64(head ^ 0x5bd1_e995).to_be_bytes());
    out[16..].copy_from_slice(&mix64(head ^ 0xc2b2_ae35).to_be_bytes()[..4]);
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RowKind {
    /// No primary_lists row.
    None,
    /// Names the account's own list (valid primary list).
    Own,
    /// Names another account's primary list (ignored by the rule).
    Other,
    /// Names a token id no list has (ignored by the rule).
    Missing,
}

/// Which lists and `primary_lists` row an account has.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    pub own_list: bool,
    pub row: RowKind,
    pub extra: u8,
    /// First token id of this account's lists (own first, then extras).
    pub first_token: u64,
    /// The primary_lists row's token id (when `row != None`).
    pub row_token: u64,
}

fn plan_account(seed: u64, i: u64) -> Plan {
    let mut rng = SplitMix64::new(stream_seed(seed, STREAM_PLANS, i));
    let u = rng.unit();
    let (own_list, row) = match u {
        u if u < 0.895 => (true, RowKind::Own),
        u if u < 0.915 => (true, RowKind::Other),
        u if u < 0.925 => (true, RowKind::None),
        u if u < 0.935 => (true, RowKind::Missing),
        u if u < 0.945 => (false, RowKind::Other),
        u if u < 0.950 => (false, RowKind::Missing),
        _ => (false, RowKind::None),
    };
    let extra = if rng.chance(0.05) {
        1 + u8::from(rng.chance(0.3))
    } else {
        0
    };
    Plan {
        own_list,
        row,
        extra,
        first_token: 0,
        row_token: 0,
    }
}

/// Shared, read-only generation context.
pub(super) struct Ctx {
    pub seed: u64,
    /// Protocol users: accounts `0..n`.
    pub n: u64,
    /// Addresses after the users' that get an `ens` row only.
    pub non_users: u64,
    pub created_at: i64,
    /// Addresses of the users, then of the non-users.
    addrs: Vec<Address>,
    /// Popularity rank -> account index.
    by_rank: Vec<u32>,
    zipf_c: f64,
    pub total_tokens: u64,
    pub plans: Vec<Plan>,
}

impl Ctx {
    /// Addresses, ranking and plans of `n > 0` accounts.
    pub fn new(seed: u64, n: u64, created_at: i64) -> Ctx {
        assert!(n < u64::from(u32::MAX), "at most 2^32-1 accounts");
        // Addresses of the accounts and of a few ens-only non-users after them.
        let non_users = (n / 200).max(3);
        let addrs: Vec<Address> = (0..n + non_users)
            .into_par_iter()
            .map(|i| make_address(seed, i))
            .collect();

        // Popularity ranking: a seeded Fisher-Yates shuffle of the accounts.
        let mut by_rank: Vec<u32> = (0..n as u32).collect();
        let mut rng = SplitMix64::new(stream_seed(seed, STREAM_RANKING, 0));
        for i in (1..by_rank.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            by_rank.swap(i, j);
        }

        // Plans, then token ids in account order (sequential, cheap).
        let mut plans: Vec<Plan> = (0..n)
            .into_par_iter()
            .map(|i| plan_account(seed, i))
            .collect();
        let mut next_token = 1u64;
        let mut last_primary: Option<u64> = None;
        for (i, p) in plans.iter_mut().enumerate() {
            p.first_token = next_token;
            next_token += u64::from(p.own_list) + u64::from(p.extra);
            let missing = MISSING_TOKEN_BASE + i as u64;
            p.row_token = match p.row {
                RowKind::None => 0,
                RowKind::Own => p.first_token,
                RowKind::Other => last_primary.unwrap_or(missing),
                RowKind::Missing => missing,
            };
            if p.row == RowKind::Other && last_primary.is_none() {
                p.row = RowKind::Missing;
            }
            if p.row == RowKind::Own {
                last_primary = Some(p.first_token);
            }
        }

        Ctx {
            seed,
            n,
            non_users,
            created_at,
            addrs,
            by_rank,
            zipf_c: ((n + 1) as f64).powf(1.0 - ZIPF_S) - 1.0,
            total_tokens: next_token - 1,
            plans,
        }
    }

    pub fn addr(&self, i: u64) -> Address {
        self.addrs[i as usize]
    }

    /// A follow target, Zipf-distributed over the popularity ranking.
    pub fn target(&self, rng: &mut SplitMix64) -> u32 {
        let a = 1.0 - ZIPF_S;
        let x = (1.0 + rng.unit() * self.zipf_c).powf(1.0 / a);
        let rank = (x as u64).saturating_sub(1).min(self.n - 1);
        self.by_rank[rank as usize]
    }

    /// The account at popularity rank `rank` (0: the most followed).
    pub fn popular(&self, rank: u64) -> u64 {
        u64::from(self.by_rank[rank as usize])
    }

    /// An address no row of the other tables names (past the users' and
    /// the non-users').
    pub fn unnamed_address(&self) -> Address {
        make_address(self.seed, self.n + self.non_users)
    }

    pub fn random_account(&self, rng: &mut SplitMix64) -> u64 {
        rng.below(self.n)
    }
}
