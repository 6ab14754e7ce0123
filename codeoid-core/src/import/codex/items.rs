//! Codex response-item payloads → canonical parts: message content, reasoning text, call
//! outputs, and recognizing the context messages Codex writes on the user's behalf.
//!
//! Everything here is a pure function of one payload; shapes it does not know are an error
//! the caller reports as a malformed line (message content) or kept as text (call outputs,
//! whose items are always meant for the model).

use serde_json::{Map, Value};

use crate::canonical::{Part, ToolResultPart};
use crate::import::fields::{self, str_field};
use crate::import::jsonl;

/// User messages Codex writes itself: the environment and AGENTS.md instructions.
pub(super) fn is_harness_context(parts: &[Part]) -> bool {
    !parts.is_empty()
        && parts.iter().all(|p| match p {
            Part::Text { text } => {
                let t = text.trim_start();
                t.starts_with("<environment_context>")
                    || t.starts_with("<user_instructions>")
                    || t.starts_with("# AGENTS.md instructions")
            }
            _ => false,
        })
}

/// Text of a reasoning item: its full content when present, else its summary.
pub(super) fn reasoning_text(item: &Map<String, Value>) -> String {
    let texts = |key: &str| -> Vec<String> {
        item.get(key)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.get("text").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let content = texts("content");
    if content.is_empty() {
        texts("summary").join("\n\n")
    } else {
        content.join("\n\n")
    }
}

/// Content items of a message: `input_text`/`output_text` → text, `refusal` → text,
/// `input_image` → image. Items of any other type (one a newer Codex writes) are returned
/// verbatim beside the parts, for `meta.unsupported_parts`: the message is kept.
pub(super) fn message_parts(content: Option<&Value>) -> Result<(Vec<Part>, Vec<Value>), String> {
    let items = match content {
        Some(Value::Array(items)) => items,
        Some(Value::String(text)) => {
            return Ok((vec![Part::Text { text: text.clone() }], Vec::new()));
        }
        Some(other) => {
            return Err(format!(
                "message content is a JSON {}, not an array",
                jsonl::kind_of(other)
            ));
        }
        None => return Err("message has no \"content\"".to_owned()),
    };
    let mut parts = Vec::with_capacity(items.len());
    let mut unsupported = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let obj = item.as_object().ok_or_else(|| {
            format!(
                "content item {index} is a JSON {}, not an object",
                jsonl::kind_of(item)
            )
        })?;
        match str_field(obj, "type").unwrap_or_default() {
            "input_text" | "output_text" | "text" => parts.push(Part::Text {
                text: str_field(obj, "text").unwrap_or_default().to_owned(),
            }),
            "refusal" => parts.push(Part::Text {
                text: str_field(obj, "refusal").unwrap_or_default().to_owned(),
            }),
            "input_image" => {
                if let Some(url) = str_field(obj, "image_url") {
                    parts.push(Part::Image(fields::image_from_url(url)));
                }
            }
            _ => unsupported.push(item.clone()),
        }
    }
    Ok((parts, unsupported))
}

/// A call output: a string, `{content, success}`, or an array of `input_text`/`input_image`;
/// with `Some(failed)` when the output itself says (an object's `success`).
pub(super) fn output_parts(
    output: Option<&Value>,
) -> Result<(Vec<ToolResultPart>, Option<bool>), String> {
    match output {
        None | Some(Value::Null) => Ok((Vec::new(), None)),
        Some(Value::String(text)) => Ok((vec![ToolResultPart::Text { text: text.clone() }], None)),
        Some(Value::Object(obj)) => {
            let failed = obj.get("success").and_then(Value::as_bool).map(|ok| !ok);
            let (parts, _) = output_parts(obj.get("content"))?;
            Ok((parts, failed))
        }
        Some(Value::Array(items)) => {
            let mut parts = Vec::with_capacity(items.len());
            for item in items {
                let Some(obj) = item.as_object() else {
                    return Err(format!(
                        "output item is a JSON {}, not an object",
                        jsonl::kind_of(item)
                    ));
                };
                match str_field(obj, "type").unwrap_or_default() {
                    "input_image" => {
                        if let Some(url) = str_field(obj, "image_url") {
                            parts.push(ToolResultPart::Image(fields::image_from_url(url)));
                        }
                    }
                    _ => parts.push(ToolResultPart::Text {
                        text: str_field(obj, "text").unwrap_or_default().to_owned(),
                    }),
                }
            }
            Ok((parts, None))
        }
        Some(other) => Err(format!(
            "call output is a JSON {}; expected a string, object or array",
            jsonl::kind_of(other)
        )),
    }
}
