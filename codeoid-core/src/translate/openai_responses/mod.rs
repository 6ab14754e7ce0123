//! Canonical ⇄ OpenAI Responses `input` items.
//!
//! Responses has no messages-with-parts for the model's side: `input` is a flat list of items.
//! An assistant turn becomes, in order, `reasoning` items (signed thinking: `encrypted_content`
//! plus the text as one `summary_text`), `message` items with `role: "assistant"` and a string
//! `content` (one per text part, so part boundaries survive), and `function_call` items (`call_id`
//! is the canonical id, `id` the [`provider_id`](crate::canonical::ToolCall::provider_id)). A user
//! turn becomes one `function_call_output` per result, in call order, then one `message` with
//! `input_text`/`input_image` parts.
//!
//! Reasoning item ids (`rs_…`) have no canonical field: reading back stores them in the turn's
//! meta under [`REASONING_IDS_META`] (`{"<part index>": "rs_…"}`), and writing sends them from there.
//! Without one the `id` is omitted, as stateless clients send it (the SDK type marks it required).
//!
//! Reading back groups items into turns: assistant-side items (reasoning, calls, assistant messages)
//! join one assistant turn; outputs open a user turn that the next user message joins and closes.
//! So consecutive assistant turns, and a results-only turn followed by a user turn, are reported as
//! merged. Errors are encoded with the [`ERROR_MARKER`] as in Chat; outputs with images use the
//! part-list form. Responses cannot carry assistant images, unsigned or foreign thinking.

mod decode;

pub(crate) use decode::decode;

use serde_json::{Map, Value, json};

use crate::canonical::{
    Image, ImageSource, Role, Signature, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};

use crate::translate::arguments;
use crate::translate::backend::{Backend, Format, Options};
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::media;
use crate::translate::normalize::{PieceKind, Plan};
use crate::translate::thinking::{self, Verdict};
use crate::translate::tool_error::{self, ERROR_MARKER};

/// The [`Turn::meta`] key holding Responses reasoning item ids by part index.
pub const REASONING_IDS_META: &str = "openai_reasoning_ids";

/// Writes the planned turns as Responses input items.
pub(crate) fn encode(
    plan: &Plan<'_>,
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Vec<Value> {
    let mut items = Vec::with_capacity(plan.turns.len() * 2);
    // Role of the last turn that wrote items, and whether it left a user turn open.
    let mut previous: Option<(Role, bool)> = None;
    for turn in &plan.turns {
        let before = items.len();
        let mut left_open = false;
        // Whether this turn sent a reasoning item: a call's own `fc_…` id goes with it.
        let mut reasoned = false;
        for piece in &turn.pieces {
            let at = piece.at;
            match &piece.kind {
                PieceKind::Text(_) | PieceKind::Image(_) if turn.role == Role::User => {}
                PieceKind::Text(text) => items.push(assistant_text(text)),
                PieceKind::Image(_) => losses.part(
                    at,
                    LossKind::Dropped,
                    "image in an assistant turn; openai responses accepts images from the user only",
                ),
                PieceKind::Thinking(t) => {
                    let owner = &turns[at.0];
                    let verdict = thinking::classify(t, owner.provider.as_deref(), backend, options);
                    match (verdict, &t.signature) {
                        (Verdict::Native, Some(signature)) => {
                            thinking::note_restamp(signature, backend, at, losses);
                            items.push(reasoning(t, signature, owner, at.1));
                            reasoned = true;
                        }
                        _ => {
                            if let Some(text) = thinking::foreign(t, backend, options, at, losses) {
                                items.push(assistant_text(&text));
                            }
                        }
                    }
                }
                PieceKind::Call(call) => items.push(function_call(call, at, reasoned, losses)),
                PieceKind::Result { result, .. } => {
                    let call_id = ids::send(Format::OpenaiResponses, &result.call_id, at, losses);
                    let output = output(result, at, losses);
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
                losses,
            );
            if !content.is_empty() {
                items.push(json!({"type": "message", "role": "user", "content": content}));
                left_open = false;
            }
        }
        if items.len() == before {
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
    items
}

fn assistant_text(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "content": text})
}

fn reasoning(thinking: &Thinking, signature: &Signature, owner: &Turn, part: usize) -> Value {
    let mut item = Map::new();
    item.insert("type".into(), json!("reasoning"));
    let id = owner
        .meta
        .get(REASONING_IDS_META)
        .and_then(|ids| ids.get(part.to_string()))
        .and_then(Value::as_str);
    if let Some(id) = id {
        item.insert("id".into(), json!(id));
    }
    let summary = if thinking.text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "summary_text", "text": thinking.text})]
    };
    item.insert("summary".into(), Value::Array(summary));
    item.insert("encrypted_content".into(), json!(signature.value));
    Value::Object(item)
}

/// A `function_call` item. Its item `id` is sent only when it is OpenAI's own (`fc_…`) and the
/// reasoning item it followed is sent too (`reasoned`): OpenAI refuses any other id (another
/// harness's `toolu_…` or `call_…`, 400 "expected an ID that begins with 'fc'") and an `fc_…`
/// id without its reasoning (400 "provided without its required 'reasoning' item"). `call_id`
/// pairs the output either way.
fn function_call(
    call: &ToolCall,
    at: (usize, usize),
    reasoned: bool,
    losses: &mut Losses,
) -> Value {
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
    if let Some(provider_id) = &call.provider_id {
        if provider_id.starts_with("fc") && reasoned {
            item.insert("id".into(), json!(provider_id));
        } else if *provider_id != call.id {
            losses.part(
                at,
                LossKind::Dropped,
                format!(
                    "item id {provider_id:?} of tool call {:?}: openai responses accepts only \
                     its own (fc_...) ids, and only after their reasoning item",
                    call.id
                ),
            );
        }
    }
    Value::Object(item)
}

fn output(result: &ToolResult, at: (usize, usize), losses: &mut Losses) -> Value {
    // Images that cannot be sent are dropped first, so that the form chosen below reads back as
    // exactly what was sent.
    let mut items: Vec<std::result::Result<&str, Value>> = Vec::with_capacity(result.parts.len());
    for part in &result.parts {
        match part {
            ToolResultPart::Text { text } => items.push(Ok(text)),
            ToolResultPart::Image(image) => items.extend(input_image(image, at, losses).map(Err)),
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
    losses: &mut Losses,
) -> Vec<Value> {
    let mut content = Vec::new();
    for (at, part) in parts {
        match part {
            Err(text) => content.push(json!({"type": "input_text", "text": text})),
            Ok(image) => content.extend(input_image(image, at, losses)),
        }
    }
    content
}

fn input_image(image: &Image, at: (usize, usize), losses: &mut Losses) -> Option<Value> {
    if !media::accepts_declared(image, Format::OpenaiResponses, at, losses) {
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
