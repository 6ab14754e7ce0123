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
//!
//! This module turns the final message list into turns; `replay` produces that list from
//! either file form and `parts` converts Gemini content.

mod parts;
mod replay;

use std::path::Path;

use serde_json::{Map, Value};

use self::parts::{content_parts, content_text, result_parts, thought_text};
use self::replay::{Message, document_messages, looks_like_lines, replay_lines};
use super::conversation::{ConversationBuilder, TurnHead};
use super::fields::{self, Stamp, count, str_field, string_field};
use super::jsonl;
use super::report::{At, ImportReport};
use super::session::{ImportedSession, LogFormat, SessionKind};
use crate::canonical::{CallUsage, Part, Thinking, ToolCall, ToolResult};
use crate::error::{Error, ErrorKind, Result};

const SOURCE: &str = "gemini_cli";
const PROVIDER: &str = "gemini";

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
                let status = str_field(call, "status").unwrap_or_default();
                let ended = matches!(status, "error" | "cancelled");
                match call.get("result").filter(|r| !r.is_null()) {
                    Some(result) => {
                        let (parts, failed) = result_parts(result);
                        results.push(Part::ToolResult(ToolResult {
                            call_id: id,
                            parts,
                            is_error: failed || ended,
                        }));
                    }
                    // Refused or cancelled before it produced anything: its failure is its
                    // result (a call still running has none yet and stays pending).
                    None if ended => results.push(Part::ToolResult(ToolResult {
                        call_id: id,
                        parts: Vec::new(),
                        is_error: true,
                    })),
                    None => {}
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
