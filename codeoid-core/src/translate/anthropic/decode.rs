//! Reading Anthropic messages back into canonical turns (the writer is the parent module).
//!
//! A string `content` is one text block. Pairing is not validated (that is the writer's job);
//! blocks of unknown types, also inside a `tool_result`, are errors or, with `skip_unknown`,
//! dropped.

use serde_json::{Map, Value};

use crate::canonical::{
    Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};
use crate::error::{Error, Result};

use crate::translate::arguments;
use crate::translate::backend::{Backend, Options};
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::read;

/// Reads Anthropic messages back into canonical turns.
pub(crate) fn decode(
    messages: &Value,
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Result<Vec<Turn>> {
    let list = read::array(messages, "messages")?;
    let mut turns = Vec::with_capacity(list.len());
    for (m, message) in list.iter().enumerate() {
        let path = format!("messages[{m}]");
        let map = read::object(message, &path)?;
        let role = match read::string(map, "role", &path)? {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => {
                return Err(Error::invalid_input(format!(
                    "{path}.role is {other:?}; anthropic messages are \"user\" or \"assistant\" \
                     (the system prompt is a separate field)"
                )));
            }
        };
        let parts = match map.get("content") {
            Some(Value::String(text)) => vec![Part::Text { text: text.clone() }],
            Some(Value::Array(blocks)) => {
                let mut parts = Vec::with_capacity(blocks.len());
                for (b, block) in blocks.iter().enumerate() {
                    let path = format!("{path}.content[{b}]");
                    match decode_block(block, &path, backend, (m, b), options, losses)? {
                        Some(part) => parts.push(part),
                        None if options.skip_unknown => losses.message(
                            m,
                            Some(b),
                            LossKind::Dropped,
                            "content block of a type codeoid does not know",
                        ),
                        None => {
                            let found = block.get("type").and_then(Value::as_str).unwrap_or("");
                            return Err(read::unknown_type(
                                &path,
                                found,
                                "text, image, thinking, redacted_thinking, tool_use, tool_result",
                            ));
                        }
                    }
                }
                parts
            }
            Some(other) => {
                return Err(Error::invalid_input(format!(
                    "{path}.content is {}; expected a string or an array of content blocks",
                    read::kind(other)
                )));
            }
            None => {
                return Err(Error::invalid_input(format!(
                    "{path}.content is missing; expected a string or an array of content blocks"
                )));
            }
        };
        turns.push(backend.decoded_turn(role, parts, &path)?);
    }
    Ok(turns)
}

fn signature(backend: &Backend, value: &str) -> Signature {
    Signature {
        provider: backend.provider.clone(),
        model: backend.model.clone(),
        value: value.to_owned(),
    }
}

/// One content block, or `None` for an unknown type; `at` is (message, block) for losses.
fn decode_block(
    block: &Value,
    path: &str,
    backend: &Backend,
    at: (usize, usize),
    options: &Options,
    losses: &mut Losses,
) -> Result<Option<Part>> {
    let map = read::object(block, path)?;
    let part = match read::string(map, "type", path)? {
        "text" => Part::Text {
            text: read::string(map, "text", path)?.to_owned(),
        },
        "image" => Part::Image(decode_image(map, path)?),
        "thinking" => Part::Thinking(Thinking {
            text: read::string(map, "thinking", path)?.to_owned(),
            signature: read::opt_string(map, "signature", path)?.map(|v| signature(backend, v)),
            redacted: false,
        }),
        "redacted_thinking" => Part::Thinking(Thinking {
            text: String::new(),
            signature: Some(signature(backend, read::string(map, "data", path)?)),
            redacted: true,
        }),
        "tool_use" => {
            let input = map.get("input").ok_or_else(|| {
                Error::invalid_input(format!("{path}.input is missing; expected an object"))
            })?;
            Part::ToolCall(ToolCall {
                id: ids::canonical_id(read::string(map, "id", path)?).into_owned(),
                provider_id: None,
                name: read::string(map, "name", path)?.to_owned(),
                input: arguments::from_object(input),
            })
        }
        "tool_result" => Part::ToolResult(decode_result(map, path, at, options, losses)?),
        _ => return Ok(None),
    };
    Ok(Some(part))
}

fn decode_image(map: &Map<String, Value>, path: &str) -> Result<Image> {
    let source_path = format!("{path}.source");
    let source = read::object(map.get("source").unwrap_or(&Value::Null), &source_path)?;
    let (media_type, source) = match read::string(source, "type", &source_path)? {
        "base64" => (
            Some(read::string(source, "media_type", &source_path)?.to_owned()),
            ImageSource::Base64 {
                data: read::string(source, "data", &source_path)?.to_owned(),
            },
        ),
        "url" => (
            None,
            ImageSource::Url {
                url: read::string(source, "url", &source_path)?.to_owned(),
            },
        ),
        "file" => (
            None,
            ImageSource::File {
                file_id: read::string(source, "file_id", &source_path)?.to_owned(),
            },
        ),
        other => {
            return Err(read::unknown_type(&source_path, other, "base64, url, file"));
        }
    };
    Ok(Image { media_type, source })
}

/// A `tool_result` block; `at` is (message, block). Blocks inside it other than text and image
/// (`document`, `search_result`) are unknown content: dropped with `skip_unknown`.
fn decode_result(
    map: &Map<String, Value>,
    path: &str,
    at: (usize, usize),
    options: &Options,
    losses: &mut Losses,
) -> Result<ToolResult> {
    let call_id = ids::canonical_id(read::string(map, "tool_use_id", path)?).into_owned();
    let parts = match map.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => vec![ToolResultPart::Text { text: text.clone() }],
        Some(Value::Array(blocks)) => {
            let mut parts = Vec::with_capacity(blocks.len());
            for (b, block) in blocks.iter().enumerate() {
                let path = format!("{path}.content[{b}]");
                let inner = read::object(block, &path)?;
                match read::string(inner, "type", &path)? {
                    "text" => parts.push(ToolResultPart::Text {
                        text: read::string(inner, "text", &path)?.to_owned(),
                    }),
                    "image" => parts.push(ToolResultPart::Image(decode_image(inner, &path)?)),
                    other if options.skip_unknown => losses.message(
                        at.0,
                        Some(at.1),
                        LossKind::Dropped,
                        format!("{other:?} block at content[{b}] of a tool_result"),
                    ),
                    other => {
                        return Err(read::unknown_type(
                            &path,
                            other,
                            "text, image (inside a tool_result)",
                        ));
                    }
                }
            }
            parts
        }
        Some(other) => {
            return Err(Error::invalid_input(format!(
                "{path}.content is {}; expected a string or an array of blocks",
                read::kind(other)
            )));
        }
    };
    Ok(ToolResult {
        call_id,
        parts,
        is_error: read::flag(map, "is_error", path)?,
    })
}
