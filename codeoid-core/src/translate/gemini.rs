//! Canonical ⇄ Gemini `contents` (`{role: "user" | "model", parts: [...]}`).
//!
//! One planned turn is one content. Parts: `text`; `thought: true` text for thinking;
//! `inlineData` / `fileData` images; `functionCall {id, name, args}` (args an object);
//! `functionResponse {id, name, response}` with `response` an object.
//!
//! Mapping decisions (see `docs/translate.md`):
//! - **Signatures.** Gemini puts `thoughtSignature` on any part, often the `functionCall`. In
//!   canonical form a signature on a non-thought part is a [`Thinking`] with empty text carrying
//!   `Signature {provider: "gemini"}`, placed right before the part it was attached to. Writing
//!   reverses that: an empty native thinking followed by a non-thinking part of the same turn is
//!   attached to it; thought parts carry their own signature.
//! - **Results.** Gemini has no error flag and needs `response` to be an object: the documented
//!   convention `{"output": text}` / `{"error": text}` is used (several texts become an array).
//!   Images cannot go inside, so they follow the `functionResponse` as sibling parts and the
//!   response says how many with `"attached_images": n`; reading back reattaches exactly those.
//!   A response in any other shape (from a native Gemini client) reads back as its JSON text.
//! - **Pairing.** Calls and responses carry ids unless [`Options::gemini_call_ids`] is off; without
//!   ids, responses pair with the first unanswered call of the same name in the preceding model
//!   content, and calls get the generated id `gemini_call_{content}_{part}`. `normalize` already
//!   guarantees one response per call, in call order, in the next content.
//! - [`Options::gemini_missing_signature`] is put on the first call of a model content that has no
//!   native signature, and ignored when read back.

use serde_json::{Map, Value, json};

use crate::canonical::{
    Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};
use crate::error::{Error, Result};

use super::anthropic::note_provider_id;
use super::arguments;
use super::backend::{Backend, Format, Options};
use super::ids;
use super::loss::{LossKind, Losses};
use super::media;
use super::normalize::{PieceKind, Plan};
use super::read;
use super::thinking::{self, Verdict};

/// Key of a function response that counts the image parts following it.
pub const ATTACHED_IMAGES_KEY: &str = "attached_images";

/// Writes the planned turns as Gemini contents.
pub(crate) fn encode(
    plan: &Plan<'_>,
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Vec<Value> {
    let mut contents = Vec::with_capacity(plan.turns.len());
    for turn in &plan.turns {
        let mut parts = Parts::default();
        let mut first_call = true;
        for piece in &turn.pieces {
            let at = piece.at;
            match &piece.kind {
                PieceKind::Text(text) => parts.push(json!({"text": text})),
                PieceKind::Image(image) => parts.extend(image_part(image, at, losses)),
                PieceKind::Thinking(t) => {
                    let owner = turns[at.0].provider.as_deref();
                    if thinking::classify(t, owner, backend, options) == Verdict::Foreign {
                        if let Some(text) = thinking::foreign(t, backend, options, at, losses) {
                            parts.push(json!({"text": text}));
                        }
                        continue;
                    }
                    let Some(signature) = &t.signature else {
                        parts.push_thought(json!({"text": t.text, "thought": true}));
                        continue;
                    };
                    thinking::note_restamp(signature, backend, at, losses);
                    if t.text.is_empty() {
                        // Rides on the next part, unless that is a thought of its own.
                        parts.flush();
                        parts.pending = Some(signature.value.clone());
                    } else {
                        parts.push_thought(json!({
                            "text": t.text,
                            "thought": true,
                            "thoughtSignature": signature.value,
                        }));
                    }
                }
                PieceKind::Call(call) => {
                    if first_call && parts.pending.is_none() {
                        parts.pending = options.gemini_missing_signature.clone();
                    }
                    first_call = false;
                    parts.push(function_call(call, options, at, losses));
                }
                PieceKind::Result { result, name } => {
                    let (response, images) = function_response(result, name, options, at, losses);
                    parts.push(response);
                    parts.extend(images);
                }
            }
        }
        parts.flush();
        if !parts.list.is_empty() {
            let role = match turn.role {
                Role::User => "user",
                Role::Assistant => "model",
            };
            contents.push(json!({"role": role, "parts": parts.list}));
        }
    }
    contents
}

/// Parts of one content, with a signature waiting for the next part.
#[derive(Default)]
struct Parts {
    list: Vec<Value>,
    pending: Option<String>,
}

impl Parts {
    fn push(&mut self, mut part: Value) {
        if let (Some(signature), Value::Object(map)) = (self.pending.take(), &mut part) {
            map.insert("thoughtSignature".into(), json!(signature));
        }
        self.list.push(part);
    }

    /// Writes a waiting signature as an empty thought of its own.
    fn flush(&mut self) {
        if let Some(signature) = self.pending.take() {
            self.list
                .push(json!({"text": "", "thought": true, "thoughtSignature": signature}));
        }
    }

    /// A thought part never carries another part's signature.
    fn push_thought(&mut self, part: Value) {
        self.flush();
        self.list.push(part);
    }

    fn extend(&mut self, parts: impl IntoIterator<Item = Value>) {
        for part in parts {
            self.push(part);
        }
    }
}

fn function_call(
    call: &ToolCall,
    options: &Options,
    at: (usize, usize),
    losses: &mut Losses,
) -> Value {
    let (args, repair) = arguments::as_object(&call.input);
    if let Some(repair) = repair {
        losses.part(at, LossKind::Changed, repair);
    }
    note_provider_id(call, "gemini", at, losses);
    let mut body = Map::new();
    if options.gemini_call_ids {
        body.insert(
            "id".into(),
            json!(ids::send(Format::Gemini, &call.id, at, losses)),
        );
    } else {
        losses.part(
            at,
            LossKind::Changed,
            format!(
                "tool call id {:?} not sent (gemini_call_ids is off); reads back generated",
                call.id
            ),
        );
    }
    body.insert("name".into(), json!(call.name));
    body.insert("args".into(), args.into_owned());
    json!({"functionCall": body})
}

fn function_response(
    result: &ToolResult,
    name: &str,
    options: &Options,
    at: (usize, usize),
    losses: &mut Losses,
) -> (Value, Vec<Value>) {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for part in &result.parts {
        match part {
            ToolResultPart::Text { text } => {
                if !images.is_empty() {
                    losses.part(
                        at,
                        LossKind::Moved,
                        "tool result text after an image reads back before the images",
                    );
                }
                texts.push(json!(text));
            }
            ToolResultPart::Image(image) => images.extend(image_part(image, at, losses)),
        }
    }
    let mut response = Map::new();
    let key = if result.is_error { "error" } else { "output" };
    match texts.len() {
        0 if result.is_error => {
            losses.part(
                at,
                LossKind::Changed,
                "error result without text reads back with an empty text",
            );
            response.insert(key.into(), json!(""));
        }
        0 => {}
        1 => {
            response.insert(key.into(), texts.swap_remove(0));
        }
        _ => {
            response.insert(key.into(), Value::Array(texts));
        }
    }
    if !images.is_empty() {
        response.insert(ATTACHED_IMAGES_KEY.into(), json!(images.len()));
    }
    let mut body = Map::new();
    if options.gemini_call_ids {
        body.insert(
            "id".into(),
            json!(ids::send(Format::Gemini, &result.call_id, at, losses)),
        );
    }
    body.insert("name".into(), json!(name));
    body.insert("response".into(), Value::Object(response));
    (json!({"functionResponse": body}), images)
}

/// Whether a `fileData.fileUri` reads back as a URL (rather than a provider file).
fn is_url(uri: &str) -> bool {
    (uri.starts_with("https://") || uri.starts_with("http://"))
        && !uri.contains("generativelanguage.googleapis.com/")
}

fn image_part(image: &Image, at: (usize, usize), losses: &mut Losses) -> Option<Value> {
    let (uri, is_url_source) = match &image.source {
        ImageSource::Base64 { data } => {
            let declared = image.media_type.as_deref();
            let mime = media::inline_media_type(declared, data, "gemini", at, losses)?;
            return Some(json!({"inlineData": {"mimeType": mime, "data": data}}));
        }
        ImageSource::Url { url } => (url, true),
        ImageSource::File { file_id } => (file_id, false),
    };
    if is_url(uri) != is_url_source {
        losses.part(
            at,
            LossKind::Changed,
            format!(
                "image {uri:?} reads back as a {}",
                if is_url_source { "file" } else { "url" }
            ),
        );
    }
    let mut file = Map::new();
    if let Some(mime) = &image.media_type {
        file.insert("mimeType".into(), json!(mime));
    }
    file.insert("fileUri".into(), json!(uri));
    Some(json!({"fileData": file}))
}

/// Reads Gemini contents back into canonical turns.
pub(crate) fn decode(
    contents: &Value,
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Result<Vec<Turn>> {
    let list = read::array(contents, "contents")?;
    let mut turns = Vec::with_capacity(list.len());
    // Calls of the latest model content: (name, canonical id, answered).
    let mut open: Vec<(String, String, bool)> = Vec::new();
    for (c, content) in list.iter().enumerate() {
        let path = format!("contents[{c}]");
        let map = read::object(content, &path)?;
        let role = match read::opt_string(map, "role", &path)? {
            Some("model") => Role::Assistant,
            None | Some("user" | "function") => Role::User,
            Some(other) => {
                return Err(Error::invalid_input(format!(
                    "{path}.role is {other:?}; gemini roles are \"user\" and \"model\""
                )));
            }
        };
        if role == Role::Assistant {
            open.clear();
        }
        let parts_path = format!("{path}.parts");
        let raw = read::array(map.get("parts").unwrap_or(&Value::Null), &parts_path)?;
        let mut parts = Vec::with_capacity(raw.len());
        let mut p = 0;
        while p < raw.len() {
            let part_path = format!("{parts_path}[{p}]");
            let part = read::object(&raw[p], &part_path)?;
            p += 1;
            let signature = read::opt_string(part, "thoughtSignature", &part_path)?
                .or(read::opt_string(part, "thought_signature", &part_path)?)
                .filter(|s| options.gemini_missing_signature.as_deref() != Some(*s))
                .map(|value| Signature {
                    provider: backend.provider.clone(),
                    model: backend.model.clone(),
                    value: value.to_owned(),
                });
            if read::flag(part, "thought", &part_path)? {
                let text = read::opt_string(part, "text", &part_path)?.unwrap_or("");
                parts.push(Part::Thinking(Thinking {
                    text: text.to_owned(),
                    signature,
                    redacted: false,
                }));
                continue;
            }
            if let Some(signature) = signature {
                parts.push(Part::Thinking(Thinking {
                    text: String::new(),
                    signature: Some(signature),
                    redacted: false,
                }));
            }
            if let Some(text) = read::opt_string(part, "text", &part_path)? {
                parts.push(Part::Text {
                    text: text.to_owned(),
                });
            } else if let Some(image) = decode_image(part, &part_path)? {
                parts.push(Part::Image(image));
            } else if let Some(call) = part.get("functionCall") {
                let call = decode_call(call, &format!("{part_path}.functionCall"), (c, p - 1))?;
                open.push((call.name.clone(), call.id.clone(), false));
                parts.push(Part::ToolCall(call));
            } else if let Some(response) = part.get("functionResponse") {
                let response_path = format!("{part_path}.functionResponse");
                let (mut result, attached) =
                    decode_response(response, &response_path, &mut open, (c, p - 1))?;
                let mut taken = 0;
                while taken < attached && p < raw.len() {
                    let image_path = format!("{parts_path}[{p}]");
                    let Some(image) =
                        decode_image(read::object(&raw[p], &image_path)?, &image_path)?
                    else {
                        break;
                    };
                    result.parts.push(ToolResultPart::Image(image));
                    taken += 1;
                    p += 1;
                }
                parts.push(Part::ToolResult(result));
            } else if options.skip_unknown {
                losses.message(
                    c,
                    Some(p - 1),
                    LossKind::Dropped,
                    "part of a kind codeoid does not know",
                );
            } else {
                let keys: Vec<&str> = part.keys().map(String::as_str).collect();
                return Err(Error::invalid_input(format!(
                    "{part_path} has unknown fields {keys:?}; supported: text, thought, \
                     inlineData, fileData, functionCall, functionResponse (set skip_unknown to \
                     drop such parts instead)"
                )));
            }
        }
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

fn decode_image(part: &Map<String, Value>, path: &str) -> Result<Option<Image>> {
    if let Some(inline) = part.get("inlineData") {
        let inline_path = format!("{path}.inlineData");
        let inline = read::object(inline, &inline_path)?;
        return Ok(Some(Image {
            media_type: Some(read::string(inline, "mimeType", &inline_path)?.to_owned()),
            source: ImageSource::Base64 {
                data: read::string(inline, "data", &inline_path)?.to_owned(),
            },
        }));
    }
    if let Some(file) = part.get("fileData") {
        let file_path = format!("{path}.fileData");
        let file = read::object(file, &file_path)?;
        let uri = read::string(file, "fileUri", &file_path)?.to_owned();
        let source = if is_url(&uri) {
            ImageSource::Url { url: uri }
        } else {
            ImageSource::File { file_id: uri }
        };
        return Ok(Some(Image {
            media_type: read::opt_string(file, "mimeType", &file_path)?.map(str::to_owned),
            source,
        }));
    }
    Ok(None)
}

fn decode_call(call: &Value, path: &str, position: (usize, usize)) -> Result<ToolCall> {
    let map = read::object(call, path)?;
    let id = match read::opt_string(map, "id", path)? {
        Some(id) => ids::canonical_id(id).into_owned(),
        None => format!("gemini_call_{}_{}", position.0, position.1),
    };
    let input = match map.get("args") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args) => arguments::from_object(args),
    };
    Ok(ToolCall {
        id,
        provider_id: None,
        name: read::string(map, "name", path)?.to_owned(),
        input,
    })
}

/// A result and the number of sibling image parts that belong to it.
fn decode_response(
    response: &Value,
    path: &str,
    open: &mut [(String, String, bool)],
    position: (usize, usize),
) -> Result<(ToolResult, usize)> {
    let map = read::object(response, path)?;
    let name = read::string(map, "name", path)?;
    let call_id = match read::opt_string(map, "id", path)? {
        Some(id) => ids::canonical_id(id).into_owned(),
        None => match open
            .iter_mut()
            .find(|(n, _, answered)| n == name && !answered)
        {
            Some((_, id, answered)) => {
                *answered = true;
                id.clone()
            }
            None => format!("gemini_response_{}_{}", position.0, position.1),
        },
    };
    if let Some(entry) = open.iter_mut().find(|(_, id, _)| *id == call_id) {
        entry.2 = true;
    }
    let body_path = format!("{path}.response");
    let body = read::object(map.get("response").unwrap_or(&Value::Null), &body_path)?;
    let (parts, is_error, attached) = match codeoid_shape(body) {
        Some(shape) => shape,
        None => (
            vec![ToolResultPart::Text {
                text: Value::Object(body.clone()).to_string(),
            }],
            false,
            0,
        ),
    };
    Ok((
        ToolResult {
            call_id,
            parts,
            is_error,
        },
        attached,
    ))
}

/// Decodes `{"output" | "error": text or [texts], "attached_images": n}`; `None` for any other
/// shape.
fn codeoid_shape(body: &Map<String, Value>) -> Option<(Vec<ToolResultPart>, bool, usize)> {
    if body
        .keys()
        .any(|k| !matches!(k.as_str(), "output" | "error" | ATTACHED_IMAGES_KEY))
        || (body.contains_key("output") && body.contains_key("error"))
    {
        return None;
    }
    let attached = match body.get(ATTACHED_IMAGES_KEY) {
        None => 0,
        Some(n) => usize::try_from(n.as_u64()?).ok()?,
    };
    let (value, is_error) = match (body.get("output"), body.get("error")) {
        (Some(v), None) => (Some(v), false),
        (None, Some(v)) => (Some(v), true),
        _ => (None, false),
    };
    let texts = match value {
        None => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    let parts = texts
        .into_iter()
        .map(|text| ToolResultPart::Text { text })
        .collect();
    Some((parts, is_error, attached))
}
