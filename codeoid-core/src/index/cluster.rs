//! Topic clustering: spherical k-means (cosine on unit vectors) with k-means++ seeding from a
//! fixed seed, and a deterministic choice of k.
//!
//! How k is chosen: one k-means++ seeding of `max_k` centres is drawn once (sequential seeding,
//! so its first k centres are a valid k-means++ seeding for every smaller k); Lloyd iterations
//! run from those seeds for every k in 2..=`max_k`, and the k with the highest mean *simplified
//! silhouette* wins (for each point, `(b - a) / max(a, b)` with `a` its cosine distance to its own
//! centroid and `b` to the nearest other one). A larger k must beat a smaller one by more than
//! [`K_PREFERENCE`] to be chosen, so noise never splits a real topic.
//!
//! Invariants:
//! - Same input, same output, byte for byte: the generator is a fixed-seed SplitMix64, every tie
//!   breaks towards the lower index, and no hash-map order is involved.
//! - Bounded work: at most [`MAX_ITERATIONS`] Lloyd iterations per k, stopping early as soon as
//!   at most 0.5% of the points change cluster (none, below 200 points); the centroids returned
//!   always match the assignments returned. Vectors live in one flat `Vec<f32>`.
//! - Every cluster of the result has at least one member.
//!
//! This module knows vectors only; labels, files and times are `label`'s business.

/// Lloyd iterations per k, at most. Well-separated data converges in a handful.
pub(crate) const MAX_ITERATIONS: usize = 30;

/// How much higher a larger k's mean silhouette must be to be preferred over a smaller k.
pub(crate) const K_PREFERENCE: f32 = 0.02;

/// Candidates drawn per greedy k-means++ step (scikit-learn uses `2 + ln k`; 4 covers k <= 8).
const CANDIDATES: usize = 4;

/// The fixed seed of the k-means++ draw: the same data always gives the same clusters.
const SEED: u64 = 0x636f_6465_6f69_6421; // "codeoid!"

/// The result of clustering `n` unit vectors.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Clustering {
    /// Number of clusters.
    pub k: usize,
    /// Cluster of each point, in `0..k`.
    pub assignments: Vec<usize>,
    /// Mean simplified silhouette of the chosen k, in [-1, 1].
    pub silhouette: f32,
}

/// Clusters the `n = units.len() / dim` unit vectors in `units`, choosing k in `2..=max_k`.
/// Returns `None` when there are fewer than two distinct directions or `max_k < 2`.
pub(crate) fn cluster(units: &[f32], dim: usize, max_k: usize) -> Option<Clustering> {
    if dim == 0 {
        return None;
    }
    let n = units.len() / dim;
    let max_k = max_k.min(n);
    if max_k < 2 {
        return None;
    }
    let seeds = seed_plus_plus(units, dim, max_k);
    let mut best: Option<Clustering> = None;
    for k in 2..=seeds.len() {
        let (assignments, centroids) = lloyd(units, dim, &seeds[..k]);
        let k_used = centroids.len() / dim;
        let silhouette = simplified_silhouette(units, dim, &assignments, &centroids);
        let better = match &best {
            None => true,
            Some(b) => silhouette > b.silhouette + K_PREFERENCE,
        };
        if better {
            best = Some(Clustering {
                k: k_used,
                assignments,
                silhouette,
            });
        }
    }
    best
}

/// The dot product of two equal-length slices, with eight independent accumulators so the
/// compiler can vectorize it (a single running sum has a serial dependency it may not reorder).
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// SplitMix64: tiny, fast and fully determined by its seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform value in [0, 1).
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Greedy k-means++: the first centre uniformly; then, at each step, [`CANDIDATES`] points drawn
/// with probability proportional to the squared distance to the nearest chosen centre (for unit
/// vectors `2 - 2·cos`, so `1 - cos` up to a constant), keeping the one that lowers the total
/// distance most. Plain k-means++ can miss a well-separated group by bad luck; the greedy draw
/// makes that vanishingly rare at a small cost. Stops early when every point coincides with a
/// centre.
fn seed_plus_plus(units: &[f32], dim: usize, k: usize) -> Vec<usize> {
    let n = units.len() / dim;
    let mut rng = SplitMix64(SEED);
    let first = (rng.next_u64() % n as u64) as usize;
    let mut seeds = vec![first];
    let mut nearest: Vec<f64> = (0..n)
        .map(|i| distance(row(units, dim, i), row(units, dim, first)))
        .collect();
    let mut trial = vec![0.0f64; n];
    let mut best_trial = vec![0.0f64; n];
    while seeds.len() < k {
        let total: f64 = nearest.iter().sum();
        if total <= 1e-9 {
            break;
        }
        let mut best: Option<(usize, f64)> = None;
        for _ in 0..CANDIDATES {
            let Some(candidate) = draw(&nearest, rng.next_f64() * total) else {
                continue;
            };
            let centre = row(units, dim, candidate);
            let mut potential = 0.0;
            for (i, (t, &d)) in trial.iter_mut().zip(&nearest).enumerate() {
                *t = d.min(distance(row(units, dim, i), centre));
                potential += *t;
            }
            if best.is_none_or(|(_, p)| potential < p) {
                best = Some((candidate, potential));
                std::mem::swap(&mut trial, &mut best_trial);
            }
        }
        let Some((next, _)) = best else {
            break;
        };
        seeds.push(next);
        std::mem::swap(&mut nearest, &mut best_trial);
    }
    seeds
}

/// The index whose cumulative weight first exceeds `target` (a point at distance 0 is never
/// drawn). Rounding can leave `target` just above the last running sum: the last candidate then.
fn draw(weights: &[f64], target: f64) -> Option<usize> {
    let mut running = 0.0;
    for (i, &w) in weights.iter().enumerate() {
        running += w;
        if w > 0.0 && running > target {
            return Some(i);
        }
    }
    weights.iter().rposition(|&w| w > 0.0)
}

fn distance(a: &[f32], b: &[f32]) -> f64 {
    f64::from((1.0 - dot(a, b)).max(0.0))
}

fn row(units: &[f32], dim: usize, i: usize) -> &[f32] {
    &units[i * dim..(i + 1) * dim]
}

/// Lloyd iterations from the given seed points. Returns the assignments and the flat centroids
/// (`k × dim`, unit length); a cluster that empties is re-seeded with the point farthest from
/// its own centroid, so none stays empty.
fn lloyd(units: &[f32], dim: usize, seeds: &[usize]) -> (Vec<usize>, Vec<f32>) {
    let n = units.len() / dim;
    let k = seeds.len();
    let mut centroids: Vec<f32> = seeds
        .iter()
        .flat_map(|&s| row(units, dim, s).iter().copied())
        .collect();
    let mut assignments = vec![usize::MAX; n];
    let mut similarity = vec![0.0f32; n];
    // Noise-like data keeps moving a few boundary points for many iterations; those moves do
    // not change what a topic is about, so a 0.5% churn counts as converged.
    let tolerance = n / 200;
    for _ in 0..MAX_ITERATIONS {
        let mut changed = 0usize;
        for i in 0..n {
            let x = row(units, dim, i);
            let (mut best, mut best_sim) = (0, f32::NEG_INFINITY);
            for c in 0..k {
                let s = dot(x, row(&centroids, dim, c));
                if s > best_sim {
                    (best, best_sim) = (c, s);
                }
            }
            similarity[i] = best_sim;
            if assignments[i] != best {
                assignments[i] = best;
                changed += 1;
            }
        }
        if changed == 0 {
            break;
        }
        recompute_centroids(units, dim, &mut assignments, &similarity, &mut centroids);
        if changed <= tolerance {
            break;
        }
    }
    (assignments, centroids)
}

fn recompute_centroids(
    units: &[f32],
    dim: usize,
    assignments: &mut [usize],
    similarity: &[f32],
    centroids: &mut [f32],
) {
    let k = centroids.len() / dim;
    let mut counts = vec![0usize; k];
    centroids.fill(0.0);
    for (i, &c) in assignments.iter().enumerate() {
        counts[c] += 1;
        let target = &mut centroids[c * dim..(c + 1) * dim];
        for (t, x) in target.iter_mut().zip(row(units, dim, i)) {
            *t += x;
        }
    }
    let mut taken = vec![false; assignments.len()];
    for c in 0..k {
        if counts[c] == 0 {
            // The worst-fitting point (lowest similarity to its centroid, lowest index on ties)
            // that does not leave its own cluster empty starts the empty cluster.
            let donor = (0..assignments.len())
                .filter(|&i| !taken[i] && counts[assignments[i]] > 1)
                .min_by(|&a, &b| similarity[a].total_cmp(&similarity[b]));
            if let Some(i) = donor {
                taken[i] = true;
                counts[assignments[i]] -= 1;
                counts[c] = 1;
                let old = assignments[i];
                for (t, x) in centroids[old * dim..(old + 1) * dim]
                    .iter_mut()
                    .zip(row(units, dim, i))
                {
                    *t -= x;
                }
                centroids[c * dim..(c + 1) * dim].copy_from_slice(row(units, dim, i));
                assignments[i] = c;
            }
        }
    }
    for c in 0..k {
        normalize(&mut centroids[c * dim..(c + 1) * dim]);
    }
}

/// Scales `v` to unit length; returns `false` (leaving `v` alone) when it is zero.
pub(crate) fn normalize(v: &mut [f32]) -> bool {
    let norm = dot(v, v).sqrt();
    // NaN norms (from overflowing components) count as zero too.
    if norm.is_nan() || norm <= 1e-12 {
        return false;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    true
}

fn simplified_silhouette(
    units: &[f32],
    dim: usize,
    assignments: &[usize],
    centroids: &[f32],
) -> f32 {
    let k = centroids.len() / dim;
    let n = assignments.len();
    if n == 0 || k < 2 {
        return 0.0;
    }
    let mut total = 0.0f64;
    for (i, &own) in assignments.iter().enumerate() {
        let x = row(units, dim, i);
        let mut a = 0.0f32;
        let mut b = f32::INFINITY;
        for c in 0..k {
            let d = (1.0 - dot(x, row(centroids, dim, c))).max(0.0);
            if c == own {
                a = d;
            } else {
                b = b.min(d);
            }
        }
        let denominator = a.max(b);
        if denominator > 0.0 {
            total += f64::from((b - a) / denominator);
        }
    }
    (total / n as f64) as f32
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `clusters` well-separated groups of `per` unit vectors in `dim` dimensions: each group is
    /// a distinct basis direction plus small deterministic noise. Returns vectors and true labels.
    pub(crate) fn separated(clusters: usize, per: usize, dim: usize) -> (Vec<f32>, Vec<usize>) {
        let mut rng = SplitMix64(7);
        let mut units = Vec::new();
        let mut labels = Vec::new();
        for i in 0..clusters * per {
            let group = (i * 7919) % clusters; // interleaved, so order does not give it away
            let mut v: Vec<f32> = (0..dim)
                .map(|_| (rng.next_f64() as f32 - 0.5) * 0.2)
                .collect();
            v[group * 3 % dim] += 1.0;
            v[(group * 3 + 1) % dim] += 0.5;
            assert!(normalize(&mut v));
            units.extend(v);
            labels.push(group);
        }
        (units, labels)
    }

    /// `true` when `found` is `truth` up to a renaming of clusters.
    pub(crate) fn same_partition(found: &[usize], truth: &[usize]) -> bool {
        let mut map = std::collections::BTreeMap::new();
        let mut back = std::collections::BTreeMap::new();
        found
            .iter()
            .zip(truth)
            .all(|(f, t)| *map.entry(f).or_insert(t) == t && *back.entry(t).or_insert(f) == f)
    }

    #[test]
    fn dot_matches_the_naive_sum() {
        let a: Vec<f32> = (0..37).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..37).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-3);
    }

    #[test]
    fn well_separated_clusters_are_recovered_with_the_right_k() {
        for clusters in [2, 3, 5, 8] {
            let (units, truth) = separated(clusters, 40, 32);
            let found = cluster(&units, 32, 8).unwrap();
            assert_eq!(found.k, clusters, "k for {clusters} true clusters");
            assert!(
                same_partition(&found.assignments, &truth),
                "{clusters} clusters"
            );
            assert!(found.silhouette > 0.5, "{}", found.silhouette);
        }
    }

    #[test]
    fn the_same_data_gives_the_same_clusters() {
        let (units, _) = separated(4, 50, 48);
        let first = cluster(&units, 48, 8).unwrap();
        for _ in 0..3 {
            assert_eq!(cluster(&units, 48, 8).unwrap(), first);
        }
    }

    #[test]
    fn degenerate_inputs_give_no_clustering_or_no_empty_cluster() {
        assert!(cluster(&[], 4, 8).is_none());
        assert!(cluster(&[1.0, 0.0], 2, 8).is_none(), "one point");
        let same = [1.0f32, 0.0].repeat(50);
        assert!(cluster(&same, 2, 8).is_none(), "one direction only");
        // Two directions but k up to 8: every reported cluster has members.
        let mut two = [1.0f32, 0.0].repeat(20);
        two.extend([0.0f32, 1.0].repeat(20));
        let found = cluster(&two, 2, 8).unwrap();
        assert_eq!(found.k, 2);
        for c in 0..found.k {
            assert!(found.assignments.contains(&c));
        }
    }

    #[test]
    fn empty_clusters_are_reseeded() {
        // Seeds on two identical points would leave one cluster empty after assignment.
        let mut units = [1.0f32, 0.0].repeat(10);
        units.extend([0.0f32, 1.0].repeat(10));
        let (assignments, centroids) = lloyd(&units, 2, &[0, 1, 10]);
        assert_eq!(centroids.len(), 6);
        for c in 0..3 {
            assert!(
                assignments.contains(&c),
                "cluster {c} empty: {assignments:?}"
            );
        }
    }
}
