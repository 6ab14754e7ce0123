//! Reading a sentence-transformers BERT checkpoint directory: which files it must have, what its
//! configuration says, and what we derive from it (pooling, maximum sequence length, prompts).
//!
//! A checkpoint is a directory with `config.json`, `tokenizer.json` and `model.safetensors`, and
//! optionally the sentence-transformers files `1_Pooling/config.json`, `sentence_bert_config.json`
//! and `config_sentence_transformers.json`. Invariants of a [`Checkpoint`]: the architecture is
//! BERT, `hidden_size` divides evenly into heads, the pooling mode is CLS or mean, and
//! `max_seq_len` is at least [`MIN_SEQ_LEN`] and at most `max_position_embeddings`.
//!
//! Missing required files are [`ErrorKind::ModelUnavailable`] (nothing usable was found); files
//! that exist but cannot be parsed or describe something unsupported are [`ErrorKind::Model`].
//! This module reads only the small JSON files: it does not touch the weights or the tokenizer.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, ErrorKind, Result};

/// The files a directory must hold to be loadable.
pub(crate) const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The sentence-transformers files read when present.
pub(crate) const OPTIONAL_FILES: [&str; 3] = [
    "1_Pooling/config.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
];

/// Below this, a window cannot hold a summary and any content: the checkpoint is refused.
pub const MIN_SEQ_LEN: usize = 16;

/// Query instructions of well-known models that do not declare one in their checkpoint.
///
/// bge v1.5 recommends its instruction only in its model card; its
/// `config_sentence_transformers.json` has no `prompts`. Matched on the last path segment of the
/// model name, case-insensitively, so a copied directory named `bge-small-en-v1.5` also matches.
const KNOWN_QUERY_INSTRUCTIONS: [(&str, &str); 3] = [
    (
        "bge-small-en-v1.5",
        "Represent this sentence for searching relevant passages: ",
    ),
    (
        "bge-base-en-v1.5",
        "Represent this sentence for searching relevant passages: ",
    ),
    (
        "bge-large-en-v1.5",
        "Represent this sentence for searching relevant passages: ",
    ),
];

/// How token vectors become one sentence vector, as the checkpoint's pooling config says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pooling {
    /// The vector of the first (`[CLS]`) token (bge).
    Cls,
    /// The mean of the vectors of the real tokens, padding excluded (all-MiniLM).
    Mean,
}

/// The BERT hyper-parameters of `config.json` that the forward pass needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_hidden_act")]
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    #[serde(default = "default_type_vocab_size")]
    pub type_vocab_size: usize,
    #[serde(default = "default_layer_norm_eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub model_type: Option<String>,
    #[serde(default)]
    pub position_embedding_type: Option<String>,
}

fn default_hidden_act() -> String {
    "gelu".to_owned()
}
fn default_type_vocab_size() -> usize {
    2
}
fn default_layer_norm_eps() -> f64 {
    1e-12
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    word_embedding_dimension: Option<usize>,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    #[serde(default)]
    max_seq_length: Option<usize>,
}

#[derive(Deserialize)]
struct SentenceTransformersConfig {
    #[serde(default)]
    prompts: std::collections::BTreeMap<String, String>,
}

/// Everything codeoid needs to know about a checkpoint before loading its weights.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    dir: PathBuf,
    name: String,
    pub(crate) bert: BertConfig,
    pooling: Pooling,
    max_seq_len: usize,
    query_instruction: Option<String>,
    document_instruction: Option<String>,
}

impl Checkpoint {
    /// Reads the configuration files of the checkpoint in `dir`.
    ///
    /// `name` is the model's repository id when the caller knows it (`BAAI/bge-small-en-v1.5`);
    /// otherwise it is derived from the path (a Hugging Face cache `models--org--name` folder, or
    /// the directory's own name). It selects a fallback query instruction for well-known models
    /// that do not declare one.
    ///
    /// # Errors
    /// [`ErrorKind::ModelUnavailable`] when `dir` or a required file is missing;
    /// [`ErrorKind::Model`] when a file cannot be read or parsed, or describes a model that is not
    /// a BERT encoder with CLS or mean pooling.
    pub fn read(dir: &Path, name: Option<&str>) -> Result<Checkpoint> {
        check_complete(dir)?;
        let bert: BertConfig =
            read_json(dir, "config.json")?.ok_or_else(|| missing(dir, "config.json"))?;
        validate_bert(dir, &bert)?;

        let pooling = match read_json::<PoolingConfig>(dir, "1_Pooling/config.json")? {
            Some(config) => pooling_from(dir, &config, bert.hidden_size)?,
            // sentence-transformers builds mean pooling for a plain transformer checkpoint.
            None => Pooling::Mean,
        };

        let declared_len = read_json::<SentenceBertConfig>(dir, "sentence_bert_config.json")?
            .and_then(|c| c.max_seq_length);
        let max_seq_len = declared_len
            .unwrap_or(bert.max_position_embeddings)
            .min(bert.max_position_embeddings);
        if max_seq_len < MIN_SEQ_LEN {
            return Err(Error::new(
                ErrorKind::Model,
                format!(
                    "checkpoint {} has a maximum sequence length of {max_seq_len} tokens; codeoid needs at least {MIN_SEQ_LEN}",
                    dir.display()
                ),
            ));
        }

        let name = name
            .map(str::to_owned)
            .unwrap_or_else(|| name_from_path(dir));
        let prompts =
            read_json::<SentenceTransformersConfig>(dir, "config_sentence_transformers.json")?
                .map(|c| c.prompts)
                .unwrap_or_default();
        let non_empty = |key: &str| prompts.get(key).filter(|p| !p.is_empty()).cloned();
        let query_instruction = non_empty("query").or_else(|| known_query_instruction(&name));
        let document_instruction = non_empty("document").or_else(|| non_empty("passage"));

        Ok(Checkpoint {
            dir: dir.to_path_buf(),
            name,
            bert,
            pooling,
            max_seq_len,
            query_instruction,
            document_instruction,
        })
    }

    /// The checkpoint directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The model's name: its repository id when known, else the directory name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pooling mode from `1_Pooling/config.json` (mean when the file is absent).
    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    /// Tokens per input, special tokens included: `max_seq_length` from
    /// `sentence_bert_config.json`, capped by the position embeddings.
    pub fn max_seq_len(&self) -> usize {
        self.max_seq_len
    }

    /// The width of the output vectors.
    pub fn dim(&self) -> usize {
        self.bert.hidden_size
    }

    /// The text prepended to queries: the checkpoint's `prompts.query`, else the known-model table.
    pub fn query_instruction(&self) -> Option<&str> {
        self.query_instruction.as_deref()
    }

    /// The text prepended to documents: the checkpoint's `prompts.document` or `prompts.passage`.
    pub fn document_instruction(&self) -> Option<&str> {
        self.document_instruction.as_deref()
    }
}

/// Whether `dir` holds every required file, without reading any of them.
///
/// # Errors
/// [`ErrorKind::ModelUnavailable`] naming the first missing file.
pub(crate) fn check_complete(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        return Err(Error::new(
            ErrorKind::ModelUnavailable,
            format!("model directory {} does not exist", dir.display()),
        ));
    }
    for file in REQUIRED_FILES {
        if !dir.join(file).is_file() {
            return Err(missing(dir, file));
        }
    }
    Ok(())
}

fn missing(dir: &Path, file: &str) -> Error {
    Error::new(
        ErrorKind::ModelUnavailable,
        format!(
            "model directory {} has no {file}; a sentence-transformers checkpoint needs {}",
            dir.display(),
            REQUIRED_FILES.join(", ")
        ),
    )
}

fn read_json<T: serde::de::DeserializeOwned>(dir: &Path, file: &str) -> Result<Option<T>> {
    let path = dir.join(file);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(
                Error::new(ErrorKind::Model, format!("cannot read {}", path.display()))
                    .with_source(err),
            );
        }
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|err| {
        Error::new(
            ErrorKind::Model,
            format!(
                "{} is not a valid {file}; re-download the model",
                path.display()
            ),
        )
        .with_source(err)
    })
}

fn validate_bert(dir: &Path, bert: &BertConfig) -> Result<()> {
    let broken = |what: String| {
        Error::new(
            ErrorKind::Model,
            format!("{}/config.json {what}", dir.display()),
        )
    };
    if let Some(model_type) = &bert.model_type
        && model_type != "bert"
    {
        return Err(broken(format!(
            "describes a {model_type:?} model; codeoid runs BERT encoders (bge, all-MiniLM, e5)"
        )));
    }
    if let Some(kind) = &bert.position_embedding_type
        && kind != "absolute"
    {
        return Err(broken(format!(
            "uses {kind:?} position embeddings; only \"absolute\" is supported"
        )));
    }
    if !matches!(
        bert.hidden_act.as_str(),
        "gelu" | "gelu_new" | "gelu_pytorch_tanh" | "relu"
    ) {
        return Err(broken(format!(
            "uses activation {:?}; supported: gelu, gelu_new, relu",
            bert.hidden_act
        )));
    }
    let sizes = [
        bert.vocab_size,
        bert.hidden_size,
        bert.num_hidden_layers,
        bert.num_attention_heads,
        bert.intermediate_size,
        bert.max_position_embeddings,
        bert.type_vocab_size,
    ];
    if sizes.contains(&0) {
        return Err(broken(
            "has a zero size; the file is corrupt, re-download the model".to_owned(),
        ));
    }
    if bert.hidden_size % bert.num_attention_heads != 0 {
        return Err(broken(format!(
            "has hidden_size {} not divisible by num_attention_heads {}; the file is corrupt, re-download the model",
            bert.hidden_size, bert.num_attention_heads
        )));
    }
    Ok(())
}

fn pooling_from(dir: &Path, config: &PoolingConfig, hidden: usize) -> Result<Pooling> {
    let path = dir.join("1_Pooling/config.json");
    if let Some(width) = config.word_embedding_dimension
        && width != hidden
    {
        return Err(Error::new(
            ErrorKind::Model,
            format!(
                "{} says word_embedding_dimension {width} but config.json says hidden_size {hidden}",
                path.display()
            ),
        ));
    }
    let unsupported = config.pooling_mode_max_tokens
        || config.pooling_mode_mean_sqrt_len_tokens
        || config.pooling_mode_weightedmean_tokens
        || config.pooling_mode_lasttoken;
    match (
        config.pooling_mode_cls_token,
        config.pooling_mode_mean_tokens,
        unsupported,
    ) {
        (true, false, false) => Ok(Pooling::Cls),
        (false, true, false) => Ok(Pooling::Mean),
        _ => Err(Error::new(
            ErrorKind::Model,
            format!(
                "{} enables an unsupported pooling combination; codeoid supports exactly one of pooling_mode_cls_token or pooling_mode_mean_tokens",
                path.display()
            ),
        )),
    }
}

/// The model name a path implies: `org/name` inside a Hugging Face cache, else the folder name.
fn name_from_path(dir: &Path) -> String {
    for component in dir.components().rev() {
        let part = component.as_os_str().to_string_lossy();
        if let Some(rest) = part.strip_prefix("models--") {
            return rest.replacen("--", "/", 1);
        }
    }
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_owned())
}

fn known_query_instruction(name: &str) -> Option<String> {
    let short = name.rsplit('/').next().unwrap_or(name);
    KNOWN_QUERY_INSTRUCTIONS
        .iter()
        .find(|(model, _)| model.eq_ignore_ascii_case(short))
        .map(|(_, instruction)| (*instruction).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_hf_cache_folders_or_the_directory() {
        let cached = Path::new("/c/hub/models--BAAI--bge-small-en-v1.5/snapshots/abc");
        assert_eq!(name_from_path(cached), "BAAI/bge-small-en-v1.5");
        assert_eq!(
            name_from_path(Path::new("/m/all-MiniLM-L6-v2")),
            "all-MiniLM-L6-v2"
        );
    }

    #[test]
    fn known_instructions_match_on_the_short_name() {
        assert!(known_query_instruction("BAAI/bge-small-en-v1.5").is_some());
        assert!(known_query_instruction("BGE-SMALL-EN-V1.5").is_some());
        assert!(known_query_instruction("sentence-transformers/all-MiniLM-L6-v2").is_none());
    }

    #[test]
    fn pooling_needs_exactly_one_supported_mode() {
        let config = |cls, mean, max| PoolingConfig {
            word_embedding_dimension: Some(8),
            pooling_mode_cls_token: cls,
            pooling_mode_mean_tokens: mean,
            pooling_mode_max_tokens: max,
            pooling_mode_mean_sqrt_len_tokens: false,
            pooling_mode_weightedmean_tokens: false,
            pooling_mode_lasttoken: false,
        };
        let dir = Path::new("m");
        assert_eq!(
            pooling_from(dir, &config(true, false, false), 8).ok(),
            Some(Pooling::Cls)
        );
        assert_eq!(
            pooling_from(dir, &config(false, true, false), 8).ok(),
            Some(Pooling::Mean)
        );
        for bad in [
            config(true, true, false),
            config(false, false, false),
            config(false, true, true),
        ] {
            let err = pooling_from(dir, &bad, 8).err().map(|e| e.kind());
            assert_eq!(err, Some(ErrorKind::Model));
        }
        let wrong_width = pooling_from(dir, &config(true, false, false), 16);
        assert!(wrong_width.is_err_and(|e| e.message().contains("word_embedding_dimension 8")));
    }
}
