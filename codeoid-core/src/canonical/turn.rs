//! The canonical turn: one provider-neutral message of a conversation.
//!
//! A [`Turn`] is what codeoid stores as the source of truth for replay and fork, and what the
//! translators convert to and from Anthropic, OpenAI and Gemini messages. It carries everything a
//! provider can send back (text, images, thinking with its opaque signature, tool calls, tool
//! results) plus per-call token usage, so occupancy can be computed from the primary conversation
//! alone.
//!
//! Conventions:
//! - Two roles. Tool results travel in `user` turns, as Anthropic and Gemini do; OpenAI's `tool`
//!   messages map onto that. System prompts are not turns: translators take them separately.
//! - A tool call has a canonical `id`, unique within its session, and the `provider_id` that the
//!   producing provider gave it (they are often equal). A result names the canonical id.
//! - Signatures are opaque and remember which provider (and model) made them, so they are only ever
//!   sent back there.
//! - [`Part::Error`] records an error the harness reports (an API error, a tool crash) in order with
//!   the conversation; providers never see it.
//!
//! This module validates shape ([`Turn::validate`]); it does not know about storage or providers.

use chrono::{DateTime, Datelike, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Who produced a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person, or the harness speaking for them (tool results included).
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// `"user"` or `"assistant"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message of a conversation in provider-neutral form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Stable id of this turn within its session (a provider message id, a log line uuid...).
    /// Recording a turn whose id the session already has is a no-op, which makes re-imports
    /// idempotent. `None` lets the store assign one; an empty string is rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Who produced the turn.
    pub role: Role,
    /// The content, in order.
    pub parts: Vec<Part>,
    /// Provider that produced an assistant turn (`"anthropic"`, `"openai"`, `"gemini"`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model id that produced an assistant turn (`"claude-sonnet-4-5"`, `"gpt-5"`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Token usage of the model calls that produced this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// When the turn happened. `None` means "now" to the store.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "rfc3339_or_null"
    )]
    pub timestamp: Option<DateTime<Utc>>,
    /// Free-form metadata kept verbatim (for example `{"compaction_summary": true}` or
    /// `{"sidechain": true}` from an importer).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub meta: Map<String, Value>,
}

/// One piece of a turn's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Part {
    /// Plain text.
    Text {
        /// The text, verbatim.
        text: String,
    },
    /// An image, inline or by reference.
    Image(Image),
    /// Model reasoning, possibly signed or redacted.
    Thinking(Thinking),
    /// A call the model asks the harness to run.
    ToolCall(ToolCall),
    /// The result of a tool call, sent back to the model.
    ToolResult(ToolResult),
    /// An error the harness reports (API error, tool crash). Stored and searchable; never sent to
    /// a provider.
    Error {
        /// The error text, verbatim.
        message: String,
    },
}

/// An image and where its bytes are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Image {
    /// MIME type such as `image/png`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Where the bytes are.
    pub source: ImageSource,
}

/// Where an image's bytes live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ImageSource {
    /// Inline, base64-encoded.
    Base64 {
        /// The base64 text.
        data: String,
    },
    /// A URL the provider can fetch.
    Url {
        /// The URL.
        url: String,
    },
    /// A provider-side file id (Anthropic Files API, OpenAI file id, Gemini file URI).
    File {
        /// The id or URI.
        file_id: String,
    },
}

/// Reasoning produced by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thinking {
    /// The visible reasoning text; may be empty (a signed block with no text must survive).
    #[serde(default)]
    pub text: String,
    /// The provider's opaque signature or encrypted reasoning, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<Signature>,
    /// `true` for reasoning the provider redacted (Anthropic `redacted_thinking`); its opaque data
    /// is the signature's value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// An opaque token that only the provider (and model family) that produced it accepts back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    /// Provider that produced it (`"anthropic"`, `"openai"`, `"gemini"`...).
    pub provider: String,
    /// Model that produced it, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The opaque value, verbatim.
    pub value: String,
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// Canonical id, unique within the session; results refer to it.
    pub id: String,
    /// The id the producing provider gave the call, when it differs from `id` or must be kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON (normally an object).
    pub input: Value,
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResult {
    /// Canonical id of the call this answers.
    pub call_id: String,
    /// The output, in order.
    pub parts: Vec<ToolResultPart>,
    /// `true` when the tool failed or the call was refused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// One piece of a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolResultPart {
    /// Text output, verbatim.
    Text {
        /// The text.
        text: String,
    },
    /// An image the tool returned.
    Image(Image),
}

/// Token usage of the model calls behind one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// One entry per model call. A harness that runs subagents reports their calls here with
    /// `primary: false`; they never count towards the primary context's occupancy.
    pub calls: Vec<CallUsage>,
}

/// Token usage of one model call.
///
/// `Default` is an empty *primary* call, matching the serde default: a call is primary unless a
/// harness says otherwise, so code that builds usage with `..CallUsage::default()` still rotates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallUsage {
    /// Uncached input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_creation_tokens: u64,
    /// `true` for calls of the primary conversation, `false` for subagents and side calls.
    #[serde(default = "default_true")]
    pub primary: bool,
    /// Model of this call, when it differs from the turn's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Provider request id, when known (used to de-duplicate usage repeated across log lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

fn default_true() -> bool {
    true
}

impl Default for CallUsage {
    fn default() -> Self {
        CallUsage {
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_creation_tokens: 0,
            primary: true,
            model: None,
            request_id: None,
        }
    }
}

impl CallUsage {
    /// Everything the model read for this call: uncached input plus cache reads and writes.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_creation_tokens)
    }
}

impl Usage {
    /// The largest primary call's context tokens, or `None` when no primary call was reported.
    /// This, not a sum, is how full the primary context was: subagent calls never count.
    pub fn primary_context_tokens(&self) -> Option<u64> {
        self.calls
            .iter()
            .filter(|c| c.primary)
            .map(CallUsage::context_tokens)
            .max()
    }
}

impl Turn {
    /// A user turn holding one text part.
    pub fn user_text(text: impl Into<String>) -> Turn {
        Turn::new(Role::User, vec![Part::Text { text: text.into() }])
    }

    /// An assistant turn holding one text part.
    pub fn assistant_text(text: impl Into<String>) -> Turn {
        Turn::new(Role::Assistant, vec![Part::Text { text: text.into() }])
    }

    /// A turn with `parts` and nothing else set.
    pub fn new(role: Role, parts: Vec<Part>) -> Turn {
        Turn {
            id: None,
            role,
            parts,
            provider: None,
            model: None,
            usage: None,
            timestamp: None,
            meta: Map::new(),
        }
    }

    /// Parses a turn from its canonical JSON form (see `docs/canonical-turns.md`).
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the line, column and problem (unknown role, unknown
    /// part type, missing field...), or any [`Turn::validate`] failure.
    pub fn from_json(json: &str) -> Result<Turn> {
        let turn: Turn = serde_json::from_str(json).map_err(|e| {
            Error::invalid_input(format!(
                "malformed canonical turn JSON: {e}; expected an object with \"role\" (\"user\" or \
                 \"assistant\") and \"parts\" (see docs/canonical-turns.md)"
            ))
        })?;
        turn.validate()?;
        Ok(turn)
    }

    /// The concatenated text parts, joined by newlines (tool results, thinking and images
    /// excluded).
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }

    /// `true` when this is a user turn with something the person typed (text or an image), not
    /// only tool results.
    pub fn is_user_prompt(&self) -> bool {
        self.role == Role::User
            && self.parts.iter().any(|p| match p {
                Part::Text { text } => !text.trim().is_empty(),
                Part::Image(_) => true,
                _ => false,
            })
    }

    /// `true` when `meta[key]` is the boolean `true` (the well-known flags are listed in
    /// `docs/architecture.md`).
    pub fn meta_flag(&self, key: &str) -> bool {
        self.meta.get(key) == Some(&Value::Bool(true))
    }

    /// `true` when this is a prompt the person typed: a user prompt ([`Turn::is_user_prompt`])
    /// that is not a harness-written summary (`compaction_summary`), a subagent's brief
    /// (`sidechain`) or text the harness injected (`is_meta`). What a session's first intent and
    /// a rotation's task anchor are taken from.
    pub fn is_person_prompt(&self) -> bool {
        self.is_user_prompt()
            && !self.meta_flag("compaction_summary")
            && !self.meta_flag("sidechain")
            && !self.meta_flag("is_meta")
    }

    /// Checks the invariants the store and translators rely on.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when the id is empty, the timestamp lies outside the
    /// years 1 to 9999, a tool call has an empty id or name,
    /// a tool call appears in a user turn, a tool result or thinking in an assistant turn... The
    /// message names the part by index.
    pub fn validate(&self) -> Result<()> {
        if let Some(id) = &self.id {
            if id.trim().is_empty() {
                return Err(Error::invalid_input(
                    "turn id is empty; omit \"id\" to let the store assign one",
                ));
            }
        }
        if let Some(at) = self.timestamp {
            check_timestamp(at, "turn timestamp")?;
        }
        let role = self.role.as_str();
        for (index, part) in self.parts.iter().enumerate() {
            match (self.role, part) {
                (Role::User, Part::ToolCall(_)) => {
                    return Err(Error::invalid_input(format!(
                        "part {index} of a user turn is a tool_call; tool calls belong to \
                         assistant turns"
                    )));
                }
                (Role::Assistant, Part::ToolResult(_)) => {
                    return Err(Error::invalid_input(format!(
                        "part {index} of an assistant turn is a tool_result; tool results belong \
                         to user turns"
                    )));
                }
                (Role::User, Part::Thinking(_)) => {
                    return Err(Error::invalid_input(format!(
                        "part {index} of a user turn is thinking; thinking belongs to assistant \
                         turns"
                    )));
                }
                (_, Part::ToolCall(call)) => {
                    if call.id.trim().is_empty() {
                        return Err(Error::invalid_input(format!(
                            "part {index} ({role} turn) is a tool_call with an empty id"
                        )));
                    }
                    if call.name.trim().is_empty() {
                        return Err(Error::invalid_input(format!(
                            "part {index} ({role} turn) is a tool_call (id {:?}) with an empty name",
                            call.id
                        )));
                    }
                }
                (_, Part::ToolResult(result)) if result.call_id.trim().is_empty() => {
                    return Err(Error::invalid_input(format!(
                        "part {index} ({role} turn) is a tool_result with an empty call_id"
                    )));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// A turn's `timestamp`: an RFC 3339 string or null, with an error that says so (chrono's own
/// names neither the field nor the format).
fn rfc3339_or_null<'de, D>(deserializer: D) -> std::result::Result<Option<DateTime<Utc>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let Some(text) = Option::<String>::deserialize(deserializer)? else {
        return Ok(None);
    };
    // The same parse chrono's own `Deserialize` uses, so every stored turn reads back.
    text.parse::<DateTime<chrono::FixedOffset>>()
        .map(|at| Some(at.with_timezone(&Utc)))
        .map_err(|e| {
            serde::de::Error::custom(format!(
                "timestamp {text:?} is not an RFC 3339 time ({e}); expected a string such as \
                 2026-01-31T12:00:00Z"
            ))
        })
}

/// Checks that `at` (named `what` in the error) lies in the years 1 to 9999: what RFC 3339,
/// which every binding prints times in, and Python's `datetime` can hold.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] naming `what` and the time outside that range.
pub fn check_timestamp(at: DateTime<Utc>, what: &str) -> Result<()> {
    if (1..=9999).contains(&at.year()) {
        return Ok(());
    }
    Err(Error::invalid_input(format!(
        "{what} {at} is outside the years 1 to 9999; expected an RFC 3339 time such as \
         2026-01-31T12:00:00Z"
    )))
}
