//! Gemini function responses, both directions: codeoid's `{"output" | "error": text}` shape,
//! the images of the results of one content, and media nested in a native function response.
//!
//! Writing: `response` is always an object (several texts become an array, an error result has
//! `error`). Images cannot go inside it, so they follow as sibling parts, **after the last
//! function response of the content**: Gemini wants the responses to parallel calls together,
//! and rejects media parts between them. Each response says how many of the images after the
//! responses are its own with `"attached_images": n`, in response order.
//!
//! Reading attributes images in that order: the images after a response that counts some go to
//! the first such response still owed images, then the next; any other part (text, a thought)
//! ends the attribution, and what follows is the user's own content. A content written by an
//! older codeoid, each response's images right after it, reads the same way. A response of any
//! other shape reads back as its JSON text, reported as changed.
//!
//! Gemini 3 clients can also put media inside the response, in `functionResponse.parts`
//! (`inlineData` / `fileData`): it is read into the result's images, before any attached ones
//! (written back as siblings). Media other than images is unknown content, and a `displayName`
//! (which a response can point to with `{"$ref": name}`) is not kept, reported as dropped.

use serde_json::{Map, Value, json};

use crate::canonical::{ToolResult, ToolResultPart};
use crate::error::{Error, Result};

use super::decode::{Media, decode_media};
use super::{ATTACHED_IMAGES_KEY, Parts, image_part};
use crate::translate::backend::{Backend, Format, Options};
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::media;
use crate::translate::normalize::{Piece, PieceKind};
use crate::translate::read;

/// Writes the function responses among `pieces` into `parts`, then all their images.
pub(super) fn write(
    pieces: &[Piece<'_>],
    parts: &mut Parts,
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) {
    let mut images = Vec::new();
    for piece in pieces {
        if let PieceKind::Result { result, name } = &piece.kind {
            let (response, own) =
                function_response(result, name, backend, options, piece.at, losses);
            parts.push(response);
            images.extend(own);
        }
    }
    parts.extend(images);
}

fn function_response(
    result: &ToolResult,
    name: &str,
    backend: &Backend,
    options: &Options,
    at: (usize, usize),
    losses: &mut Losses,
) -> (Value, Vec<Value>) {
    let (texts, images) = media::texts_then_images(result, at, losses, |image, losses| {
        image_part(image, backend, at, losses)
    });
    let mut texts: Vec<Value> = texts.into_iter().map(|text| json!(text)).collect();
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

/// A result and the number of sibling image parts that belong to it. `open` holds the calls of
/// the latest model content (name, canonical id, answered); `position` is (content, part).
pub(super) fn decode_response(
    response: &Value,
    path: &str,
    open: &mut [(String, String, bool)],
    position: (usize, usize),
    options: &Options,
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
    let (mut parts, is_error, attached) = match codeoid_shape(body) {
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
    if let Some(nested) = map.get("parts") {
        let nested_path = format!("{path}.parts");
        for (n, part) in read::array(nested, &nested_path)?.iter().enumerate() {
            let part_path = format!("{nested_path}[{n}]");
            let part = read::object(part, &part_path)?;
            nested_media(part, &part_path, position, options, losses, &mut parts)?;
        }
    }
    Ok((
        ToolResult {
            call_id,
            parts,
            is_error,
        },
        attached,
    ))
}

/// One part of a native `functionResponse.parts`: an image goes to `parts`; other media, or a
/// part without media, is unknown content.
fn nested_media(
    part: &Map<String, Value>,
    path: &str,
    position: (usize, usize),
    options: &Options,
    losses: &mut Losses,
    parts: &mut Vec<ToolResultPart>,
) -> Result<()> {
    let unknown = match decode_media(part, path)? {
        Some(Media::Image(image)) => {
            let named = ["inlineData", "fileData"]
                .iter()
                .filter_map(|key| part.get(*key)?.get("displayName")?.as_str())
                .next();
            if let Some(name) = named {
                losses.message(
                    position.0,
                    Some(position.1),
                    LossKind::Dropped,
                    format!(
                        "display name {name:?} of an image inside a function response; \
                         canonical images have no name"
                    ),
                );
            }
            parts.push(ToolResultPart::Image(image));
            return Ok(());
        }
        Some(Media::Other(mime)) => format!("{mime} media"),
        None => "a part without inlineData or fileData".to_owned(),
    };
    if options.skip_unknown {
        losses.message(
            position.0,
            Some(position.1),
            LossKind::Dropped,
            format!("{unknown} inside a function response; tool results carry text and images"),
        );
        return Ok(());
    }
    Err(Error::invalid_input(format!(
        "{path} holds {unknown}; codeoid reads the parts of a function response as images \
         (image/* inlineData or fileData), so set skip_unknown to drop such parts instead"
    )))
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
