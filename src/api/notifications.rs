//! Section 5, `/users/{addressOrENS}/notifications`: the account's incoming
//! ops, newest first, in a time window, filtered by opcode and tag.

use crate::error::ApiError;
use crate::graph::query::{notifications_page, NotificationFilter};
use crate::graph::{AccountId, Graph};
use crate::json::{push_hex, push_key, push_num, push_num_str, push_opt_str, push_str};

use super::query_string::{keyword, Query};
use super::rows::{push_address, push_time};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interval {
    Hour,
    Day,
    Week,
    Month,
    All,
}

impl Interval {
    /// Case-insensitive; anything unknown is a week.
    fn parse(text: &str) -> Interval {
        keyword(
            text,
            &[
                ("hour", Interval::Hour),
                ("day", Interval::Day),
                ("month", Interval::Month),
                ("all", Interval::All),
            ],
            Interval::Week,
        )
    }

    /// The window length in hours (`None` for `all`).
    pub fn hours(self) -> Option<i64> {
        match self {
            Interval::Hour => Some(1),
            Interval::Day => Some(24),
            Interval::Week => Some(168),
            Interval::Month => Some(720),
            Interval::All => None,
        }
    }

    pub fn summary(self) -> &'static str {
        match self {
            Interval::Hour => "1:00:00(hrs)",
            Interval::Day => "24:00:00(hrs)",
            Interval::Week => "168:00:00(hrs)",
            Interval::Month => "720:00:00(hrs)",
            Interval::All => "999:00:00(hrs)",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NotificationParams {
    /// 1..=4, or `None` for any.
    pub opcode: Option<u8>,
    pub interval: Interval,
    /// End of the window in unix seconds; `None` is now. Ignored for `all`.
    pub start: Option<u64>,
    /// Exact tag; `None` for no filter.
    pub tag: Option<String>,
    pub limit: usize,
    pub offset: usize,
}

impl NotificationParams {
    /// Parameters in table order: opcode, interval, start, tag, limit,
    /// offset.
    pub fn parse(q: &Query<'_>, max_limit: u64) -> Result<NotificationParams, ApiError> {
        let opcode = match q.number("opcode")? {
            Some(op @ 1..=4) => Some(op as u8),
            _ => None,
        };
        let interval = Interval::parse(q.text("interval")?.unwrap_or(""));
        let start = q.number("start")?;
        let tag = q.text("tag")?.filter(|t| !t.is_empty()).map(str::to_owned);
        let limit = q.limit(10, max_limit)?;
        Ok(NotificationParams {
            opcode,
            interval,
            start: if interval == Interval::All {
                None
            } else {
                start
            },
            tag,
            limit,
            offset: q.offset()?,
        })
    }

    pub fn heap_bytes(&self) -> usize {
        self.tag.as_ref().map_or(0, String::len)
    }
}

const ACTIONS: [&str; 5] = ["", "follow", "unfollow", "tag", "untag"];

/// `account`: `None` (no data) has no notifications. `now_ms` is the end
/// of the window when the request gives no `start`.
pub fn render(
    g: &Graph,
    account: Option<AccountId>,
    p: &NotificationParams,
    now_ms: i64,
    out: &mut String,
) {
    // Window `start - interval <= updated_at <= start`, in milliseconds.
    let window = p.interval.hours().map(|hours| {
        let end = match p.start {
            Some(secs) => i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX),
            None => now_ms,
        };
        (end.saturating_sub(hours * 3_600_000), end)
    });
    let page = match account {
        Some(id) => notifications_page(
            g,
            id,
            &NotificationFilter {
                window,
                opcode: p.opcode,
                tag: p.tag.as_deref(),
            },
            p.offset,
            p.limit,
        ),
        None => Vec::new(),
    };
    g.prefetch_accounts(page.iter().map(|n| n.actor));
    let mut totals = [0u64; 5];
    for n in &page {
        totals[usize::from(n.opcode)] += 1;
    }
    out.push_str("{\"summary\":{");
    push_key(out, "interval");
    push_str(out, p.interval.summary());
    out.push(',');
    push_key(out, "opcode");
    match p.opcode {
        None => push_str(out, "all"),
        Some(op) => push_num_str(out, u64::from(op)),
    }
    out.push(',');
    push_key(out, "total");
    push_num(out, page.len() as u64);
    for (key, i) in [
        ("total_follows", 1),
        ("total_unfollows", 2),
        ("total_tags", 3),
        ("total_untags", 4),
    ] {
        out.push(',');
        push_key(out, key);
        push_num(out, totals[i]);
    }
    out.push_str("},\"notifications\":[");
    // The ops' target: the account (rows exist only when it has data).
    let target = account.map_or(&[][..], |id| &g.address(id)[..]);
    for (i, n) in page.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let profile = g.profile(n.actor);
        let opcode = n.opcode;
        let tag = g.tag_text(n.tag_id);
        out.push('{');
        push_key(out, "address");
        push_address(out, g.address(n.actor));
        out.push(',');
        push_key(out, "name");
        push_opt_str(out, profile.map(|p| p.name()));
        out.push(',');
        push_key(out, "avatar");
        push_opt_str(out, profile.and_then(|p| p.avatar()));
        out.push(',');
        push_key(out, "token_id");
        push_num_str(out, g.primary_list(n.actor).unwrap_or(0));
        out.push(',');
        push_key(out, "action");
        push_str(out, ACTIONS[usize::from(opcode)]);
        out.push(',');
        push_key(out, "opcode");
        push_num(out, u64::from(opcode));
        out.push(',');
        push_key(out, "op");
        out.push_str("\"0x01");
        push_hex(out, &[opcode, 1, 1]);
        push_hex(out, target);
        push_hex(out, tag.as_bytes());
        out.push_str("\",");
        push_key(out, "tag");
        push_str(out, tag);
        out.push(',');
        push_key(out, "updated_at");
        push_time(out, n.updated_at);
        out.push('}');
    }
    out.push_str("]}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_in_table_order() {
        let err =
            NotificationParams::parse(&Query::parse("limit=a&start=b&opcode=c"), 1000).unwrap_err();
        assert_eq!(
            err,
            ApiError::BadParameter("opcode must be a non-negative integer".into())
        );
        let p =
            NotificationParams::parse(&Query::parse("opcode=9&interval=DAY&start=5&tag="), 1000)
                .unwrap();
        assert_eq!(
            p,
            NotificationParams {
                opcode: None,
                interval: Interval::Day,
                start: Some(5),
                tag: None,
                limit: 10,
                offset: 0
            }
        );
        let p = NotificationParams::parse(&Query::parse("interval=all&start=5"), 1000).unwrap();
        assert_eq!(p.start, None);
    }
}
