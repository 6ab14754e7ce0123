//! The [`Embedder`]: a loaded checkpoint that turns documents, queries and episodes into
//! L2-normalized vectors.
//!
//! Invariants: every vector has [`Embedder::dim`] components and unit norm (the one exception:
//! a text that tokenizes to nothing at all, which only a tokenizer without special tokens can
//! produce, gets the zero vector); a text's vector does not depend on what else is in its batch
//! (sequences are packed, never padded); outputs come back in input order. The embedder is immutable after loading, so it is `Send + Sync` and one
//! instance serves a background worker and query threads at once.
//!
//! Deliberately not here: finding or downloading a model (`resolve`), storing vectors, deciding
//! which episodes need (re-)embedding.

use std::path::Path;

use super::bert::Bert;
use super::checkpoint::{Checkpoint, OPTIONAL_FILES, Pooling};
use super::identity::ModelIdBuilder;
use super::pool::pool_row;
use super::tokenize::{TextTokenizer, plan_batches};
use super::windows::{WindowPolicy, episode_windows};
use crate::error::{Error, ErrorKind, Result};

/// Knobs for [`Embedder::load_with`]. The defaults suit a 2-core laptop and a server alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedderOptions {
    /// The model's repository id (`BAAI/bge-small-en-v1.5`) when the caller knows it; used for
    /// [`Embedder::model_id`] and to look up a query instruction the checkpoint does not
    /// declare. `None` derives it from the directory.
    pub name: Option<String>,
    /// Sequences per forward pass (default 32).
    pub max_batch: usize,
    /// Tokens per forward pass (default 2,048). Bounds activation memory and, more importantly,
    /// how long one parallel step of a background batch holds the shared thread pool: a query
    /// embedded beside a busy worker waited a p95 of 357 ms at 8,192 and 71 ms at 2,048.
    pub max_batch_tokens: usize,
    /// How long episodes are cut into windows.
    pub windows: WindowPolicy,
}

impl Default for EmbedderOptions {
    fn default() -> Self {
        EmbedderOptions {
            name: None,
            max_batch: 32,
            max_batch_tokens: 2048,
            windows: WindowPolicy::default(),
        }
    }
}

/// One episode to embed: its one-line summary and its verbatim content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpisodeText<'a> {
    /// The episode's summary line.
    pub summary: &'a str,
    /// The episode's full content.
    pub content: &'a str,
}

/// A loaded sentence-transformers BERT model.
pub struct Embedder {
    checkpoint: Checkpoint,
    tokenizer: TextTokenizer,
    bert: Bert,
    specials: usize,
    /// Tokens of the document instruction every window is sent with (0 without one).
    document_prompt_tokens: usize,
    model_id: String,
    options: EmbedderOptions,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("model_id", &self.model_id)
            .field("dir", &self.checkpoint.dir())
            .field("pooling", &self.checkpoint.pooling())
            .field("max_seq_len", &self.checkpoint.max_seq_len())
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Loads the checkpoint in `dir` with default options.
    ///
    /// # Errors
    /// [`ErrorKind::ModelUnavailable`] when `dir` lacks a required file; [`ErrorKind::Model`]
    /// when a file is unreadable, unparseable or inconsistent with the others.
    pub fn load(dir: impl AsRef<Path>) -> Result<Embedder> {
        Embedder::load_with(dir, EmbedderOptions::default())
    }

    /// Loads the checkpoint in `dir`.
    ///
    /// # Errors
    /// As [`Embedder::load`], and [`ErrorKind::InvalidInput`] for options out of range.
    pub fn load_with(dir: impl AsRef<Path>, options: EmbedderOptions) -> Result<Embedder> {
        let dir = dir.as_ref();
        options.windows.validate()?;
        if options.max_batch == 0 || options.max_batch_tokens == 0 {
            return Err(Error::invalid_input(format!(
                "embedder batch limits must be positive, got max_batch {} and max_batch_tokens {}; the defaults are 32 and 2048",
                options.max_batch, options.max_batch_tokens
            )));
        }
        let checkpoint = Checkpoint::read(dir, options.name.as_deref())?;
        let tokenizer = TextTokenizer::load(dir, checkpoint.max_seq_len())?;
        let specials = tokenizer.special_token_count()?;
        let document_prompt_tokens = match checkpoint.document_instruction() {
            Some(instruction) => tokenizer.tokenize_plain(instruction)?.len(),
            None => 0,
        };

        let weights_path = dir.join("model.safetensors");
        let weights = std::fs::read(&weights_path).map_err(|err| {
            Error::new(
                ErrorKind::Model,
                format!("cannot read {}", weights_path.display()),
            )
            .with_source(err)
        })?;
        let mut id = ModelIdBuilder::new(options.windows);
        for file in ["config.json", "tokenizer.json"]
            .into_iter()
            .chain(OPTIONAL_FILES)
        {
            let path = dir.join(file);
            match std::fs::read(&path) {
                Ok(bytes) => id.file(file, Some(&bytes)),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => id.file(file, None),
                Err(err) => {
                    return Err(Error::new(
                        ErrorKind::Model,
                        format!("cannot read {}", path.display()),
                    )
                    .with_source(err));
                }
            }
        }
        id.file("model.safetensors", Some(&weights));
        let model_id = id.finish(checkpoint.name());

        let bert = Bert::load(
            weights,
            &checkpoint.bert,
            &weights_path.display().to_string(),
        )?;
        Ok(Embedder {
            checkpoint,
            tokenizer,
            bert,
            specials,
            document_prompt_tokens,
            model_id,
            options,
        })
    }

    /// The width of every vector (384 for bge-small and all-MiniLM).
    pub fn dim(&self) -> usize {
        self.bert.hidden()
    }

    /// The longest input in tokens, special tokens included; longer texts are truncated
    /// ([`Embedder::embed_episode_windows`] covers long content with several windows instead).
    pub fn max_seq_len(&self) -> usize {
        self.checkpoint.max_seq_len()
    }

    /// A stable identifier of the model and of codeoid's embedding recipe: record it with every
    /// stored vector and re-embed when it changes. See `docs/embeddings.md`.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The pooling the checkpoint declares.
    pub fn pooling(&self) -> Pooling {
        self.checkpoint.pooling()
    }

    /// The text prepended to queries, if the model has one.
    pub fn query_instruction(&self) -> Option<&str> {
        self.checkpoint.query_instruction()
    }

    /// The checkpoint's configuration.
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
    }

    /// The window policy in use.
    pub fn window_policy(&self) -> WindowPolicy {
        self.options.windows
    }

    /// How many tokens the model sees for `text` as a document (special tokens included, after
    /// truncation): the real work, which throughput figures count.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the tokenizer fails.
    pub fn count_tokens(&self, text: &str) -> Result<usize> {
        let text = self.with_document_instruction(text);
        Ok(self
            .tokenizer
            .encode(&[text.as_ref()])?
            .first()
            .map_or(0, Vec::len))
    }

    /// Embeds documents (episode windows, file contents): one vector per text, in order.
    /// Documents get the model's document instruction when it declares one (most do not).
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the tokenizer or the forward pass fails.
    pub fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let texts: Vec<std::borrow::Cow<'_, str>> = texts
            .iter()
            .map(|t| self.with_document_instruction(t))
            .collect();
        let refs: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        self.embed_raw(&refs)
    }

    /// Embeds a search query, with the model's query instruction prepended when it has one
    /// (bge: "Represent this sentence for searching relevant passages: ").
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the tokenizer or the forward pass fails.
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let text = match self.checkpoint.query_instruction() {
            Some(instruction) => format!("{instruction}{query}"),
            None => query.to_owned(),
        };
        self.embed_raw(&[&text])?
            .pop()
            .ok_or_else(|| Error::internal("the embedder returned no vector for a query"))
    }

    /// The texts embedded for one episode (see [`WindowPolicy`]): `summary` plus consecutive
    /// slices of `content`, each within [`Embedder::max_seq_len`].
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the tokenizer fails.
    pub fn episode_windows(&self, summary: &str, content: &str) -> Result<Vec<String>> {
        // A window is sent with the document instruction before it: room is made for it, or
        // the model's length limit would cut the window's end.
        episode_windows(
            &self.tokenizer,
            self.specials + self.document_prompt_tokens,
            self.checkpoint.max_seq_len(),
            self.options.windows,
            summary,
            content,
        )
    }

    /// One vector per window of one episode, head first; the episode's vector score is its best
    /// window's.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the tokenizer or the forward pass fails.
    pub fn embed_episode_windows(&self, summary: &str, content: &str) -> Result<Vec<Vec<f32>>> {
        let windows = self.episode_windows(summary, content)?;
        let refs: Vec<&str> = windows.iter().map(String::as_str).collect();
        self.embed_documents(&refs)
    }

    /// Embeds a batch of episodes at once, all their windows sharing forward passes (the
    /// efficient path for a background worker): one `Vec` of window vectors per episode, in order.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the tokenizer or the forward pass fails.
    pub fn embed_episodes(&self, episodes: &[EpisodeText<'_>]) -> Result<Vec<Vec<Vec<f32>>>> {
        let mut windows = Vec::new();
        let mut counts = Vec::with_capacity(episodes.len());
        for episode in episodes {
            let mine = self.episode_windows(episode.summary, episode.content)?;
            counts.push(mine.len());
            windows.extend(mine);
        }
        let refs: Vec<&str> = windows.iter().map(String::as_str).collect();
        let mut vectors = self.embed_documents(&refs)?.into_iter();
        Ok(counts
            .into_iter()
            .map(|n| vectors.by_ref().take(n).collect())
            .collect())
    }

    fn with_document_instruction<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        match self.checkpoint.document_instruction() {
            Some(instruction) => format!("{instruction}{text}").into(),
            None => text.into(),
        }
    }

    fn embed_raw(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let ids = self.tokenizer.encode(texts)?;
        let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
        let dim = self.dim();
        let pooling = self.checkpoint.pooling();
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for batch in plan_batches(
            &lengths,
            self.options.max_batch,
            self.options.max_batch_tokens,
        ) {
            let rows: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
            // Packed output: each sequence's tokens follow the previous sequence's.
            let hidden = self.bert.forward(&rows)?;
            let mut start = 0;
            for &index in &batch {
                let end = start + lengths[index] * dim;
                out[index] = pool_row(&hidden[start..end], lengths[index], dim, pooling);
                start = end;
            }
        }
        Ok(out)
    }
}
