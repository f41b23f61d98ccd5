//! One poll's database side: one `REPEATABLE READ, READ ONLY`
//! transaction that reads the positions, the new events of the lookback
//! window, and re-reads what they touched (`crate::export::reread`).

use std::collections::{BTreeMap, BTreeSet};

use tokio_postgres::Client;

use crate::export::locations::ListLocations;
use crate::export::reread::{self, Event, Touch, Touched};
use crate::export::Skips;
use crate::snapshot::Position;

/// One successful poll's result.
pub(super) struct PollDone {
    pub(super) positions: BTreeMap<i64, Position>,
    pub(super) db_time_ms: i64,
    pub(super) applied: BTreeMap<i64, Vec<Position>>,
    pub(super) new_events: usize,
    pub(super) reread: Option<reread::Reread>,
    pub(super) skips: Skips,
}

pub(super) async fn poll_once(
    client: &mut Option<Client>,
    options: &super::TailOptions,
    positions: Option<&BTreeMap<i64, Position>>,
    base_positions: &BTreeMap<i64, Position>,
    applied: &BTreeMap<i64, BTreeSet<Position>>,
    known: &mut Option<ListLocations>,
) -> Result<PollDone, String> {
    if client.is_none() {
        *client = Some(crate::pg::connect(&options.database_url, "followgraph-tail").await?);
    }
    let c = client.as_ref().expect("connected");
    let result = poll_in_transaction(c, options, positions, base_positions, applied, known).await;
    if result.is_err() {
        // A failed transaction leaves nothing behind: the next poll
        // connects again.
        let _ = c.batch_execute("ROLLBACK").await;
    }
    result
}

async fn poll_in_transaction(
    c: &Client,
    options: &super::TailOptions,
    positions: Option<&BTreeMap<i64, Position>>,
    base_positions: &BTreeMap<i64, Position>,
    applied: &BTreeMap<i64, BTreeSet<Position>>,
    known: &mut Option<ListLocations>,
) -> Result<PollDone, String> {
    let timeout_ms = options.statement_timeout.as_millis().min(i32::MAX as u128);
    c.batch_execute(&format!(
        "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL statement_timeout = {timeout_ms}"
    ))
    .await
    .map_err(|e| crate::pg::describe(&e))?;
    let db_time_ms: i64 = c
        .query_one("SELECT floor(extract(epoch FROM now()) * 1000)::int8", &[])
        .await
        .map_err(|e| crate::pg::describe(&e))?
        .get(0);
    let current = crate::export::event_positions(c)
        .await
        .map_err(|e| e.to_string())?;
    let mut done = PollDone {
        positions: current.clone(),
        db_time_ms,
        applied: BTreeMap::new(),
        new_events: 0,
        reread: None,
        skips: Skips::default(),
    };
    let Some(positions) = positions else {
        // No anchor: start at the database's positions now.
        c.batch_execute("COMMIT")
            .await
            .map_err(|e| crate::pg::describe(&e))?;
        return Ok(done);
    };
    let mut touched = Touched::default();
    for &chain in current.keys() {
        let from = positions
            .get(&chain)
            .map_or(0, |p| p[0].saturating_sub(options.lookback));
        let seen = applied.get(&chain);
        let events = reread::events_since(c, chain, from)
            .await
            .map_err(|e| e.to_string())?;
        for Event {
            chain_id,
            position,
            touches,
        } in events
        {
            if seen.is_some_and(|s| s.contains(&position)) {
                continue;
            }
            done.new_events += 1;
            done.applied.entry(chain_id).or_default().push(position);
            let in_base = base_positions
                .get(&chain_id)
                .is_some_and(|b| position <= *b);
            match touches {
                Touch::Op(lsl) => {
                    let at = (lsl.chain_id, lsl.contract, lsl.slot);
                    touched.locations.insert(at);
                    if in_base {
                        touched.rescan_locations.insert(at);
                    } else {
                        touched.ops.push((chain_id, position));
                    }
                }
                Touch::Location(lsl) => {
                    touched
                        .locations
                        .insert((lsl.chain_id, lsl.contract, lsl.slot));
                }
                Touch::List(token) => {
                    touched.lists.insert(token);
                    touched.rescan.insert(token);
                }
                Touch::Account(a) => {
                    touched.accounts.insert(a);
                }
                Touch::Nothing => {}
            }
        }
    }
    if !touched.is_empty() {
        // Read in this transaction, the locations hold what its events
        // did; later moves come with the re-reads of later polls.
        if known.is_none() && !(touched.locations.is_empty() && touched.lists.is_empty()) {
            *known = Some(ListLocations::read(c).await.map_err(|e| e.to_string())?);
        }
        let empty = ListLocations::default();
        done.reread = Some(
            reread::reread(
                c,
                &touched,
                known.as_ref().unwrap_or(&empty),
                &mut done.skips,
            )
            .await
            .map_err(|e| e.to_string())?,
        );
    }
    c.batch_execute("COMMIT")
        .await
        .map_err(|e| crate::pg::describe(&e))?;
    if let (Some(known), Some(reread)) = (known.as_mut(), &done.reread) {
        for (token, lsl) in &reread.located {
            known.set(*token, lsl.as_ref());
        }
    }
    // Positions never move backwards.
    for (chain, p) in positions {
        let entry = done.positions.entry(*chain).or_insert(*p);
        *entry = (*entry).max(*p);
    }
    Ok(done)
}
