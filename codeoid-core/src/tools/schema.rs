//! The four tools' names, descriptions and JSON Schemas (DESIGN §3), and the optional name
//! prefix a harness may mount them under (`codeoid_memory__recall`).
//!
//! Invariants: every schema is an object schema with `additionalProperties: false`, exactly the
//! properties and ranges DESIGN §3 lists (plus `get_episode`'s optional `offset`, which pages
//! long content), and `required` only where it says so; the argument
//! parser (`args`) enforces the same ranges, from the same constants. Names with a prefix are
//! `{prefix}__{name}` and stay within the providers' `^[a-zA-Z0-9_-]{1,64}$`.

use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::translate::ToolSpec;

/// Largest `limit` of `recall`.
pub const RECALL_MAX_LIMIT: u64 = 20;
/// Default `limit` of `recall`.
pub const RECALL_DEFAULT_LIMIT: u64 = 6;
/// Largest `limit` of `timeline`.
pub const TIMELINE_MAX_LIMIT: u64 = 60;
/// Default `limit` of `timeline`.
pub const TIMELINE_DEFAULT_LIMIT: u64 = 20;
/// Characters of episode content one `get_episode` page shows (about 5,000 tokens); longer
/// content is paged with `offset`.
pub const EPISODE_PAGE_CHARS: usize = 20_000;
/// Separator between a harness's prefix and a tool name.
pub const PREFIX_SEPARATOR: &str = crate::canonical::tool_input::TOOL_PREFIX_SEPARATOR;

/// One of the four memory tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// Hybrid search over past episodes.
    Recall,
    /// The most recent read of a file.
    RecallFile,
    /// Episodes newest first, paged.
    Timeline,
    /// One episode verbatim.
    GetEpisode,
}

impl ToolName {
    /// All four, in the order they are declared.
    pub const ALL: [ToolName; 4] = [
        ToolName::Recall,
        ToolName::RecallFile,
        ToolName::Timeline,
        ToolName::GetEpisode,
    ];

    /// The bare name: `recall`, `recall_file`, `timeline`, `get_episode`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolName::Recall => "recall",
            ToolName::RecallFile => "recall_file",
            ToolName::Timeline => "timeline",
            ToolName::GetEpisode => "get_episode",
        }
    }

    /// The tool a model called by `name`: a bare name, or `{any prefix}__{name}` (so MCP-style
    /// `mcp__codeoid__recall` works too). `None` for anything else.
    /// The same rule tells the store and recall which recorded calls were the model's own
    /// memory-tool calls (see `canonical::tool_input::memory_tool`).
    pub fn parse(name: &str) -> Option<ToolName> {
        let bare = crate::canonical::tool_input::memory_tool(name)?;
        ToolName::ALL.into_iter().find(|t| t.as_str() == bare)
    }

    /// What the model reads about the tool.
    pub const fn description(self) -> &'static str {
        match self {
            ToolName::Recall => {
                "Search this workspace's memory: every earlier turn, tool call and tool result, \
                 stored verbatim across sessions and rotations. Ranks by meaning, exact words and \
                 identifiers, recency and file paths. Use it before redoing work or when the user \
                 refers to something earlier. Returns the best episodes with their verbatim \
                 content and an episode_id for get_episode."
            }
            ToolName::RecallFile => {
                "The most recent earlier read of a file (relative or absolute path), verbatim, \
                 and whether the file changed on disk since then. Call it before re-reading a \
                 file you may have read earlier."
            }
            ToolName::Timeline => {
                "Walk this workspace's activity newest first, one line per episode with its \
                 episode_id. Each page ends with the exact arguments for the next page."
            }
            ToolName::GetEpisode => {
                "Fetch one past episode (a turn or a tool call with its full result) verbatim, \
                 by the episode_id that recall or timeline showed. Long content comes in pages; \
                 each page ends with the exact arguments for the next one."
            }
        }
    }

    /// The JSON Schema of the tool's arguments.
    pub fn input_schema(self) -> Value {
        match self {
            ToolName::Recall => json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What to look for: a topic, a question, an error message, an identifier or a file path."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": RECALL_MAX_LIMIT,
                        "default": RECALL_DEFAULT_LIMIT,
                        "description": "How many episodes to return."
                    },
                    "include_current_session": {
                        "type": "boolean",
                        "default": false,
                        "description": "Also search what this session did since its last rotation (still in your context). Earlier work, including this session's before a rotation, is always searched."
                    },
                    "tool_name": {
                        "type": "string",
                        "description": "Only episodes of this tool (for example Bash, Read, Edit)."
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            ToolName::RecallFile => json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "The file, relative to the workspace root or absolute."
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            ToolName::Timeline => json!({
                "type": "object",
                "properties": {
                    "offset": {
                        "type": "integer",
                        "minimum": 0,
                        "default": 0,
                        "description": "Episodes to skip."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": TIMELINE_MAX_LIMIT,
                        "default": TIMELINE_DEFAULT_LIMIT,
                        "description": "Episodes per page."
                    },
                    "before": {
                        "type": "string",
                        "description": "Start just older than this episode_id (the next-page argument)."
                    }
                },
                "additionalProperties": false
            }),
            ToolName::GetEpisode => json!({
                "type": "object",
                "properties": {
                    "episode_id": {
                        "type": "string",
                        "description": "An episode_id from recall or timeline output."
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 0,
                        "default": 0,
                        "description": "Character of the content to start from (the next-page argument)."
                    }
                },
                "required": ["episode_id"],
                "additionalProperties": false
            }),
        }
    }
}

impl std::fmt::Display for ToolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The four tool declarations, named `{prefix}__{name}` when `prefix` is given, ready for
/// [`crate::translate`] to declare on any backend.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] when the prefix is empty, has characters other than ASCII
/// letters, digits, `_` and `-`, or makes a name longer than 64 characters.
pub fn tool_specs(prefix: Option<&str>) -> Result<Vec<ToolSpec>> {
    if let Some(prefix) = prefix {
        let longest = ToolName::ALL
            .iter()
            .map(|t| t.as_str().len())
            .max()
            .unwrap_or(0);
        let valid_chars = prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if prefix.is_empty() || !valid_chars || prefix.len() + PREFIX_SEPARATOR.len() + longest > 64
        {
            return Err(Error::invalid_input(format!(
                "tool name prefix {prefix:?} is invalid; use 1 to {} ASCII letters, digits, `_` \
                 or `-` (names become prefix__recall)",
                64 - PREFIX_SEPARATOR.len() - longest
            )));
        }
    }
    Ok(ToolName::ALL
        .into_iter()
        .map(|tool| ToolSpec {
            name: match prefix {
                Some(prefix) => format!("{prefix}{PREFIX_SEPARATOR}{tool}"),
                None => tool.as_str().to_owned(),
            },
            description: tool.description().to_owned(),
            input_schema: tool.input_schema(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_bare_and_prefixed() {
        assert_eq!(ToolName::parse("recall"), Some(ToolName::Recall));
        assert_eq!(
            ToolName::parse("codeoid_memory__recall_file"),
            Some(ToolName::RecallFile)
        );
        assert_eq!(
            ToolName::parse("mcp__codeoid__get_episode"),
            Some(ToolName::GetEpisode)
        );
        assert_eq!(ToolName::parse("recall_files"), None);
        assert_eq!(ToolName::parse("x_recall"), None);
        assert_eq!(ToolName::parse(""), None);
        // One list of names for the dispatcher and for the store's "a memory tool's call".
        let names: Vec<&str> = ToolName::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(names, crate::canonical::tool_input::MEMORY_TOOL_NAMES);
    }

    #[test]
    fn prefixes_are_checked() {
        let specs = tool_specs(Some("codeoid_memory")).unwrap();
        assert_eq!(specs[0].name, "codeoid_memory__recall");
        assert!(tool_specs(Some("")).is_err());
        assert!(tool_specs(Some("a b")).is_err());
        assert!(tool_specs(Some(&"x".repeat(60))).is_err());
        for spec in tool_specs(None).unwrap() {
            assert_eq!(spec.input_schema["additionalProperties"], false);
        }
    }
}
