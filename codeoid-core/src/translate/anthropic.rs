//! Canonical ⇄ Anthropic Messages (`messages` array of `{role, content}`).
//!
//! One planned turn is one message; content blocks map one to one: `text`, `image` (base64, url,
//! file sources), `thinking` with its `signature`, `redacted_thinking` with its `data`, `tool_use`
//! (object `input`, id remapped to `^[a-zA-Z0-9_-]+$`), `tool_result` (string or block `content`,
//! `is_error`). Results arrive first in the user message after the calls (see `normalize`).
//!
//! Anthropic cannot carry: images in assistant messages, text blocks that are empty or only
//! whitespace, a failed tool result without content (it gets `"(no output)"`), images of other types
//! than JPEG/PNG/GIF/WebP, media types of URL or file images, `provider_id`s, unsigned or foreign
//! thinking. Each is reported. Reading back accepts a string `content` as one text block and does
//! not validate pairing (that is the writer's job); blocks of unknown types, also inside a
//! `tool_result`, are errors or, with `skip_unknown`, dropped.

use serde_json::{Map, Value, json};

use crate::canonical::{
    Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};
use crate::error::{Error, Result};

use super::arguments;
use super::backend::{Backend, Format, Options};
use super::ids;
use super::loss::{LossKind, Losses};
use super::media;
use super::normalize::{PieceKind, Plan};
use super::read;
use super::thinking::{self, Verdict};

/// The content of a failed tool result that has none: Anthropic requires some.
const NO_OUTPUT: &str = "(no output)";

/// Writes the planned turns as Anthropic messages.
pub(crate) fn encode(
    plan: &Plan<'_>,
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Vec<Value> {
    let mut messages = Vec::with_capacity(plan.turns.len());
    for turn in &plan.turns {
        let mut content = Vec::with_capacity(turn.pieces.len());
        for piece in &turn.pieces {
            let at = piece.at;
            match &piece.kind {
                PieceKind::Text(text) if text.trim().is_empty() => losses.part(
                    at,
                    LossKind::Dropped,
                    "blank text part; anthropic rejects text blocks without non-whitespace text",
                ),
                PieceKind::Text(text) => content.push(json!({"type": "text", "text": text})),
                PieceKind::Image(_) if turn.role == Role::Assistant => losses.part(
                    at,
                    LossKind::Dropped,
                    "image in an assistant turn; anthropic accepts images from the user only",
                ),
                PieceKind::Image(image) => content.extend(image_block(image, at, losses)),
                PieceKind::Thinking(t) => {
                    let owner = turns[at.0].provider.as_deref();
                    match (thinking::classify(t, owner, backend, options), &t.signature) {
                        (Verdict::Native, Some(signature)) => {
                            thinking::note_restamp(signature, backend, at, losses);
                            if t.redacted && !t.text.is_empty() {
                                losses.part(
                                    at,
                                    LossKind::Dropped,
                                    "text of redacted thinking; redacted_thinking carries only data",
                                );
                            }
                            content.push(if t.redacted {
                                json!({"type": "redacted_thinking", "data": signature.value})
                            } else {
                                json!({
                                    "type": "thinking",
                                    "thinking": t.text,
                                    "signature": signature.value,
                                })
                            });
                        }
                        _ => {
                            if let Some(text) = thinking::foreign(t, backend, options, at, losses) {
                                content.push(json!({"type": "text", "text": text}));
                            }
                        }
                    }
                }
                PieceKind::Call(call) => content.push(tool_use(call, at, losses)),
                PieceKind::Result { result, .. } => {
                    content.push(tool_result(result, at, losses));
                }
            }
        }
        if !content.is_empty() {
            let role = turn.role.as_str();
            messages.push(json!({"role": role, "content": content}));
        }
    }
    messages
}

fn image_block(image: &Image, at: (usize, usize), losses: &mut Losses) -> Option<Value> {
    if !media::accepts_declared(image, Format::Anthropic, at, losses) {
        return None;
    }
    let source = match &image.source {
        ImageSource::Base64 { data } => {
            let declared = image.media_type.as_deref();
            let media_type =
                media::inline_media_type(declared, data, Format::Anthropic, at, losses)?;
            json!({"type": "base64", "media_type": media_type, "data": data})
        }
        ImageSource::Url { url } => json!({"type": "url", "url": url}),
        ImageSource::File { file_id } => json!({"type": "file", "file_id": file_id}),
    };
    if image.media_type.is_some() && !matches!(image.source, ImageSource::Base64 { .. }) {
        losses.part(
            at,
            LossKind::Dropped,
            "media type of a url or file image; anthropic has no field for it",
        );
    }
    Some(json!({"type": "image", "source": source}))
}

fn tool_use(call: &ToolCall, at: (usize, usize), losses: &mut Losses) -> Value {
    let id = ids::send(Format::Anthropic, &call.id, at, losses);
    let (input, repair) = arguments::as_object(&call.input);
    if let Some(repair) = repair {
        losses.part(at, LossKind::Changed, repair);
    }
    note_provider_id(call, "anthropic", at, losses);
    json!({"type": "tool_use", "id": id, "name": call.name, "input": input})
}

/// Reports a `provider_id` the format has no slot for (one equal to the call id is carried by it).
pub(crate) fn note_provider_id(
    call: &ToolCall,
    target: &str,
    at: (usize, usize),
    losses: &mut Losses,
) {
    // Importers set the provider id to the call id itself: then nothing is lost.
    if let Some(provider_id) = call.provider_id.as_ref().filter(|p| **p != call.id) {
        losses.part(
            at,
            LossKind::Dropped,
            format!(
                "provider id {provider_id:?} of tool call {:?}; {target} carries one id",
                call.id
            ),
        );
    }
}

fn tool_result(result: &ToolResult, at: (usize, usize), losses: &mut Losses) -> Value {
    let id = ids::send(Format::Anthropic, &result.call_id, at, losses);
    let mut block = Map::new();
    block.insert("type".into(), json!("tool_result"));
    block.insert("tool_use_id".into(), json!(id));
    let mut content = Vec::with_capacity(result.parts.len());
    for part in &result.parts {
        match part {
            ToolResultPart::Text { text } if text.trim().is_empty() => losses.part(
                at,
                LossKind::Dropped,
                "blank text in a tool result; anthropic rejects text blocks without \
                 non-whitespace text",
            ),
            ToolResultPart::Text { text } => {
                content.push(json!({"type": "text", "text": text}));
            }
            ToolResultPart::Image(image) => content.extend(image_block(image, at, losses)),
        }
    }
    // One text is sent as a string, the form the API documents and reads back the same.
    match content.as_mut_slice() {
        [] if result.is_error => {
            losses.part(
                at,
                LossKind::Synthesized,
                format!(
                    "{NO_OUTPUT:?} as the content of a failed tool result without output; \
                     anthropic rejects an error result with empty content"
                ),
            );
            block.insert("content".into(), json!(NO_OUTPUT));
        }
        [] => {}
        [single] if single["type"] == "text" => {
            block.insert("content".into(), single["text"].take());
        }
        _ => {
            block.insert("content".into(), Value::Array(content));
        }
    }
    if result.is_error {
        block.insert("is_error".into(), json!(true));
    }
    Value::Object(block)
}

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
        let mut turn = Turn::new(role, parts);
        if role == Role::Assistant {
            turn.provider = Some(backend.provider.clone());
            turn.model = backend.model.clone();
        }
        turn.validate()
            .map_err(|e| Error::invalid_input(format!("{path}: {}", e.message())))?;
        turns.push(turn);
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
