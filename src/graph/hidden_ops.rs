//! The ops of lists that are not visible: lists in `lists` that are not
//! their user's primary list. They make no notification, but a live index
//! in which such a list becomes primary turns them into notifications
//! (`live/notify.rs`), so the base keeps them.
//!
//! Layout (h hidden ops in k lists; a few percent of `list_ops`): the
//! lists' token ids ascending with an offset each (12 bytes a list), the
//! ops by token then `seq` (40 bytes each: `seq`, `updated_at`, target,
//! opcode), and the tags of the ops that carry one beside them (their
//! index and text; most ops are follows without a tag).
//!
//! Cost: a list's ops are a binary search among the k lists, then a
//! slice; their tags a binary search among the tagged ops, then a walk in
//! step.

use crate::snapshot::Address;

/// One hidden op without its tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct HiddenOp {
    pub(super) seq: u64,
    pub(super) updated_at: i64,
    pub(super) target: Address,
    pub(super) opcode: u8,
}

/// Every hidden op, by token then `seq`.
#[derive(Default)]
pub(super) struct HiddenOps {
    /// The token ids that have hidden ops, ascending.
    tokens: Vec<u64>,
    /// `ops[starts[i]..starts[i + 1]]` are `tokens[i]`'s.
    starts: Vec<u32>,
    ops: Vec<HiddenOp>,
    /// (index in `ops`, tag) of the ops with a non-empty tag, ascending.
    tags: Vec<(u32, Box<str>)>,
}

impl HiddenOps {
    /// From `(token, op, tag)` rows sorted by token then `seq`.
    pub(super) fn new(rows: Vec<(u64, HiddenOp, Box<str>)>) -> HiddenOps {
        let mut h = HiddenOps {
            ops: Vec::with_capacity(rows.len()),
            ..HiddenOps::default()
        };
        for (token, op, tag) in rows {
            if h.tokens.last() != Some(&token) {
                h.tokens.push(token);
                h.starts.push(h.ops.len() as u32);
            }
            if !tag.is_empty() {
                h.tags.push((h.ops.len() as u32, tag));
            }
            h.ops.push(op);
        }
        h.starts.push(h.ops.len() as u32);
        h
    }

    /// The list's hidden ops by `seq`, each with its tag (`""` when none).
    pub(super) fn of(&self, token_id: u64) -> impl Iterator<Item = (&HiddenOp, &str)> {
        let (from, to) = match self.tokens.binary_search(&token_id) {
            Ok(i) => (self.starts[i], self.starts[i + 1]),
            Err(_) => (0, 0),
        };
        let first_tag = self.tags.partition_point(|t| t.0 < from);
        let mut tags = self.tags[first_tag..].iter().peekable();
        (from..to).map(move |i| {
            let tag = tags.next_if(|t| t.0 == i).map_or("", |t| &*t.1);
            (&self.ops[i as usize], tag)
        })
    }

    /// Whether the list has hidden ops.
    pub(super) fn has(&self, token_id: u64) -> bool {
        self.tokens.binary_search(&token_id).is_ok()
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.tokens.capacity() * 8
            + self.starts.capacity() * 4
            + self.ops.capacity() * std::mem::size_of::<HiddenOp>()
            + self.tags.capacity() * std::mem::size_of::<(u32, Box<str>)>()
            + self.tags.iter().map(|t| t.1.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(seq: u64) -> HiddenOp {
        HiddenOp {
            seq,
            updated_at: seq as i64 * 10,
            target: [seq as u8; 20],
            opcode: 1,
        }
    }

    #[test]
    fn ops_come_back_by_list_with_their_tags() {
        let h = HiddenOps::new(vec![
            (3, op(1), "".into()),
            (3, op(4), "top8".into()),
            (7, op(2), "".into()),
            (7, op(5), "a".into()),
            (7, op(6), "b".into()),
            (9, op(3), "".into()),
        ]);
        let of = |t| {
            h.of(t)
                .map(|(o, tag)| (o.seq, tag.to_owned()))
                .collect::<Vec<_>>()
        };
        assert_eq!(of(3), [(1, "".into()), (4, "top8".into())]);
        assert_eq!(of(7), [(2, "".into()), (5, "a".into()), (6, "b".into())]);
        assert_eq!(of(9), [(3, "".into())]);
        assert!(of(5).is_empty() && of(10).is_empty());
        assert!(h.has(7) && !h.has(8));
        assert_eq!(std::mem::size_of::<HiddenOp>(), 40);
        assert!(HiddenOps::new(Vec::new()).of(1).next().is_none());
    }
}
