//! Hybrid retrieval (DESIGN §2): `score = 0.55 vec + 0.25 bm25 + 0.12 recency + 0.08 path`, over
//! the episodes of one workspace, with a background worker that embeds episodes as they arrive.
//!
//! One concept per file:
//! - `config` ([`RetrievalConfig`], [`Weights`], [`EmbeddingConfig`], [`ModelChoice`]): weights,
//!   half-life, candidate pool, which model.
//! - `query` ([`RecallQuery`], [`RecallFilters`], [`Hit`], [`Components`]): what is asked and
//!   what comes back.
//! - `paths`: path-like tokens of a query and the path-overlap signal.
//! - `quantized`: int8 rows and the dot-product kernel.
//! - `vector_index`: the in-memory matrix of one workspace, with filter metadata.
//! - `fusion`: the four-signal score over a candidate batch.
//! - `worker` ([`EmbeddingStatus`], [`EmbeddingPhase`]): the background embedding worker and
//!   backfill.
//! - `duplicates`: one text never takes two hits (a subagent's answer and its parent's episode
//!   holding it; a command's raw output and the call whose compressed output names it).
//! - `relevance` ([`Relevance`]): the query terms a hit holds, its similarity against the
//!   scope's typical one, and whether it is weak.
//! - `engine` ([`Retriever`]): the two channels, candidate completion and fusion.
//!
//! Dependencies point down only: this module uses `store` and `embed`; the tools and `Memory`
//! use it. See `docs/retrieval.md`.

mod config;
mod duplicates;
mod engine;
mod fusion;
mod paths;
mod quantized;
mod query;
mod relevance;
mod vector_index;
mod worker;

pub use config::{
    ENV_EMBEDDINGS, ENV_HALF_LIFE_HOURS, ENV_LEXICAL_BUDGET, ENV_WEIGHTS, EmbeddingConfig,
    ModelChoice, RetrievalConfig, Weights,
};
pub use engine::Retriever;
pub use query::{Components, Hit, MAX_RECALL_LIMIT, RecallFilters, RecallQuery};
pub use relevance::{BASELINE_SAMPLE, LIFT_MARGIN, MIN_SHARE, Relevance};
pub use vector_index::{EntryMeta, IndexFilter, PARALLEL_MIN_ENTRIES, SampledScan, VectorIndex};
pub use worker::{EmbeddingPhase, EmbeddingStatus};
