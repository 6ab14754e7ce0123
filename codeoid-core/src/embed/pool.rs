//! Pooling token vectors into one sentence vector, and L2 normalization.
//!
//! Invariants: only a row's real tokens (its first `len` positions; batches are right-padded)
//! contribute; every returned vector has unit L2 norm, or is all zeros when the pooled vector
//! was zero (which a trained model does not produce).
//!
//! Deliberately not here: which pooling a model uses (`checkpoint` reads it from the
//! checkpoint); the forward pass.

use super::checkpoint::Pooling;

/// Pools one row of the last hidden state (`padded_len * dim` values, row-major) whose first
/// `len` positions are real tokens, and L2-normalizes the result.
pub(crate) fn pool_row(hidden: &[f32], len: usize, dim: usize, pooling: Pooling) -> Vec<f32> {
    let mut out = vec![0f32; dim];
    if len == 0 || hidden.len() < dim {
        // Only a tokenizer that adds no special tokens can give an empty text no tokens: its
        // vector is zero, which matches nothing.
        return out;
    }
    match pooling {
        Pooling::Cls => out.copy_from_slice(&hidden[..dim]),
        Pooling::Mean => {
            for token in hidden.chunks_exact(dim).take(len) {
                for (acc, &value) in out.iter_mut().zip(token) {
                    *acc += value;
                }
            }
            let scale = 1.0 / len as f32;
            out.iter_mut().for_each(|v| *v *= scale);
        }
    }
    l2_normalize(&mut out);
    out
}

/// Scales `vector` to unit L2 norm in place; a zero vector stays zero.
pub(crate) fn l2_normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    // sentence-transformers divides by max(norm, 1e-12); same here, so zero stays zero.
    let scale = 1.0 / norm.max(1e-12);
    vector.iter_mut().for_each(|v| *v *= scale);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_ignores_padding_and_normalizes() {
        // Two real tokens then one padded token that must not count.
        let hidden = [1.0, 0.0, 3.0, 0.0, 100.0, 100.0];
        let pooled = pool_row(&hidden, 2, 2, Pooling::Mean);
        assert_eq!(pooled, vec![1.0, 0.0]);
    }

    #[test]
    fn cls_pooling_takes_the_first_token() {
        let hidden = [3.0, 4.0, 9.0, 9.0];
        assert_eq!(pool_row(&hidden, 2, 2, Pooling::Cls), vec![0.6, 0.8]);
    }

    #[test]
    fn a_sequence_without_tokens_pools_to_zero() {
        assert_eq!(pool_row(&[], 0, 2, Pooling::Cls), vec![0.0, 0.0]);
        assert_eq!(pool_row(&[], 0, 2, Pooling::Mean), vec![0.0, 0.0]);
    }

    #[test]
    fn zero_vectors_stay_zero() {
        let mut zero = vec![0.0f32; 4];
        l2_normalize(&mut zero);
        assert!(zero.iter().all(|v| *v == 0.0));
    }
}
