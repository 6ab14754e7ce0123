//! Claude Code (Anthropic Messages) content blocks → canonical parts, and the `toolUseResult`
//! side data kept next to them.
//!
//! Mapping: `text` → text (an error part on API-error lines), `image` → image, `thinking` →
//! thinking signed by `anthropic` and the line's model, `redacted_thinking` → redacted thinking
//! whose opaque data is the signature, `tool_use` → tool call (canonical id = provider id),
//! `tool_result` → tool result (string or text/image parts, `is_error`). Any other block type
//! (server tools, documents...) has no canonical part: it is returned verbatim so the caller
//! can keep it in `meta.unsupported_parts` and count it.
//!
//! A block missing what makes it meaningful (a `tool_use` without `id`, a `tool_result`
//! without `tool_use_id`, a `text` without text) is an error: the caller skips the line as
//! malformed rather than invent data.

use serde_json::{Map, Value};

use crate::canonical::{Part, Signature, Thinking, ToolCall, ToolResult, ToolResultPart};
use crate::import::fields::{anthropic_image, str_field};
use crate::import::jsonl::kind_of;

/// Parts of one line plus the blocks that have no canonical form.
#[derive(Default)]
pub(super) struct Converted {
    pub parts: Vec<Part>,
    pub unsupported: Vec<Value>,
}

/// Converts the blocks of an assistant line.
pub(super) fn assistant(
    blocks: Vec<Value>,
    model: Option<&str>,
    api_error: bool,
) -> Result<Converted, String> {
    let mut out = Converted::default();
    for (index, block) in blocks.into_iter().enumerate() {
        let obj = as_block(&block, index)?;
        match str_field(obj, "type").unwrap_or_default() {
            "text" => {
                let text = text_of(obj, index)?;
                out.parts.push(if api_error {
                    Part::Error { message: text }
                } else {
                    Part::Text { text }
                });
            }
            "thinking" => out.parts.push(Part::Thinking(Thinking {
                text: str_field(obj, "thinking").unwrap_or_default().to_owned(),
                signature: str_field(obj, "signature")
                    .filter(|s| !s.is_empty())
                    .map(|value| signature(value, model)),
                redacted: false,
            })),
            "redacted_thinking" => {
                let data = str_field(obj, "data").ok_or_else(|| {
                    format!("redacted_thinking block {index} has no string \"data\"")
                })?;
                out.parts.push(Part::Thinking(Thinking {
                    text: String::new(),
                    signature: Some(signature(data, model)),
                    redacted: true,
                }));
            }
            "tool_use" => {
                let id = non_empty(obj, "id", "tool_use", index)?;
                let name = non_empty(obj, "name", "tool_use", index)?;
                out.parts.push(Part::ToolCall(ToolCall {
                    provider_id: Some(id.clone()),
                    id,
                    name,
                    input: obj
                        .get("input")
                        .cloned()
                        .unwrap_or_else(|| Value::Object(Map::new())),
                }));
            }
            "image" => match anthropic_image(obj) {
                Some(image) => out.parts.push(Part::Image(image)),
                None => out.unsupported.push(block),
            },
            _ => out.unsupported.push(block),
        }
    }
    Ok(out)
}

/// Converts the blocks of a user line.
pub(super) fn user(blocks: Vec<Value>) -> Result<Converted, String> {
    let mut out = Converted::default();
    for (index, block) in blocks.into_iter().enumerate() {
        let obj = as_block(&block, index)?;
        match str_field(obj, "type").unwrap_or_default() {
            "text" => out.parts.push(Part::Text {
                text: text_of(obj, index)?,
            }),
            "image" => match anthropic_image(obj) {
                Some(image) => out.parts.push(Part::Image(image)),
                None => out.unsupported.push(block),
            },
            "tool_result" => {
                let call_id = non_empty(obj, "tool_use_id", "tool_result", index)?;
                let parts = result_parts(obj.get("content"), index, &mut out.unsupported)?;
                out.parts.push(Part::ToolResult(ToolResult {
                    call_id,
                    parts,
                    is_error: obj.get("is_error").and_then(Value::as_bool) == Some(true),
                }));
            }
            _ => out.unsupported.push(block),
        }
    }
    Ok(out)
}

/// The `content` of a `tool_result`: a string, an array of text/image blocks, or nothing.
fn result_parts(
    content: Option<&Value>,
    index: usize,
    unsupported: &mut Vec<Value>,
) -> Result<Vec<ToolResultPart>, String> {
    match content {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(vec![ToolResultPart::Text { text: text.clone() }]),
        Some(Value::Array(items)) => {
            let mut parts = Vec::with_capacity(items.len());
            for item in items {
                let Some(obj) = item.as_object() else {
                    return Err(format!(
                        "tool_result block {index} has a content item that is a JSON {}, not an \
                         object",
                        kind_of(item)
                    ));
                };
                match str_field(obj, "type").unwrap_or_default() {
                    "text" => parts.push(ToolResultPart::Text {
                        text: text_of(obj, index)?,
                    }),
                    "image" => match anthropic_image(obj) {
                        Some(image) => parts.push(ToolResultPart::Image(image)),
                        None => unsupported.push(item.clone()),
                    },
                    _ => unsupported.push(item.clone()),
                }
            }
            Ok(parts)
        }
        Some(other) => Err(format!(
            "tool_result block {index} has content that is a JSON {}; expected a string or an \
             array of blocks",
            kind_of(other)
        )),
    }
}

/// The side data Claude Code writes next to a tool result (`toolUseResult`), minus the fields
/// that only duplicate bytes codeoid already keeps: the whole file before an edit
/// (`originalFile`, `originalFileContents`; the edit's strings and `structuredPatch` stay) and
/// the text of a read (`file.content`, which the tool result itself carries). The dropped
/// field names are listed under `"omitted"`.
pub(super) fn side_data(value: Value) -> Value {
    let Value::Object(mut obj) = value else {
        return value;
    };
    let mut omitted = Vec::new();
    for key in ["originalFile", "originalFileContents"] {
        if obj.remove(key).is_some() {
            omitted.push(Value::from(key));
        }
    }
    if let Some(Value::Object(file)) = obj.get_mut("file") {
        if file.remove("content").is_some() {
            omitted.push(Value::from("file.content"));
        }
    }
    if !omitted.is_empty() {
        obj.insert("omitted".to_owned(), Value::Array(omitted));
    }
    Value::Object(obj)
}

fn signature(value: &str, model: Option<&str>) -> Signature {
    Signature {
        provider: "anthropic".to_owned(),
        model: model.map(str::to_owned),
        value: value.to_owned(),
    }
}

fn as_block(block: &Value, index: usize) -> Result<&Map<String, Value>, String> {
    let obj = block.as_object().ok_or_else(|| {
        format!(
            "content block {index} is a JSON {}, not an object",
            kind_of(block)
        )
    })?;
    if str_field(obj, "type").is_none() {
        return Err(format!("content block {index} has no string \"type\""));
    }
    Ok(obj)
}

fn text_of(obj: &Map<String, Value>, index: usize) -> Result<String, String> {
    str_field(obj, "text")
        .map(str::to_owned)
        .ok_or_else(|| format!("text block {index} has no string \"text\""))
}

fn non_empty(
    obj: &Map<String, Value>,
    key: &str,
    block: &str,
    index: usize,
) -> Result<String, String> {
    str_field(obj, key)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
        .ok_or_else(|| format!("{block} block {index} has no non-empty string \"{key}\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::ImageSource;
    use serde_json::json;

    fn blocks(v: Value) -> Vec<Value> {
        v.as_array().unwrap().clone()
    }

    #[test]
    fn thinking_keeps_its_signature_and_redacted_data() {
        let out = assistant(
            blocks(json!([
                {"type": "thinking", "thinking": "", "signature": "sig=="},
                {"type": "redacted_thinking", "data": "opaque"},
            ])),
            Some("claude-opus-4-6"),
            false,
        )
        .unwrap();
        let Part::Thinking(t) = &out.parts[0] else {
            panic!("not thinking")
        };
        assert_eq!(t.text, "");
        let sig = t.signature.as_ref().unwrap();
        assert_eq!(
            (
                sig.provider.as_str(),
                sig.model.as_deref(),
                sig.value.as_str()
            ),
            ("anthropic", Some("claude-opus-4-6"), "sig==")
        );
        let Part::Thinking(r) = &out.parts[1] else {
            panic!("not thinking")
        };
        assert!(r.redacted);
        assert_eq!(r.signature.as_ref().unwrap().value, "opaque");
    }

    #[test]
    fn api_error_text_becomes_an_error_part() {
        let out = assistant(
            blocks(json!([{"type": "text", "text": "API Error: 529 overloaded"}])),
            None,
            true,
        )
        .unwrap();
        assert_eq!(
            out.parts,
            vec![Part::Error {
                message: "API Error: 529 overloaded".into()
            }]
        );
    }

    #[test]
    fn tool_results_keep_text_arrays_images_and_the_error_flag() {
        let out = user(blocks(json!([{
            "type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
            "content": [
                {"type": "text", "text": "line 1"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                {"type": "tool_reference", "tool_name": "x"}
            ]
        }])))
        .unwrap();
        let Part::ToolResult(r) = &out.parts[0] else {
            panic!("not a result")
        };
        assert_eq!(r.call_id, "toolu_1");
        assert!(r.is_error);
        assert_eq!(
            r.parts[0],
            ToolResultPart::Text {
                text: "line 1".into()
            }
        );
        let ToolResultPart::Image(img) = &r.parts[1] else {
            panic!("not an image")
        };
        assert_eq!(
            img.source,
            ImageSource::Base64 {
                data: "iVBO".into()
            }
        );
        assert_eq!(
            out.unsupported.len(),
            1,
            "unknown inner block kept verbatim"
        );
    }

    #[test]
    fn unknown_blocks_are_kept_and_broken_ones_rejected() {
        let out = assistant(
            blocks(json!([{"type": "server_tool_use", "id": "s1", "name": "web_search"}])),
            None,
            false,
        )
        .unwrap();
        assert!(out.parts.is_empty());
        assert_eq!(out.unsupported[0]["type"], "server_tool_use");

        let err = assistant(
            blocks(json!([{"type": "tool_use", "name": "Read"}])),
            None,
            false,
        )
        .err()
        .unwrap();
        assert!(err.contains("\"id\""), "{err}");
        let err = user(blocks(json!(["wow error"]))).err().unwrap();
        assert_eq!(err, "content block 0 is a JSON string, not an object");
    }

    #[test]
    fn side_data_drops_only_duplicated_bulk() {
        let v = side_data(json!({
            "filePath": "a.rs", "originalFile": "whole file", "structuredPatch": [1],
            "file": {"filePath": "a.rs", "content": "text", "numLines": 3}
        }));
        assert_eq!(v["filePath"], "a.rs");
        assert_eq!(v["structuredPatch"], json!([1]));
        assert!(v.get("originalFile").is_none());
        assert_eq!(v["file"], json!({"filePath": "a.rs", "numLines": 3}));
        assert_eq!(v["omitted"], json!(["originalFile", "file.content"]));
        assert_eq!(side_data(json!("Error: x")), json!("Error: x"));
    }
}
