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
//! thinking, file references another provider issued (`file_ref`). Each is reported.
//!
//! With extended thinking enabled, Anthropic requires the first assistant message of the turn a
//! tool loop is in to start with a thinking block ("a final assistant message must start with a
//! thinking block"). History ending inside a tool loop whose assistant message has no native
//! thinking to start with (another provider's, left out) is sent as it is, reported as
//! [`LossKind::NeedsThinkingOff`]: the caller sends the next request without thinking.
//!
//! Reading back is `decode`.

mod decode;

pub(crate) use decode::decode;

use serde_json::{Map, Value, json};

use crate::canonical::{Image, ImageSource, Role, ToolCall, ToolResult, ToolResultPart, Turn};

use crate::translate::arguments;
use crate::translate::backend::{Backend, Format, Options};
use crate::translate::file_ref;
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::media;
use crate::translate::normalize::{PieceKind, Plan, PlanTurn};
use crate::translate::thinking::{self, Verdict};

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
    // The planned turn each message was written for.
    let mut written = Vec::with_capacity(plan.turns.len());
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
                PieceKind::Image(image) => {
                    content.extend(image_block(image, backend, at, losses));
                }
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
                    content.push(tool_result(result, backend, at, losses));
                }
            }
        }
        if !content.is_empty() {
            let role = turn.role.as_str();
            messages.push(json!({"role": role, "content": content}));
            written.push(turn);
        }
    }
    check_open_loop(&messages, &written, turns, backend, options, losses);
    messages
}

/// Whether a message's content holds a block of type `kind`.
fn holds(message: &Value, kind: &str) -> bool {
    message["content"]
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == kind))
}

/// Reports [`LossKind::NeedsThinkingOff`] when the messages end inside a tool loop (on calls
/// whose results come next, or on results) and the first assistant message of that turn of the
/// conversation does not start with a thinking block, although its turn was made with thinking
/// or by another provider. A turn of this provider without any thinking was made with thinking
/// off, and continuing it so is what the caller already does.
fn check_open_loop(
    messages: &[Value],
    written: &[&PlanTurn<'_>],
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) {
    let open = messages.last().is_some_and(|last| {
        (last["role"] == "assistant" && holds(last, "tool_use"))
            || (last["role"] == "user" && holds(last, "tool_result"))
    });
    if !open {
        return;
    }
    // The turn of the conversation starts after the last user message that is not results.
    let start = messages
        .iter()
        .rposition(|m| m["role"] == "user" && !holds(m, "tool_result"))
        .map_or(0, |i| i + 1);
    let Some(first) = (start..messages.len()).find(|&i| messages[i]["role"] == "assistant") else {
        return;
    };
    let starts_thinking = matches!(
        messages[first]["content"][0]["type"].as_str(),
        Some("thinking" | "redacted_thinking")
    );
    let turn = written[first];
    let mut thinking = turn.pieces.iter().filter_map(|p| match p.kind {
        PieceKind::Thinking(t) => Some((p.at, t)),
        _ => None,
    });
    let had_thinking = thinking.clone().next().is_some();
    let foreign = turns[turn.index]
        .provider
        .as_deref()
        .is_some_and(|p| p != backend.provider);
    if starts_thinking || !(had_thinking || foreign) {
        return;
    }
    let why = if thinking.any(|(at, t)| {
        thinking::classify(t, turns[at.0].provider.as_deref(), backend, options) == Verdict::Foreign
    }) {
        "its thinking is another provider's, which anthropic does not take as thinking"
    } else if had_thinking {
        "its thinking does not come first"
    } else {
        "it comes from another provider, without thinking"
    };
    losses.turn(
        turn.index,
        LossKind::NeedsThinkingOff,
        format!(
            "the messages end inside a tool loop whose assistant message does not start with a \
             thinking block ({why}); anthropic rejects that when extended thinking is enabled: \
             send the next request with thinking disabled, or fork where the tool loop has ended"
        ),
    );
}

fn image_block(
    image: &Image,
    backend: &Backend,
    at: (usize, usize),
    losses: &mut Losses,
) -> Option<Value> {
    if !file_ref::sendable(image, Format::Anthropic, backend, at, losses) {
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

fn tool_result(
    result: &ToolResult,
    backend: &Backend,
    at: (usize, usize),
    losses: &mut Losses,
) -> Value {
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
            ToolResultPart::Image(image) => {
                content.extend(image_block(image, backend, at, losses));
            }
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
