//! The live index over a small base, where the integration tests cannot
//! reach: new ops at the very time of base ops.

use std::collections::BTreeMap;

use super::{Changes, ListOps};
use crate::graph::Graph;
use crate::snapshot::{ListRow, Op, OpRow, PrimaryListRow, Tables};

fn address(b: u8) -> [u8; 20] {
    let mut a = [0; 20];
    a[19] = b;
    a
}

fn op(token_id: u64, seq: u64, updated_at: i64, target: u8) -> OpRow {
    OpRow {
        token_id,
        seq,
        op: Op {
            opcode: 1,
            target: address(target),
            tag: String::new(),
        },
        updated_at,
    }
}

#[test]
fn new_ops_come_before_base_ops_of_their_time_and_by_their_place() {
    let list = |token_id, user| ListRow {
        token_id,
        user: address(user),
        owner: address(user),
        manager: address(user),
    };
    let tables = Tables {
        lists: vec![list(1, 1), list(2, 2)],
        primary_lists: vec![
            PrimaryListRow {
                address: address(1),
                token_id: 1,
            },
            PrimaryListRow {
                address: address(2),
                token_id: 2,
            },
        ],
        list_ops: vec![op(1, 1, 100, 9), op(2, 2, 100, 9), op(2, 3, 200, 9)],
        ..Tables::default()
    };
    let g = Graph::from_tables("t".into(), 0, tables).unwrap();
    let t = g.account_id(&address(9)).unwrap();
    let a = op(1, 0, 100, 9);
    let mut b = op(1, 0, 100, 9);
    b.op.opcode = 2;
    let c = op(1, 0, 150, 9);
    let none = BTreeMap::new();
    let changes = Changes {
        lists: &none,
        primary: &BTreeMap::new(),
        ops: vec![ListOps {
            token: 1,
            replace: false,
            ops: vec![(&a, 0), (&b, 1), (&c, 2)],
        }],
    };
    let live = g.with_live(&changes, None).unwrap();
    let row = live.notifications_of(t);
    let (u1, u2) = (g.account_id(&address(1)), g.account_id(&address(2)));
    let got: Vec<(i64, Option<u32>, u8)> = (0..row.len())
        .map(|i| (row.get(i).updated_at, Some(row.get(i).actor), row.opcode(i)))
        .collect();
    // 200 (base); 150 (new); at 100 the new ones (place 1, then 0), then
    // the base's by seq descending (list 2's, then list 1's).
    assert_eq!(
        got,
        vec![
            (200, u2, 1),
            (150, u1, 1),
            (100, u1, 2),
            (100, u1, 1),
            (100, u2, 1),
            (100, u1, 1)
        ]
    );
    assert_eq!(row.partition_point(|at| at > 150), 1);
    assert_eq!(row.partition_point(|at| at >= 100), 6);
}
