//! Badges: the badge events, each with its `event` JSON object serialised
//! once at load (position order), and the badges each account holds,
//! ordered by event position. Small next to the graph (tens of thousands
//! of events, a few holdings per holder), so plain boxed strings and a
//! hash map by account.

use super::hash::map_heap_bytes;
use super::{AccountId, FastMap};
use crate::snapshot::{Address, BadgeEventRow, BadgeRow};

/// A badge event with its `event` JSON object serialised once at load.
#[derive(Clone, Debug)]
pub struct BadgeEvent {
    pub event_id: i64,
    pub event_json: Box<str>,
}

/// A badge an account holds: `event` indexes `Graph::badge_events`.
#[derive(Clone, Debug)]
pub struct Holding {
    pub event: u32,
    pub token_id: Box<str>,
    pub owner: Box<str>,
}

/// The badge events and every account's holdings.
pub(super) struct Badges {
    /// In position order.
    events: Vec<BadgeEvent>,
    holdings: FastMap<AccountId, Box<[Holding]>>,
}

impl Badges {
    #[inline]
    pub(super) fn events(&self) -> &[BadgeEvent] {
        &self.events
    }
    /// The badges the account holds, ordered by event position.
    #[inline]
    pub(super) fn holdings(&self, id: AccountId) -> &[Holding] {
        self.holdings.get(&id).map_or(&[], |h| h)
    }

    /// Approximate heap bytes (boxed strings counted by their length, an
    /// event with its 24-byte header).
    pub(super) fn heap_bytes(&self) -> usize {
        map_heap_bytes(&self.holdings)
            + self
                .holdings
                .values()
                .flat_map(|h| h.iter())
                .map(|h| std::mem::size_of::<Holding>() + h.token_id.len() + h.owner.len())
                .sum::<usize>()
            + self
                .events
                .iter()
                .map(|e| e.event_json.len() + 24)
                .sum::<usize>()
    }
}

/// The events in position order and each holder's badges; `id_of` gives
/// a holder's account id (every holder was interned).
pub(super) fn build_badges(
    events: &[BadgeEventRow],
    badges: &[BadgeRow],
    id_of: impl Fn(&Address) -> AccountId,
) -> Badges {
    let mut events: Vec<&BadgeEventRow> = events.iter().collect();
    events.sort_by_key(|e| e.position);
    let index: FastMap<i64, u32> = events
        .iter()
        .enumerate()
        .map(|(i, e)| (e.event_id, i as u32))
        .collect();
    let badge_events = events
        .iter()
        .map(|e| BadgeEvent {
            event_id: e.event_id,
            event_json: event_json(e).into_boxed_str(),
        })
        .collect();
    let mut by_account: FastMap<AccountId, Vec<Holding>> = FastMap::default();
    for b in badges {
        // The reader guarantees every badge names an existing event.
        let Some(&event) = index.get(&b.event_id) else {
            continue;
        };
        by_account
            .entry(id_of(&b.address))
            .or_default()
            .push(Holding {
                event,
                token_id: b.token_id.as_str().into(),
                owner: b.owner.as_str().into(),
            });
    }
    let holdings = by_account
        .into_iter()
        .map(|(id, mut h)| {
            h.sort_by_key(|h| h.event);
            (id, h.into_boxed_slice())
        })
        .collect();
    Badges {
        events: badge_events,
        holdings,
    }
}

fn event_json(e: &BadgeEventRow) -> String {
    #[derive(serde::Serialize)]
    struct Event<'a> {
        id: i64,
        fancy_id: &'a str,
        name: &'a str,
        event_url: &'a str,
        image_url: &'a str,
        country: &'a str,
        city: &'a str,
        description: &'a str,
        year: i32,
        start_date: &'a str,
        end_date: &'a str,
        expiry_date: &'a str,
    }
    serde_json::to_string(&Event {
        id: e.event_id,
        fancy_id: &e.fancy_id,
        name: &e.name,
        event_url: &e.event_url,
        image_url: &e.image_url,
        country: &e.country,
        city: &e.city,
        description: &e.description,
        year: e.year,
        start_date: &e.start_date,
        end_date: &e.end_date,
        expiry_date: &e.expiry_date,
    })
    .expect("serialising plain strings cannot fail")
}
