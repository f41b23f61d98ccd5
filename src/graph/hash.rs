//! A fast keyed hasher for the load-time and request-time maps (addresses,
//! token ids). SipHash costs far more at the tens of millions of lookups
//! of a load; a per-process random key keeps untrusted snapshots from
//! choosing colliding keys cheaply.
//! foldhash was measured in its place and lost on addresses
//! (docs/performance.md, "foldhash for the address and token-id maps").

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

const MUL: u64 = 0x9e37_79b9_7f4a_7c15;

#[derive(Clone, Copy, Debug)]
pub struct FastState {
    key: u64,
}

impl Default for FastState {
    fn default() -> Self {
        static KEY: OnceLock<u64> = OnceLock::new();
        let key = *KEY.get_or_init(|| {
            // RandomState is randomly keyed per process; borrow its entropy.
            std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64) | 1
        });
        FastState { key }
    }
}

impl BuildHasher for FastState {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher {
            h: self.key,
            key: self.key,
        }
    }
}

pub struct FastHasher {
    h: u64,
    key: u64,
}

impl FastHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        let x = (self.h ^ word) as u128 * MUL as u128;
        self.h = (x as u64) ^ ((x >> 64) as u64);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(buf) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(u64::from(i));
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        let x = self.h as u128 * (MUL ^ self.key) as u128;
        (x as u64) ^ ((x >> 64) as u64)
    }
}

pub type FastMap<K, V> = std::collections::HashMap<K, V, FastState>;

/// Approximate heap bytes of a hash map: its slots at ~1 control byte
/// each besides the entry.
pub(super) fn map_heap_bytes<K, V, S>(m: &std::collections::HashMap<K, V, S>) -> usize {
    m.capacity() * (std::mem::size_of::<(K, V)>() + 1)
}
