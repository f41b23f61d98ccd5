//! Parallel counting sorts into CSR rows, shared by the indexes laid out
//! per account (notifications by target, followers by followed account):
//! `row_offsets_par` counts each row's items, `scatter_row_pairs` places
//! them. Both run on rayon's current pool.

use rayon::prelude::*;

/// CSR offsets (n + 1) of rows holding `items` by `row_of`, counted in
/// parallel (a count table per thread).
pub(super) fn row_offsets_par<T: Sync>(
    n: usize,
    items: &[T],
    row_of: impl Fn(&T) -> u32 + Sync,
) -> Vec<usize> {
    let part = items.len().div_ceil(rayon::current_num_threads()).max(1);
    let counts: Vec<Vec<u32>> = items
        .par_chunks(part)
        .map(|chunk| {
            let mut count = vec![0u32; n];
            for item in chunk {
                count[row_of(item) as usize] += 1;
            }
            count
        })
        .collect();
    let mut offsets = vec![0usize; n + 1];
    for count in &counts {
        for (o, &c) in offsets[1..].iter_mut().zip(count) {
            *o += c as usize;
        }
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    offsets
}

/// Items with two values each placed in CSR rows (laid out by `offsets`)
/// in two arrays laid out alike, rows keeping the order in which `visit`
/// hands the (row, a, b) items to its argument (the same order every
/// time it is called): a counting sort. The scatter's writes are random,
/// one cache miss each, so it runs in parallel: each task owns a range of
/// rows holding about the same number of items and scans all the items
/// for its own. `put` returns where an item landed when the calling task
/// owns its row (each item lands once: use the position when `Some`).
pub(super) fn scatter_row_pairs<A, B>(
    offsets: &[usize],
    visit: impl Fn(&mut dyn FnMut(u32, A, B) -> Option<usize>) + Sync,
) -> (Vec<A>, Vec<B>)
where
    A: Copy + Default + Send,
    B: Copy + Default + Send,
{
    let rows = offsets.len().saturating_sub(1);
    let total = offsets.last().copied().unwrap_or(0);
    let mut out_a = vec![A::default(); total];
    let mut out_b = vec![B::default(); total];
    let parts = rayon::current_num_threads().max(1);
    // Row boundaries of the parts: 0 = b_0 <= b_1 <= ... <= b_parts = rows.
    let mut bounds: Vec<usize> = (0..parts)
        .map(|k| {
            offsets
                .partition_point(|&o| o < total / parts * k)
                .saturating_sub(1)
        })
        .collect();
    bounds[0] = 0;
    bounds.push(rows);
    for k in 1..bounds.len() {
        bounds[k] = bounds[k].max(bounds[k - 1]);
    }
    let mut slices = Vec::with_capacity(parts);
    let (mut rest_a, mut rest_b) = (out_a.as_mut_slice(), out_b.as_mut_slice());
    for w in bounds.windows(2) {
        let len = offsets[w[1]] - offsets[w[0]];
        let (part_a, tail_a) = std::mem::take(&mut rest_a).split_at_mut(len);
        let (part_b, tail_b) = std::mem::take(&mut rest_b).split_at_mut(len);
        slices.push((w[0]..w[1], part_a, part_b));
        (rest_a, rest_b) = (tail_a, tail_b);
    }
    slices.into_par_iter().for_each(|(range, part_a, part_b)| {
        let base = offsets[range.start];
        let mut cursor: Vec<usize> = offsets[range.clone()].iter().map(|&o| o - base).collect();
        visit(&mut |row, a, b| {
            let row = row as usize;
            if !range.contains(&row) {
                return None;
            }
            let c = &mut cursor[row - range.start];
            part_a[*c] = a;
            part_b[*c] = b;
            *c += 1;
            Some(base + *c - 1)
        });
    });
    (out_a, out_b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_row_pairs_is_a_stable_counting_sort() {
        // Skewed rows (one holds most items), empty rows, skipped items.
        let rows: Vec<u32> = (0..1000u32)
            .map(|i| match i % 10 {
                0..=5 => 3,
                6 => u32::MAX,
                7 => 0,
                _ => 4 + i % 5,
            })
            .collect();
        let kept: Vec<u32> = rows.iter().copied().filter(|&r| r != u32::MAX).collect();
        let mut want: Vec<(u32, usize)> = rows
            .iter()
            .enumerate()
            .filter(|&(_, &r)| r != u32::MAX)
            .map(|(i, &r)| (r, i))
            .collect();
        want.sort(); // by row, then item index: the scan order
        let want: Vec<usize> = want.iter().map(|&(_, i)| i).collect();
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let offsets = pool.install(|| row_offsets_par(9, &kept, |&r| r));
            assert_eq!(offsets.len(), 10);
            assert_eq!(offsets[9], kept.len());
            let placed = std::sync::Mutex::new(Vec::new());
            let (got, doubled) = pool.install(|| {
                scatter_row_pairs(&offsets, |put| {
                    let mut mine = Vec::new();
                    for (i, &r) in rows.iter().enumerate() {
                        if r != u32::MAX {
                            if let Some(at) = put(r, i, 2 * i as u64) {
                                mine.push((i, at));
                            }
                        }
                    }
                    crate::sync::lock(&placed).append(&mut mine);
                })
            });
            assert_eq!(got, want);
            assert_eq!(
                doubled,
                want.iter().map(|&i| 2 * i as u64).collect::<Vec<_>>()
            );
            let mut placed = placed.into_inner().unwrap();
            placed.sort();
            assert_eq!(placed.len(), kept.len(), "each item lands once");
            for (i, at) in placed {
                assert_eq!(got[at], i);
            }
        }
        let (empty, _): (Vec<u8>, Vec<u8>) = scatter_row_pairs(&[0], |_| {});
        assert!(empty.is_empty());
    }
}
