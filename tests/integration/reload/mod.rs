//! Snapshot hot-swapping: the loading phase (`/ready`) and a broken first
//! snapshot (`startup`), the reload triggers SIGHUP (`sighup`) and the
//! CURRENT poller (`polling`), rejected snapshots that keep the old one
//! live (`bad_snapshots`), swaps under load (`swap_under_load`), and the
//! operations endpoints `/snapshot`, `/metrics`, `/health`, `/ready`
//! (`ops_endpoints`). `probes` waits on what the server reports, `damage`
//! breaks snapshots on disk; the tables all of them serve are below.

use followgraph::snapshot::{EnsRow, Op, OpRow, Tables};

use crate::fixtures::*;

mod bad_snapshots;
mod damage;
mod ops_endpoints;
mod polling;
mod probes;
mod sighup;
mod startup;
mod swap_under_load;

/// `graph()` (see fixtures) with two list ops, so that `list_ops` has rows.
fn graph_with_ops() -> Tables {
    let mut t = graph();
    t.list_ops = vec![
        OpRow {
            token_id: 2,
            seq: 1,
            op: Op {
                opcode: 1,
                target: addr(D),
                tag: String::new(),
            },
            updated_at: S,
        },
        OpRow {
            token_id: 3,
            seq: 2,
            op: Op {
                opcode: 3,
                target: addr(D),
                tag: "top8".into(),
            },
            updated_at: S + 1,
        },
    ];
    t
}

/// `graph()` with A's ens row replaced by a bare `name` (display `display`).
fn renamed(mut t: Tables, name: &str, display: &str) -> Tables {
    for row in t.ens.iter_mut() {
        if row.address == addr(A) {
            *row = EnsRow {
                address: row.address,
                name: name.into(),
                display: Some(display.into()),
                ..Default::default()
            };
        }
    }
    t
}
