//! Int8 vectors: how the vector index keeps 100,000 episodes' windows in a quarter of the memory
//! f32 would take, and the dot-product kernel that scans them.
//!
//! A unit vector `x` is stored as `q = round(x * 127 / max|x|)` (symmetric, one scale per row),
//! so `x ≈ q * scale` with `scale = max|x| / 127`, and `a · b ≈ scale_a * scale_b * Σ qa·qb` with
//! the sum taken exactly in 32-bit integers. For 384-dimensional sentence embeddings the
//! approximation is within about 0.005 of the f32 cosine (tested below); retrieval uses it to
//! choose candidates, then rescores them with the query in f32 against the same rows, which
//! leaves only the rows' own rounding.
//!
//! The kernel is a plain loop with independent accumulators that the compiler vectorizes
//! (sign-extend to 16 bits, multiply-add pairs into 32 bits); it is compiled for the baseline
//! x86-64 target and, chosen at run time, for AVX2 and AVX-512BW, so no `target-cpu` flag is
//! needed. Deliberately not here: which rows to scan (the index) and what a score means.

/// Scale and int8 components of `vector`, written to `out` (same length). A zero vector gets
/// scale 0 and all-zero components.
pub(crate) fn quantize_into(vector: &[f32], out: &mut [i8]) -> f32 {
    let max = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        out.iter_mut().for_each(|q| *q = 0);
        return 0.0;
    }
    let inv = 127.0 / max;
    for (q, x) in out.iter_mut().zip(vector) {
        // In range by construction: |x| <= max, so |x * inv| <= 127.
        *q = (x * inv).round().clamp(-127.0, 127.0) as i8;
    }
    max / 127.0
}

/// The int8 form of `vector`: its components and scale.
pub(crate) fn quantize(vector: &[f32]) -> (Vec<i8>, f32) {
    let mut out = vec![0i8; vector.len()];
    let scale = quantize_into(vector, &mut out);
    (out, scale)
}

/// `Σ a[i] * b[i]` over equal-length int8 slices, exactly, in 32 bits.
///
/// Wrapping arithmetic on purpose: the products (at most 127² = 16,129) and their sum over any
/// realistic width (under 130,000 dimensions) cannot overflow, and without overflow checks
/// (which debug and test builds enable) the loop vectorizes in every build.
#[inline(always)]
fn dot_generic(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 32;
    let mut acc = [0i32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (a_rest, b_rest) = (a_chunks.remainder(), b_chunks.remainder());
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..LANES {
            acc[i] = acc[i].wrapping_add(i32::from(x[i]).wrapping_mul(i32::from(y[i])));
        }
    }
    let mut sum = acc.iter().fold(0i32, |s, v| s.wrapping_add(*v));
    for (x, y) in a_rest.iter().zip(b_rest) {
        sum = sum.wrapping_add(i32::from(*x).wrapping_mul(i32::from(*y)));
    }
    sum
}

/// Writes `dot(query, row)` for each `dim`-wide row of `rows` into `out` (one per row).
#[inline(always)]
fn dots_generic(query: &[i8], rows: &[i8], out: &mut [i32]) {
    let dim = query.len();
    for (row, slot) in rows.chunks_exact(dim).zip(out.iter_mut()) {
        *slot = dot_generic(query, row);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2(query: &[i8], rows: &[i8], out: &mut [i32]) {
    dots_generic(query, rows, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
fn dots_avx512(query: &[i8], rows: &[i8], out: &mut [i32]) {
    dots_generic(query, rows, out);
}

/// Which compiled variant of the kernel this CPU runs, detected once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Generic,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

fn variant() -> Variant {
    static VARIANT: std::sync::OnceLock<Variant> = std::sync::OnceLock::new();
    *VARIANT.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
            {
                return Variant::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") {
                return Variant::Avx2;
            }
        }
        Variant::Generic
    })
}

/// `out[r] = Σ query[i] * rows[r * dim + i]` for every `dim = query.len()`-wide row of `rows`;
/// `out` must hold `rows.len() / dim` values (extra rows or slots are ignored).
pub(crate) fn dots(query: &[i8], rows: &[i8], out: &mut [i32]) {
    if query.is_empty() {
        return;
    }
    match variant() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `variant()` returned Avx512 only after detecting AVX-512F and AVX-512BW.
        Variant::Avx512 => unsafe { dots_avx512(query, rows, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `variant()` returned Avx2 only after detecting AVX2.
        Variant::Avx2 => unsafe { dots_avx2(query, rows, out) },
        Variant::Generic => dots_generic(query, rows, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random unit vector (SplitMix64).
    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut state = seed;
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }

    #[test]
    fn int8_dot_products_track_f32_cosines() {
        let dim = 384;
        let query = unit(1, dim);
        let (q, qs) = quantize(&query);
        let mut worst = 0.0f32;
        for seed in 2..200 {
            // Mix in the query so some pairs are strongly similar.
            let other = unit(seed, dim);
            let t = (seed % 10) as f32 / 10.0;
            let mut mixed: Vec<f32> = other
                .iter()
                .zip(&query)
                .map(|(o, x)| t * x + (1.0 - t) * o)
                .collect();
            let norm = mixed.iter().map(|x| x * x).sum::<f32>().sqrt();
            mixed.iter_mut().for_each(|x| *x /= norm);
            let exact: f32 = mixed.iter().zip(&query).map(|(a, b)| a * b).sum();
            let (r, rs) = quantize(&mixed);
            let mut out = [0i32; 1];
            dots(&q, &r, &mut out);
            let approx = out[0] as f32 * qs * rs;
            worst = worst.max((approx - exact).abs());
        }
        assert!(worst < 0.005, "worst int8 error {worst}");
    }

    #[test]
    fn kernel_variants_agree_exactly_including_ragged_tails() {
        for dim in [1, 7, 31, 32, 33, 384, 385] {
            let query: Vec<i8> = (0..dim).map(|i| ((i * 37) % 255) as i8).collect();
            let rows: Vec<i8> = (0..dim * 5).map(|i| ((i * 91 + 3) % 255) as i8).collect();
            let expected: Vec<i32> = rows
                .chunks_exact(dim)
                .map(|row| {
                    row.iter()
                        .zip(&query)
                        .map(|(a, b)| i32::from(*a) * i32::from(*b))
                        .sum()
                })
                .collect();
            let mut out = vec![0i32; 5];
            dots(&query, &rows, &mut out);
            assert_eq!(out, expected, "dim {dim}");
            let mut generic = vec![0i32; 5];
            dots_generic(&query, &rows, &mut generic);
            assert_eq!(generic, expected, "dim {dim}");
        }
    }

    #[test]
    fn extremes_quantize_to_the_full_range_and_zero_stays_zero() {
        let (q, s) = quantize(&[1.0, -1.0, 0.5, 0.0]);
        assert_eq!(q, [127, -127, 64, 0]);
        assert!((s - 1.0 / 127.0).abs() < 1e-9);
        let (q, s) = quantize(&[0.0; 4]);
        assert_eq!((q, s), (vec![0; 4], 0.0));
    }
}
