//! Deterministic synthetic snapshots for tests and benchmarks.
//!
//! [`generate_tables`] builds all eight tables from `(accounts, seed,
//! created_at)` alone: the same options always give identical tables,
//! whatever the number of rayon threads. [`generate`] writes them as a
//! snapshot root (`out/<name>/` + `out/CURRENT`).
//!
//! Shape of the data:
//! - accounts `0..accounts` are the protocol users; each has a distinct
//!   pseudo-random address. About 90% have a valid primary list; the rest
//!   have none, or a `primary_lists` row the primary-list rule ignores
//!   (naming someone else's list or a missing one), or a list that is not
//!   their primary. About 5% also hold extra, invisible lists.
//! - follow targets are drawn from a Zipf-like distribution over a random
//!   ranking of the accounts (a few hubs hold a large share of followers);
//!   out-degrees are Pareto distributed (median ~11, some thousands),
//!   averaging ~20 current records per account.
//! - every list has a time-ordered op history over the ~6 months before
//!   `created_at` (batched in "sessions" that share a timestamp, so ties are
//!   common); its current records and tags are derived by replaying it.
//! - `ens` for ~80% of accounts plus a few non-users, 10 badge events, and
//!   badges for ~20% of accounts.

use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::snapshot::{
    publish, start_snapshot_dir, write_manifest, Address, BadgeEventRow, BadgeRow, EnsRow, ListRow,
    Op, OpRow, PrimaryListRow, RecordRow, TableEntry, TableFileWriter, Tables, TagRow,
    WriteOptions, OP_FOLLOW, OP_TAG, OP_UNFOLLOW, OP_UNTAG, TABLE_NAMES,
};

/// What to generate and where to write it.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    /// Number of protocol users (accounts `0..accounts`).
    pub accounts: u64,
    pub seed: u64,
    /// The snapshot root: `out/<name>/` and `out/CURRENT` are written.
    pub out: PathBuf,
    /// The snapshot's `created_at`, epoch milliseconds.
    pub created_at_ms: i64,
    /// Print a one-line progress bar to stderr.
    pub progress: bool,
}

/// The `created_at` used when none is given.
pub const DEFAULT_CREATED_AT: &str = "2026-11-20T12:00:00.000Z";

/// [`DEFAULT_CREATED_AT`] in epoch milliseconds.
pub fn default_created_at_ms() -> i64 {
    crate::time::parse_iso_ms(DEFAULT_CREATED_AT).expect("valid default created_at")
}

/// The snapshot directory name for these options.
pub fn snapshot_name(opts: &GenerateOptions) -> String {
    format!("gen-{}-{}", opts.accounts, opts.seed)
}

/// Writes a snapshot root: `out/<name>/` (all tables and a manifest with
/// checksums) and `out/CURRENT` naming it. Returns the snapshot directory.
///
/// Streams: each batch of accounts' rows goes to the table files as it is
/// made, and `list_ops` (which needs a global sort for `seq`) is held in a
/// 24-byte form until written, so a 5M-account snapshot fits in memory.
pub fn generate(opts: &GenerateOptions) -> std::io::Result<PathBuf> {
    let name = snapshot_name(opts);
    let dir = opts.out.join(&name);
    std::fs::create_dir_all(&opts.out)?;
    let mut bar = ProgressBar::new(opts.progress);
    let result = write_generated(opts, &dir, &mut bar).and_then(|()| publish(&opts.out, &name));
    bar.finish(if result.is_ok() { "done" } else { "failed" });
    result.map(|()| dir)
}

fn write_generated(
    opts: &GenerateOptions,
    dir: &Path,
    bar: &mut ProgressBar,
) -> std::io::Result<()> {
    start_snapshot_dir(dir)?;
    let row_group_rows = WriteOptions::default().row_group_rows;
    let writers = TABLE_NAMES
        .iter()
        .map(|&name| {
            let path = dir.join(format!("{name}.parquet"));
            Ok((
                name,
                TableFileWriter::create(&path, name, row_group_rows, true)?,
            ))
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    // The eight files are encoded in parallel, chunk after chunk.
    let writers = std::cell::RefCell::new(writers);
    let write = |chunk: Tables| -> std::io::Result<()> {
        writers
            .borrow_mut()
            .par_iter_mut()
            .try_for_each(|(_, writer)| writer.write_rows(&chunk))
    };
    let bar = std::cell::RefCell::new(bar);
    let mut ops_written = 0u64;
    generate_with(
        opts,
        &mut |done, total| bar.borrow_mut().accounts(done, total),
        &mut |rows| write(rows),
        &mut |ops, total| {
            ops_written += ops.len() as u64;
            let phase = format!("writing list_ops ({ops_written} of {total})");
            bar.borrow_mut().phase(&phase);
            write(Tables {
                list_ops: ops,
                ..Tables::default()
            })
        },
    )?;
    let writers = writers.into_inner();
    let mut entries = BTreeMap::new();
    for (name, writer) in writers {
        let written = writer.finish()?;
        let entry = TableEntry {
            file: format!("{name}.parquet"),
            rows: written.rows,
            sha256: written.sha256,
        };
        entries.insert(name.to_owned(), entry);
    }
    write_manifest(dir, opts.created_at_ms, entries)
}

/// Hand-rolled in-place progress line on stderr (`\r`, no crate).
struct ProgressBar {
    enabled: bool,
    last_len: usize,
    last_pct: Option<u64>,
}

impl ProgressBar {
    fn new(enabled: bool) -> Self {
        ProgressBar {
            enabled,
            last_len: 0,
            last_pct: None,
        }
    }

    fn draw(&mut self, line: &str) {
        if !self.enabled {
            return;
        }
        let len = line.chars().count();
        let pad = self.last_len.saturating_sub(len);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}{:pad$}", "");
        let _ = err.flush();
        self.last_len = len;
    }

    fn accounts(&mut self, done: u64, total: u64) {
        let pct = (done * 100).checked_div(total).unwrap_or(100);
        if self.last_pct == Some(pct) {
            return;
        }
        self.last_pct = Some(pct);
        const WIDTH: usize = 30;
        let filled = (pct as usize * WIDTH) / 100;
        let line = format!(
            "generating [{}{}] {pct:3}% {done}/{total} accounts",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled)
        );
        self.draw(&line);
    }

    fn phase(&mut self, what: &str) {
        self.draw(what);
    }

    fn finish(&mut self, what: &str) {
        if self.enabled {
            self.draw(what);
            eprintln!();
        }
    }
}

// ---------------------------------------------------------------------------
// Randomness: SplitMix64, seeded per stream from (seed, stream, index).

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 finaliser: a bijection on u64 with good avalanche.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A seed for stream `stream`, item `index` of the generator seeded `seed`.
fn stream_seed(seed: u64, stream: u64, index: u64) -> u64 {
    mix64(mix64(seed ^ stream.wrapping_mul(GOLDEN)).wrapping_add(index.wrapping_mul(GOLDEN)))
}

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix64(self.0)
    }

    /// Uniform in `0..n` (n > 0), Lemire's multiply-high (bias < 2^-64 * n).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// A cheap hasher for the per-list `HashSet<u32>` of targets (membership
/// only: sets are never iterated, so output does not depend on it).
#[derive(Default)]
struct U32Hasher(u64);

impl Hasher for U32Hasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(GOLDEN);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = mix64(u64::from(n));
    }
}

type TargetSet = HashSet<u32, BuildHasherDefault<U32Hasher>>;

// ---------------------------------------------------------------------------
// Addresses.

/// Distinct pseudo-random addresses: bytes 0..8 are a bijection of the index
/// (so distinct indices give distinct addresses), the rest hash noise.
fn make_address(seed: u64, index: u64) -> Address {
    let key = stream_seed(seed, 0xadd7, 0);
    let head = mix64(index ^ key);
    let mut out = [0u8; 20];
    out[..8].copy_from_slice(&head.to_be_bytes());
    out[8..16].copy_from_slice(&mix64(head ^ 0x5bd1_e995).to_be_bytes());
    out[16..].copy_from_slice(&mix64(head ^ 0xc2b2_ae35).to_be_bytes()[..4]);
    out
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

// ---------------------------------------------------------------------------
// Static vocabulary.

/// Tag vocabulary; index 0 is "no tag". Ops refer to tags by index.
const TAGS: &[&str] = &[
    "", "top8", "block", "mute", "friend", "dev", "art", "music", "defi", "nft", "irl", "family",
    "work", "ens", "gm", "builder", "Dev", "Friend", "OG", "🔥", "💎", "🦄", "❤️", "🌈",
];
const TAG_TOP8: u16 = 1;
const TAG_BLOCK: u16 = 2;
const TAG_MUTE: u16 = 3;
const TAG_CUSTOM_FIRST: u16 = 4;

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

fn badge_events() -> Vec<BadgeEventRow> {
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

// ---------------------------------------------------------------------------
// Plans: which lists and primary_lists rows each account has.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowKind {
    /// No primary_lists row.
    None,
    /// Names the account's own list (valid primary list).
    Own,
    /// Names another account's primary list (ignored by the rule).
    Other,
    /// Names a token id no list has (ignored by the rule).
    Missing,
}

#[derive(Clone, Copy, Debug)]
struct Plan {
    own_list: bool,
    row: RowKind,
    extra: u8,
    /// First token id of this account's lists (own first, then extras).
    first_token: u64,
    /// The primary_lists row's token id (when `row != None`).
    row_token: u64,
}

fn plan_account(seed: u64, i: u64) -> Plan {
    let mut rng = Rng::new(stream_seed(seed, 1, i));
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

/// Token ids of missing lists: far above any real one.
const MISSING_TOKEN_BASE: u64 = 1 << 40;

// ---------------------------------------------------------------------------
// Shared, read-only generation context.

const CHUNK: u64 = 2048;
const CHUNKS_PER_BATCH: u64 = 32;
const WINDOW_MS: i64 = 183 * 86_400_000;
/// Zipf exponent of follow-target popularity.
const ZIPF_S: f64 = 0.99;
/// Pareto out-degree of primary lists.
const DEGREE_ALPHA: f64 = 1.4;
const DEGREE_XM: f64 = 7.0;
const DEGREE_CAP: u64 = 10_000;

struct Ctx {
    seed: u64,
    n: u64,
    created_at: i64,
    addrs: Vec<Address>,
    /// Popularity rank -> account index.
    by_rank: Vec<u32>,
    zipf_c: f64,
    total_tokens: u64,
    plans: Vec<Plan>,
}

impl Ctx {
    fn addr(&self, i: u64) -> Address {
        self.addrs[i as usize]
    }

    /// A follow target, Zipf-distributed over the popularity ranking.
    fn target(&self, rng: &mut Rng) -> u32 {
        let a = 1.0 - ZIPF_S;
        let x = (1.0 + rng.unit() * self.zipf_c).powf(1.0 / a);
        let rank = (x as u64).saturating_sub(1).min(self.n - 1);
        self.by_rank[rank as usize]
    }

    fn random_account(&self, rng: &mut Rng) -> u64 {
        rng.below(self.n)
    }

    fn degree_cap(&self) -> u64 {
        DEGREE_CAP.min(self.n / 2).max(1)
    }
}

/// Rows produced by one chunk of accounts: every table but `list_ops`
/// in `rows`, the ops apart until their `seq` is known.
#[derive(Default)]
struct ChunkOut {
    rows: Tables,
    list_ops: Vec<GenOp>,
}

/// A generated op before its `seq` is known: 24 bytes instead of a row
/// with heap-allocated bytes (a 5M-account snapshot has ~130M).
#[derive(Clone, Copy)]
struct GenOp {
    updated_at: i64,
    token_id: u64,
    /// The target account.
    target: u32,
    tag: u16,
    opcode: u8,
}

/// Moves every row of `from` to the end of `to`.
fn append_tables(to: &mut Tables, from: &mut Tables) {
    to.lists.append(&mut from.lists);
    to.primary_lists.append(&mut from.primary_lists);
    to.list_records.append(&mut from.list_records);
    to.list_record_tags.append(&mut from.list_record_tags);
    to.list_ops.append(&mut from.list_ops);
    to.ens.append(&mut from.ens);
    to.badge_events.append(&mut from.badge_events);
    to.badges.append(&mut from.badges);
}

/// Generates the tables deterministically (same options -> identical
/// tables, whatever the thread count). `progress(done, total)` is called
/// with the number of accounts done.
pub fn generate_tables(opts: &GenerateOptions, progress: &mut dyn FnMut(u64, u64)) -> Tables {
    let mut tables = Tables::default();
    let mut ops = Vec::new();
    generate_with(
        opts,
        progress,
        &mut |mut chunk| {
            append_tables(&mut tables, &mut chunk);
            Ok(())
        },
        &mut |mut batch, _| {
            ops.append(&mut batch);
            Ok(())
        },
    )
    .expect("the sinks never fail");
    tables.list_ops = ops;
    tables
}

/// The tables of [`generate_tables`] in pieces, in row order: `rows`
/// gets every table but `list_ops` a batch of accounts at a time, then
/// `ops(batch, total)` gets `list_ops` in `seq` order, in batches.
fn generate_with(
    opts: &GenerateOptions,
    progress: &mut dyn FnMut(u64, u64),
    rows: &mut dyn FnMut(Tables) -> std::io::Result<()>,
    ops: &mut dyn FnMut(Vec<OpRow>, u64) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let n = opts.accounts;
    let seed = opts.seed;
    rows(Tables {
        badge_events: badge_events(),
        ..Tables::default()
    })?;
    progress(0, n);
    if n == 0 {
        return Ok(());
    }
    assert!(n < u64::from(u32::MAX), "at most 2^32-1 accounts");

    // Addresses of the accounts and of a few ens-only non-users after them.
    let extra_ens = (n / 200).max(3);
    let addrs: Vec<Address> = (0..n + extra_ens)
        .into_par_iter()
        .map(|i| make_address(seed, i))
        .collect();

    // Popularity ranking: a seeded Fisher-Yates shuffle of the accounts.
    let mut by_rank: Vec<u32> = (0..n as u32).collect();
    let mut rng = Rng::new(stream_seed(seed, 2, 0));
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

    let ctx = Ctx {
        seed,
        n,
        created_at: opts.created_at_ms,
        addrs,
        by_rank,
        zipf_c: ((n + 1) as f64).powf(1.0 - ZIPF_S) - 1.0,
        total_tokens: next_token - 1,
        plans,
    };

    // Heavy phase: chunks of accounts in parallel, batches in order.
    let chunks = n.div_ceil(CHUNK);
    let mut all_ops: Vec<GenOp> = Vec::new();
    let mut batch_start = 0;
    while batch_start < chunks {
        let batch_end = (batch_start + CHUNKS_PER_BATCH).min(chunks);
        let outs: Vec<ChunkOut> = (batch_start..batch_end)
            .into_par_iter()
            .map(|c| gen_chunk(&ctx, c))
            .collect();
        let mut batch = Tables::default();
        for mut out in outs {
            append_tables(&mut batch, &mut out.rows);
            all_ops.append(&mut out.list_ops);
        }
        rows(batch)?;
        batch_start = batch_end;
        progress((batch_end * CHUNK).min(n), n);
    }

    // ens rows for a few addresses that are not list users.
    let mut rng = Rng::new(stream_seed(seed, 3, 0));
    rows(Tables {
        ens: (n..n + extra_ens)
            .map(|i| gen_ens(&ctx, &mut rng, i))
            .collect(),
        ..Tables::default()
    })?;

    // seq: globally unique, increasing in updated_at order. The sort is
    // stable and each list's ops are contiguous and in replay order, so this
    // is the order (updated_at, token_id, index within the list).
    all_ops.par_sort_by_key(|o| (o.updated_at, o.token_id));
    let total = all_ops.len() as u64;
    let mut seq = 0u64;
    for batch in all_ops.chunks(OPS_BATCH) {
        let rows: Vec<OpRow> = batch
            .iter()
            .map(|o| {
                seq += 1;
                OpRow {
                    token_id: o.token_id,
                    seq,
                    op: Op {
                        opcode: o.opcode,
                        target: ctx.addr(u64::from(o.target)),
                        tag: TAGS[usize::from(o.tag)].to_owned(),
                    },
                    updated_at: o.updated_at,
                }
            })
            .collect();
        ops(rows, total)?;
    }
    Ok(())
}

/// `list_ops` rows per batch handed on (one row group).
const OPS_BATCH: usize = 1 << 20;

fn gen_chunk(ctx: &Ctx, chunk: u64) -> ChunkOut {
    let mut rng = Rng::new(stream_seed(ctx.seed, 4, chunk));
    let mut out = ChunkOut::default();
    let mut scratch = ListScratch::default();
    let start = chunk * CHUNK;
    let end = (start + CHUNK).min(ctx.n);
    for i in start..end {
        let plan = ctx.plans[i as usize];
        let addr = ctx.addr(i);
        if plan.row != RowKind::None {
            out.rows.primary_lists.push(PrimaryListRow {
                address: addr,
                token_id: plan.row_token,
            });
        }
        let mut token = plan.first_token;
        if plan.own_list {
            let kind = if plan.row == RowKind::Own {
                ListKind::Primary
            } else {
                ListKind::Minor
            };
            gen_list(ctx, &mut rng, &mut scratch, &mut out, token, i, kind);
            token += 1;
        }
        for _ in 0..plan.extra {
            let user = if rng.chance(0.8) {
                i
            } else {
                ctx.random_account(&mut rng)
            };
            gen_list(
                ctx,
                &mut rng,
                &mut scratch,
                &mut out,
                token,
                user,
                ListKind::Minor,
            );
            token += 1;
        }
        if rng.chance(0.8) {
            out.rows.ens.push(gen_ens(ctx, &mut rng, i));
        }
        if rng.chance(0.2) {
            gen_badges(ctx, &mut rng, &mut out, i);
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ListKind {
    /// Its user's primary list: heavy-tailed out-degree, tags.
    Primary,
    /// Not anyone's primary list: a few records.
    Minor,
}

/// One op of a list before sorting: time, story (target) and what.
#[derive(Clone, Copy)]
struct Ev {
    time: i64,
    story: u32,
    opcode: u8,
    tag: u16,
}

/// Per-list buffers reused across lists of a chunk.
#[derive(Default)]
struct ListScratch {
    seen: TargetSet,
    /// Story -> target account index.
    targets: Vec<u32>,
    sessions: Vec<i64>,
    evs: Vec<Ev>,
    /// Story -> (followed now, time of last follow).
    state: Vec<(bool, i64)>,
}

fn gen_list(
    ctx: &Ctx,
    rng: &mut Rng,
    s: &mut ListScratch,
    out: &mut ChunkOut,
    token: u64,
    user: u64,
    kind: ListKind,
) {
    let user_addr = ctx.addr(user);
    let owner = if rng.chance(0.93) {
        user_addr
    } else {
        ctx.addr(ctx.random_account(rng))
    };
    let manager = if rng.chance(0.95) {
        owner
    } else {
        ctx.addr(ctx.random_account(rng))
    };
    out.rows.lists.push(ListRow {
        token_id: token,
        user: user_addr,
        owner,
        manager,
    });

    // How many targets end up followed, and how many are followed then
    // dropped for good.
    let cap = ctx.degree_cap();
    let degree = match kind {
        ListKind::Primary if rng.chance(0.05) => 0,
        ListKind::Primary => {
            let u = 1.0 - rng.unit();
            ((DEGREE_XM * u.powf(-1.0 / DEGREE_ALPHA)) as u64).min(cap)
        }
        ListKind::Minor => rng.below(16).min(cap),
    };
    let dropped = ((degree as f64 * 0.06) as u64 + u64::from(rng.chance(0.3)))
        .min(ctx.n.saturating_sub(degree + 1) / 2);

    s.seen.clear();
    s.targets.clear();
    if kind == ListKind::Primary && degree > 0 && rng.chance(0.02) {
        s.seen.insert(user as u32);
        s.targets.push(user as u32);
    }
    while (s.targets.len() as u64) < degree + dropped {
        let t = ctx.target(rng);
        if s.seen.insert(t) {
            s.targets.push(t);
        }
    }
    let finals = degree as usize;

    // Sessions: batches of ops sharing one timestamp. Lists are minted in
    // token order over the first ~90% of the window.
    let end = ctx.created_at - 1;
    let window_start = ctx.created_at - WINDOW_MS;
    let frac = token as f64 / (ctx.total_tokens + 1) as f64;
    let start = (window_start
        + (frac * WINDOW_MS as f64 * 0.85) as i64
        + rng.below((WINDOW_MS / 20) as u64) as i64)
        .min(end);
    let k = 1 + (s.targets.len() as u64 / 6).min(300) + rng.below(3);
    s.sessions.clear();
    s.sessions.push(start);
    for _ in 1..k {
        s.sessions
            .push(start + rng.below((end - start + 1) as u64) as i64);
    }
    s.sessions.sort_unstable();
    let k = k as usize;
    let sessions = &s.sessions;
    let pick_from = |rng: &mut Rng, lo: usize| lo + rng.below((k - lo) as u64) as usize;

    // Stories, one per target, each internally consistent and time-ordered.
    s.evs.clear();
    let mut last_follow_session: Vec<usize> = Vec::with_capacity(finals);
    for story in 0..s.targets.len() {
        let st = story as u32;
        let ev = |session: usize, opcode: u8, tag: u16| Ev {
            time: sessions[session],
            story: st,
            opcode,
            tag,
        };
        if story < finals {
            let first = if rng.chance(0.45) {
                0
            } else {
                pick_from(rng, 0)
            };
            if rng.chance(0.06) {
                // Followed, un-followed, followed again.
                let b = pick_from(rng, first);
                let c = pick_from(rng, b);
                s.evs.push(ev(first, OP_FOLLOW, 0));
                s.evs.push(ev(b, OP_UNFOLLOW, 0));
                s.evs.push(ev(c, OP_FOLLOW, 0));
                last_follow_session.push(c);
            } else {
                s.evs.push(ev(first, OP_FOLLOW, 0));
                last_follow_session.push(first);
            }
        } else {
            // Followed for a while, then dropped; rarely tagged meanwhile
            // (that tag row stays, invisible, without its record).
            let a = pick_from(rng, 0);
            s.evs.push(ev(a, OP_FOLLOW, 0));
            let mut b = a;
            if rng.chance(0.05) {
                b = pick_from(rng, a);
                let tag = custom_tag(rng);
                s.evs.push(ev(b, OP_TAG, tag));
            }
            let c = pick_from(rng, b);
            s.evs.push(ev(c, OP_UNFOLLOW, 0));
        }
    }

    // Tags on currently followed targets, after their last follow.
    if kind == ListKind::Primary && finals > 0 {
        let mut tagged: Vec<(usize, u16)> = Vec::new();
        let mut choose = |rng: &mut Rng, count: usize, tag: fn(&mut Rng) -> u16| {
            let count = count.min(finals);
            let mut chosen: Vec<usize> = Vec::with_capacity(count);
            while chosen.len() < count {
                let story = rng.below(finals as u64) as usize;
                if !chosen.contains(&story) {
                    chosen.push(story);
                }
            }
            for story in chosen {
                tagged.push((story, tag(rng)));
            }
        };
        if rng.chance(0.3) {
            let count = 1 + rng.below(8) as usize;
            choose(rng, count, |_| TAG_TOP8);
        }
        if rng.chance(0.04) {
            let count = 1 + rng.below(3) as usize;
            choose(rng, count, |_| TAG_BLOCK);
        }
        if rng.chance(0.04) {
            let count = 1 + rng.below(3) as usize;
            choose(rng, count, |_| TAG_MUTE);
        }
        if rng.chance(0.12) {
            let count = 1 + rng.below(6) as usize;
            choose(rng, count, custom_tag);
        }
        let mut pairs = Vec::with_capacity(tagged.len());
        for (story, tag) in tagged {
            // The same custom tag may be drawn twice for a story: one story
            // of tag ops per (story, tag).
            if !pairs.contains(&(story, tag)) {
                pairs.push((story, tag));
            }
        }
        for (story, tag) in pairs {
            let st = story as u32;
            let ev = |session: usize, opcode: u8| Ev {
                time: sessions[session],
                story: st,
                opcode,
                tag,
            };
            let t = pick_from(rng, last_follow_session[story]);
            s.evs.push(ev(t, OP_TAG));
            if rng.chance(0.12) {
                let u = pick_from(rng, t);
                s.evs.push(ev(u, OP_UNTAG));
                if rng.chance(0.3) {
                    s.evs.push(ev(pick_from(rng, u), OP_TAG));
                }
            }
        }
    }

    // Time order; stable, so ops of one story at the same time keep their
    // story order.
    s.evs.sort_by_key(|e| e.time);

    // Replay: ops rows, then current records and tags.
    s.state.clear();
    s.state.resize(s.targets.len(), (false, 0));
    let mut tags: BTreeMap<(u32, u16), (bool, i64)> = BTreeMap::new();
    out.list_ops.reserve(s.evs.len());
    for e in &s.evs {
        let st = &mut s.state[e.story as usize];
        match e.opcode {
            OP_FOLLOW => {
                debug_assert!(!st.0, "follow of a followed target");
                *st = (true, e.time);
            }
            OP_UNFOLLOW => {
                debug_assert!(st.0, "un-follow of a target not followed");
                st.0 = false;
            }
            _ => {
                debug_assert!(st.0, "tag op on a target not followed");
                tags.insert((e.story, e.tag), (e.opcode == OP_TAG, e.time));
            }
        }
        out.list_ops.push(GenOp {
            updated_at: e.time,
            token_id: token,
            target: s.targets[e.story as usize],
            tag: e.tag,
            opcode: e.opcode,
        });
    }
    for (story, &(followed, time)) in s.state.iter().enumerate() {
        if followed {
            out.rows.list_records.push(RecordRow {
                token_id: token,
                address: ctx.addr(u64::from(s.targets[story])),
                updated_at: time,
            });
        }
    }
    for (&(story, tag), &(present, time)) in &tags {
        if present {
            out.rows.list_record_tags.push(TagRow {
                token_id: token,
                address: ctx.addr(u64::from(s.targets[story as usize])),
                tag: TAGS[usize::from(tag)].to_owned(),
                updated_at: time,
            });
        }
    }
}

fn custom_tag(rng: &mut Rng) -> u16 {
    TAG_CUSTOM_FIRST + rng.below((TAGS.len() - usize::from(TAG_CUSTOM_FIRST)) as u64) as u16
}

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
fn gen_ens(ctx: &Ctx, rng: &mut Rng, i: u64) -> EnsRow {
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

fn gen_badges(ctx: &Ctx, rng: &mut Rng, out: &mut ChunkOut, i: u64) {
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
        let token = 100_000 + mix64(stream_seed(ctx.seed, 5, i) ^ event_id as u64) % 9_000_000;
        out.rows.badges.push(BadgeRow {
            address,
            event_id,
            token_id: token.to_string(),
            owner: checksum_like(&address),
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;
    use crate::snapshot::tables::assert_tables_eq;

    fn opts(accounts: u64, seed: u64) -> GenerateOptions {
        GenerateOptions {
            accounts,
            seed,
            out: PathBuf::from("unused"),
            created_at_ms: default_created_at_ms(),
            progress: false,
        }
    }

    fn gen(accounts: u64, seed: u64) -> Tables {
        generate_tables(&opts(accounts, seed), &mut |_, _| {})
    }

    #[test]
    fn deterministic_and_thread_count_independent() {
        let a = gen(3000, 7);
        let b = gen(3000, 7);
        assert_tables_eq(&a, &b);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let c = pool.install(|| gen(3000, 7));
        assert_tables_eq(&a, &c);
        let d = gen(3000, 8);
        assert_ne!(a.list_records, d.list_records);
        assert_ne!(a.lists[0].user, d.lists[0].user);
    }

    #[test]
    fn progress_reaches_total() {
        let mut calls = Vec::new();
        generate_tables(&opts(5000, 1), &mut |d, t| calls.push((d, t)));
        assert_eq!(calls.first(), Some(&(0, 5000)));
        assert_eq!(calls.last(), Some(&(5000, 5000)));
        assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn empty_and_tiny() {
        let t = gen(0, 1);
        assert!(t.lists.is_empty() && t.list_ops.is_empty());
        assert_eq!(t.badge_events.len(), 10);
        for n in 1..6 {
            let t = gen(n, 3);
            assert!(t.lists.len() as u64 <= 3 * n);
        }
    }

    /// Replaying every list's ops in seq order gives exactly the current
    /// records (with updated_at = last follow) and tags.
    #[test]
    fn ops_replay_to_current_state() {
        let t = gen(4000, 11);
        let created = default_created_at_ms();
        // seq strictly increasing with (updated_at, seq) order as stored.
        for (i, w) in t.list_ops.windows(2).enumerate() {
            assert!(w[0].seq < w[1].seq, "seq at {i}");
            assert!(w[0].updated_at <= w[1].updated_at, "updated_at at {i}");
        }
        assert_eq!(t.list_ops.first().unwrap().seq, 1);
        let ties = t
            .list_ops
            .windows(2)
            .filter(|w| w[0].updated_at == w[1].updated_at)
            .count();
        assert!(ties > 100, "{ties} ties");
        assert!(t
            .list_ops
            .iter()
            .all(|o| o.updated_at < created && o.updated_at >= created - WINDOW_MS));

        let mut records: HashMap<(u64, Address), i64> = HashMap::new();
        let mut tags: HashMap<(u64, Address, String), i64> = HashMap::new();
        for o in &t.list_ops {
            let bytes = o.op.encode();
            assert_eq!(Op::decode(&bytes).unwrap(), o.op);
            let key = (o.token_id, o.op.target);
            match o.op.opcode {
                OP_FOLLOW => assert!(records.insert(key, o.updated_at).is_none()),
                OP_UNFOLLOW => assert!(records.remove(&key).is_some()),
                OP_TAG => {
                    assert!(records.contains_key(&key), "tag on unfollowed");
                    tags.insert((o.token_id, o.op.target, o.op.tag.clone()), o.updated_at);
                }
                OP_UNTAG => {
                    assert!(records.contains_key(&key), "untag on unfollowed");
                    assert!(tags
                        .remove(&(o.token_id, o.op.target, o.op.tag.clone()))
                        .is_some());
                }
                other => panic!("opcode {other}"),
            }
        }
        let stored: HashMap<(u64, Address), i64> = t
            .list_records
            .iter()
            .map(|r| ((r.token_id, r.address), r.updated_at))
            .collect();
        assert_eq!(stored.len(), t.list_records.len(), "duplicate records");
        assert_eq!(stored, records);
        let stored_tags: HashMap<(u64, Address, String), i64> = t
            .list_record_tags
            .iter()
            .map(|r| ((r.token_id, r.address, r.tag.clone()), r.updated_at))
            .collect();
        assert_eq!(
            stored_tags.len(),
            t.list_record_tags.len(),
            "duplicate tags"
        );
        assert_eq!(stored_tags, tags);

        // Primary lists specifically, and a few orphan tag rows exist.
        let primary: HashSet<u64> = primary_tokens(&t);
        assert!(
            t.list_records
                .iter()
                .filter(|r| primary.contains(&r.token_id))
                .count()
                > 0
        );
        let orphan = t
            .list_record_tags
            .iter()
            .filter(|g| !records.contains_key(&(g.token_id, g.address)))
            .count();
        assert!(orphan > 0, "no invisible tag rows");
        // top8 at most 8 per list; special and varied tags present.
        let mut top8: HashMap<u64, usize> = HashMap::new();
        for g in &t.list_record_tags {
            if g.tag == "top8" {
                *top8.entry(g.token_id).or_default() += 1;
            }
        }
        assert!(top8.values().all(|&c| c <= 8));
        for tag in ["top8", "block", "mute"] {
            assert!(t.list_record_tags.iter().any(|g| g.tag == tag), "{tag}");
        }
        assert!(t
            .list_record_tags
            .iter()
            .any(|g| g.tag.chars().any(|c| c.is_uppercase())));
        assert!(t.list_record_tags.iter().any(|g| !g.tag.is_ascii()));
        assert!(t.list_ops.iter().any(|o| o.op.opcode == OP_UNTAG));
        assert!(t.list_ops.iter().any(|o| o.op.opcode == OP_UNFOLLOW));
        // Self-follows occur.
        let users: HashMap<u64, Address> = t.lists.iter().map(|l| (l.token_id, l.user)).collect();
        assert!(t
            .list_records
            .iter()
            .any(|r| users[&r.token_id] == r.address));
    }

    fn primary_tokens(t: &Tables) -> HashSet<u64> {
        let users: HashMap<u64, Address> = t.lists.iter().map(|l| (l.token_id, l.user)).collect();
        t.primary_lists
            .iter()
            .filter(|p| users.get(&p.token_id) == Some(&p.address))
            .map(|p| p.token_id)
            .collect()
    }

    fn distinct<T: std::hash::Hash + Eq>(v: Vec<T>) -> bool {
        let len = v.len();
        let set: HashSet<T> = v.into_iter().collect();
        set.len() == len
    }

    #[test]
    fn uniqueness_and_reference_rules() {
        let n = 4000;
        let t = gen(n, 5);
        assert!(distinct(
            t.lists.iter().map(|l| l.token_id).collect::<Vec<_>>()
        ));
        assert!(t.lists.iter().all(|l| l.token_id > 0));
        assert!(distinct(
            t.primary_lists
                .iter()
                .map(|p| p.address)
                .collect::<Vec<_>>()
        ));
        assert!(distinct(
            t.list_ops.iter().map(|o| o.seq).collect::<Vec<_>>()
        ));
        assert!(distinct(
            t.ens.iter().map(|e| e.address).collect::<Vec<_>>()
        ));
        assert!(distinct(
            t.ens
                .iter()
                .map(|e| e.name.to_lowercase())
                .collect::<Vec<_>>()
        ));
        assert!(distinct(
            t.badge_events
                .iter()
                .map(|e| e.event_id)
                .collect::<Vec<_>>()
        ));
        assert!(distinct(
            t.badge_events
                .iter()
                .map(|e| e.position)
                .collect::<Vec<_>>()
        ));
        assert!(distinct(
            t.badges
                .iter()
                .map(|b| (b.address, b.event_id))
                .collect::<Vec<_>>()
        ));
        let events: HashSet<i64> = t.badge_events.iter().map(|e| e.event_id).collect();
        assert!(t.badges.iter().all(|b| events.contains(&b.event_id)));
        assert!(t.badges.iter().all(|b| b.token_id.parse::<u64>().is_ok()
            && b.owner.to_lowercase() == crate::snapshot::format_address(&b.address)));
        assert!(t
            .badges
            .iter()
            .any(|b| b.owner.chars().any(|c| c.is_ascii_uppercase())));
        let by_pos: Vec<i64> = {
            let mut e = t.badge_events.clone();
            e.sort_by_key(|e| e.position);
            e.iter().map(|e| e.event_id).collect()
        };
        assert!(
            by_pos.windows(2).any(|w| w[0] > w[1]),
            "positions follow event_id order"
        );
        let holders: HashSet<Address> = t.badges.iter().map(|b| b.address).collect();
        let share = holders.len() as f64 / n as f64;
        assert!((0.15..0.25).contains(&share), "{share}");

        // Addresses: distinct accounts; tag/ops text sane.
        let users: HashSet<Address> = t.lists.iter().map(|l| l.user).collect();
        assert!(users.len() as f64 > 0.9 * n as f64);
        assert!(t
            .list_record_tags
            .iter()
            .all(|g| !g.tag.is_empty() && g.tag.len() <= 255));

        // JSON columns are JSON objects; records keep a non-alphabetical order.
        for e in &t.ens {
            for col in [&e.records, &e.chains, &e.errors].into_iter().flatten() {
                let v: serde_json::Value = serde_json::from_str(col).unwrap();
                assert!(v.is_object(), "{col}");
                assert_eq!(&v.to_string(), col, "not compact or order changed");
            }
        }
        // Keys not in alphabetical order somewhere ("description" before
        // "com.twitter").
        assert!(t.ens.iter().any(|e| e.records.as_deref().is_some_and(|r| {
            match (r.find("\"description\""), r.find("\"com.twitter\"")) {
                (Some(d), Some(c)) => d < c,
                _ => false,
            }
        })));
        assert!(t
            .ens
            .iter()
            .any(|e| e.name.chars().any(|c| c.is_ascii_uppercase())));
        assert!(
            t.ens.iter().any(|e| e.avatar.is_none()) && t.ens.iter().any(|e| e.records.is_none())
        );
        let ens_share =
            t.ens.iter().filter(|e| users.contains(&e.address)).count() as f64 / n as f64;
        assert!((0.7..0.9).contains(&ens_share), "{ens_share}");
        assert!(t.ens.iter().any(|e| !users.contains(&e.address)));

        // Primary-list rule is exercised both ways.
        let primary = primary_tokens(&t);
        let share = primary.len() as f64 / n as f64;
        assert!((0.85..0.95).contains(&share), "{share}");
        let ignored = t.primary_lists.len() - primary.len();
        assert!(ignored > 10, "{ignored}");
        let list_tokens: HashSet<u64> = t.lists.iter().map(|l| l.token_id).collect();
        assert!(t
            .primary_lists
            .iter()
            .any(|p| !list_tokens.contains(&p.token_id)));
        let list_user: HashMap<u64, Address> =
            t.lists.iter().map(|l| (l.token_id, l.user)).collect();
        assert!(t
            .primary_lists
            .iter()
            .any(|p| list_user.get(&p.token_id).is_some_and(|u| *u != p.address)));
        let non_primary_records = t
            .list_records
            .iter()
            .filter(|r| !primary.contains(&r.token_id))
            .count();
        assert!(non_primary_records > 0);
        assert!(t.lists.iter().any(|l| l.owner != l.user));
        assert!(t.lists.iter().any(|l| l.manager != l.owner));
    }

    /// The indexer's `ens_metadata` has no header column (an export reads
    /// `records->>'header'`) and its `chains` column is never filled, so
    /// generated rows must round-trip through it.
    #[test]
    fn ens_rows_fit_the_indexer() {
        let t = gen(3000, 2);
        assert!(t.ens.iter().all(|e| e.chains.is_none()));
        assert!(t.ens.iter().any(|e| e.header.is_some()));
        for e in &t.ens {
            let from_records = e.records.as_deref().and_then(|r| {
                let v: serde_json::Value = serde_json::from_str(r).unwrap();
                v.get("header").and_then(|h| h.as_str()).map(str::to_owned)
            });
            assert_eq!(e.header, from_records, "{}", e.name);
        }
    }

    #[test]
    fn power_law_shape() {
        let n = 5000;
        let t = gen(n, 9);
        let primary = primary_tokens(&t);
        let mut followers: HashMap<Address, u64> = HashMap::new();
        let mut following: HashMap<u64, u64> = HashMap::new();
        for r in t
            .list_records
            .iter()
            .filter(|r| primary.contains(&r.token_id))
        {
            *followers.entry(r.address).or_default() += 1;
            *following.entry(r.token_id).or_default() += 1;
        }
        let mut f: Vec<u64> = followers.values().copied().collect();
        f.sort_unstable_by(|a, b| b.cmp(a));
        let total: u64 = f.iter().sum();
        let median = f[f.len() / 2];
        assert!(f[0] > 50 * median.max(1), "top {} median {median}", f[0]);
        // The top 1% hold well over 20% here (over half at 1M accounts,
        // where big lists saturate the head less).
        let top1pct: u64 = f[..(n as usize / 100)].iter().sum();
        assert!(top1pct * 5 > total, "top 1% has {top1pct} of {total}");
        let per_account = t.list_records.len() as f64 / n as f64;
        assert!(
            (14.0..28.0).contains(&per_account),
            "{per_account} records per account"
        );
        let mut out: Vec<u64> = following.values().copied().collect();
        out.sort_unstable();
        assert!(
            out[out.len() / 2] < 20 && *out.last().unwrap() > 300,
            "{:?}",
            out.last()
        );
    }

    #[test]
    fn generate_writes_a_loadable_root() {
        let root = tempfile::tempdir().unwrap();
        let o = GenerateOptions {
            out: root.path().join("snaps"),
            ..opts(1500, 4)
        };
        let dir = generate(&o).unwrap();
        assert_eq!(dir, o.out.join("gen-1500-4"));
        let current = std::fs::read_to_string(o.out.join("CURRENT")).unwrap();
        assert_eq!(current.trim(), "gen-1500-4");
        let loaded = crate::snapshot::load(&o.out).unwrap();
        assert_eq!(loaded.name, "gen-1500-4");
        assert_eq!(loaded.created_at_ms, o.created_at_ms);
        assert_eq!(loaded.manifest.created_at, DEFAULT_CREATED_AT);
        assert!(loaded.manifest.tables.values().all(|t| t.sha256.is_some()));
        // The streamed files hold exactly the in-memory tables.
        crate::snapshot::assert_tables_eq(&loaded.tables, &gen(1500, 4));
    }
}
