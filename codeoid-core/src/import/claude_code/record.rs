//! One Claude Code `user` or `assistant` line, checked and read into a typed [`Record`].
//!
//! A line is malformed (and the caller skips it) when it lacks what a message needs: a
//! `message` object whose `content` is a string or an array of typed blocks. Everything else
//! is optional because Claude Code versions differ: a missing `uuid`, `timestamp` or
//! `requestId` is tolerated and the caller falls back to line numbers. An unparsable timestamp
//! is dropped with a warning rather than losing the line.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::canonical::Role;
use crate::import::fields::{self, Stamp, flag, str_field, string_field};
use crate::import::jsonl::kind_of;

/// A checked message line.
pub(super) struct Record {
    pub line: u64,
    pub role: Role,
    pub uuid: Option<String>,
    pub parent_uuid: Option<String>,
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub sidechain: bool,
    pub timestamp: Option<DateTime<Utc>>,
    /// Why the timestamp was dropped, when it was present but unusable.
    pub timestamp_warning: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub version: Option<String>,
    pub slug: Option<String>,
    pub is_meta: bool,
    pub is_compact_summary: bool,
    pub is_api_error: bool,
    pub request_id: Option<String>,
    pub message_id: Option<String>,
    pub model: Option<String>,
    pub stop_reason: Option<String>,
    pub usage: Option<Map<String, Value>>,
    /// Content blocks; a string content is turned into one `text` block.
    pub blocks: Vec<Value>,
    pub tool_use_result: Option<Value>,
    /// The `type` of the attachment a `user` line was rewritten from (see `attachment`).
    pub attachment: Option<String>,
}

impl Record {
    /// Checks and reads a line whose `type` is `user` or `assistant`.
    pub fn parse(mut obj: Map<String, Value>, line: u64, role: Role) -> Result<Record, String> {
        let Some(message) = obj.remove("message") else {
            return Err(format!("{} line has no \"message\"", role.as_str()));
        };
        let Value::Object(mut message) = message else {
            return Err(format!(
                "{} line's \"message\" is a JSON {}, not an object",
                role.as_str(),
                kind_of(&message)
            ));
        };
        let blocks = match message.remove("content") {
            Some(Value::String(text)) => {
                let mut block = Map::new();
                block.insert("type".to_owned(), Value::from("text"));
                block.insert("text".to_owned(), Value::String(text));
                vec![Value::Object(block)]
            }
            Some(Value::Array(blocks)) => blocks,
            Some(other) => {
                return Err(format!(
                    "message content is a JSON {}; expected a string or an array of blocks",
                    kind_of(&other)
                ));
            }
            None => return Err("message has no \"content\"".to_owned()),
        };
        let (timestamp, timestamp_warning) = match fields::timestamp(&obj, "timestamp") {
            Stamp::Missing => (None, None),
            Stamp::Valid(t) => (Some(t), None),
            Stamp::Invalid(why) => (None, Some(why)),
        };
        let usage = match message.remove("usage") {
            Some(Value::Object(usage)) => Some(usage),
            _ => None,
        };
        Ok(Record {
            line,
            role,
            uuid: string_field(&obj, "uuid"),
            parent_uuid: string_field(&obj, "parentUuid"),
            session_id: string_field(&obj, "sessionId"),
            agent_id: string_field(&obj, "agentId"),
            sidechain: flag(&obj, "isSidechain"),
            timestamp,
            timestamp_warning,
            cwd: string_field(&obj, "cwd"),
            git_branch: string_field(&obj, "gitBranch"),
            version: string_field(&obj, "version"),
            slug: string_field(&obj, "slug"),
            is_meta: flag(&obj, "isMeta"),
            is_compact_summary: flag(&obj, "isCompactSummary"),
            is_api_error: flag(&obj, "isApiErrorMessage"),
            request_id: string_field(&obj, "requestId"),
            message_id: string_field(&message, "id"),
            model: str_field(&message, "model")
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
            stop_reason: string_field(&message, "stop_reason"),
            usage,
            blocks,
            tool_use_result: obj.remove("toolUseResult"),
            attachment: obj
                .get("attachment")
                .and_then(Value::as_object)
                .and_then(|a| string_field(a, "type")),
        })
    }

    /// `true` when the model field is Claude Code's marker for messages it wrote itself
    /// (API errors, "no response requested") rather than a model's output.
    pub fn is_synthetic(&self) -> bool {
        self.model.as_deref() == Some("<synthetic>")
    }

    /// `true` when every block is a `tool_result` (and there is at least one).
    pub fn only_tool_results(&self) -> bool {
        !self.blocks.is_empty()
            && self
                .blocks
                .iter()
                .all(|b| b.as_object().and_then(|o| str_field(o, "type")) == Some("tool_result"))
    }

    /// The `tool_use_id` of the first `tool_result` block.
    pub fn first_tool_use_id(&self) -> Option<String> {
        self.blocks.iter().find_map(|b| {
            let obj = b.as_object()?;
            (str_field(obj, "type")? == "tool_result")
                .then(|| string_field(obj, "tool_use_id"))
                .flatten()
        })
    }

    /// Id fallback for lines without a uuid: stable because logs are append-only.
    pub fn line_id(&self) -> String {
        format!("line-{}", self.line)
    }
}
