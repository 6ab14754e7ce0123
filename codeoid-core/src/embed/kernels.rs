//! The dense math of the encoder on plain `f32` slices: matrix multiply (through `gemm`, the
//! kernel library candle's CPU backend uses), layer normalization, GELU, softmax, and the fast
//! `exp`/`erf` they need.
//!
//! Why not candle tensors: candle's element-wise GELU and softmax evaluate `erf`/`exp` one scalar
//! at a time and allocate a tensor per operation, which cost as much as the matrix multiplies on
//! a small model. Here the element-wise loops are written so the compiler vectorizes them
//! (polynomial `exp`/`erf`, several independent accumulators for reductions) and are compiled
//! three times: for the baseline x86-64 target and, selected at run time, for AVX2+FMA and for
//! AVX-512, so the library stays portable (no `target-cpu` flag) yet uses the wide units where
//! present.
//!
//! Accuracy: `exp` has a relative error below 3e-7 over the float range and `erf` an absolute
//! error below 6e-7 (both checked by the tests below), well inside the 1e-4 the reference test allows for a whole forward pass.
//!
//! Deliberately not here: the layer structure of BERT (`bert`), pooling (`pool`).

use gemm::Parallelism;

/// Below this many multiply-adds a matrix multiply runs on the calling thread: splitting a
/// 10-token query across threads costs more than it saves.
const PARALLEL_MIN_MACS: usize = 1 << 21;

/// `dst[m, n] = scale * lhs[m, k] × rhs[k, n]`, all row-major with the given row strides
/// (`lhs_rs`, `rhs_rs`, `dst_rs` in elements; columns are contiguous), or with `rhs_transposed`,
/// `rhs` holds the transpose (`[n, k]`, row stride `rhs_rs`).
///
/// # Panics
/// When a slice is too short for the shape and strides; callers derive both from one layout.
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul(
    dst: &mut [f32],
    dst_rs: usize,
    lhs: &[f32],
    lhs_rs: usize,
    rhs: &[f32],
    rhs_rs: usize,
    rhs_transposed: bool,
    (m, k, n): (usize, usize, usize),
    scale: f32,
    threads: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    // The bounds the raw-pointer call below relies on.
    assert!(k > 0 && lhs.len() >= (m - 1) * lhs_rs + k && dst.len() >= (m - 1) * dst_rs + n);
    let (rhs_row_step, rhs_col_step) = if rhs_transposed {
        (1, rhs_rs)
    } else {
        (rhs_rs, 1)
    };
    assert!(rhs.len() > (k - 1) * rhs_row_step + (n - 1) * rhs_col_step);
    let parallelism = if threads > 1 && m * k * n >= PARALLEL_MIN_MACS {
        Parallelism::Rayon(threads)
    } else {
        Parallelism::None
    };
    // SAFETY: the asserts above keep every element the shapes and strides address inside the
    // slices; `dst` is exclusively borrowed and does not overlap `lhs` or `rhs` (distinct
    // borrows); `read_dst` is false, so `dst` need not be initialized to anything in particular.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs as isize,
            false,
            lhs.as_ptr(),
            1,
            lhs_rs as isize,
            rhs.as_ptr(),
            rhs_col_step as isize,
            rhs_row_step as isize,
            0.0,
            scale,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// Compiles `$body` (a function body over slices) three times: for the baseline target, with
/// AVX2+FMA, and with AVX-512, and dispatches at run time to the widest the CPU has.
macro_rules! multiversion {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn generic($($arg: $ty),*) $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2($($arg: $ty),*) {
                generic($($arg),*)
            }

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
            fn avx512($($arg: $ty),*) {
                generic($($arg),*)
            }

            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl") {
                // SAFETY: the CPU supports AVX-512F/VL (which imply AVX2 and FMA), checked just above.
                return unsafe { avx512($($arg),*) };
            }
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU supports AVX2 and FMA, checked just above.
                return unsafe { avx2($($arg),*) };
            }
            generic($($arg),*)
        }
    };
}

/// `e^x` for a lane of values; vectorizable (no branches, no libm call).
#[inline(always)]
fn exp_approx(x: f32) -> f32 {
    // Cephes expf: e^x = 2^n * e^r with |r| <= ln2/2, e^r by a degree-6 polynomial.
    let x = x.clamp(-87.0, 88.0);
    // Round to nearest by adding 1.5 * 2^23: the sum's low mantissa bits then hold n as a
    // two's-complement integer. Reading n from the bits (rather than `n as i32`, whose
    // saturating semantics the compiler cannot vectorize) keeps the whole function in SIMD.
    let shifted = x * std::f32::consts::LOG2_E + 12_582_912.0;
    let n_bits = shifted.to_bits().wrapping_sub(0x4B40_0000);
    let n = shifted - 12_582_912.0;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let p = 1.987_569_1e-4_f32;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 0.5;
    let er = p * r * r + r + 1.0;
    // x is clamped, so n + 127 is a valid normal exponent (1..=254).
    er * f32::from_bits(n_bits.wrapping_add(127) << 23)
}

/// `erf(x)`, Abramowitz & Stegun 7.1.26 (absolute error 1.5e-7 in exact arithmetic, below
/// 6e-7 in f32).
#[inline(always)]
fn erf_approx(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_4 * t - 1.453_152) * t + 1.421_413_8) * t - 0.284_496_74) * t
        + 0.254_829_6)
        * t;
    let y = 1.0 - poly * exp_approx(-a * a);
    y.copysign(x)
}

multiversion! {
    /// In place: `x = x * Φ(x)`, the exact (erf) GELU of BERT.
    pub(crate) fn gelu(values: &mut [f32]) {
        for v in values.iter_mut() {
            *v = 0.5 * *v * (1.0 + erf_approx(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

multiversion! {
    /// In place: the tanh approximation of GELU (`gelu_new`).
    pub(crate) fn gelu_tanh(values: &mut [f32]) {
        for v in values.iter_mut() {
            let x = *v;
            let inner = 0.797_884_6 * (x + 0.044_715 * x * x * x);
            // tanh(u) = 1 - 2 / (e^{2u} + 1)
            let tanh = 1.0 - 2.0 / (exp_approx(2.0 * inner) + 1.0);
            *v = 0.5 * x * (1.0 + tanh);
        }
    }
}

multiversion! {
    /// In place: `max(x, 0)`.
    pub(crate) fn relu(values: &mut [f32]) {
        for v in values.iter_mut() {
            *v = v.max(0.0);
        }
    }
}

const LANES: usize = 16;

#[inline(always)]
fn sum(values: &[f32]) -> f32 {
    // Independent accumulators let the compiler vectorize a float sum it may not reorder.
    let mut acc = [0f32; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (a, v) in acc.iter_mut().zip(chunk) {
            *a += *v;
        }
    }
    acc.iter().sum::<f32>() + rest.iter().sum::<f32>()
}

#[inline(always)]
fn max(values: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (a, v) in acc.iter_mut().zip(chunk) {
            // A plain comparison (not `f32::max`, whose NaN rule costs a blend) maps to `maxps`.
            *a = if *v > *a { *v } else { *a };
        }
    }
    acc.iter()
        .chain(rest)
        .fold(f32::NEG_INFINITY, |m, v| if *v > m { *v } else { m })
}

multiversion! {
    /// In place, each row of `width`: `x = LayerNorm(x + residual) * gamma + beta`.
    pub(crate) fn add_layer_norm(rows: &mut [f32], residual: &[f32], gamma: &[f32], beta: &[f32], eps: f32) {
        let width = gamma.len();
        for (row, res) in rows.chunks_exact_mut(width).zip(residual.chunks_exact(width)) {
            for (x, r) in row.iter_mut().zip(res) {
                *x += *r;
            }
            let mean = sum(row) / width as f32;
            for x in row.iter_mut() {
                *x -= mean;
            }
            let mut acc = [0f32; LANES];
            for chunk in row.chunks_exact(LANES) {
                for (a, v) in acc.iter_mut().zip(chunk) {
                    *a += *v * *v;
                }
            }
            let tail: f32 = row.chunks_exact(LANES).remainder().iter().map(|v| v * v).sum();
            let var = (acc.iter().sum::<f32>() + tail) / width as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((x, g), b) in row.iter_mut().zip(gamma).zip(beta) {
                *x = *x * inv * *g + *b;
            }
        }
    }
}

multiversion! {
    /// In place, each row of `width`: `x = softmax(x)`.
    pub(crate) fn softmax_rows(rows: &mut [f32], width: usize) {
        for row in rows.chunks_exact_mut(width) {
            let top = max(row);
            for x in row.iter_mut() {
                *x = exp_approx(*x - top);
            }
            let inv = 1.0 / sum(row);
            for x in row.iter_mut() {
                *x *= inv;
            }
        }
    }
}

multiversion! {
    /// In place, each row: `x += bias`.
    pub(crate) fn add_bias(rows: &mut [f32], bias: &[f32]) {
        for row in rows.chunks_exact_mut(bias.len()) {
            for (x, b) in row.iter_mut().zip(bias) {
                *x += *b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_erf_are_accurate() {
        for i in -2000..=2000 {
            let x = i as f32 * 0.02;
            let exp = exp_approx(x);
            let want = (x as f64).exp();
            assert!(
                ((exp as f64 - want) / want).abs() < 3e-7,
                "exp({x}) = {exp}, want {want}"
            );
            let erf = erf_approx(x);
            let want = libm_erf(x as f64);
            assert!(
                (erf as f64 - want).abs() < 6e-7,
                "erf({x}) = {erf}, want {want}"
            );
        }
        assert!(exp_approx(-1000.0) < 1e-37);
        assert!(exp_approx(1000.0).is_finite());
    }

    /// erf by its Taylor series / continued fraction in f64, for checking only.
    fn libm_erf(x: f64) -> f64 {
        if x.abs() < 3.0 {
            let mut term = x;
            let mut total = x;
            for n in 1..200 {
                term *= -x * x / n as f64;
                total += term / (2 * n + 1) as f64;
            }
            total * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            x.signum()
                * (1.0
                    - (-x * x).exp() / (x.abs() * std::f64::consts::PI.sqrt())
                        * (1.0 - 0.5 / (x * x)))
        }
    }

    #[test]
    fn softmax_and_layer_norm_match_their_definitions() {
        let mut rows = vec![1.0, 2.0, 3.0, -50.0, 0.0, 50.0];
        softmax_rows(&mut rows, 3);
        let e: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|v| v.exp()).collect();
        let total: f64 = e.iter().sum();
        for (got, want) in rows[..3].iter().zip(e.iter().map(|v| v / total)) {
            assert!((*got as f64 - want).abs() < 1e-6);
        }
        assert!((rows[5] - 1.0).abs() < 1e-6 && rows[3] < 1e-30);

        let width = 37; // not a multiple of the lane count
        let mut x: Vec<f32> = (0..width).map(|i| (i as f32 * 0.7).sin()).collect();
        let residual: Vec<f32> = (0..width).map(|i| i as f32 * 0.01).collect();
        let gamma = vec![2.0; width];
        let beta = vec![0.5; width];
        let summed: Vec<f64> = x
            .iter()
            .zip(&residual)
            .map(|(a, b)| (a + b) as f64)
            .collect();
        add_layer_norm(&mut x, &residual, &gamma, &beta, 1e-12);
        let mean = summed.iter().sum::<f64>() / width as f64;
        let var = summed.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / width as f64;
        for (got, s) in x.iter().zip(&summed) {
            let want = (s - mean) / var.sqrt() * 2.0 + 0.5;
            assert!((*got as f64 - want).abs() < 1e-5);
        }
    }

    #[test]
    fn matmul_handles_plain_and_transposed_right_hand_sides() {
        // lhs 2x3, rhs 3x2.
        let lhs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let rhs = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
        let rhs_t = [7.0, 9.0, 11.0, 8.0, 10.0, 12.0];
        let want = [58.0, 64.0, 139.0, 154.0];
        let mut dst = [0.0; 4];
        matmul(&mut dst, 2, &lhs, 3, &rhs, 2, false, (2, 3, 2), 1.0, 1);
        assert_eq!(dst, want);
        matmul(&mut dst, 2, &lhs, 3, &rhs_t, 3, true, (2, 3, 2), 0.5, 2);
        assert_eq!(dst, want.map(|v| v * 0.5));
    }
}
