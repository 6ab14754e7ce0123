//! Rotation: keep a session alive past its context window by swapping the backing context
//! instead of letting the provider compact it (DESIGN §5).
//!
//! The pieces, each pure and independent of storage:
//! - [`window`]: the context window of a model id, from a built-in table or an override.
//! - [`config`]: thresholds and the turn guard, with `CODEOID_*` environment overrides.
//! - [`policy`]: occupancy from the primary conversation, explained decisions, the rotation
//!   state a store persists, and the rotation itself.
//! - [`seed`]: the anchor (last user prompt) and the seed block the next message starts with.
//!
//! Typical use by a store layer, per completed turn of a session:
//! ```
//! use codeoid_core::canonical::{CallUsage, Turn, Usage};
//! use codeoid_core::rotate::{Anchor, RotationConfig, RotationPolicy, RotationState, SeedSource};
//!
//! let policy = RotationPolicy::new(RotationConfig::default())?;
//! let mut state = RotationState::default(); // loaded from the store
//! let window = policy.window(Some("claude-sonnet-4-5-20250929"), None)?;
//! let turns = vec![Turn::user_text("port the parser to nom")];
//! for _ in 0..5 {
//!     let usage = Usage { calls: vec![CallUsage { input_tokens: 195_000, primary: true, ..CallUsage::default() }] };
//!     let decision = policy.observe(&mut state, Some(&usage), &window);
//!     if decision.should_rotate {
//!         let anchor = Anchor::from_turns(&turns);
//!         let source = SeedSource::Memory { workspace: "parser", session_name: "nom port", anchor: anchor.as_ref() };
//!         policy.rotate(&mut state, source)?; // persist state, record the event
//!     }
//! }
//! // When the harness sends the next message:
//! let seed = state.take_pending_seed().expect("the hard limit fired on the fifth turn");
//! assert!(seed.text.contains("port the parser to nom"));
//! assert!(state.take_pending_seed().is_none());
//! # Ok::<(), codeoid_core::Error>(())
//! ```
//!
//! This module does not persist state, write timeline events or choose backing context ids: the
//! store layer wraps it.

pub mod config;
pub mod policy;
pub mod seed;
pub mod window;

pub use config::RotationConfig;
pub use policy::{Decision, Reason, Rotation, RotationPolicy, RotationState, SeedSource};
pub use seed::{ANCHOR_MAX_CHARS, Anchor, SeedBlock, SeedKind};
pub use window::{
    ContextWindow, DEFAULT_WINDOW, MAX_WINDOW, MIN_WINDOW, WindowSource, resolve_window,
};
