//! The BERT encoder forward pass: token ids in, one hidden vector per token out.
//!
//! Invariants: input batches are right-padded with a per-row length; padded positions never
//! influence real positions (the attention mask removes them). Output rows are
//! `[batch * seq_len * hidden]`, row-major.
//!
//! Deliberately not here: tokenization, pooling, normalization.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, HiddenAct};

use super::checkpoint::BertConfig;
use crate::error::{Error, ErrorKind, Result};

/// A loaded BERT encoder.
pub(crate) struct Bert {
    model: BertModel,
    hidden: usize,
}

impl Bert {
    /// Builds the encoder from the tensors of `model.safetensors` (already read into memory).
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the file is not valid safetensors or lacks a tensor of the
    /// shape `config` implies.
    pub(crate) fn load(weights: &[u8], config: &BertConfig, origin: &str) -> Result<Bert> {
        let device = Device::Cpu;
        let tensors = candle_core::safetensors::load_buffer(weights, &device).map_err(|err| {
            Error::new(
                ErrorKind::Model,
                format!("{origin} is not a valid safetensors file; re-download the model"),
            )
            .with_source(err)
        })?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let hidden_act = match config.hidden_act.as_str() {
            "relu" => HiddenAct::Relu,
            "gelu_new" | "gelu_pytorch_tanh" => HiddenAct::GeluApproximate,
            _ => HiddenAct::Gelu,
        };
        let candle_config = Config {
            vocab_size: config.vocab_size,
            hidden_size: config.hidden_size,
            num_hidden_layers: config.num_hidden_layers,
            num_attention_heads: config.num_attention_heads,
            intermediate_size: config.intermediate_size,
            hidden_act,
            max_position_embeddings: config.max_position_embeddings,
            type_vocab_size: config.type_vocab_size,
            layer_norm_eps: config.layer_norm_eps,
            model_type: Some("bert".to_owned()),
            ..Config::default()
        };
        let model = BertModel::load(vb, &candle_config).map_err(|err| {
            Error::new(
                ErrorKind::Model,
                format!("{origin} does not hold the BERT weights config.json describes; re-download the model"),
            )
            .with_source(err)
        })?;
        Ok(Bert {
            model,
            hidden: config.hidden_size,
        })
    }

    /// The hidden width.
    pub(crate) fn hidden(&self) -> usize {
        self.hidden
    }

    /// Runs the encoder on `rows` (each at most the padded length) and returns the last hidden
    /// state, `[rows.len() * padded_len * hidden]`, plus the padded length.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when candle fails (for instance a token id beyond the vocabulary).
    pub(crate) fn forward(&self, rows: &[&[u32]]) -> Result<(Vec<f32>, usize)> {
        let padded_len = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        let batch = rows.len();
        let mut ids = vec![0u32; batch * padded_len];
        let mut mask = vec![0u32; batch * padded_len];
        for (row, tokens) in rows.iter().enumerate() {
            let start = row * padded_len;
            ids[start..start + tokens.len()].copy_from_slice(tokens);
            mask[start..start + tokens.len()].fill(1);
        }
        let run = || -> candle_core::Result<Vec<f32>> {
            let device = Device::Cpu;
            let ids = Tensor::from_vec(ids, (batch, padded_len), &device)?;
            let mask = Tensor::from_vec(mask, (batch, padded_len), &device)?;
            let types = ids.zeros_like()?;
            let out = self.model.forward(&ids, &types, Some(&mask))?;
            out.flatten_all()?.to_vec1::<f32>()
        };
        let hidden = run().map_err(|err| {
            Error::new(ErrorKind::Model, "the BERT forward pass failed").with_source(err)
        })?;
        Ok((hidden, padded_len))
    }
}
