//! codeoid: session memory for AI coding agents.
//!
//! The context window is a cache; the session history is a database. Every turn of every session
//! is kept verbatim in a local SQLite store, found again through hybrid retrieval (local
//! embeddings, BM25, recency, file paths) and paged back by the model through four memory tools.
//!
//! Module map (see `docs/architecture.md`):
//! - [`canonical`]: provider-neutral turns and the turn → episode chunker.
//! - [`store`]: the SQLite episode store.
//! - [`embed`]: local BERT embeddings with candle.
//! - [`retrieve`]: the four-signal hybrid ranker.
//! - [`tools`]: the four memory tools a model calls.
//! - [`index`]: the workspace index block for system prompts.
//! - [`rotate`]: occupancy, rotation policy and seed blocks.
//! - [`compress`]: shell-output compression (a leaf: no SQLite, no candle).
//! - [`translate`]: canonical ⇄ provider message formats (a leaf: no SQLite, no candle).
//! - [`import`]: readers for Claude Code, Codex, Gemini CLI and SWE-agent logs, and the writer
//!   that imports them into a store.
//! - [`fork`]: a new session from a copy of another's conversation, optionally for another
//!   backend.

pub mod canonical;
pub mod compress;
pub mod embed;
mod env;
pub mod error;
pub mod fork;
pub mod import;
pub mod index;
pub mod memory;
pub mod retrieve;
pub mod rotate;
pub mod store;
pub mod tools;
pub mod translate;

pub use error::{Error, ErrorKind, Result};
pub use memory::{Memory, MemoryConfig};

/// The README's Rust snippets, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
