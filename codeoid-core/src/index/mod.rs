//! The workspace index: a short block at the top of the system prompt that tells the model what
//! memory holds and how to reach it (DESIGN §4).
//!
//! The pieces, all pure and independent of storage:
//! - [`input`]: the plain values a store layer fills (counts, hot files, sessions, vectors).
//! - [`config`]: budget, limits, rebuild thresholds and the off switch, with `CODEOID_*`
//!   environment overrides.
//! - `cluster`: spherical k-means (k <= 8, greedy k-means++ from a fixed seed, k chosen by
//!   simplified silhouette).
//! - `label`: deterministic topic labels from dominant directories and distinctive terms.
//! - [`block`]: the text itself, within a character budget.
//! - [`schedule`]: when to rebuild, with an injectable clock, so the text stays byte-stable.
//!
//! A store layer fills an [`IndexInput`] and asks an [`IndexScheduler`] for the text:
//! ```
//! use std::sync::Arc;
//! use chrono::{TimeZone, Utc};
//! use codeoid_core::index::{
//!     build_index, ClusterInput, HotFile, IndexConfig, IndexInput, IndexScheduler, ManualClock,
//! };
//!
//! let config = IndexConfig::default();
//! let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()));
//! let mut scheduler = IndexScheduler::new(config.clone(), clock.clone())?;
//! let input = IndexInput {
//!     workspace: "codeoid".into(),
//!     episode_count: 42,
//!     session_count: 3,
//!     last_activity: Some(Utc.with_ymd_and_hms(2026, 3, 1, 11, 0, 0).unwrap()),
//!     hot_files: vec![HotFile {
//!         path: "src/lib.rs".into(),
//!         touches: 7,
//!         last_touched: Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap(),
//!     }],
//!     sessions: vec![],
//!     current_session: None,
//!     embedded: ClusterInput::none(),
//! };
//! let text = scheduler.refresh(input.episode_count, |now| build_index(&input, &config, now))?;
//! assert!(text.starts_with("# Memory Index — codeoid\n42 episodes across 3 sessions · last activity 1h ago\n"));
//! assert!(text.contains("- src/lib.rs — 7 touches, last 2h ago\n"));
//! # Ok::<(), codeoid_core::Error>(())
//! ```
//!
//! This module does not query the store or compute embeddings; it formats what it is given.

pub mod block;
mod cluster;
pub mod config;
pub mod input;
mod label;
pub mod schedule;

pub use block::build_index;
pub use config::IndexConfig;
pub use input::{ClusterEpisode, ClusterInput, HotFile, IndexInput, SessionSummary};
pub use schedule::{Clock, IndexScheduler, ManualClock, RebuildReason, SystemClock};
