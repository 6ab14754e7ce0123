//! Canonical ⇄ OpenAI Responses `input` items.
//!
//! Responses has no messages-with-parts for the model's side: `input` is a flat list of items.
//! An assistant turn becomes, in order, `reasoning` items (signed thinking: `encrypted_content`
//! plus the text as one `summary_text`), `message` items with `role: "assistant"` (one per text
//! part, so part boundaries survive, unless the parts were read from one message whose id is
//! sent back), and `function_call` items (`call_id` is the canonical id, `id` the
//! [`provider_id`](crate::canonical::ToolCall::provider_id)). A user turn becomes one
//! `function_call_output` per result, in call order, then one `message` with
//! `input_text`/`input_image` parts.
//!
//! Item ids (`rs_…`, `msg_…`, `fc_…`): reading back keeps reasoning and message ids in the turn's
//! meta ([`REASONING_IDS_META`], [`MESSAGE_IDS_META`]: `{"<part index>": "…"}`) and call ids as
//! `provider_id`s. Writing sends the ids of a reasoning item and the items after it all together
//! or not at all (`item_ids` explains why); without ids OpenAI resumes the reasoning from its
//! `encrypted_content`.
//!
//! Reading back groups items into turns: assistant-side items (reasoning, calls, assistant messages)
//! join one assistant turn; outputs open a user turn that the next user message joins and closes.
//! So consecutive assistant turns, and a results-only turn followed by a user turn, are reported as
//! merged. Errors are encoded with the [`ERROR_MARKER`] as in Chat; outputs with images use the
//! part-list form. Responses cannot carry assistant images, unsigned or foreign thinking, or files
//! another provider stores (`file_ref`).

mod decode;
mod item_ids;

pub(crate) use decode::decode;
pub use item_ids::{MESSAGE_IDS_META, REASONING_IDS_META};

use item_ids::{Run, meta_id};

use serde_json::{Map, Value, json};

use crate::canonical::{
    Image, ImageSource, Role, Signature, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};

use crate::translate::arguments;
use crate::translate::backend::{Backend, Format, Options};
use crate::translate::file_ref;
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::media;
use crate::translate::normalize::{PieceKind, Plan};
use crate::translate::thinking::{self, Verdict};
use crate::translate::tool_error::{self, ERROR_MARKER};

/// Writes the planned turns as Responses input items.
pub(crate) fn encode(
    plan: &Plan<'_>,
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Vec<Value> {
    let mut items = Vec::with_capacity(plan.turns.len() * 2);
    // The assistant-side items since the last user item: their ids are decided together.
    let mut run = Run::default();
    // Role of the last turn that wrote items, and whether it left a user turn open.
    let mut previous: Option<(Role, bool)> = None;
    for turn in &plan.turns {
        let before = items.len() + run.taken();
        let mut left_open = false;
        for piece in &turn.pieces {
            let at = piece.at;
            let owner = &turns[at.0];
            match &piece.kind {
                PieceKind::Text(_) | PieceKind::Image(_) if turn.role == Role::User => {}
                PieceKind::Text(text) => run.text(text, meta_id(owner, MESSAGE_IDS_META, at.1)),
                PieceKind::Image(_) => losses.part(
                    at,
                    LossKind::Dropped,
                    "image in an assistant turn; openai responses accepts images from the user only",
                ),
                PieceKind::Thinking(t) => {
                    let verdict = thinking::classify(t, owner.provider.as_deref(), backend, options);
                    match (verdict, &t.signature) {
                        (Verdict::Native, Some(signature)) => {
                            thinking::note_restamp(signature, backend, at, losses);
                            let id = meta_id(owner, REASONING_IDS_META, at.1);
                            run.reasoning(reasoning(t, signature), id);
                        }
                        _ => {
                            if let Some(text) = thinking::foreign(t, backend, options, at, losses) {
                                run.text(&text, None);
                            }
                        }
                    }
                }
                PieceKind::Call(call) => run.call(function_call(call, at, losses), call, at),
                PieceKind::Result { result, .. } => {
                    run.finish(&mut items, options.responses_item_ids, losses);
                    let call_id = ids::send(Format::OpenaiResponses, &result.call_id, at, losses);
                    let output = output(result, backend, at, losses);
                    items.push(json!({
                        "type": "function_call_output",
                        "call_id": call_id,
                        "output": output,
                    }));
                    left_open = true;
                }
            }
        }
        if turn.role == Role::User {
            let content = user_content(
                turn.pieces.iter().filter_map(|p| match &p.kind {
                    PieceKind::Text(text) => Some((p.at, Err(text.as_ref()))),
                    PieceKind::Image(image) => Some((p.at, Ok(*image))),
                    _ => None,
                }),
                backend,
                losses,
            );
            if !content.is_empty() {
                run.finish(&mut items, options.responses_item_ids, losses);
                items.push(json!({"type": "message", "role": "user", "content": content}));
                left_open = false;
            }
        }
        if items.len() + run.taken() == before {
            continue;
        }
        match previous {
            Some((Role::Assistant, _)) if turn.role == Role::Assistant => losses.turn(
                turn.index,
                LossKind::Merged,
                "reads back as part of the previous assistant turn: responses input is a flat \
                 list of items",
            ),
            Some((Role::User, true)) if turn.role == Role::User => losses.turn(
                turn.index,
                LossKind::Merged,
                "reads back as part of the previous turn: tool outputs and the user message \
                 after them form one turn",
            ),
            _ => {}
        }
        previous = Some((turn.role, left_open));
    }
    run.finish(&mut items, options.responses_item_ids, losses);
    items
}

/// A `reasoning` item without its `id` (the run decides on that).
fn reasoning(thinking: &Thinking, signature: &Signature) -> Map<String, Value> {
    let mut item = Map::new();
    item.insert("type".into(), json!("reasoning"));
    let summary = if thinking.text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "summary_text", "text": thinking.text})]
    };
    item.insert("summary".into(), Value::Array(summary));
    item.insert("encrypted_content".into(), json!(signature.value));
    item
}

/// A `function_call` item without its item `id` (the run decides on that); `call_id` pairs the
/// output either way.
fn function_call(call: &ToolCall, at: (usize, usize), losses: &mut Losses) -> Map<String, Value> {
    let call_id = ids::send(Format::OpenaiResponses, &call.id, at, losses);
    let (arguments, note) = arguments::to_json_string(&call.input);
    if let Some(note) = note {
        losses.part(at, LossKind::Changed, note);
    }
    let mut item = Map::new();
    item.insert("type".into(), json!("function_call"));
    item.insert("call_id".into(), json!(call_id));
    item.insert("name".into(), json!(call.name));
    item.insert("arguments".into(), json!(arguments));
    item
}

fn output(
    result: &ToolResult,
    backend: &Backend,
    at: (usize, usize),
    losses: &mut Losses,
) -> Value {
    // Images that cannot be sent are dropped first, so that the form chosen below reads back as
    // exactly what was sent.
    let mut items: Vec<std::result::Result<&str, Value>> = Vec::with_capacity(result.parts.len());
    for part in &result.parts {
        match part {
            ToolResultPart::Text { text } => items.push(Ok(text)),
            ToolResultPart::Image(image) => {
                items.extend(input_image(image, backend, at, losses).map(Err));
            }
        }
    }
    let lookalike = |losses: &mut Losses| {
        losses.part(
            at,
            LossKind::Changed,
            "successful tool output starts with the error marker and reads back as an error",
        );
    };
    if let [] | [Ok(_)] = items.as_slice() {
        return match (items.first(), result.is_error) {
            (None, true) => json!(ERROR_MARKER),
            (None, false) => json!(""),
            (Some(Ok(text)), true) => json!(tool_error::mark(text)),
            (Some(Ok(text)), false) => {
                if text.is_empty() {
                    losses.part(
                        at,
                        LossKind::Changed,
                        "empty tool output reads back as no output",
                    );
                } else if tool_error::looks_marked(text) {
                    lookalike(losses);
                }
                json!(text)
            }
            (Some(Err(_)), _) => Value::Null,
        };
    }
    if !result.is_error && marked_list(items.first(), items.get(1..).unwrap_or_default()) {
        lookalike(losses);
    }
    let marker = result.is_error.then_some(Ok(ERROR_MARKER));
    Value::Array(
        marker
            .into_iter()
            .chain(items)
            .map(|item| match item {
                Ok(text) => json!({"type": "input_text", "text": text}),
                Err(image) => image,
            })
            .collect(),
    )
}

/// Whether an output part list reads back as an error: it starts with the marker and the rest is
/// something the writer sends as a list (two parts or more, or an image); a shorter list that
/// starts with the marker is a successful output that happens to.
fn marked_list<T, I>(
    first: Option<&std::result::Result<&str, I>>,
    rest: &[std::result::Result<T, I>],
) -> bool
where
    T: AsRef<str>,
{
    matches!(first, Some(Ok(text)) if *text == ERROR_MARKER)
        && (rest.len() >= 2 || rest.iter().any(|r| r.is_err()))
}

/// `input_text` / `input_image` parts; `Err` holds text, `Ok` an image.
fn user_content<'p>(
    parts: impl Iterator<Item = ((usize, usize), std::result::Result<&'p Image, &'p str>)>,
    backend: &Backend,
    losses: &mut Losses,
) -> Vec<Value> {
    let mut content = Vec::new();
    for (at, part) in parts {
        match part {
            Err(text) => content.push(json!({"type": "input_text", "text": text})),
            Ok(image) => content.extend(input_image(image, backend, at, losses)),
        }
    }
    content
}

fn input_image(
    image: &Image,
    backend: &Backend,
    at: (usize, usize),
    losses: &mut Losses,
) -> Option<Value> {
    if !file_ref::sendable(image, Format::OpenaiResponses, backend, at, losses) {
        return None;
    }
    let (key, value) = match &image.source {
        ImageSource::Base64 { data } => {
            let declared = image.media_type.as_deref();
            let media_type =
                media::inline_media_type(declared, data, Format::OpenaiResponses, at, losses)?;
            ("image_url", media::data_url(&media_type, data))
        }
        ImageSource::Url { url } => ("image_url", url.clone()),
        ImageSource::File { file_id } => ("file_id", file_id.clone()),
    };
    if image.media_type.is_some() && !matches!(image.source, ImageSource::Base64 { .. }) {
        losses.part(
            at,
            LossKind::Dropped,
            "media type of a url or file image; openai responses has no field for it",
        );
    }
    Some(json!({"type": "input_image", key: value, "detail": "auto"}))
}
