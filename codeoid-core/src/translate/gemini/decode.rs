//! Reading Gemini `contents` back into canonical turns (the writer is the parent module).
//!
//! A `thoughtSignature` on a non-thought part becomes an empty signed [`Thinking`] right before
//! that part; the configured placeholder signature is ignored. Calls without ids get
//! `gemini_call_{content}_{part}`; responses pair by id, else with the first unanswered call of the
//! same name in the preceding model content; `responses` reads the responses themselves and says
//! which sibling images are theirs. `inlineData` / `fileData` parts are images; media of another
//! type (a PDF, a video) is unknown content: an error, or dropped with `skip_unknown`.

use std::collections::VecDeque;

use serde_json::{Map, Value};

use crate::canonical::{
    Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResultPart, Turn,
};
use crate::error::{Error, Result};

use super::is_url;
use super::responses::decode_response;
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
        // Results still owed attached images, in order: (index in `parts`, images left).
        let mut owed: VecDeque<(usize, usize)> = VecDeque::new();
        let mut p = 0;
        while p < raw.len() {
            let part_path = format!("{parts_path}[{p}]");
            let part = read::object(&raw[p], &part_path)?;
            p += 1;
            if let Some((index, left)) = owed.front_mut() {
                if let (Some(Part::ToolResult(result)), Some(Media::Image(image))) =
                    (parts.get_mut(*index), decode_media(part, &part_path)?)
                {
                    result.parts.push(ToolResultPart::Image(image));
                    *left -= 1;
                    if *left == 0 {
                        owed.pop_front();
                    }
                    continue;
                }
                // Anything but an image or another response ends the attribution.
                if part.get("functionResponse").is_none() {
                    owed.clear();
                }
            }
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
                let (result, attached) = decode_response(
                    response,
                    &response_path,
                    &mut open,
                    (c, p - 1),
                    options,
                    losses,
                )?;
                parts.push(Part::ToolResult(result));
                if attached > 0 {
                    owed.push_back((parts.len() - 1, attached));
                }
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
        turns.push(backend.decoded_turn(role, parts, &path)?);
    }
    Ok(turns)
}

/// What an `inlineData` or `fileData` part holds.
pub(super) enum Media {
    /// An image (`image/*`, or a file without a declared type).
    Image(Image),
    /// Media of another type (a PDF, a video, audio): not canonical content.
    Other(String),
}

fn is_image(mime: &str) -> bool {
    mime.get(..6)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case("image/"))
}

pub(super) fn decode_media(part: &Map<String, Value>, path: &str) -> Result<Option<Media>> {
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
