//! Canonical ⇄ OpenAI Chat Completions `messages`.
//!
//! An assistant turn is one `assistant` message: `reasoning_content` (unsigned reasoning, only with
//! [`Options::chat_reasoning_content`], and then empty on a message with tool calls and nothing
//! else to put there), `content` (a string for one text part, text parts for several, `null` when
//! there is none) and `tool_calls` (arguments as a JSON string). A user turn is one `tool` message
//! per result, in call order, then one `user` message with the rest. With
//! [`Options::chat_string_content`] (by default for every provider but OpenAI) any `content` that
//! holds only text is one string, its parts joined by a blank line. System and developer messages
//! are read into [`Conversation::system`](crate::translate::Conversation::system), those after the
//! first turn reported as moved.
//!
//! What Chat has no place for, and how it is handled:
//! - the error flag: the text starts with the [`ERROR_MARKER`](super::ERROR_MARKER) line;
//! - images in tool results: `tool` messages carry text only, so the images follow in the next
//!   `user` message after a text part `[tool call {id} returned {n} image(s)]`, and reading back
//!   reattaches exactly `n` images to that result (reported as moved only when the result had text
//!   after an image);
//! - the fixed layout reasoning → text → calls (other orders are reported as moved);
//! - assistant images, image file ids, URL image media types, signed thinking, `provider_id`s
//!   (dropped, reported);
//! - ids over 40 characters (hashed, reported).
//!
//! Reading back merges `tool` messages with the `user` message right after them into one turn,
//! so a results-only turn followed by another user turn is reported as merged.

use std::borrow::Cow;

mod decode;

pub(crate) use decode::{decode, image_from_url, moved_system};

use serde_json::{Map, Value, json};

use crate::canonical::{Image, ImageSource, Role, ToolCall, ToolResult, Turn};

use crate::translate::anthropic::note_provider_id;
use crate::translate::arguments;
use crate::translate::backend::{Backend, Format, Options};
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::media;
use crate::translate::normalize::{PieceKind, Plan, PlanTurn};
use crate::translate::thinking::{self, Verdict};
use crate::translate::tool_error::{self, ERROR_MARKER};

/// Writes the planned turns as Chat messages.
pub(crate) fn encode(
    plan: &Plan<'_>,
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Vec<Value> {
    let mut messages = Vec::with_capacity(plan.turns.len() * 2);
    let strings = string_content(backend, options);
    for (k, turn) in plan.turns.iter().enumerate() {
        match turn.role {
            Role::Assistant => assistant(turn, turns, backend, options, losses, &mut messages),
            Role::User => {
                let left_open = user(turn, strings, losses, &mut messages);
                if let Some(next) = plan.turns.get(k + 1).filter(|n| n.role == Role::User) {
                    if left_open {
                        losses.turn(
                            next.index,
                            LossKind::Merged,
                            "reads back as part of the previous turn: openai puts tool results \
                             and the user message after them in one turn",
                        );
                    }
                }
            }
        }
    }
    messages
}

fn assistant(
    turn: &PlanTurn<'_>,
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
    messages: &mut Vec<Value>,
) {
    let mut reasoning: Vec<&str> = Vec::new();
    let mut texts: Vec<((usize, usize), Cow<'_, str>)> = Vec::new();
    let mut calls = Vec::new();
    // Chat's layout is reasoning, then text, then calls; anything else reads back reordered.
    let (mut stage, mut reordered) = (0u8, false);
    let mut advance = |to: u8| {
        reordered |= to < stage;
        stage = stage.max(to);
    };
    for piece in &turn.pieces {
        let at = piece.at;
        match &piece.kind {
            PieceKind::Text(text) => {
                advance(1);
                texts.push((at, Cow::Borrowed(text.as_ref())));
            }
            PieceKind::Image(_) => losses.part(
                at,
                LossKind::Dropped,
                "image in an assistant turn; openai chat accepts images from the user only",
            ),
            PieceKind::Thinking(t) => {
                let owner = turns[at.0].provider.as_deref();
                if thinking::classify(t, owner, backend, options) == Verdict::Native {
                    advance(0);
                    if !reasoning.is_empty() {
                        losses.part(
                            at,
                            LossKind::Merged,
                            "thinking joined with the previous thinking into one reasoning_content",
                        );
                    }
                    reasoning.push(&t.text);
                } else if let Some(text) = thinking::foreign(t, backend, options, at, losses) {
                    advance(1);
                    texts.push((at, Cow::Owned(text)));
                }
            }
            PieceKind::Call(call) => {
                advance(2);
                calls.push(tool_call(call, at, losses));
            }
            // normalize never puts results in assistant turns.
            PieceKind::Result { .. } => {}
        }
    }
    if reordered {
        losses.turn(
            turn.index,
            LossKind::Moved,
            "assistant content reordered to openai chat's layout: reasoning, text, tool calls",
        );
    }
    if reasoning.is_empty() && texts.is_empty() && calls.is_empty() {
        return;
    }
    if options.chat_reasoning_content && reasoning.is_empty() && !calls.is_empty() {
        losses.turn(
            turn.index,
            LossKind::Synthesized,
            "empty reasoning_content added to an assistant message with tool calls and no \
             reasoning to send: thinking-mode providers (DeepSeek, Kimi) reject tool calls \
             without it; reads back as empty thinking",
        );
        reasoning.push("");
    }
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    let strings = string_content(backend, options);
    message.insert("content".into(), text_content(texts, strings, losses));
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    if !reasoning.is_empty() {
        message.insert("reasoning_content".into(), json!(reasoning.join("\n\n")));
    }
    messages.push(Value::Object(message));
}

/// Whether text-only `content` goes as one string ([`Options::chat_string_content`]).
fn string_content(backend: &Backend, options: &Options) -> bool {
    options
        .chat_string_content
        .unwrap_or(backend.provider != Format::OpenaiChat.vendor())
}

/// Reports each text after the first as joined into one string content.
fn note_joined(ats: impl IntoIterator<Item = (usize, usize)>, losses: &mut Losses) {
    for at in ats.into_iter().skip(1) {
        losses.part(
            at,
            LossKind::Merged,
            "text joined with the previous text into one string content (chat_string_content: \
             the provider accepts no content arrays); reads back as one text",
        );
    }
}

fn text_content(
    mut texts: Vec<((usize, usize), Cow<'_, str>)>,
    strings: bool,
    losses: &mut Losses,
) -> Value {
    match texts.len() {
        0 => Value::Null,
        1 => json!(texts.swap_remove(0).1),
        _ if strings => {
            note_joined(texts.iter().map(|(at, _)| *at), losses);
            let texts: Vec<&str> = texts.iter().map(|(_, t)| t.as_ref()).collect();
            json!(texts.join("\n\n"))
        }
        _ => Value::Array(
            texts
                .iter()
                .map(|(_, t)| json!({"type": "text", "text": t}))
                .collect(),
        ),
    }
}

fn tool_call(call: &ToolCall, at: (usize, usize), losses: &mut Losses) -> Value {
    let id = ids::send(Format::OpenaiChat, &call.id, at, losses);
    let (arguments, note) = arguments::to_json_string(&call.input);
    if let Some(note) = note {
        losses.part(at, LossKind::Changed, note);
    }
    note_provider_id(call, "openai chat", at, losses);
    json!({
        "id": id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    })
}

/// The text marking the images of one tool result in the following user message.
fn attachment_marker(wire_id: &str, count: usize) -> String {
    format!("[tool call {wire_id} returned {count} image(s)]")
}

fn parse_attachment_marker(text: &str) -> Option<(&str, usize)> {
    let rest = text
        .strip_prefix("[tool call ")?
        .strip_suffix(" image(s)]")?;
    let (id, count) = rest.rsplit_once(" returned ")?;
    Some((id, count.parse().ok()?))
}

/// Writes one user turn; returns whether it ended with `tool` messages only (which reading back
/// merges with a following user message).
fn user(
    turn: &PlanTurn<'_>,
    strings: bool,
    losses: &mut Losses,
    messages: &mut Vec<Value>,
) -> bool {
    let mut content = Vec::new();
    let mut wrote_tool = false;
    for piece in &turn.pieces {
        let PieceKind::Result { result, .. } = &piece.kind else {
            continue;
        };
        let at = piece.at;
        let id = ids::send(Format::OpenaiChat, &result.call_id, at, losses);
        let (body, images) = result_content(result, strings, at, losses);
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": body}));
        wrote_tool = true;
        let images: Vec<Value> = images
            .into_iter()
            .filter_map(|image| image_part(image, at, losses))
            .collect();
        if !images.is_empty() {
            content.push(json!({"type": "text", "text": attachment_marker(&id, images.len())}));
            content.extend(images);
        }
    }
    // Where each text part came from, in case they are joined into one string.
    let mut text_ats = Vec::new();
    for piece in &turn.pieces {
        match &piece.kind {
            PieceKind::Text(text) => {
                content.push(json!({"type": "text", "text": text}));
                text_ats.push(piece.at);
            }
            PieceKind::Image(image) => content.extend(image_part(image, piece.at, losses)),
            _ => {}
        }
    }
    if content.is_empty() {
        return wrote_tool;
    }
    let text = |part: &Value| {
        part.get("type").and_then(Value::as_str) == Some("text")
            && part.get("text").is_some_and(Value::is_string)
    };
    let body = match content.as_slice() {
        [single] if text(single) => single.get("text").cloned().unwrap_or(Value::Null),
        // Image markers come with images, so text-only content is this turn's own text.
        parts if strings && parts.iter().all(text) => {
            note_joined(text_ats, losses);
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            json!(texts.join("\n\n"))
        }
        _ => Value::Array(content),
    };
    messages.push(json!({"role": "user", "content": body}));
    false
}

/// The `content` of a `tool` message and the images that must travel separately.
fn result_content<'r>(
    result: &'r ToolResult,
    strings: bool,
    at: (usize, usize),
    losses: &mut Losses,
) -> (Value, Vec<&'r Image>) {
    let (texts, images) = media::texts_then_images(result, at, losses, |image, _| Some(image));
    let mut texts: Vec<Cow<'r, str>> = texts.into_iter().map(Cow::Borrowed).collect();
    if strings && texts.len() >= 2 {
        losses.part(
            at,
            LossKind::Merged,
            "tool result texts joined into one string content (chat_string_content: the \
             provider accepts no content arrays); reads back as one text",
        );
        texts = vec![Cow::Owned(texts.join("\n\n"))];
    }
    let body = match (texts.as_slice(), result.is_error) {
        ([], true) => json!(ERROR_MARKER),
        ([], false) => json!(""),
        ([text], true) => json!(tool_error::mark(text)),
        ([text], false) => {
            if text.is_empty() {
                losses.part(
                    at,
                    LossKind::Changed,
                    "empty tool output reads back as no output",
                );
            } else if tool_error::looks_marked(text) {
                losses.part(
                    at,
                    LossKind::Changed,
                    "successful tool output starts with the error marker and reads back as an error",
                );
            }
            json!(text)
        }
        (many, is_error) => {
            if !is_error && many.len() >= 3 && many[0] == ERROR_MARKER {
                losses.part(
                    at,
                    LossKind::Changed,
                    "successful tool output starts with the error marker and reads back as an error",
                );
            }
            let marker = is_error.then_some(ERROR_MARKER);
            Value::Array(
                marker
                    .into_iter()
                    .chain(many.iter().map(AsRef::as_ref))
                    .map(|t| json!({"type": "text", "text": t}))
                    .collect(),
            )
        }
    };
    (body, images)
}

fn image_part(image: &Image, at: (usize, usize), losses: &mut Losses) -> Option<Value> {
    if !media::accepts_declared(image, Format::OpenaiChat, at, losses) {
        return None;
    }
    let url: Cow<'_, str> = match &image.source {
        ImageSource::Base64 { data } => {
            let declared = image.media_type.as_deref();
            let media_type =
                media::inline_media_type(declared, data, Format::OpenaiChat, at, losses)?;
            Cow::Owned(media::data_url(&media_type, data))
        }
        ImageSource::Url { url } => {
            if image.media_type.is_some() {
                losses.part(
                    at,
                    LossKind::Dropped,
                    "media type of a url image; openai chat has no field for it",
                );
            }
            Cow::Borrowed(url)
        }
        ImageSource::File { file_id } => {
            losses.part(
                at,
                LossKind::Dropped,
                format!("image file {file_id:?}; openai chat cannot reference images by file id"),
            );
            return None;
        }
    };
    Some(json!({"type": "image_url", "image_url": {"url": url}}))
}
