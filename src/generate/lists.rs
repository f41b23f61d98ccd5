//! One list's rows: its `lists` row, a time-ordered op history over the
//! months before `created_at` (batched in "sessions" that share a
//! timestamp, so ties are common), and the current `list_records` and
//! `list_record_tags` derived by replaying that history.
//!
//! Primary lists get a heavy-tailed (Pareto) out-degree over Zipf-drawn
//! targets and tags (top8, block, mute, custom); other lists a few records.
//! Some targets are followed and dropped for good, some re-followed, some
//! tagged and untagged, so the history exercises every opcode.

use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::model::Ctx;
use crate::rng::{mix64, SplitMix64, GOLDEN};
use crate::snapshot::{
    ListRow, RecordRow, Tables, TagRow, OP_FOLLOW, OP_TAG, OP_UNFOLLOW, OP_UNTAG,
};

/// Rows produced by one chunk of accounts: every table but `list_ops`
/// in `rows`, the ops apart until their `seq` is known.
#[derive(Default)]
pub(super) struct ChunkOut {
    pub rows: Tables,
    pub list_ops: Vec<GenOp>,
}

/// A generated op before its `seq` is known: 24 bytes instead of a row
/// with heap-allocated bytes (a 5M-account snapshot has ~130M).
#[derive(Clone, Copy)]
pub(super) struct GenOp {
    pub updated_at: i64,
    pub token_id: u64,
    /// The target account.
    pub target: u32,
    pub tag: u16,
    pub opcode: u8,
}

/// Tag vocabulary; index 0 is "no tag". Ops refer to tags by index.
pub(super) const TAGS: &[&str] = &[
    "", "top8", "block", "mute", "friend", "dev", "art", "music", "defi", "nft", "irl", "family",
    "work", "ens", "gm", "builder", "Dev", "Friend", "OG", "🔥", "💎", "🦄", "❤️", "🌈",
];
const TAG_TOP8: u16 = 1;
const TAG_BLOCK: u16 = 2;
const TAG_MUTE: u16 = 3;
const TAG_CUSTOM_FIRST: u16 = 4;

/// The span of op history before `created_at`: about six months.
pub(super) const WINDOW_MS: i64 = 183 * 86_400_000;
/// Pareto out-degree of primary lists.
const DEGREE_ALPHA: f64 = 1.4;
const DEGREE_XM: f64 = 7.0;
const DEGREE_CAP: u64 = 10_000;

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

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ListKind {
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
pub(super) struct ListScratch {
    seen: TargetSet,
    /// Story -> target account index.
    targets: Vec<u32>,
    sessions: Vec<i64>,
    evs: Vec<Ev>,
    /// Story -> (followed now, time of last follow).
    state: Vec<(bool, i64)>,
}

fn degree_cap(ctx: &Ctx) -> u64 {
    DEGREE_CAP.min(ctx.n / 2).max(1)
}

/// Appends list `token` of account `user` to `out`: its `lists` row, its
/// ops (as [`GenOp`]s) and its current records and tags.
pub(super) fn gen_list(
    ctx: &Ctx,
    rng: &mut SplitMix64,
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
    let cap = degree_cap(ctx);
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
    let pick_from = |rng: &mut SplitMix64, lo: usize| lo + rng.below((k - lo) as u64) as usize;

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
        let mut choose = |rng: &mut SplitMix64, count: usize, tag: fn(&mut SplitMix64) -> u16| {
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

fn custom_tag(rng: &mut SplitMix64) -> u16 {
    TAG_CUSTOM_FIRST + rng.below((TAGS.len() - usize::from(TAG_CUSTOM_FIRST)) as u64) as u16
}
