//! Whole request bodies: system prompt + messages + tools in each provider's shape, and back.
//!
//! | format | system | messages | tools |
//! |---|---|---|---|
//! | Anthropic | `system` (string) | `messages` | `tools` |
//! | OpenAI Chat | first message, role from [`Options::chat_system_role`] | `messages` | `tools` |
//! | OpenAI Responses | `instructions` | `input` | `tools` |
//! | Gemini | `systemInstruction: {parts: [{text}]}` | `contents` | `tools: [{functionDeclarations}]` |
//!
//! `model` is set from the backend except for Gemini, whose model is part of the URL. Sampling,
//! `max_tokens`, streaming, `store`/`include` and thinking budgets are the caller's to add: this
//! module shapes the conversation, not the call.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::canonical::Turn;
use crate::error::{Error, Result};

use super::backend::{Backend, Format, Options, SystemRole};
use super::loss::{Losses, Translation};
use super::normalize;
use super::read;
use super::tools::{ToolSpec, declare_tools, read_tools};

/// A conversation with its system prompt and tools: what a request body carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The turns, in order.
    #[serde(default)]
    pub turns: Vec<Turn>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
}

/// Builds `backend`'s request body (without sampling parameters) for a conversation.
///
/// # Errors
/// Everything [`super::to_messages`] and [`declare_tools`] return.
pub fn to_request(
    system: Option<&str>,
    turns: &[Turn],
    tools: &[ToolSpec],
    backend: &Backend,
    options: &Options,
) -> Result<Translation<Value>> {
    let plan = normalize::plan(turns)?;
    // An empty system prompt says nothing, and Gemini rejects an empty text part.
    let system = system.filter(|s| !s.is_empty());
    let mut losses = Losses::default();
    let messages = super::encode(&plan, turns, backend, options, &mut losses);
    let mut all = plan.losses;
    all.extend(losses.list);
    let declared = if tools.is_empty() {
        None
    } else {
        let declared = declare_tools(
            tools,
            backend.format,
            &Options {
                strict: false,
                ..options.clone()
            },
        )?;
        all.extend(declared.losses);
        Some(declared.value)
    };
    let mut body = Map::new();
    if let (Some(model), false) = (&backend.model, backend.format == Format::Gemini) {
        body.insert("model".into(), json!(model));
    }
    match backend.format {
        Format::Anthropic => {
            if let Some(system) = system {
                body.insert("system".into(), json!(system));
            }
            body.insert("messages".into(), Value::Array(messages));
        }
        Format::OpenaiChat => {
            let mut list = Vec::with_capacity(messages.len() + 1);
            if let Some(system) = system {
                let role = match options.chat_system_role {
                    SystemRole::System => "system",
                    SystemRole::Developer => "developer",
                };
                list.push(json!({"role": role, "content": system}));
            }
            list.extend(messages);
            body.insert("messages".into(), Value::Array(list));
        }
        Format::OpenaiResponses => {
            if let Some(system) = system {
                body.insert("instructions".into(), json!(system));
            }
            body.insert("input".into(), Value::Array(messages));
        }
        Format::Gemini => {
            if let Some(system) = system {
                body.insert(
                    "systemInstruction".into(),
                    json!({"parts": [{"text": system}]}),
                );
            }
            body.insert("contents".into(), Value::Array(messages));
        }
    }
    if let Some(tools) = declared {
        body.insert("tools".into(), tools);
    }
    all.finish(Value::Object(body), options.strict)
}

/// Reads a `backend` request body back: system prompt, turns and tools.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] naming the JSON path when the body does not have the
/// format's shape, plus everything [`super::from_messages`] returns.
pub fn from_request(
    body: &Value,
    backend: &Backend,
    options: &Options,
) -> Result<Translation<Request>> {
    let map = read::object(body, "request body")?;
    let (messages_key, system) = match backend.format {
        Format::Anthropic => ("messages", system_text(map.get("system"), "system")?),
        Format::OpenaiChat => ("messages", None),
        Format::OpenaiResponses => (
            "input",
            read::opt_string(map, "instructions", "request body")?.map(str::to_owned),
        ),
        Format::Gemini => (
            "contents",
            match map.get("systemInstruction") {
                Some(Value::Object(content)) => {
                    system_text(content.get("parts"), "systemInstruction.parts")?
                }
                Some(other) => system_text(Some(other), "systemInstruction")?,
                None => None,
            },
        ),
    };
    let messages = map.get(messages_key).ok_or_else(|| {
        Error::invalid_input(format!(
            "request body has no {messages_key:?}; expected a {} request",
            backend.format
        ))
    })?;
    let conversation = super::from_messages(
        messages,
        backend,
        &Options {
            strict: false,
            ..options.clone()
        },
    )?;
    let mut losses = Losses::default();
    losses.extend(conversation.losses);
    let tools = match map.get("tools") {
        Some(tools) => read_tools(tools, backend.format, &mut losses)?,
        None => Vec::new(),
    };
    let system = match (system, conversation.value.system) {
        (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
        (a, b) => a.or(b),
    };
    let request = Request {
        system,
        turns: conversation.value.turns,
        tools,
    };
    losses.finish(request, options.strict)
}

/// A system prompt given as a string or as a list of text blocks/parts (joined by blank lines).
fn system_text(value: Option<&Value>, path: &str) -> Result<Option<String>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::with_capacity(blocks.len());
            for (b, block) in blocks.iter().enumerate() {
                let block_path = format!("{path}[{b}]");
                texts.push(read::string(
                    read::object(block, &block_path)?,
                    "text",
                    &block_path,
                )?);
            }
            Ok(Some(texts.join("\n\n")))
        }
        Some(other) => Err(Error::invalid_input(format!(
            "{path} is {}; expected a string or a list of text blocks",
            read::kind(other)
        ))),
    }
}
