//! The response cache: rendered bodies keyed by snapshot generation and
//! resolved call (endpoint, resolved subjects, normalised parameters),
//! with a TTL and a bound on the bytes held (a flood of unique keys
//! evicts, never grows).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use dashmap::DashMap;

use crate::api::Resolved;
use crate::graph::FastState;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub generation: u64,
    /// The endpoint, its resolved subjects and normalised parameters.
    pub call: Resolved,
}

impl CacheKey {
    /// Approximate heap + inline size, for the byte bound.
    fn cost(&self) -> usize {
        std::mem::size_of::<CacheKey>() + self.call.heap_bytes()
    }
}

struct Entry {
    body: Bytes,
    /// Nanoseconds after the cache's `epoch`; atomic so that storing an
    /// unchanged body refreshes it under the shard's read lock.
    expires: AtomicU64,
    cost: usize,
}

pub struct ResponseCache {
    /// The keyed fast hasher of the graph's maps: SipHash showed in the
    /// per-request profile, and the random key keeps flooding costly.
    map: DashMap<CacheKey, Entry, FastState>,
    bytes: AtomicUsize,
    max_bytes: usize,
    ttl: Duration,
    evicting: AtomicBool,
    epoch: Instant,
}

impl ResponseCache {
    pub fn new(ttl: Duration, max_bytes: usize) -> Self {
        ResponseCache {
            map: DashMap::with_hasher(FastState::default()),
            bytes: AtomicUsize::new(0),
            max_bytes,
            ttl,
            evicting: AtomicBool::new(false),
            epoch: Instant::now(),
        }
    }

    /// Now, in nanoseconds after `epoch`.
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn expiry(&self) -> u64 {
        self.now()
            .saturating_add(u64::try_from(self.ttl.as_nanos()).unwrap_or(u64::MAX))
    }

    pub fn get(&self, key: &CacheKey) -> Option<Bytes> {
        let now = self.now();
        {
            let entry = self.map.get(key)?;
            if entry.expires.load(Ordering::Relaxed) > now {
                return Some(entry.body.clone());
            }
        }
        if let Some((_, e)) = self
            .map
            .remove_if(key, |_, e| e.expires.load(Ordering::Relaxed) <= now)
        {
            self.bytes.fetch_sub(e.cost, Ordering::Relaxed);
        }
        None
    }

    /// Stores a freshly rendered body (`cache=fresh`, or a miss) and
    /// returns it as the answer's bytes. When the entry already holds the
    /// same bytes (`cache=fresh` on an unchanged snapshot: nearly always)
    /// only its expiry moves and its body is answered: no allocation, and
    /// no body freed by another thread, under the shard's read lock.
    pub fn store(&self, key: CacheKey, rendered: &[u8]) -> Bytes {
        if !self.enabled() {
            return Bytes::copy_from_slice(rendered);
        }
        if let Some(entry) = self.map.get(&key) {
            if entry.body[..] == *rendered {
                entry.expires.store(self.expiry(), Ordering::Relaxed);
                return entry.body.clone();
            }
        }
        let body = Bytes::copy_from_slice(rendered);
        self.insert(key, body.clone());
        body
    }

    /// A zero TTL or bound turns the cache off (`--cache-max-bytes 0`).
    fn enabled(&self) -> bool {
        !self.ttl.is_zero() && self.max_bytes > 0
    }

    pub fn insert(&self, key: CacheKey, body: Bytes) {
        if !self.enabled() {
            return;
        }
        let cost = key.cost() + body.len() + 64;
        // One entry may take up to half of the bound: `/leaderboard/all`
        // (about 70 bytes a leaderboard account, tens of MB at a million
        // accounts) is cached like any answer.
        if cost > self.max_bytes / 2 {
            return;
        }
        let entry = Entry {
            body,
            expires: AtomicU64::new(self.expiry()),
            cost,
        };
        // Only a change of the total is written: `cache=fresh` mostly
        // replaces an entry with the same bytes, and a write to this
        // counter, shared by every thread, moves its cache line between
        // cores on every request. It is written while the entry's shard
        // is locked, so `evict` never subtracts a cost not yet added.
        match self.map.entry(key) {
            dashmap::Entry::Occupied(mut slot) => {
                let replaced = slot.insert(entry).cost;
                if cost != replaced {
                    self.bytes.fetch_add(cost, Ordering::Relaxed);
                    self.bytes.fetch_sub(replaced, Ordering::Relaxed);
                }
            }
            dashmap::Entry::Vacant(slot) => {
                self.bytes.fetch_add(cost, Ordering::Relaxed);
                slot.insert(entry);
            }
        }
        if self.bytes.load(Ordering::Relaxed) > self.max_bytes {
            self.evict();
        }
    }

    /// Drops expired entries, then arbitrary ones, down to 3/4 of the bound.
    fn evict(&self) {
        if self.evicting.swap(true, Ordering::Acquire) {
            return;
        }
        let now = self.now();
        let target = self.max_bytes / 4 * 3;
        self.retain(|e| e.expires.load(Ordering::Relaxed) > now);
        let mut excess = self.bytes.load(Ordering::Relaxed).saturating_sub(target);
        if excess > 0 {
            self.retain(|e| {
                if excess == 0 {
                    return true;
                }
                excess = excess.saturating_sub(e.cost);
                false
            });
        }
        self.evicting.store(false, Ordering::Release);
    }

    fn retain(&self, mut keep: impl FnMut(&Entry) -> bool) {
        let mut freed = 0;
        self.map.retain(|_, e| {
            let k = keep(e);
            if !k {
                freed += e.cost;
            }
            k
        });
        self.bytes.fetch_sub(freed, Ordering::Relaxed);
    }

    /// Drops every entry (on a snapshot swap).
    pub fn clear(&self) {
        self.retain(|_| false);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Call, Endpoint, ListUser, Params, Subjects};

    fn key(i: u64) -> CacheKey {
        CacheKey {
            generation: 1,
            call: Call {
                endpoint: Endpoint::ListDetails,
                subjects: Subjects::List(ListUser {
                    token_id: i,
                    user: 0,
                }),
                params: Params::None,
            },
        }
    }

    #[test]
    fn bounded_in_bytes_under_a_flood_of_keys() {
        let cache = ResponseCache::new(Duration::from_secs(60), 64 * 1024);
        for i in 0..10_000 {
            cache.insert(key(i), Bytes::from(vec![b'x'; 500]));
            assert!(cache.bytes() <= 64 * 1024 + 1024, "{}", cache.bytes());
        }
        assert!(!cache.is_empty());
        assert!(cache.get(&key(9_999)).is_some());
    }

    #[test]
    fn expires_and_clears() {
        let cache = ResponseCache::new(Duration::from_millis(30), 1 << 20);
        cache.insert(key(1), Bytes::from_static(b"{}"));
        assert_eq!(cache.get(&key(1)).as_deref(), Some(&b"{}"[..]));
        std::thread::sleep(Duration::from_millis(40));
        assert!(cache.get(&key(1)).is_none());
        assert_eq!(cache.bytes(), 0);
        cache.insert(key(2), Bytes::from_static(b"{}"));
        cache.clear();
        assert!(cache.is_empty());
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn storing_the_same_bytes_keeps_the_body_and_moves_its_expiry() {
        let cache = ResponseCache::new(Duration::from_millis(300), 1 << 20);
        let first = cache.store(key(1), b"{\"a\":1}");
        let bytes = cache.bytes();
        std::thread::sleep(Duration::from_millis(200));
        let again = cache.store(key(1), b"{\"a\":1}");
        // The cached allocation is answered, not a copy of the render.
        assert_eq!(again.as_ptr(), first.as_ptr());
        assert_eq!(cache.bytes(), bytes);
        // 350 ms after the first store, 150 ms after the second: alive
        // only if the second moved the expiry.
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(cache.get(&key(1)).as_deref(), Some(&b"{\"a\":1}"[..]));
        let changed = cache.store(key(1), b"{\"a\":2}");
        assert_ne!(changed.as_ptr(), first.as_ptr());
        assert_eq!(cache.get(&key(1)).as_deref(), Some(&b"{\"a\":2}"[..]));
        assert_eq!(cache.bytes(), bytes);
    }

    #[test]
    fn a_store_into_a_disabled_cache_still_answers_the_body() {
        let cache = ResponseCache::new(Duration::from_secs(60), 0);
        assert_eq!(&cache.store(key(1), b"{}")[..], b"{}");
        assert!(cache.is_empty());
    }

    #[test]
    fn replacing_an_entry_counts_only_the_difference() {
        let cache = ResponseCache::new(Duration::from_secs(60), 1 << 20);
        cache.insert(key(1), Bytes::from_static(b"{\"a\":1}"));
        let one = cache.bytes();
        cache.insert(key(1), Bytes::from_static(b"{\"a\":2}"));
        assert_eq!(cache.bytes(), one);
        cache.insert(key(1), Bytes::from_static(b"{\"a\":[1,2,3]}"));
        assert_eq!(cache.bytes(), one + 6);
        cache.insert(key(1), Bytes::from_static(b"{}"));
        assert_eq!(cache.bytes(), one - 5);
        assert_eq!(cache.get(&key(1)).as_deref(), Some(&b"{}"[..]));
        cache.insert(key(2), Bytes::from_static(b"{}"));
        assert_eq!(cache.bytes(), 2 * (one - 5));
        cache.clear();
        assert_eq!(cache.bytes(), 0);
    }
}
