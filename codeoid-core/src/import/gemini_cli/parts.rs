//! Gemini content (`PartListUnion`) → canonical parts: text, thought text, thought signatures,
//! inline images, function calls, and tool-call results.
//!
//! Pure functions of one value. Parts with no canonical form (file data that is not an image,
//! executable code...) are skipped here; they never carry conversation text.

use serde_json::{Map, Value};

use super::PROVIDER;
use crate::canonical::{Image, ImageSource, Part, Signature, Thinking, ToolCall, ToolResultPart};
use crate::import::fields::{str_field, string_field};
use crate::import::jsonl;

/// "**subject**\ndescription", the shape Gemini CLI parsed the thought summary from.
pub(super) fn thought_text(thought: &Map<String, Value>) -> String {
    let subject = str_field(thought, "subject").unwrap_or_default();
    let description = str_field(thought, "description").unwrap_or_default();
    if subject.is_empty() {
        description.to_owned()
    } else {
        format!("**{subject}**\n{description}")
    }
}

/// Content (`PartListUnion`): a string, one part, or an array of strings and parts.
pub(super) fn content_parts(
    content: Option<&Value>,
    model: Option<&str>,
) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let items: Vec<&Value> = match content {
        None | Some(Value::Null) => return Ok(parts),
        Some(Value::Array(items)) => items.iter().collect(),
        Some(one) => vec![one],
    };
    for item in items {
        match item {
            Value::String(text) if text.is_empty() => {}
            Value::String(text) => parts.push(Part::Text { text: text.clone() }),
            Value::Object(part) => {
                if let Some(sig) = string_field(part, "thoughtSignature") {
                    parts.push(Part::Thinking(Thinking {
                        text: String::new(),
                        signature: Some(Signature {
                            provider: PROVIDER.to_owned(),
                            model: model.map(str::to_owned),
                            value: sig,
                        }),
                        redacted: false,
                    }));
                }
                if let Some(text) = str_field(part, "text") {
                    if part.get("thought").and_then(Value::as_bool) == Some(true) {
                        parts.push(Part::Thinking(Thinking {
                            text: text.to_owned(),
                            signature: None,
                            redacted: false,
                        }));
                    } else if !text.is_empty() {
                        parts.push(Part::Text {
                            text: text.to_owned(),
                        });
                    }
                } else if let Some(image) = part.get("inlineData").and_then(inline_image) {
                    parts.push(Part::Image(image));
                } else if let Some(call) = part.get("functionCall").and_then(Value::as_object) {
                    if let Some(name) = string_field(call, "name") {
                        let id = string_field(call, "id").unwrap_or_else(|| name.clone());
                        parts.push(Part::ToolCall(ToolCall {
                            provider_id: string_field(call, "id"),
                            id,
                            name,
                            input: call.get("args").cloned().unwrap_or(Value::Null),
                        }));
                    }
                }
            }
            other => {
                return Err(format!(
                    "content item is a JSON {}, not a string or a part",
                    jsonl::kind_of(other)
                ));
            }
        }
    }
    Ok(parts)
}

/// The text of a content value, for error messages.
pub(super) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.as_str().or_else(|| i.get("text").and_then(Value::as_str)))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

pub(super) fn inline_image(data: &Value) -> Option<Image> {
    let data = data.as_object()?;
    let mime = string_field(data, "mimeType");
    Some(Image {
        media_type: mime,
        source: ImageSource::Base64 {
            data: str_field(data, "data")?.to_owned(),
        },
    })
}

/// A tool call's `result` parts and whether a function response reported an error.
pub(super) fn result_parts(result: &Value) -> (Vec<ToolResultPart>, bool) {
    let mut parts = Vec::new();
    let mut failed = false;
    let items: Vec<&Value> = match result {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    for item in items {
        match item {
            Value::String(text) => parts.push(ToolResultPart::Text { text: text.clone() }),
            Value::Object(part) => {
                if let Some(response) = part.get("functionResponse").and_then(|f| f.get("response"))
                {
                    let text = match response {
                        Value::Object(r) => match (str_field(r, "output"), r.get("error")) {
                            (Some(output), None) => output.to_owned(),
                            (_, Some(Value::String(error))) => {
                                failed = true;
                                error.clone()
                            }
                            _ => response.to_string(),
                        },
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    parts.push(ToolResultPart::Text { text });
                } else if let Some(text) = str_field(part, "text") {
                    parts.push(ToolResultPart::Text {
                        text: text.to_owned(),
                    });
                } else if let Some(image) = part.get("inlineData").and_then(inline_image) {
                    parts.push(ToolResultPart::Image(image));
                }
            }
            _ => {}
        }
    }
    (parts, failed)
}
