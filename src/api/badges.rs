//! Sections 2 and 3, `/users/{addressOrENS}/badges` and
//! `/lists/{token_id}/badges`: one entry per badge event, held or not.

use crate::graph::{AccountId, Graph};
use crate::json::{push_key, push_str};

/// `account`: the account, or the list's user; `None` (no data) holds
/// nothing.
pub fn render(g: &Graph, account: Option<AccountId>, out: &mut String) {
    let held = account.map_or(&[][..], |id| g.holdings(id));
    let mut held = held.iter().peekable();
    out.push_str("{\"badges\":[");
    for (i, event) in g.badge_events().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"eventId\":");
        out.push('"');
        crate::json::push_int(out, event.event_id);
        out.push('"');
        let holding = held.next_if(|h| h.event as usize == i);
        match holding {
            Some(h) => {
                out.push_str(",\"participated\":true,\"collection\":{\"event\":");
                out.push_str(&event.event_json);
                out.push(',');
                push_key(out, "tokenId");
                push_str(out, &h.token_id);
                out.push(',');
                push_key(out, "owner");
                push_str(out, &h.owner);
                out.push_str("}}");
            }
            None => out.push_str(",\"participated\":false,\"collection\":null}"),
        }
    }
    out.push_str("]}");
}
