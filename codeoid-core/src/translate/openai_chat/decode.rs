//! Reading OpenAI Chat `messages` back into canonical turns (the writer is the parent module).
//!
//! `system` and `developer` messages become the system prompt; an `assistant` message one turn
//! (`reasoning_content`, then content, then `tool_calls`); `tool` messages open a user turn that
//! the next `user` message joins, whose leading `[tool call {id} returned {n} image(s)]` markers
//! hand exactly `n` images back to that result. Errors are recovered from the error marker.
//! A system or developer message after the first turn still joins the system prompt, reported as
//! moved.

use serde_json::{Map, Value};

use crate::canonical::{
    Image, ImageSource, Part, Role, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};
use crate::error::{Error, Result};

use super::parse_attachment_marker;
use crate::translate::Conversation;
use crate::translate::arguments;
use crate::translate::backend::{Backend, Options};
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::media;
use crate::translate::read;
use crate::translate::tool_error::{self, ERROR_MARKER};

/// Reads Chat messages back into a conversation.
pub(crate) fn decode(
    messages: &Value,
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Result<Conversation> {
    let list = read::array(messages, "messages")?;
    let mut system: Vec<String> = Vec::new();
    let mut turns: Vec<Turn> = Vec::with_capacity(list.len());
    // Index of a user turn opened by `tool` messages that a `user` message may still join.
    let mut open: Option<usize> = None;
    for (m, message) in list.iter().enumerate() {
        let path = format!("messages[{m}]");
        let map = read::object(message, &path)?;
        match read::string(map, "role", &path)? {
            role @ ("system" | "developer") => {
                if !turns.is_empty() {
                    losses.message(m, None, LossKind::Moved, moved_system(role));
                }
                let parts = content_parts(map, &path, m, options, losses)?;
                system.extend(parts.into_iter().filter_map(|p| match p {
                    Part::Text { text } => Some(text),
                    _ => None,
                }));
            }
            "assistant" => {
                open = None;
                turns.push(decode_assistant(map, &path, backend)?);
            }
            "tool" => {
                let result = decode_tool(map, &path, m, options, losses)?;
                match open {
                    Some(index) => turns[index].parts.push(Part::ToolResult(result)),
                    None => {
                        open = Some(turns.len());
                        turns.push(Turn::new(Role::User, vec![Part::ToolResult(result)]));
                    }
                }
            }
            "user" => {
                let mut parts = content_parts(map, &path, m, options, losses)?;
                match open.take() {
                    Some(index) => {
                        reattach_images(&mut turns[index].parts, &mut parts);
                        turns[index].parts.extend(parts);
                    }
                    None => turns.push(Turn::new(Role::User, parts)),
                }
            }
            other => {
                if options.skip_unknown {
                    losses.message(
                        m,
                        None,
                        LossKind::Dropped,
                        format!("message with role {other:?}"),
                    );
                    continue;
                }
                return Err(Error::invalid_input(format!(
                    "{path}.role is {other:?}; expected system, developer, user, assistant or tool"
                )));
            }
        }
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    Ok(Conversation { system, turns })
}

fn decode_assistant(map: &Map<String, Value>, path: &str, backend: &Backend) -> Result<Turn> {
    let mut parts = Vec::new();
    if let Some(reasoning) = read::opt_string(map, "reasoning_content", path)? {
        parts.push(Part::Thinking(Thinking {
            text: reasoning.to_owned(),
            signature: None,
            redacted: false,
        }));
    }
    match map.get("content") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => parts.push(Part::Text { text: text.clone() }),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let item_path = format!("{path}.content[{i}]");
                let item = read::object(item, &item_path)?;
                let key = match read::string(item, "type", &item_path)? {
                    "text" => "text",
                    "refusal" => "refusal",
                    other => return Err(read::unknown_type(&item_path, other, "text, refusal")),
                };
                let text = read::string(item, key, &item_path)?.to_owned();
                parts.push(Part::Text { text });
            }
        }
        Some(other) => {
            return Err(Error::invalid_input(format!(
                "{path}.content is {}; expected a string, an array or null",
                read::kind(other)
            )));
        }
    }
    if let Some(calls) = map.get("tool_calls").filter(|v| !v.is_null()) {
        let calls_path = format!("{path}.tool_calls");
        for (c, call) in read::array(calls, &calls_path)?.iter().enumerate() {
            let call_path = format!("{calls_path}[{c}]");
            let call = read::object(call, &call_path)?;
            let function_path = format!("{call_path}.function");
            let function =
                read::object(call.get("function").unwrap_or(&Value::Null), &function_path)?;
            parts.push(Part::ToolCall(ToolCall {
                id: ids::canonical_id(read::string(call, "id", &call_path)?).into_owned(),
                provider_id: None,
                name: read::string(function, "name", &function_path)?.to_owned(),
                input: arguments::from_json_string(read::string(
                    function,
                    "arguments",
                    &function_path,
                )?),
            }));
        }
    }
    backend.decoded_turn(Role::Assistant, parts, path)
}

/// The loss sentence for a system or developer message that comes after the conversation
/// started: it joins the system prompt, which every format keeps in front.
pub(crate) fn moved_system(role: &str) -> String {
    format!(
        "{role} message after the conversation started moved into the system prompt; its \
         position among the turns is not kept"
    )
}

/// A `tool` message (message `m`). Its content is a string or text parts; any other part (an
/// `image_url`, a part without `text`) is unknown content: dropped with `skip_unknown`.
fn decode_tool(
    map: &Map<String, Value>,
    path: &str,
    m: usize,
    options: &Options,
    losses: &mut Losses,
) -> Result<ToolResult> {
    let call_id = ids::canonical_id(read::string(map, "tool_call_id", path)?).into_owned();
    let (is_error, texts): (bool, Vec<String>) = match map.get("content") {
        Some(Value::String(s)) => match tool_error::unmark(s) {
            (false, Some("")) | (_, None) => (s == ERROR_MARKER, Vec::new()),
            (is_error, Some(text)) => (is_error, vec![text.to_owned()]),
        },
        Some(Value::Array(items)) => {
            let mut texts = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let item_path = format!("{path}.content[{i}]");
                let item = read::object(item, &item_path)?;
                let kind = read::opt_string(item, "type", &item_path)?;
                let text = read::opt_string(item, "text", &item_path)?;
                match (kind, text) {
                    (None | Some("text"), Some(text)) => texts.push(text.to_owned()),
                    _ if options.skip_unknown => {
                        let what = match kind {
                            Some(other) if other != "text" => format!(
                                "content part of type {other:?} in a tool message, which \
                                 carries text only"
                            ),
                            _ => "text part without text in a tool message".to_owned(),
                        };
                        losses.message(m, Some(i), LossKind::Dropped, what);
                    }
                    (None | Some("text"), None) => {
                        return Err(Error::invalid_input(format!(
                            "{item_path}.text is missing; a text part of a tool message needs \
                             a string text (set skip_unknown to drop such parts instead)"
                        )));
                    }
                    (Some(other), _) => {
                        return Err(read::unknown_type(
                            &item_path,
                            other,
                            "text (tool messages carry text only)",
                        ));
                    }
                }
            }
            // The writer uses this form for errors with two texts or more only; anything shorter
            // that starts with the marker is a successful output that happens to.
            let is_error = texts.len() >= 3 && texts[0] == ERROR_MARKER;
            if is_error {
                texts.remove(0);
            }
            (is_error, texts)
        }
        Some(other) => {
            return Err(Error::invalid_input(format!(
                "{path}.content is {}; expected a string or an array of text parts",
                read::kind(other)
            )));
        }
        None => {
            return Err(Error::invalid_input(format!(
                "{path}.content is missing; expected a string or an array of text parts"
            )));
        }
    };
    Ok(ToolResult {
        call_id,
        parts: texts
            .into_iter()
            .map(|text| ToolResultPart::Text { text })
            .collect(),
        is_error,
    })
}

/// Parts of a user/system message `content`: a string or an array of text and image parts.
fn content_parts(
    map: &Map<String, Value>,
    path: &str,
    m: usize,
    options: &Options,
    losses: &mut Losses,
) -> Result<Vec<Part>> {
    let items = match read::text_or_parts(map, "content", path)? {
        read::TextOrParts::Text(text) => {
            return Ok(vec![Part::Text {
                text: text.to_owned(),
            }]);
        }
        read::TextOrParts::Parts(items) => items,
    };
    let mut parts = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = format!("{path}.content[{i}]");
        let item = read::object(item, &item_path)?;
        match read::string(item, "type", &item_path)? {
            "text" => parts.push(Part::Text {
                text: read::string(item, "text", &item_path)?.to_owned(),
            }),
            "image_url" => {
                let url_path = format!("{item_path}.image_url");
                let image_url =
                    read::object(item.get("image_url").unwrap_or(&Value::Null), &url_path)?;
                parts.push(Part::Image(image_from_url(read::string(
                    image_url, "url", &url_path,
                )?)));
            }
            other if options.skip_unknown => losses.message(
                m,
                Some(i),
                LossKind::Dropped,
                format!("content part of type {other:?}"),
            ),
            other => return Err(read::unknown_type(&item_path, other, "text, image_url")),
        }
    }
    Ok(parts)
}

/// A canonical image for an OpenAI image URL (a `data:` URL becomes inline base64).
pub(crate) fn image_from_url(url: &str) -> Image {
    match media::parse_data_url(url) {
        Some((media_type, data)) => Image {
            media_type: Some(media_type.to_owned()),
            source: ImageSource::Base64 {
                data: data.to_owned(),
            },
        },
        None => Image {
            media_type: None,
            source: ImageSource::Url {
                url: url.to_owned(),
            },
        },
    }
}

/// Moves images announced by attachment markers at the start of `user_parts` into the results
/// of `turn_parts` they belong to.
fn reattach_images(turn_parts: &mut [Part], user_parts: &mut Vec<Part>) {
    let mut consumed = 0;
    while let Some(Part::Text { text }) = user_parts.get(consumed) {
        let Some((wire, count)) = parse_attachment_marker(text) else {
            break;
        };
        let call_id = ids::canonical_id(wire).into_owned();
        let images: Vec<&Part> = user_parts[consumed + 1..]
            .iter()
            .take(count)
            .take_while(|p| matches!(p, Part::Image(_)))
            .collect();
        let target = turn_parts.iter_mut().find_map(|p| match p {
            Part::ToolResult(r) if r.call_id == call_id => Some(r),
            _ => None,
        });
        let (Some(result), true) = (target, images.len() == count) else {
            break;
        };
        for image in images {
            if let Part::Image(image) = image {
                result.parts.push(ToolResultPart::Image(image.clone()));
            }
        }
        consumed += 1 + count;
    }
    user_parts.drain(..consumed);
}
