//! SplitMix64, the one seeded random number generator of the project (no
//! `rand` dependency): the synthetic snapshot generator, the indexer
//! writer's hash noise, the HTTP bench's request paths and the integration
//! tests' request mixes all draw from it, so a seed names the same data
//! everywhere.
//!
//! - [`mix64`] is SplitMix64's finaliser, a bijection on `u64` with good
//!   avalanche; [`keyed`] gives the value at any index of a keyed stream
//!   directly, for per-item values drawn in parallel without shared state.
//! - [`SplitMix64`] is the seeded stream with unbiased draws (Lemire's
//!   multiply-high reduction, 53-bit uniform floats): the generator's.
//! - [`ModuloRng`] is the same stream drawn by `next % n` and percent
//!   chances: the draws the HTTP bench and the integration tests were
//!   written with, kept so that their paths and cases for a seed stay the
//!   same.

/// The golden-ratio increment of SplitMix64 (2^64 / φ, odd).
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 finaliser: a bijection on `u64` with good avalanche.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `mix64(mix64(key) + index * GOLDEN)`: output `index` of the stream
/// seeded `mix64(key)` (output 0 being the finalised seed itself), without
/// drawing the outputs before it.
pub fn keyed(key: u64, index: u64) -> u64 {
    mix64(mix64(key).wrapping_add(index.wrapping_mul(GOLDEN)))
}

/// 53 random bits as a float in `[0, 1)`.
fn unit_of(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A SplitMix64 stream; the field is its state (the seed, before any
/// draw).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix64(self.0)
    }

    /// Uniform in `0..n` (n > 0), Lemire's multiply-high (bias < 2^-64 * n).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        unit_of(self.next_u64())
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A uniformly chosen item of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The [`SplitMix64`] stream drawn by modulo reduction (slightly biased to
/// small values) and percent chances, as the HTTP bench's request paths and
/// the integration tests' request mixes have always been drawn; the field
/// is the state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuloRng(pub u64);

impl ModuloRng {
    /// The next output of the stream (the same as [`SplitMix64::next_u64`]).
    #[allow(clippy::should_implement_trait)] // never ends: not an iterator
    pub fn next(&mut self) -> u64 {
        let mut stream = SplitMix64(self.0);
        let out = stream.next_u64();
        self.0 = stream.0;
        out
    }

    /// `next() % n`, in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// True with probability `p` (a 53-bit uniform in `[0, 1)` at most `p`).
    pub fn with_probability(&mut self, p: f64) -> bool {
        unit_of(self.next()) <= p
    }

    /// An item of a non-empty slice of references, as the reference.
    pub fn pick<'a, T: ?Sized>(&mut self, items: &[&'a T]) -> &'a T {
        items[self.below(items.len())]
    }

    /// An item of a non-empty slice.
    pub fn pick_item<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference SplitMix64 outputs for seed 0 (Vigna's splitmix64.c).
    #[test]
    fn matches_the_reference_stream() {
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
        let mut m = ModuloRng(0);
        assert_eq!(m.next(), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn keyed_is_random_access_into_the_stream() {
        for key in [0, 1, 0x5107_5eed, u64::MAX] {
            assert_eq!(keyed(key, 0), mix64(mix64(key)));
            let mut r = SplitMix64::new(mix64(key));
            for index in 1..20 {
                assert_eq!(keyed(key, index), r.next_u64(), "key {key} index {index}");
            }
        }
    }

    #[test]
    fn both_flavours_draw_the_same_stream() {
        let (mut s, mut m) = (SplitMix64::new(42), ModuloRng(42));
        for _ in 0..100 {
            assert_eq!(s.clone().next_u64(), m.clone().next());
            let x = s.next_u64();
            assert_eq!(m.below(1000) as u64, x % 1000);
        }
        assert_eq!(s.0, m.0);
    }

    #[test]
    fn draws_stay_in_range() {
        let mut s = SplitMix64::new(7);
        let mut m = ModuloRng(7);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            seen[s.below(5) as usize] = true;
            assert!(m.below(5) < 5);
            let u = s.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert!(seen.iter().all(|&x| x));
        assert!(!s.chance(0.0) && s.chance(1.0));
        assert!(!m.chance(0) && m.chance(100));
        assert!(!m.with_probability(-1.0) && m.with_probability(1.0));
        assert_eq!(*s.pick(&[3]), 3);
        assert_eq!(m.pick(&["a"]), "a");
        assert_eq!(*m.pick_item(&[4]), 4);
    }

    /// Lemire's reduction and modulo reduction differ: the two flavours are
    /// not interchangeable for a recorded seed.
    #[test]
    fn unbiased_and_modulo_reductions_differ() {
        let (mut s, mut m) = (SplitMix64::new(3), ModuloRng(3));
        let a: Vec<u64> = (0..32).map(|_| s.below(10)).collect();
        let b: Vec<u64> = (0..32).map(|_| m.below(10) as u64).collect();
        assert_ne!(a, b);
    }
}
