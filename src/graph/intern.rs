//! Addresses to provisional account ids, from many loader threads at once.
//!
//! The loader meets ~50M addresses per million accounts, nearly all of
//! them already seen, in random order: each lookup is a cache miss. A
//! locked `HashMap` per shard spent a fifth of the load in those misses,
//! one at a time. This table is lock-free for lookups and inserts, keeps
//! the whole key in the slot (one cache line per lookup), and resolves
//! addresses in batches, prefetching the slots of the next few so their
//! misses overlap. It grows (rarely) behind a write lock taken between
//! batches.
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::RwLock;

use rayon::prelude::*;

use super::hash::FastState;
use crate::snapshot::Address;

/// Addresses resolved per read-lock hold; also how far past the load
/// limit one batch may fill the table.
const BATCH: usize = 1024;
/// How many lookups ahead the slots are prefetched.
const AHEAD: usize = 8;
/// The high half of a slot's last word while its key is being written.
const WRITING: u64 = u32::MAX as u64;

/// One address and its id: `words[0..2]` the first 16 address bytes,
/// `words[2]` the last 4 in its low half and `id + 1` in its high half (0:
/// empty, `WRITING`: claimed, key being written). 32-byte aligned: a slot
/// never straddles two cache lines.
#[repr(align(32))]
#[derive(Default)]
struct Slot {
    words: [AtomicU64; 3],
}

struct Table {
    slots: Box<[Slot]>,
    mask: usize,
}

impl Table {
    fn with_capacity(slots: usize) -> Table {
        let slots = slots.next_power_of_two();
        Table {
            slots: (0..slots).map(|_| Slot::default()).collect(),
            mask: slots - 1,
        }
    }
}

pub(super) struct Interner {
    table: RwLock<Table>,
    next: AtomicU32,
    hasher: FastState,
    /// Slots the table needs before it may take another batch.
    min_free: usize,
}

fn key_words(a: &Address) -> (u64, u64, u64) {
    let w = |r: std::ops::Range<usize>| {
        let mut b = [0u8; 8];
        b[..r.len()].copy_from_slice(&a[r]);
        u64::from_le_bytes(b)
    };
    (w(0..8), w(8..16), w(16..20))
}

#[inline]
fn prefetch(slot: &Slot) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((slot as *const Slot).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slot;
}

impl Interner {
    /// A table sized for about `expected` distinct addresses (it grows).
    pub(super) fn new(expected: usize) -> Interner {
        // Every thread may be one batch into the table past its limit.
        let min_free = 2 * BATCH * (rayon::current_num_threads() + 1);
        Interner {
            table: RwLock::new(Table::with_capacity((2 * expected).max(2 * min_free))),
            next: AtomicU32::new(0),
            hasher: FastState::default(),
            min_free,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.next.load(Ordering::Relaxed) as usize
    }

    #[cfg(test)]
    pub(super) fn id(&self, address: &Address) -> u32 {
        let mut ids = Vec::with_capacity(1);
        self.ids(std::slice::from_ref(address), &mut ids);
        ids[0]
    }

    /// The ids of `addresses`, in order, resolved in parallel.
    pub(super) fn ids_par(&self, addresses: &[Address]) -> Vec<u32> {
        addresses
            .par_chunks(16 * BATCH)
            .map(|chunk| {
                let mut ids = Vec::new();
                self.ids(chunk, &mut ids);
                ids
            })
            .flatten_iter()
            .collect()
    }

    /// The ids of `addresses`, in order; `addresses` is emptied (and its
    /// memory freed: a row group's batch is done with).
    pub(super) fn take_ids(&self, addresses: &mut Vec<Address>) -> Vec<u32> {
        let mut ids = Vec::with_capacity(addresses.len());
        self.ids(addresses, &mut ids);
        *addresses = Vec::new();
        ids
    }

    /// Appends the id of each of `addresses` to `out`, in order.
    pub(super) fn ids(&self, addresses: &[Address], out: &mut Vec<u32>) {
        out.reserve(addresses.len());
        let mut homes = [0usize; BATCH];
        for batch in addresses.chunks(BATCH) {
            self.make_room();
            let table = crate::sync::read(&self.table);
            for (home, a) in homes.iter_mut().zip(batch) {
                *home = self.hasher.hash_one(a) as usize & table.mask;
            }
            for &home in homes.iter().take(batch.len().min(AHEAD)) {
                prefetch(&table.slots[home]);
            }
            for (i, a) in batch.iter().enumerate() {
                if let Some(&ahead) = homes[..batch.len()].get(i + AHEAD) {
                    prefetch(&table.slots[ahead]);
                }
                out.push(self.find_or_insert(&table, homes[i], a));
            }
        }
    }

    fn find_or_insert(&self, table: &Table, home: usize, a: &Address) -> u32 {
        let (w0, w1, tail) = key_words(a);
        let mut i = home;
        loop {
            let slot = &table.slots[i];
            let last = slot.words[2].load(Ordering::Acquire);
            let state = last >> 32;
            if state == 0 {
                if slot.words[2]
                    .compare_exchange(
                        0,
                        WRITING << 32 | tail,
                        Ordering::Acquire,
                        Ordering::Acquire,
                    )
                    .is_ok()
                {
                    slot.words[0].store(w0, Ordering::Relaxed);
                    slot.words[1].store(w1, Ordering::Relaxed);
                    let id = self.next.fetch_add(1, Ordering::Relaxed);
                    slot.words[2].store(u64::from(id + 1) << 32 | tail, Ordering::Release);
                    return id;
                }
                continue; // Claimed under us: look again.
            }
            if last & 0xffff_ffff == tail {
                if state == WRITING {
                    std::hint::spin_loop();
                    continue;
                }
                if slot.words[0].load(Ordering::Relaxed) == w0
                    && slot.words[1].load(Ordering::Relaxed) == w1
                {
                    return (state - 1) as u32;
                }
            }
            i = (i + 1) & table.mask;
        }
    }

    /// Doubles the table (between batches, under the write lock) until at
    /// least 3/8 of it and `min_free` slots are free, so probes stay
    /// short and every thread's batch finds an empty slot.
    fn make_room(&self) {
        let full = |t: &Table| {
            let free = t.slots.len() - self.len();
            free < t.slots.len() / 8 * 3 || free < self.min_free
        };
        if !full(&crate::sync::read(&self.table)) {
            return;
        }
        let mut table = crate::sync::write(&self.table);
        while full(&table) {
            let bigger = Table::with_capacity(table.slots.len() * 2);
            for slot in table.slots.iter() {
                let last = slot.words[2].load(Ordering::Relaxed);
                if last >> 32 == 0 {
                    continue;
                }
                let address = slot_address(slot);
                let mut i = self.hasher.hash_one(address) as usize & bigger.mask;
                while bigger.slots[i].words[2].load(Ordering::Relaxed) != 0 {
                    i = (i + 1) & bigger.mask;
                }
                for (to, from) in bigger.slots[i].words.iter().zip(&slot.words) {
                    to.store(from.load(Ordering::Relaxed), Ordering::Relaxed);
                }
            }
            *table = bigger;
        }
    }

    /// The addresses in order, and each provisional id's final id.
    pub(super) fn finish(self) -> (Vec<Address>, Vec<u32>) {
        let table = crate::sync::rw_into_inner(self.table);
        let mut pairs: Vec<(Address, u32)> = table
            .slots
            .par_iter()
            .filter_map(|slot| {
                let id = slot.words[2].load(Ordering::Relaxed) >> 32;
                (id != 0).then(|| (slot_address(slot), (id - 1) as u32))
            })
            .collect();
        drop(table);
        pairs.par_sort_unstable();
        let mut perm = vec![0u32; pairs.len()];
        let addresses = pairs
            .into_iter()
            .enumerate()
            .map(|(i, (address, prov))| {
                perm[prov as usize] = i as u32;
                address
            })
            .collect();
        (addresses, perm)
    }
}

fn slot_address(slot: &Slot) -> Address {
    let mut a = [0u8; 20];
    a[..8].copy_from_slice(&slot.words[0].load(Ordering::Relaxed).to_le_bytes());
    a[8..16].copy_from_slice(&slot.words[1].load(Ordering::Relaxed).to_le_bytes());
    a[16..].copy_from_slice(&slot.words[2].load(Ordering::Relaxed).to_le_bytes()[..4]);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(i: u32) -> Address {
        let mut a = [0u8; 20];
        // Shares 16 leading bytes with its neighbours: only the tail differs.
        a[16..].copy_from_slice(&i.to_be_bytes());
        a
    }

    #[test]
    fn ids_are_stable_and_finish_orders_them_by_address() {
        let interner = Interner::new(0);
        let n = 50_000u32; // Several growths from the smallest table.
        let order: Vec<Address> = (0..n).rev().map(address).collect();
        let mut ids = Vec::new();
        interner.ids(&order, &mut ids);
        assert_eq!(ids, (0..n).collect::<Vec<_>>());
        // Seen again, from many threads, mixed with new ones.
        let again: Vec<(u32, u32)> = (0..2 * n)
            .into_par_iter()
            .map(|i| (i, interner.id(&address(i))))
            .collect();
        for (i, id) in again {
            if i < n {
                assert_eq!(id, n - 1 - i);
            } else {
                assert!(id >= n);
            }
        }
        assert_eq!(interner.len(), 2 * n as usize);
        let (addresses, perm) = interner.finish();
        assert_eq!(addresses, (0..2 * n).map(address).collect::<Vec<_>>());
        for (prov, &fin) in perm.iter().enumerate().take(n as usize) {
            assert_eq!(fin, n - 1 - prov as u32);
        }
    }
}
