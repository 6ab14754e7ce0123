//! Gemini content (`PartListUnion`) → canonical parts: text, thought text, thought signatures,
//! inline images, function calls, function responses, and tool-call results.
//!
//! Pure functions of one value. A user message whose content holds `functionResponse` parts
//! (Gemini CLI writes such messages when it rewrites its history) is a message of tool results:
//! each response starts a result, and the text and image parts after it belong to that result
//! (those before the first response to the first), as Gemini CLI groups them. A part with no
//! canonical form (executable code, file data, a document, a call in a user message...) is
//! returned verbatim for `meta.unsupported_parts`, never dropped.

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

/// One `functionResponse` part and the parts that belong to it.
pub(super) struct FunctionResponse {
    /// The call it answers, when the part names it.
    pub id: Option<String>,
    /// The function's name (Gemini pairs responses with calls by name).
    pub name: Option<String>,
    pub parts: Vec<ToolResultPart>,
    /// The response held an `error`.
    pub failed: bool,
}

/// A message's content, converted.
#[derive(Default)]
pub(super) struct Content {
    /// Text, thinking, images and (in a `gemini` message) function calls, in order. A call
    /// without an id gets `<message id>:part-<index>`.
    pub parts: Vec<Part>,
    /// The function responses of a user message, in order.
    pub responses: Vec<FunctionResponse>,
    /// Parts with no canonical form, verbatim.
    pub unsupported: Vec<Value>,
}

impl Content {
    fn text(&mut self, text: &str, grouping: bool, lead: &mut Vec<ToolResultPart>) {
        if text.is_empty() {
            return;
        }
        let part = ToolResultPart::Text {
            text: text.to_owned(),
        };
        match (grouping, self.responses.last_mut()) {
            (false, _) => self.parts.push(Part::Text {
                text: text.to_owned(),
            }),
            (true, Some(response)) => response.parts.push(part),
            (true, None) => lead.push(part),
        }
    }

    fn image(&mut self, image: Image, grouping: bool, lead: &mut Vec<ToolResultPart>) {
        match (grouping, self.responses.last_mut()) {
            (false, _) => self.parts.push(Part::Image(image)),
            (true, Some(response)) => response.parts.push(ToolResultPart::Image(image)),
            (true, None) => lead.push(ToolResultPart::Image(image)),
        }
    }
}

/// Converts the content of a `gemini` message (`assistant`) or a `user` message.
pub(super) fn content(
    value: Option<&Value>,
    message_id: &str,
    assistant: bool,
    model: Option<&str>,
) -> Result<Content, String> {
    let mut out = Content::default();
    let items: Vec<&Value> = match value {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Array(items)) => items.iter().collect(),
        Some(one) => vec![one],
    };
    // A user message of function responses: its other parts belong to the results.
    let grouping = !assistant && items.iter().any(|i| i.get("functionResponse").is_some());
    let mut lead = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        let part = match item {
            Value::String(text) => {
                out.text(text, grouping, &mut lead);
                continue;
            }
            Value::Object(part) => part,
            other => {
                return Err(format!(
                    "content item is a JSON {}, not a string or a part",
                    jsonl::kind_of(other)
                ));
            }
        };
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        if let Some(sig) = string_field(part, "thoughtSignature").filter(|_| assistant) {
            out.parts.push(Part::Thinking(Thinking {
                text: String::new(),
                signature: Some(Signature {
                    provider: PROVIDER.to_owned(),
                    model: model.map(str::to_owned),
                    value: sig,
                }),
                redacted: false,
            }));
        }
        if let Some(text) = str_field(part, "text").filter(|_| !thought || assistant) {
            if thought {
                out.parts.push(Part::Thinking(Thinking {
                    text: text.to_owned(),
                    signature: None,
                    redacted: false,
                }));
            } else {
                out.text(text, grouping, &mut lead);
            }
        } else if let Some(image) = part.get("inlineData").and_then(inline_image) {
            out.image(image, grouping, &mut lead);
        } else if let Some(call) = part.get("functionCall").filter(|_| assistant) {
            let named = call
                .as_object()
                .and_then(|c| Some((c, string_field(c, "name")?)));
            match named {
                Some((call, name)) => {
                    let given = string_field(call, "id");
                    out.parts.push(Part::ToolCall(ToolCall {
                        id: given
                            .clone()
                            .unwrap_or_else(|| format!("{message_id}:part-{index}")),
                        provider_id: given,
                        name,
                        input: call
                            .get("args")
                            .cloned()
                            .unwrap_or_else(|| Value::Object(Map::new())),
                    }));
                }
                None => out.unsupported.push(item.clone()),
            }
        } else if let Some(response) = part
            .get("functionResponse")
            .and_then(Value::as_object)
            .filter(|_| !assistant)
        {
            let (text, failed) = response_text(response.get("response"));
            let mut parts = std::mem::take(&mut lead);
            parts.insert(0, ToolResultPart::Text { text });
            out.responses.push(FunctionResponse {
                id: string_field(response, "id"),
                name: string_field(response, "name"),
                parts,
                failed,
            });
        } else if !(part.is_empty() || part.len() == 1 && part.contains_key("thoughtSignature")) {
            // Anything else; a bare signature was kept above.
            out.unsupported.push(item.clone());
        }
    }
    if let Some(first) = out.responses.first_mut() {
        // Parts before the first response (none, usually) belong to it.
        first.parts.splice(1..1, lead);
    }
    Ok(out)
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

/// An `inlineData` image; data of another type (a PDF, audio) is no image and is left for
/// `unsupported_parts`.
fn inline_image(data: &Value) -> Option<Image> {
    let data = data.as_object()?;
    let mime = string_field(data, "mimeType");
    if mime.as_deref().is_some_and(|m| !m.starts_with("image/")) {
        return None;
    }
    Some(Image {
        media_type: mime,
        source: ImageSource::Base64 {
            data: str_field(data, "data")?.to_owned(),
        },
    })
}

/// The text of a function response and whether it reported an error: its `output` string, its
/// `error`, or its JSON.
fn response_text(response: Option<&Value>) -> (String, bool) {
    match response {
        Some(Value::Object(r)) => match (str_field(r, "output"), r.get("error")) {
            (Some(output), None) => (output.to_owned(), false),
            (_, Some(Value::String(error))) => (error.clone(), true),
            _ => (Value::Object(r.clone()).to_string(), false),
        },
        Some(Value::String(s)) => (s.clone(), false),
        Some(other) => (other.to_string(), false),
        None => (String::new(), false),
    }
}

/// A tool call's `result` parts, whether a function response reported an error, and the parts
/// with no canonical form.
pub(super) fn result_parts(result: &Value) -> (Vec<ToolResultPart>, bool, Vec<Value>) {
    let mut parts = Vec::new();
    let mut failed = false;
    let mut unsupported = Vec::new();
    let items: Vec<&Value> = match result {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    for item in items {
        match item {
            Value::String(text) => parts.push(ToolResultPart::Text { text: text.clone() }),
            Value::Object(part) => {
                if let Some(response) = part.get("functionResponse").and_then(Value::as_object) {
                    let (text, error) = response_text(response.get("response"));
                    failed |= error;
                    parts.push(ToolResultPart::Text { text });
                } else if let Some(text) = str_field(part, "text") {
                    parts.push(ToolResultPart::Text {
                        text: text.to_owned(),
                    });
                } else if let Some(image) = part.get("inlineData").and_then(inline_image) {
                    parts.push(ToolResultPart::Image(image));
                } else if !part.is_empty() {
                    unsupported.push(item.clone());
                }
            }
            _ => {}
        }
    }
    (parts, failed, unsupported)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn responses_collect_the_parts_after_them() {
        let value = json!([
            {"functionResponse": {"id": "a", "name": "read_file", "response": {"output": "one"}}},
            {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
            {"functionResponse": {"id": "b", "name": "shell", "response": {"error": "boom"}}},
            {"text": "note"},
            {"executableCode": {"code": "print(1)"}}
        ]);
        let c = content(Some(&value), "m", false, None).unwrap();
        assert!(c.parts.is_empty());
        assert_eq!(c.responses.len(), 2);
        assert_eq!(c.responses[0].parts.len(), 2);
        assert!(!c.responses[0].failed);
        assert!(c.responses[1].failed);
        assert_eq!(
            c.responses[1].parts[1],
            ToolResultPart::Text {
                text: "note".into()
            }
        );
        assert_eq!(
            c.unsupported,
            vec![json!({"executableCode": {"code": "print(1)"}})]
        );
    }

    #[test]
    fn unknown_and_misplaced_parts_are_kept_aside() {
        let value = json!([
            {"text": "see"},
            {"inlineData": {"mimeType": "application/pdf", "data": "JVBE"}},
            {"functionCall": {"name": "shell", "args": {}}},
            {"fileData": {"mimeType": "video/mp4", "fileUri": "gs://x"}}
        ]);
        let user = content(Some(&value), "m", false, None).unwrap();
        assert_eq!(user.parts, vec![Part::Text { text: "see".into() }]);
        assert_eq!(
            user.unsupported.len(),
            3,
            "a call in a user message is no call"
        );
        let model = content(Some(&value), "m", true, None).unwrap();
        let Part::ToolCall(call) = &model.parts[1] else {
            panic!("{:?}", model.parts)
        };
        assert_eq!(
            (call.id.as_str(), call.provider_id.as_deref()),
            ("m:part-2", None)
        );
        assert_eq!(model.unsupported.len(), 2);
    }
}
