//! Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.json` and the newer `.jsonl`,
//! subagents under `chats/<parent session>/`) → one imported session.
//!
//! The `.json` form is one `ConversationRecord` document. The `.jsonl` form is a log of
//! patches replayed the way Gemini CLI loads it: a metadata line `{sessionId, projectHash,
//! ...}`, message records (a record whose `id` was seen before replaces it in place), `$set`
//! lines merging metadata (a `$set.messages` array replaces the whole list), and `$rewindTo`
//! lines removing a message and everything after it. Replaced and removed records are counted
//! as superseded.
//!
//! Messages: `user` → user turn; `gemini` → assistant turn (thought summaries as unsigned
//! thinking, the text, `thoughtSignature`s as empty signed thinking, `toolCalls` as tool
//! calls) followed by a user turn of the calls' results (`<id>:results`); a result is an error
//! when the call's status is `error`/`cancelled` or the function response holds `error`.
//! `error` messages become error parts; `info`/`warning` are UI notices and are ignored.
//! Gemini counts cached tokens inside `input` and thoughts outside `output`, so usage is
//! `input - cached` (+ `tool`) uncached input, `cached` cache reads, `output + thoughts` output.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::conversation::{ConversationBuilder, TurnHead};
use super::fields::{self, Stamp, count, str_field, string_field};
use super::jsonl;
use super::report::{At, ImportReport};
use super::session::{ImportedSession, LogFormat, SessionKind};
use crate::canonical::{
    CallUsage, Image, ImageSource, Part, Signature, Thinking, ToolCall, ToolResult, ToolResultPart,
};
use crate::error::{Error, ErrorKind, Result};

const SOURCE: &str = "gemini_cli";
const PROVIDER: &str = "gemini";

/// A message record and where it came from.
struct Message {
    id: String,
    location: String,
    line: Option<u64>,
    obj: Map<String, Value>,
}

/// Reads one Gemini CLI chat file.
pub(crate) fn read(
    path: &Path,
    bytes: &[u8],
    report: &mut ImportReport,
) -> Result<Vec<ImportedSession>> {
    let (metadata, messages) = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(mut doc)) if doc.get("messages").is_some_and(Value::is_array) => {
            let Some(Value::Array(list)) = doc.remove("messages") else {
                return Ok(Vec::new());
            };
            let messages = document_messages(path, list, report);
            (doc, messages)
        }
        Ok(Value::Object(_)) | Err(_) if looks_like_lines(bytes) => {
            replay_lines(path, bytes, report)
        }
        Ok(other) => {
            let found = match &other {
                Value::Object(_) => "an object without a \"messages\" array".to_owned(),
                v => format!("a JSON {}", jsonl::kind_of(v)),
            };
            return Err(Error::new(
                ErrorKind::Import,
                format!(
                    "cannot import {}: a Gemini CLI chat is an object with a \"messages\" array, \
                     found {found}; import the chats/session-*.json files",
                    path.display()
                ),
            ));
        }
        Err(e) => {
            return Err(Error::new(
                ErrorKind::Import,
                format!(
                    "cannot import {}: the Gemini CLI chat is not valid JSON (line {}, column \
                     {}); the file may be truncated",
                    path.display(),
                    e.line(),
                    e.column()
                ),
            )
            .with_source(e));
        }
    };
    Ok(convert(path, &metadata, messages, report))
}

/// `true` when the first non-blank line is a complete JSON object on its own.
fn looks_like_lines(bytes: &[u8]) -> bool {
    jsonl::lines(bytes)
        .next()
        .is_some_and(|l| l.text.is_ok_and(|t| jsonl::object(t).is_ok()))
}

fn document_messages(path: &Path, list: Vec<Value>, report: &mut ImportReport) -> Vec<Message> {
    let mut out = Vec::with_capacity(list.len());
    for (index, value) in list.into_iter().enumerate() {
        report.lines += 1;
        let location = format!("/messages/{index}");
        match value {
            Value::Object(obj) => match string_field(&obj, "id") {
                Some(id) => out.push(Message {
                    id,
                    location,
                    line: None,
                    obj,
                }),
                None => {
                    report.malformed(path, At::Pointer(&location), "message has no string \"id\"")
                }
            },
            other => report.malformed(
                path,
                At::Pointer(&location),
                format!(
                    "message is a JSON {}, not an object",
                    jsonl::kind_of(&other)
                ),
            ),
        }
    }
    out
}

/// Replays a `.jsonl` chat into its metadata and final message list.
fn replay_lines(
    path: &Path,
    bytes: &[u8],
    report: &mut ImportReport,
) -> (Map<String, Value>, Vec<Message>) {
    let mut metadata = Map::new();
    let mut messages: Vec<Message> = Vec::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    let mut set_messages: Option<(u64, Vec<Value>)> = None;
    for line in jsonl::lines(bytes) {
        report.lines += 1;
        let at = At::Line(line.number);
        let mut obj = match line.text.and_then(jsonl::object) {
            Ok(obj) => obj,
            Err(reason) => {
                report.malformed(path, at, reason);
                continue;
            }
        };
        if let Some(target) = string_field(&obj, "$rewindTo") {
            let cut = index_of.get(&target).copied().unwrap_or(0);
            report.superseded_records += (messages.len() - cut) as u64;
            messages.truncate(cut);
            index_of.retain(|_, i| *i < cut);
            report.ignored("$rewindTo");
        } else if let Some(id) = string_field(&obj, "id") {
            let message = Message {
                id: id.clone(),
                location: format!("line {}", line.number),
                line: Some(line.number),
                obj,
            };
            match index_of.get(&id) {
                Some(&i) => {
                    report.superseded_records += 1;
                    messages[i] = message;
                }
                None => {
                    index_of.insert(id, messages.len());
                    messages.push(message);
                }
            }
        } else if let Some(Value::Object(mut patch)) = obj.remove("$set") {
            if let Some(Value::Array(list)) = patch.remove("messages") {
                if !list.is_empty() {
                    set_messages = Some((line.number, list));
                }
            }
            metadata.extend(patch);
            report.ignored("$set");
        } else if obj.contains_key("sessionId") && obj.contains_key("projectHash") {
            metadata.extend(obj);
            report.ignored("session metadata");
        } else {
            report.malformed(
                path,
                at,
                "record is neither a message (string \"id\"), a $set or $rewindTo patch, nor \
                 session metadata",
            );
        }
    }
    if let Some((number, list)) = set_messages {
        // Gemini CLI prefers a full message list written by $set over the replayed records.
        report.superseded_records += messages.len() as u64;
        messages = list
            .into_iter()
            .enumerate()
            .filter_map(|(i, value)| {
                let location = format!("line {number} $set/messages/{i}");
                let obj = match value {
                    Value::Object(obj) => obj,
                    other => {
                        report.malformed(
                            path,
                            At::Line(number),
                            format!(
                                "$set message {i} is a JSON {}, not an object",
                                jsonl::kind_of(&other)
                            ),
                        );
                        return None;
                    }
                };
                let Some(id) = string_field(&obj, "id") else {
                    report.malformed(
                        path,
                        At::Line(number),
                        format!("$set message {i} has no string \"id\""),
                    );
                    return None;
                };
                Some(Message {
                    id,
                    location,
                    line: Some(number),
                    obj,
                })
            })
            .collect();
    }
    (metadata, messages)
}

fn convert(
    path: &Path,
    metadata: &Map<String, Value>,
    messages: Vec<Message>,
    report: &mut ImportReport,
) -> Vec<ImportedSession> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let session_id = string_field(metadata, "sessionId").unwrap_or(stem);
    let mut session = ImportedSession::new(LogFormat::GeminiCli, path.to_path_buf(), session_id);
    session.title = string_field(metadata, "summary");
    session.provider = Some(PROVIDER.to_owned());
    if let Stamp::Valid(t) = fields::timestamp(metadata, "startTime") {
        session.started_at = Some(t);
    }
    for (from, to) in [
        ("projectHash", "project_hash"),
        ("directories", "directories"),
    ] {
        if let Some(value) = metadata.get(from) {
            session.meta.insert(to.to_owned(), value.clone());
        }
    }
    let subagent = str_field(metadata, "kind") == Some("subagent");
    if subagent {
        session.kind = SessionKind::Subagent;
        session.parent_session_id = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .filter(|n| *n != "chats")
            .map(str::to_owned);
    }
    let mut builder = ConversationBuilder::new(SOURCE, Some(PROVIDER.to_owned()), !subagent);
    for message in messages {
        let at = match message.line {
            Some(n) => At::Line(n),
            None => At::Pointer(&message.location),
        };
        if let Err(reason) = add_message(&mut builder, &message, report, path) {
            report.malformed(path, at, reason);
        }
    }
    session.turns = builder.finish();
    session.fill_from_turns();
    if session.turns.is_empty() {
        Vec::new()
    } else {
        vec![session]
    }
}

fn add_message(
    builder: &mut ConversationBuilder,
    message: &Message,
    report: &mut ImportReport,
    path: &Path,
) -> Result<(), String> {
    let obj = &message.obj;
    let timestamp = match fields::timestamp(obj, "timestamp") {
        Stamp::Valid(t) => Some(t),
        Stamp::Missing => None,
        Stamp::Invalid(why) => {
            let at = message
                .line
                .map_or(At::Pointer(&message.location), At::Line);
            report.warn(path, at, why);
            None
        }
    };
    let head = |id: String| TurnHead::new(id, timestamp);
    let kind = str_field(obj, "type").unwrap_or_default();
    match kind {
        "user" => {
            let parts = content_parts(obj.get("content"), None)?;
            builder.user(head(message.id.clone()), parts);
        }
        "gemini" => {
            let model = string_field(obj, "model");
            let mut parts: Vec<Part> = obj
                .get("thoughts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .map(|t| {
                    Part::Thinking(Thinking {
                        text: thought_text(t),
                        signature: None,
                        redacted: false,
                    })
                })
                .collect();
            parts.extend(content_parts(obj.get("content"), model.as_deref())?);
            let calls = obj.get("toolCalls").and_then(Value::as_array);
            let mut results = Vec::new();
            for (i, call) in calls.into_iter().flatten().enumerate() {
                let call = call
                    .as_object()
                    .ok_or_else(|| format!("tool call {i} is not an object"))?;
                let id =
                    string_field(call, "id").unwrap_or_else(|| format!("{}-call-{i}", message.id));
                let name = string_field(call, "name")
                    .ok_or_else(|| format!("tool call {i} ({id}) has no \"name\""))?;
                parts.push(Part::ToolCall(ToolCall {
                    provider_id: Some(id.clone()),
                    id: id.clone(),
                    name,
                    input: call
                        .get("args")
                        .cloned()
                        .unwrap_or_else(|| Value::Object(Map::new())),
                }));
                if let Some(result) = call.get("result").filter(|r| !r.is_null()) {
                    let status = str_field(call, "status").unwrap_or_default();
                    let (parts, failed) = result_parts(result);
                    results.push(Part::ToolResult(ToolResult {
                        call_id: id,
                        parts,
                        is_error: failed || matches!(status, "error" | "cancelled"),
                    }));
                }
            }
            let mut head = head(message.id.clone());
            head.model = model;
            let turn = builder.assistant(Some(&message.id), head, parts);
            if let Some(tokens) = obj.get("tokens").and_then(Value::as_object) {
                let cached = count(tokens, "cached");
                let call = CallUsage {
                    input_tokens: count(tokens, "input")
                        .saturating_sub(cached)
                        .saturating_add(count(tokens, "tool")),
                    output_tokens: count(tokens, "output")
                        .saturating_add(count(tokens, "thoughts")),
                    cache_read_tokens: cached,
                    cache_creation_tokens: 0,
                    primary: true,
                    model: None,
                    request_id: None,
                };
                builder.usage(turn, None, call);
            }
            if !results.is_empty() {
                builder.results(head_for_results(&message.id, timestamp), results);
            }
        }
        "error" => {
            let text = content_text(obj.get("content"));
            builder.seal_response();
            builder.assistant(
                None,
                head(message.id.clone()),
                vec![Part::Error { message: text }],
            );
        }
        "info" | "warning" => report.ignored(&format!("{kind} message")),
        other => return Err(format!("message has unknown type {other:?}")),
    }
    Ok(())
}

fn head_for_results(id: &str, timestamp: Option<chrono::DateTime<chrono::Utc>>) -> TurnHead {
    TurnHead::new(format!("{id}:results"), timestamp)
}

/// "**subject**\ndescription", the shape Gemini CLI parsed the thought summary from.
fn thought_text(thought: &Map<String, Value>) -> String {
    let subject = str_field(thought, "subject").unwrap_or_default();
    let description = str_field(thought, "description").unwrap_or_default();
    if subject.is_empty() {
        description.to_owned()
    } else {
        format!("**{subject}**\n{description}")
    }
}

/// Content (`PartListUnion`): a string, one part, or an array of strings and parts.
fn content_parts(content: Option<&Value>, model: Option<&str>) -> Result<Vec<Part>, String> {
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
fn content_text(content: Option<&Value>) -> String {
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

fn inline_image(data: &Value) -> Option<Image> {
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
fn result_parts(result: &Value) -> (Vec<ToolResultPart>, bool) {
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
