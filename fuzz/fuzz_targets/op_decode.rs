//! `Op::decode` on arbitrary bytes: never panics, and whatever it accepts
//! `encode`s back to exactly the same bytes (the server keeps only the
//! decoded op and prints `encode()` as the notification's `op`).
#![no_main]

use followgraph::snapshot::Op;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(op) = Op::decode(data) {
        assert!((1..=4).contains(&op.opcode), "opcode {}", op.opcode);
        assert_eq!(op.tag.is_empty(), op.opcode <= 2);
        assert_eq!(op.encode(), data, "encode(decode(x)) != x for {op:?}");
    }
});
