//! The order in which rows are made and handed on, shared by the streaming
//! writer and the in-memory path: chunks of accounts generated in parallel
//! (each from its own seeded stream), handed on a batch of chunks at a time
//! in account order; then `list_ops`, held meanwhile as 24-byte
//! [`GenOp`]s, sorted by time, numbered (`seq`) and handed on in batches.

use rayon::prelude::*;

use super::badges::{badge_events, gen_badges};
use super::ens::gen_ens;
use super::lists::{gen_list, ChunkOut, GenOp, ListKind, ListScratch, TAGS};
use super::model::{stream_seed, Ctx, RowKind, STREAM_CHUNKS, STREAM_NON_USER_ENS};
use super::recommended::gen_recommended;
use super::GenerateOptions;
use crate::rng::SplitMix64;
use crate::snapshot::{Op, OpRow, PrimaryListRow, Tables};

/// Accounts per chunk (one parallel task, one seeded stream).
const CHUNK: u64 = 2048;
/// Chunks generated in parallel before their rows are handed on.
const CHUNKS_PER_BATCH: u64 = 32;
/// `list_ops` rows per batch handed on (one row group).
const OPS_BATCH: usize = 1 << 20;

/// Moves every row of `from` to the end of `to`.
pub(super) fn append_tables(to: &mut Tables, from: &mut Tables) {
    to.lists.append(&mut from.lists);
    to.primary_lists.append(&mut from.primary_lists);
    to.list_records.append(&mut from.list_records);
    to.list_record_tags.append(&mut from.list_record_tags);
    to.list_ops.append(&mut from.list_ops);
    to.ens.append(&mut from.ens);
    to.badge_events.append(&mut from.badge_events);
    to.badges.append(&mut from.badges);
    to.recommended.append(&mut from.recommended);
}

/// The tables of [`super::generate_tables`] in pieces, in row order: `rows`
/// gets every table but `list_ops` a batch of accounts at a time, then
/// `ops(batch, total)` gets `list_ops` in `seq` order, in batches.
/// `progress(done, total)` is called with the number of accounts done.
pub(super) fn generate_with(
    opts: &GenerateOptions,
    progress: &mut dyn FnMut(u64, u64),
    rows: &mut dyn FnMut(Tables) -> std::io::Result<()>,
    ops: &mut dyn FnMut(Vec<OpRow>, u64) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let n = opts.accounts;
    rows(Tables {
        badge_events: badge_events(),
        ..Tables::default()
    })?;
    progress(0, n);
    if n == 0 {
        return Ok(());
    }
    let ctx = Ctx::new(opts.seed, n, opts.created_at_ms);

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
    let mut rng = SplitMix64::new(stream_seed(ctx.seed, STREAM_NON_USER_ENS, 0));
    rows(Tables {
        ens: (n..n + ctx.non_users)
            .map(|i| gen_ens(&ctx, &mut rng, i))
            .collect(),
        ..Tables::default()
    })?;
    rows(Tables {
        recommended: gen_recommended(&ctx),
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

/// Every row of accounts `chunk * CHUNK ..` (up to `CHUNK` of them): their
/// `primary_lists` rows, lists, ens and badges.
fn gen_chunk(ctx: &Ctx, chunk: u64) -> ChunkOut {
    let mut rng = SplitMix64::new(stream_seed(ctx.seed, STREAM_CHUNKS, chunk));
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
            gen_badges(ctx, &mut rng, &mut out.rows.badges, i);
        }
    }
    out
}
