//! Canonical, provider-neutral conversation turns and the turn → episode chunker.
//!
//! [`Turn`] is the source of truth codeoid stores for replay and fork; episodes (the unit of
//! memory) are derived from turns by the [`Chunker`] and never edited by hand.

mod chunker;
pub(crate) mod episode;
pub(crate) mod layout;
mod rotation_seed;
pub(crate) mod tool_input;
mod turn;

pub use chunker::{Chunker, ChunkerConfig, TurnPosition};
pub use episode::{
    CappedContent, Episode, EpisodeKind, EpisodeStatus, MIN_CAP_BYTES, PathAccess,
    SUMMARY_ARG_MAX_CHARS, SUMMARY_MAX_CHARS, ToolPath, blob_id, cap_content, episode_id,
    first_line_summary, one_line, token_estimate, truncate_chars,
};
pub(crate) use episode::{echo_chars, point_cap_marker};
pub(crate) use rotation_seed::{ROTATION_SEED_CLOSE, ROTATION_SEED_OPEN, without_rotation_seed};
pub use turn::{
    CallUsage, Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResult,
    ToolResultPart, Turn, Usage, check_timestamp,
};
