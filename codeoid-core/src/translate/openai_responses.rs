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

use serde_json::{Map, Value, json};

use crate::canonical::{
    Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};
use crate::error::{Error, Result};

use super::Conversation;
use super::arguments;
use super::backend::{Backend, Format, Options};
use super::ids;
use super::loss::{LossKind, Losses};
use super::media;
use super::normalize::{PieceKind, Plan};
use super::openai_chat::image_from_url;
use super::read;
use super::thinking::{self, Verdict};
use super::tool_error::{self, ERROR_MARKER};

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
                        }
                        _ => {
                            if let Some(text) = thinking::foreign(t, backend, options, at, losses) {
                                items.push(assistant_text(&text));
                            }
                        }
                    }
                }
                PieceKind::Call(call) => items.push(function_call(call, at, losses)),
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

fn function_call(call: &ToolCall, at: (usize, usize), losses: &mut Losses) -> Value {
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
        item.insert("id".into(), json!(provider_id));
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
    let (key, value) = match &image.source {
        ImageSource::Base64 { data } => {
            let declared = image.media_type.as_deref();
            let media_type = media::inline_media_type(declared, data, "openai", at, losses)?;
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

/// Reads Responses input (a string or a list of items) back into a conversation.
pub(crate) fn decode(
    input: &Value,
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Result<Conversation> {
    if let Value::String(text) = input {
        return Ok(Conversation {
            system: None,
            turns: vec![Turn::user_text(text.clone())],
        });
    }
    let list = read::array(input, "input")?;
    let mut reader = Reader {
        backend,
        turns: Vec::new(),
        system: Vec::new(),
        user_open: false,
    };
    for (i, item) in list.iter().enumerate() {
        let path = format!("input[{i}]");
        let map = read::object(item, &path)?;
        let kind = match read::opt_string(map, "type", &path)? {
            Some(kind) => kind,
            None if map.contains_key("role") => "message",
            None => {
                return Err(Error::invalid_input(format!(
                    "{path} has neither \"type\" nor \"role\"; expected a responses input item"
                )));
            }
        };
        match kind {
            "message" => reader.message(map, &path, i, options, losses)?,
            "reasoning" => {
                let part = reasoning_part(map, &path, backend)?;
                let turn = reader.assistant();
                if let Some(id) = read::opt_string(map, "id", &path)? {
                    let index = turn.parts.len().to_string();
                    let ids = turn
                        .meta
                        .entry(REASONING_IDS_META)
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(ids) = ids {
                        ids.insert(index, json!(id));
                    }
                }
                turn.parts.push(part);
            }
            "function_call" => {
                let call = ToolCall {
                    id: ids::canonical_id(read::string(map, "call_id", &path)?).into_owned(),
                    provider_id: read::opt_string(map, "id", &path)?.map(str::to_owned),
                    name: read::string(map, "name", &path)?.to_owned(),
                    input: arguments::from_json_string(read::string(map, "arguments", &path)?),
                };
                reader.assistant().parts.push(Part::ToolCall(call));
            }
            "function_call_output" => {
                let result = decode_output(map, &path)?;
                reader.user(true).parts.push(Part::ToolResult(result));
            }
            other if options.skip_unknown => {
                losses.message(
                    i,
                    None,
                    LossKind::Dropped,
                    format!("input item of type {other:?}"),
                );
            }
            other => {
                return Err(read::unknown_type(
                    &path,
                    other,
                    "message, reasoning, function_call, function_call_output",
                ));
            }
        }
    }
    for (t, turn) in reader.turns.iter().enumerate() {
        turn.validate()
            .map_err(|e| Error::invalid_input(format!("input turn {t}: {}", e.message())))?;
    }
    let system = (!reader.system.is_empty()).then(|| reader.system.join("\n\n"));
    Ok(Conversation {
        system,
        turns: reader.turns,
    })
}

struct Reader<'b> {
    backend: &'b Backend,
    turns: Vec<Turn>,
    system: Vec<String>,
    /// The last turn is a user turn of outputs that a user message may still join.
    user_open: bool,
}

impl Reader<'_> {
    fn assistant(&mut self) -> &mut Turn {
        self.user_open = false;
        if self.turns.last().is_none_or(|t| t.role != Role::Assistant) {
            let mut turn = Turn::new(Role::Assistant, Vec::new());
            turn.provider = Some(self.backend.provider.clone());
            turn.model = self.backend.model.clone();
            self.turns.push(turn);
        }
        let last = self.turns.len() - 1;
        &mut self.turns[last]
    }

    /// The user turn to append to: the open one, or a new one (left open when `open`).
    fn user(&mut self, open: bool) -> &mut Turn {
        if !self.user_open || self.turns.last().is_none_or(|t| t.role != Role::User) {
            self.turns.push(Turn::new(Role::User, Vec::new()));
        }
        self.user_open = open;
        let last = self.turns.len() - 1;
        &mut self.turns[last]
    }

    fn message(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        i: usize,
        options: &Options,
        losses: &mut Losses,
    ) -> Result<()> {
        let role = read::string(map, "role", path)?;
        let parts = message_parts(map, path, i, options, losses)?;
        match role {
            "user" => self.user(false).parts.extend(parts),
            "assistant" => self.assistant().parts.extend(parts),
            "system" | "developer" => {
                self.system
                    .extend(parts.into_iter().filter_map(|p| match p {
                        Part::Text { text } => Some(text),
                        _ => None,
                    }));
            }
            other => {
                return Err(Error::invalid_input(format!(
                    "{path}.role is {other:?}; expected user, assistant, system or developer"
                )));
            }
        }
        Ok(())
    }
}

fn reasoning_part(map: &Map<String, Value>, path: &str, backend: &Backend) -> Result<Part> {
    let mut texts = Vec::new();
    if let Some(summary) = map.get("summary") {
        let summary_path = format!("{path}.summary");
        for (s, entry) in read::array(summary, &summary_path)?.iter().enumerate() {
            let entry_path = format!("{summary_path}[{s}]");
            texts.push(read::string(
                read::object(entry, &entry_path)?,
                "text",
                &entry_path,
            )?);
        }
    }
    let signature = read::opt_string(map, "encrypted_content", path)?.map(|value| Signature {
        provider: backend.provider.clone(),
        model: backend.model.clone(),
        value: value.to_owned(),
    });
    Ok(Part::Thinking(Thinking {
        text: texts.join("\n\n"),
        signature,
        redacted: false,
    }))
}

fn message_parts(
    map: &Map<String, Value>,
    path: &str,
    i: usize,
    options: &Options,
    losses: &mut Losses,
) -> Result<Vec<Part>> {
    let items = match map.get("content") {
        Some(Value::String(text)) => return Ok(vec![Part::Text { text: text.clone() }]),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(Error::invalid_input(format!(
                "{path}.content is {}; expected a string or an array of content parts",
                read::kind(other)
            )));
        }
        None => {
            return Err(Error::invalid_input(format!(
                "{path}.content is missing; expected a string or an array of content parts"
            )));
        }
    };
    let mut parts = Vec::with_capacity(items.len());
    for (p, item) in items.iter().enumerate() {
        let item_path = format!("{path}.content[{p}]");
        let item = read::object(item, &item_path)?;
        match read::string(item, "type", &item_path)? {
            "input_text" | "output_text" => parts.push(Part::Text {
                text: read::string(item, "text", &item_path)?.to_owned(),
            }),
            "refusal" => parts.push(Part::Text {
                text: read::string(item, "refusal", &item_path)?.to_owned(),
            }),
            "input_image" => parts.push(Part::Image(decode_image(item, &item_path)?)),
            other if options.skip_unknown => losses.message(
                i,
                Some(p),
                LossKind::Dropped,
                format!("content part of type {other:?}"),
            ),
            other => {
                return Err(read::unknown_type(
                    &item_path,
                    other,
                    "input_text, output_text, refusal, input_image",
                ));
            }
        }
    }
    Ok(parts)
}

fn decode_image(item: &Map<String, Value>, path: &str) -> Result<Image> {
    if let Some(url) = read::opt_string(item, "image_url", path)? {
        return Ok(image_from_url(url));
    }
    match read::opt_string(item, "file_id", path)? {
        Some(file_id) => Ok(Image {
            media_type: None,
            source: ImageSource::File {
                file_id: file_id.to_owned(),
            },
        }),
        None => Err(Error::invalid_input(format!(
            "{path} has neither image_url nor file_id; expected one of them"
        ))),
    }
}

fn decode_output(map: &Map<String, Value>, path: &str) -> Result<ToolResult> {
    let call_id = ids::canonical_id(read::string(map, "call_id", path)?).into_owned();
    let (is_error, parts) = match map.get("output") {
        Some(Value::String(s)) => match tool_error::unmark(s) {
            (false, Some("")) | (_, None) => (s == ERROR_MARKER, Vec::new()),
            (is_error, Some(text)) => (
                is_error,
                vec![ToolResultPart::Text {
                    text: text.to_owned(),
                }],
            ),
        },
        Some(Value::Array(items)) => {
            let mut parts = Vec::with_capacity(items.len());
            for (p, item) in items.iter().enumerate() {
                let item_path = format!("{path}.output[{p}]");
                let item = read::object(item, &item_path)?;
                parts.push(match read::string(item, "type", &item_path)? {
                    "input_text" => ToolResultPart::Text {
                        text: read::string(item, "text", &item_path)?.to_owned(),
                    },
                    "input_image" => ToolResultPart::Image(decode_image(item, &item_path)?),
                    other => {
                        return Err(read::unknown_type(
                            &item_path,
                            other,
                            "input_text, input_image",
                        ));
                    }
                });
            }
            let first = parts.first().map(|p| match p {
                ToolResultPart::Text { text } => Ok(text.as_str()),
                ToolResultPart::Image(_) => Err(()),
            });
            let rest: Vec<std::result::Result<&str, ()>> = parts
                .iter()
                .skip(1)
                .map(|p| match p {
                    ToolResultPart::Text { text } => Ok(text.as_str()),
                    ToolResultPart::Image(_) => Err(()),
                })
                .collect();
            let is_error = marked_list(first.as_ref(), &rest);
            if is_error {
                parts.remove(0);
            }
            (is_error, parts)
        }
        Some(other) => {
            return Err(Error::invalid_input(format!(
                "{path}.output is {}; expected a string or an array of content parts",
                read::kind(other)
            )));
        }
        None => {
            return Err(Error::invalid_input(format!(
                "{path}.output is missing; expected a string or an array of content parts"
            )));
        }
    };
    Ok(ToolResult {
        call_id,
        parts,
        is_error,
    })
}
