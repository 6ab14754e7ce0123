//! The BERT encoder forward pass: token ids in, one hidden vector per token out.
//!
//! A small implementation of the standard post-norm BERT encoder (embeddings + LayerNorm, then
//! per layer: fused QKV projection, scaled dot-product attention, output projection + residual
//! + LayerNorm, GELU feed-forward + residual + LayerNorm), written for throughput on a CPU:
//!
//! - Sequences are *packed*, not padded: the position-wise layers (every matrix multiply, norm
//!   and activation) run over the concatenated real tokens of the batch, and attention runs per
//!   sequence over its own tokens. No work is spent on padding and no mask is needed, so a
//!   text's output cannot depend on its batch.
//! - Q, K and V come from one matrix multiply against weights concatenated at load time; all
//!   weights are stored pre-transposed (`[in, out]`), so every multiply streams them in order.
//! - Attention for each (sequence, head) pair is an independent task on the rayon pool; every
//!   other step runs on tiles of at most 256 rows, one rayon task per tile, fused from the
//!   attention output to the end of the layer so a tile's feed-forward activations stay in the
//!   core's L2 cache instead of streaming megabytes through memory for each operation.
//!
//! Weights are read with candle from `model.safetensors` (any float dtype, converted to f32);
//! tensor names follow Hugging Face's `BertModel`, with or without a `bert.` prefix.
//!
//! Deliberately not here: tokenization, pooling, normalization; the element-wise kernels
//! (`kernels`).

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor};
use rayon::prelude::*;

use super::checkpoint::BertConfig;
use super::kernels::{add_bias, add_layer_norm, gelu, gelu_tanh, matmul, relu, softmax_rows};
use crate::error::{Error, ErrorKind, Result};

#[derive(Debug, Clone, Copy)]
enum Activation {
    Gelu,
    GeluTanh,
    Relu,
}

/// A dense layer, weights stored `[inputs, outputs]` row-major.
struct Linear {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    up: Linear,
    down: Linear,
    output_norm: Norm,
}

/// A loaded BERT encoder. Immutable, so shared freely across threads.
pub(crate) struct Bert {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    max_positions: usize,
    eps: f32,
    activation: Activation,
}

/// Reads named tensors out of a safetensors buffer as f32 vectors, checking shapes.
struct Tensors<'a> {
    tensors: HashMap<String, Tensor>,
    prefix: &'static str,
    origin: &'a str,
}

impl Tensors<'_> {
    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let full = format!("{}{name}", self.prefix);
        let tensor = self.tensors.remove(&full).ok_or_else(|| {
            Error::new(
                ErrorKind::Model,
                format!("{} has no tensor {full}; it is not a BERT checkpoint or does not match its config.json", self.origin),
            )
        })?;
        if tensor.dims() != shape {
            return Err(Error::new(
                ErrorKind::Model,
                format!(
                    "{} has tensor {full} of shape {:?} but config.json implies {shape:?}; the files do not belong together",
                    self.origin,
                    tensor.dims()
                ),
            ));
        }
        tensor
            .to_dtype(DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|err| {
                Error::new(
                    ErrorKind::Model,
                    format!(
                        "cannot read tensor {full} of {}; re-download the model",
                        self.origin
                    ),
                )
                .with_source(err)
            })
    }

    /// A `Linear` from PyTorch's `[out, in]` weight, transposed to `[in, out]`.
    fn linear(&mut self, name: &str, inputs: usize, outputs: usize) -> Result<Linear> {
        let weight = self.take(&format!("{name}.weight"), &[outputs, inputs])?;
        let bias = self.take(&format!("{name}.bias"), &[outputs])?;
        Ok(Linear {
            weight: transpose(&weight, outputs, inputs),
            bias,
            inputs,
            outputs,
        })
    }

    fn norm(&mut self, name: &str, width: usize) -> Result<Norm> {
        Ok(Norm {
            gamma: self.take(&format!("{name}.weight"), &[width])?,
            beta: self.take(&format!("{name}.bias"), &[width])?,
        })
    }
}

/// `[rows, cols]` to `[cols, rows]`.
fn transpose(values: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0f32; values.len()];
    for (r, row) in values.chunks_exact(cols).enumerate() {
        for (c, v) in row.iter().enumerate() {
            out[c * rows + r] = *v;
        }
    }
    out
}

/// Concatenates linears over their outputs (Q, K, V into one `[in, 3 * out]`).
fn concat_outputs(parts: &[Linear]) -> Linear {
    let inputs = parts[0].inputs;
    let outputs: usize = parts.iter().map(|p| p.outputs).sum();
    let mut weight = Vec::with_capacity(inputs * outputs);
    for row in 0..inputs {
        for part in parts {
            weight.extend_from_slice(&part.weight[row * part.outputs..(row + 1) * part.outputs]);
        }
    }
    let bias = parts.iter().flat_map(|p| p.bias.iter().copied()).collect();
    Linear {
        weight,
        bias,
        inputs,
        outputs,
    }
}

impl Bert {
    /// Builds the encoder from the bytes of `model.safetensors` (consumed, to keep the memory
    /// peak of loading at two copies of the weights).
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the bytes are not safetensors or a tensor is missing or has
    /// the wrong shape for `config`.
    pub(crate) fn load(weights: Vec<u8>, config: &BertConfig, origin: &str) -> Result<Bert> {
        let tensors =
            candle_core::safetensors::load_buffer(&weights, &Device::Cpu).map_err(|err| {
                Error::new(
                    ErrorKind::Model,
                    format!("{origin} is not a valid safetensors file; re-download the model"),
                )
                .with_source(err)
            })?;
        // The tensors own a copy now: free the file's bytes before converting, to lower the peak.
        drop(weights);
        let prefix = if tensors.contains_key("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        let mut t = Tensors {
            tensors,
            prefix,
            origin,
        };
        let (h, i) = (config.hidden_size, config.intermediate_size);
        let word = t.take("embeddings.word_embeddings.weight", &[config.vocab_size, h])?;
        let position = t.take(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?;
        let token_type = t.take(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?;
        let embedding_norm = t.norm("embeddings.LayerNorm", h)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for index in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{index}");
            let q = t.linear(&format!("{p}.attention.self.query"), h, h)?;
            let k = t.linear(&format!("{p}.attention.self.key"), h, h)?;
            let v = t.linear(&format!("{p}.attention.self.value"), h, h)?;
            layers.push(Layer {
                qkv: concat_outputs(&[q, k, v]),
                attention_out: t.linear(&format!("{p}.attention.output.dense"), h, h)?,
                attention_norm: t.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
                up: t.linear(&format!("{p}.intermediate.dense"), h, i)?,
                down: t.linear(&format!("{p}.output.dense"), i, h)?,
                output_norm: t.norm(&format!("{p}.output.LayerNorm"), h)?,
            });
        }
        let activation = match config.hidden_act.as_str() {
            "relu" => Activation::Relu,
            "gelu_new" | "gelu_pytorch_tanh" => Activation::GeluTanh,
            _ => Activation::Gelu,
        };
        Ok(Bert {
            word,
            position,
            token_type,
            embedding_norm,
            layers,
            hidden: h,
            heads: config.num_attention_heads,
            max_positions: config.max_position_embeddings,
            eps: config.layer_norm_eps as f32,
            activation,
        })
    }

    /// The hidden width.
    pub(crate) fn hidden(&self) -> usize {
        self.hidden
    }

    /// Runs the encoder on `sequences` and returns the last hidden state of their tokens,
    /// packed: sequence after sequence, `[total tokens, hidden]`.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when a token id is outside the vocabulary or a sequence is longer
    /// than the position embeddings (the tokenizer and model do not belong together).
    pub(crate) fn forward(&self, sequences: &[&[u32]]) -> Result<Vec<f32>> {
        let h = self.hidden;
        let vocab = self.word.len() / h;
        for seq in sequences {
            if seq.len() > self.max_positions {
                return Err(Error::new(
                    ErrorKind::Model,
                    format!(
                        "a sequence of {} tokens exceeds the model's {} positions; lower max_seq_length",
                        seq.len(),
                        self.max_positions
                    ),
                ));
            }
            if let Some(&bad) = seq.iter().find(|&&id| id as usize >= vocab) {
                return Err(Error::new(
                    ErrorKind::Model,
                    format!(
                        "token id {bad} is outside the model's vocabulary of {vocab}; tokenizer.json and model.safetensors do not belong together"
                    ),
                ));
            }
        }
        let offsets: Vec<usize> = sequences
            .iter()
            .scan(0, |acc, s| {
                let start = *acc;
                *acc += s.len();
                Some(start)
            })
            .collect();
        let total: usize = sequences.iter().map(|s| s.len()).sum();
        let threads = rayon::current_num_threads();

        let mut x = vec![0f32; total * h];
        for (seq, &start) in sequences.iter().zip(&offsets) {
            for (pos, &id) in seq.iter().enumerate() {
                let row = &mut x[(start + pos) * h..(start + pos + 1) * h];
                let word = &self.word[id as usize * h..(id as usize + 1) * h];
                let position = &self.position[pos * h..(pos + 1) * h];
                for (((o, w), p), t) in row
                    .iter_mut()
                    .zip(word)
                    .zip(position)
                    .zip(&self.token_type[..h])
                {
                    *o = w + p + t;
                }
            }
        }
        let tile = tile_rows(total, threads);
        let zeros = vec![0f32; tile * h];
        x.par_chunks_mut(tile * h).for_each(|rows| {
            add_layer_norm(
                rows,
                &zeros[..rows.len()],
                &self.embedding_norm.gamma,
                &self.embedding_norm.beta,
                self.eps,
            )
        });

        // A single tile (a short query) cannot spread over threads by tiles, so its matrix
        // multiplies split their columns over the threads instead.
        let gemm_threads = if total <= tile { threads } else { 1 };
        let mut qkv = vec![0f32; total * 3 * h];
        let mut context = vec![0f32; total * h];
        for layer in &self.layers {
            qkv.par_chunks_mut(tile * 3 * h)
                .zip(x.par_chunks(tile * h))
                .for_each(|(out, rows)| dense(out, rows, &layer.qkv, gemm_threads));
            self.attention(&mut context, &qkv, sequences, &offsets);
            x.par_chunks_mut(tile * h)
                .zip(context.par_chunks(tile * h))
                .for_each(|(rows, context)| self.layer_tail(rows, context, layer, gemm_threads));
        }
        Ok(x)
    }

    /// Everything after attention for one tile of rows, in place on `x` (the layer's input):
    /// output projection, residual, LayerNorm, feed-forward, residual, LayerNorm. A tile's
    /// intermediate activations stay in the core's cache.
    fn layer_tail(&self, x: &mut [f32], context: &[f32], layer: &Layer, threads: usize) {
        let h = self.hidden;
        let rows = x.len() / h;
        let mut attended = vec![0f32; rows * h];
        dense(&mut attended, context, &layer.attention_out, threads);
        add_layer_norm(
            &mut attended,
            x,
            &layer.attention_norm.gamma,
            &layer.attention_norm.beta,
            self.eps,
        );
        let mut inner = vec![0f32; rows * layer.up.outputs];
        dense(&mut inner, &attended, &layer.up, threads);
        match self.activation {
            Activation::Gelu => gelu(&mut inner),
            Activation::GeluTanh => gelu_tanh(&mut inner),
            Activation::Relu => relu(&mut inner),
        }
        dense(x, &inner, &layer.down, threads);
        add_layer_norm(
            x,
            &attended,
            &layer.output_norm.gamma,
            &layer.output_norm.beta,
            self.eps,
        );
    }

    /// Scaled dot-product attention of every sequence over its own tokens, head by head.
    fn attention(&self, context: &mut [f32], qkv: &[f32], sequences: &[&[u32]], offsets: &[usize]) {
        let h = self.hidden;
        let d = h / self.heads;
        let stride = 3 * h;
        let scale = 1.0 / (d as f32).sqrt();
        let tasks: Vec<(usize, usize)> = (0..sequences.len())
            .filter(|&s| !sequences[s].is_empty())
            .flat_map(|s| (0..self.heads).map(move |head| (s, head)))
            .collect();
        // Each task returns its head's context rows; the scatter below is cheap next to the work.
        let results: Vec<Vec<f32>> = tasks
            .par_iter()
            .map(|&(s, head)| {
                let n = sequences[s].len();
                let base = offsets[s] * stride;
                let rows = &qkv[base..base + n * stride];
                let q = &rows[head * d..];
                let k = &rows[h + head * d..];
                let v = &rows[2 * h + head * d..];
                let mut scores = vec![0f32; n * n];
                matmul(
                    &mut scores,
                    n,
                    q,
                    stride,
                    k,
                    stride,
                    true,
                    (n, d, n),
                    scale,
                    1,
                );
                softmax_rows(&mut scores, n);
                let mut out = vec![0f32; n * d];
                matmul(&mut out, d, &scores, n, v, stride, false, (n, n, d), 1.0, 1);
                out
            })
            .collect();
        for (&(s, head), out) in tasks.iter().zip(results) {
            for (pos, values) in out.chunks_exact(d).enumerate() {
                let row = (offsets[s] + pos) * h + head * d;
                context[row..row + d].copy_from_slice(values);
            }
        }
    }
}

/// `out = input × weight + bias` for the rows of `input`, on `threads` threads (1 when callers
/// already parallelize over tiles of rows).
fn dense(out: &mut [f32], input: &[f32], linear: &Linear, threads: usize) {
    let rows = input.len() / linear.inputs;
    let n = linear.outputs;
    matmul(
        out,
        n,
        input,
        linear.inputs,
        &linear.weight,
        n,
        false,
        (rows, linear.inputs, n),
        1.0,
        threads,
    );
    add_bias(out, &linear.bias);
}

/// Rows per tile of position-wise work: small enough that a tile's feed-forward activations
/// (`rows * intermediate` floats) stay in a core's L2 cache, large enough for efficient matrix
/// multiplies, and at least one tile per thread when there is enough work.
fn tile_rows(total: usize, threads: usize) -> usize {
    const MAX_TILE: usize = 256;
    const MIN_TILE: usize = 16;
    total.div_ceil(threads.max(1)).clamp(MIN_TILE, MAX_TILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_and_concat_keep_every_weight_in_place() {
        let t = transpose(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3);
        assert_eq!(t, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        let a = Linear {
            weight: vec![1.0, 2.0, 3.0, 4.0],
            bias: vec![0.1, 0.2],
            inputs: 2,
            outputs: 2,
        };
        let b = Linear {
            weight: vec![5.0, 6.0],
            bias: vec![0.3],
            inputs: 2,
            outputs: 1,
        };
        let c = concat_outputs(&[a, b]);
        assert_eq!((c.inputs, c.outputs), (2, 3));
        assert_eq!(c.weight, vec![1.0, 2.0, 5.0, 3.0, 4.0, 6.0]);
        assert_eq!(c.bias, vec![0.1, 0.2, 0.3]);
    }
}
