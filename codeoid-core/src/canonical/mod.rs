//! Canonical, provider-neutral conversation turns and the turn → episode chunker.
//!
//! [`Turn`] is the source of truth codeoid stores for replay and fork; episodes (the unit of
//! memory) are derived from turns and never edited by hand.

mod turn;

pub use turn::{
    CallUsage, Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResult,
    ToolResultPart, Turn, Usage,
};
