//! The crates at the edges measured against their alternatives: the hex
//! codec (`hex` against `faster-hex`) on the shapes the export and the
//! loader decode and the writers encode, and the maps' hasher
//! (`graph::FastState` against `foldhash::fast::RandomState`) on 20-byte
//! addresses and u64 token ids in maps of 1M entries.
//! docs/performance.md records the figures and the decisions.
//!
//! ```sh
//! cargo bench --bench edges               # all
//! cargo bench --bench edges -- hasher/    # a filter, as usual
//! ```

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput};
use followgraph::graph::FastState;

const ENTRIES: usize = 1_000_000;
/// Lookups per timed iteration: hits in a random order, as the load's
/// joins and the request path make them.
const LOOKUPS: usize = 4096;

/// splitmix64: reproducible keys without a dependency.
fn keys(n: usize, seed: u64) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

fn addresses(n: usize) -> Vec<[u8; 20]> {
    let words = keys(n * 3, 7);
    words
        .chunks_exact(3)
        .map(|w| {
            let mut a = [0u8; 20];
            a[..8].copy_from_slice(&w[0].to_le_bytes());
            a[8..16].copy_from_slice(&w[1].to_le_bytes());
            a[16..].copy_from_slice(&w[2].to_le_bytes()[..4]);
            a
        })
        .collect()
}

fn hex_text(bytes: &[u8]) -> Vec<u8> {
    let mut s = vec![0u8; bytes.len() * 2];
    hex::encode_to_slice(bytes, &mut s).expect("twice the length");
    s
}

fn hex_benches(c: &mut Criterion) {
    let addrs = addresses(LOOKUPS);
    let texts: Vec<Vec<u8>> = addrs.iter().map(|a| hex_text(a)).collect();
    let slots: Vec<Vec<u8>> = addresses(LOOKUPS)
        .iter()
        .zip(&addrs)
        .map(|(a, b)| hex_text(&[&a[..], &b[..12]].concat()))
        .collect();

    let mut g = c.benchmark_group("hex");
    g.throughput(Throughput::Elements(LOOKUPS as u64));
    for (shape, inputs) in [("decode_20", &texts), ("decode_32", &slots)] {
        g.bench_function(format!("{shape}/hex"), |b| {
            let mut out = [0u8; 32];
            b.iter(|| {
                for t in inputs {
                    let out = &mut out[..t.len() / 2];
                    hex::decode_to_slice(black_box(t), out).expect("hex");
                    black_box(&out);
                }
            })
        });
        g.bench_function(format!("{shape}/faster-hex"), |b| {
            let mut out = [0u8; 32];
            b.iter(|| {
                for t in inputs {
                    let out = &mut out[..t.len() / 2];
                    faster_hex::hex_decode(black_box(t), out).expect("hex");
                    black_box(&out);
                }
            })
        });
    }
    g.bench_function("encode_20/hex", |b| {
        let mut s = String::with_capacity(64);
        b.iter(|| {
            for a in &addrs {
                s.clear();
                let mut buf = [0u8; 40];
                hex::encode_to_slice(black_box(a), &mut buf).expect("40");
                s.push_str(std::str::from_utf8(&buf).expect("ASCII"));
                black_box(&s);
            }
        })
    });
    g.bench_function("encode_20/faster-hex", |b| {
        let mut s = String::with_capacity(64);
        b.iter(|| {
            for a in &addrs {
                s.clear();
                let mut buf = [0u8; 40];
                s.push_str(faster_hex::hex_encode(black_box(a), &mut buf).expect("40"));
                black_box(&s);
            }
        })
    });
    g.bench_function("encode_20/json::push_hex", |b| {
        let mut s = String::with_capacity(64);
        b.iter(|| {
            for a in &addrs {
                s.clear();
                followgraph::json::push_hex(&mut s, black_box(a));
                black_box(&s);
            }
        })
    });
    g.finish();
}

fn lookups<K, S>(c: &mut Criterion, group: &str, name: &str, all: &[K], probe: &[K])
where
    K: std::hash::Hash + Eq + Copy,
    S: BuildHasher + Default,
{
    let map: HashMap<K, u32, S> = all
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i as u32))
        .collect();
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(probe.len() as u64));
    g.bench_function(format!("lookup/{name}"), |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for k in probe {
                sum = sum.wrapping_add(*map.get(black_box(k)).expect("a hit"));
            }
            sum
        })
    });
    g.finish();
}

fn inserts<K, S>(c: &mut Criterion, group: &str, name: &str, all: &[K])
where
    K: std::hash::Hash + Eq + Copy,
    S: BuildHasher + Default,
{
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(all.len() as u64));
    g.sample_size(10);
    g.bench_function(format!("insert_1M/{name}"), |b| {
        b.iter_batched_ref(
            || HashMap::<K, u32, S>::with_capacity_and_hasher(all.len(), S::default()),
            |map| {
                for (i, &k) in all.iter().enumerate() {
                    map.insert(k, i as u32);
                }
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn hasher_benches(c: &mut Criterion) {
    type Fold = foldhash::fast::RandomState;
    let addrs = addresses(ENTRIES);
    let ids = keys(ENTRIES, 11);
    let pick = keys(LOOKUPS, 13);
    let probe_addrs: Vec<[u8; 20]> = pick
        .iter()
        .map(|&r| addrs[(r % ENTRIES as u64) as usize])
        .collect();
    let probe_ids: Vec<u64> = pick
        .iter()
        .map(|&r| ids[(r % ENTRIES as u64) as usize])
        .collect();

    lookups::<_, FastState>(c, "hasher/address", "FastState", &addrs, &probe_addrs);
    lookups::<_, Fold>(c, "hasher/address", "foldhash", &addrs, &probe_addrs);
    lookups::<_, FastState>(c, "hasher/u64", "FastState", &ids, &probe_ids);
    lookups::<_, Fold>(c, "hasher/u64", "foldhash", &ids, &probe_ids);
    inserts::<_, FastState>(c, "hasher/address", "FastState", &addrs);
    inserts::<_, Fold>(c, "hasher/address", "foldhash", &addrs);
    inserts::<_, FastState>(c, "hasher/u64", "FastState", &ids);
    inserts::<_, Fold>(c, "hasher/u64", "foldhash", &ids);
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    hex_benches(&mut c);
    hasher_benches(&mut c);
    c.final_summary();
}
