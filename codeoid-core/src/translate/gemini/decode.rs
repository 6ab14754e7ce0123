//! Reading Gemini `contents` back into canonical turns (the writer is the parent module).
//!
//! A `thoughtSignature` on a non-thought part becomes an empty signed [`Thinking`] right before
//! that part; the configured placeholder signature is ignored. Calls without ids get
//! `gemini_call_{content}_{part}`; responses pair by id, else with the first unanswered call of the
//! same name in the preceding model content. Responses in codeoid's `output`/`error` shape are
//! decoded (with their `attached_images`); any other object reads back as its JSON text, reported
//! as changed. `inlineData` / `fileData` parts are images; media of another type (a PDF, a video)
//! is unknown content: an error, or dropped with `skip_unknown`.

use serde_json::{Map, Value};

use crate::canonical::{
    Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};
use crate::error::{Error, Result};

use super::{ATTACHED_IMAGES_KEY, is_url};
use crate::translate::arguments;
use crate::translate::backend::{Backend, GEMINI_SKIP_SIGNATURE, Options};
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::read;

/// The prefix of the ids this reader gives calls without one: `gemini_call_{content}_{part}`.
pub(crate) const GEMINI_GENERATED: &str = "gemini_call_";

/// The `thoughtSignature` values Google documents for calls Gemini did not make: they skip
/// validation and carry no reasoning, so they are not read back as signatures.
const PLACEHOLDER_SIGNATURES: [&str; 2] = [
    GEMINI_SKIP_SIGNATURE,
    "context_engineering_is_the_way_to_go",
];

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
                .filter(|s| {
                    options.gemini_missing_signature.as_deref() != Some(*s)
                        && !PLACEHOLDER_SIGNATURES.contains(s)
                })
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
            } else if let Some(media) = decode_media(part, &part_path)? {
                match media {
                    Media::Image(image) => parts.push(Part::Image(image)),
                    Media::Other(mime) if options.skip_unknown => losses.message(
                        c,
                        Some(p - 1),
                        LossKind::Dropped,
                        format!("{mime} media; canonical turns carry images (image/*) only"),
                    ),
                    Media::Other(mime) => {
                        return Err(Error::invalid_input(format!(
                            "{part_path} holds {mime:?} media; codeoid reads inlineData and \
                             fileData as images, so the mimeType must be image/* (set \
                             skip_unknown to drop such parts instead)"
                        )));
                    }
                }
            } else if let Some(call) = part.get("functionCall") {
                let call = decode_call(call, &format!("{part_path}.functionCall"), (c, p - 1))?;
                open.push((call.name.clone(), call.id.clone(), false));
                parts.push(Part::ToolCall(call));
            } else if let Some(response) = part.get("functionResponse") {
                let response_path = format!("{part_path}.functionResponse");
                let (mut result, attached) =
                    decode_response(response, &response_path, &mut open, (c, p - 1), losses)?;
                let mut taken = 0;
                while taken < attached && p < raw.len() {
                    let image_path = format!("{parts_path}[{p}]");
                    // Anything but an image is left to the loop, which reports it.
                    let Some(Media::Image(image)) =
                        decode_media(read::object(&raw[p], &image_path)?, &image_path)?
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

/// What an `inlineData` or `fileData` part holds.
enum Media {
    /// An image (`image/*`, or a file without a declared type).
    Image(Image),
    /// Media of another type (a PDF, a video, audio): not canonical content.
    Other(String),
}

fn is_image(mime: &str) -> bool {
    mime.get(..6)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case("image/"))
}

fn decode_media(part: &Map<String, Value>, path: &str) -> Result<Option<Media>> {
    if let Some(inline) = part.get("inlineData") {
        let inline_path = format!("{path}.inlineData");
        let inline = read::object(inline, &inline_path)?;
        let mime = read::string(inline, "mimeType", &inline_path)?;
        if !is_image(mime) {
            return Ok(Some(Media::Other(mime.to_owned())));
        }
        return Ok(Some(Media::Image(Image {
            media_type: Some(mime.to_owned()),
            source: ImageSource::Base64 {
                data: read::string(inline, "data", &inline_path)?.to_owned(),
            },
        })));
    }
    if let Some(file) = part.get("fileData") {
        let file_path = format!("{path}.fileData");
        let file = read::object(file, &file_path)?;
        let mime = read::opt_string(file, "mimeType", &file_path)?;
        if let Some(mime) = mime.filter(|m| !is_image(m)) {
            return Ok(Some(Media::Other(mime.to_owned())));
        }
        let uri = read::string(file, "fileUri", &file_path)?.to_owned();
        let source = if is_url(&uri) {
            ImageSource::Url { url: uri }
        } else {
            ImageSource::File { file_id: uri }
        };
        return Ok(Some(Media::Image(Image {
            media_type: mime.map(str::to_owned),
            source,
        })));
    }
    Ok(None)
}

fn decode_call(call: &Value, path: &str, position: (usize, usize)) -> Result<ToolCall> {
    let map = read::object(call, path)?;
    let id = match read::opt_string(map, "id", path)? {
        Some(id) => ids::canonical_id(id).into_owned(),
        None => format!("{GEMINI_GENERATED}{}_{}", position.0, position.1),
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
    losses: &mut Losses,
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
        None => {
            losses.message(
                position.0,
                Some(position.1),
                LossKind::Changed,
                "function response that is not {\"output\" | \"error\": text} read as its JSON \
                 text; it is written back as {\"output\": \"<that text>\"}",
            );
            (
                vec![ToolResultPart::Text {
                    text: Value::Object(body.clone()).to_string(),
                }],
                false,
                0,
            )
        }
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
