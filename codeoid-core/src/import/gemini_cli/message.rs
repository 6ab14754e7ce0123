//! One replayed Gemini CLI message → canonical turns, keeping every tool call once and every
//! result once.
//!
//! A `gemini` message is an assistant turn: its thought summaries (unsigned thinking), its
//! content (text, thinking, signatures, images, `functionCall` parts) and its `toolCalls`; the
//! calls' results follow in a user turn `<id>:results`. A `user` message is a prompt, or, when
//! its content holds `functionResponse` parts, results for the calls they answer (by id, else
//! the latest unanswered call of that name). Gemini CLI's history rewrites repeat calls and
//! results it already recorded: a `functionCall` part whose call is in the message's
//! `toolCalls` (same id, or same name and arguments when it has none) or was made before, and a
//! result for a call already answered, are dropped; a message left with nothing counts as
//! superseded. Canonical call ids are therefore unique in the session, as fork and translation
//! require.
//!
//! A message read only from a `$set.messages` rewrite is text Gemini CLI wrote itself: a user
//! message opening with `<session_context>` (the environment it injects) is `meta.is_meta`,
//! any other user prose (a compression's `<state_snapshot>` summary) `meta.compaction_summary`.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use super::parts::{Content, content, content_text, result_parts, thought_text};
use super::replay::Message;
use crate::canonical::{CallUsage, Part, Thinking, ToolCall, ToolResult};
use crate::import::conversation::{ConversationBuilder, TurnHead};
use crate::import::fields::{self, Stamp, count, str_field, string_field};
use crate::import::report::{At, ImportReport};

/// The calls made so far and which of them have a result.
#[derive(Default)]
pub(super) struct Calls {
    /// `(canonical id, name)` of every call, in order.
    made: Vec<(String, String)>,
    ids: HashSet<String>,
    answered: HashSet<String>,
}

impl Calls {
    fn make(&mut self, id: &str, name: &str) -> bool {
        if !self.ids.insert(id.to_owned()) {
            return false;
        }
        self.made.push((id.to_owned(), name.to_owned()));
        true
    }

    /// The call a response answers: its id, else the latest unanswered call of its name.
    fn answering(&self, id: Option<&str>, name: Option<&str>) -> Option<String> {
        if let Some(id) = id {
            return Some(id.to_owned());
        }
        let name = name?;
        self.made
            .iter()
            .rev()
            .find(|(id, n)| n == name && !self.answered.contains(id))
            .map(|(id, _)| id.clone())
    }

    /// Records a result for `id`; `false` when it already had one.
    fn answer(&mut self, id: &str) -> bool {
        self.answered.insert(id.to_owned())
    }
}

/// Adds one message to the conversation.
pub(super) fn add_message(
    builder: &mut ConversationBuilder,
    calls: &mut Calls,
    message: &Message,
    report: &mut ImportReport,
    path: &Path,
) -> Result<(), String> {
    let obj = &message.obj;
    let at = message
        .line
        .map_or(At::Pointer(&message.location), At::Line);
    let timestamp = match fields::timestamp(obj, "timestamp") {
        Stamp::Valid(t) => Some(t),
        Stamp::Missing => None,
        Stamp::Invalid(why) => {
            report.warn(path, at, why);
            None
        }
    };
    let mut head = TurnHead::new(message.id.clone(), timestamp);
    let kind = str_field(obj, "type").unwrap_or_default();
    match kind {
        "user" => {
            let Content {
                parts,
                responses,
                unsupported,
            } = content(obj.get("content"), &message.id, false, None)?;
            keep_unsupported(&mut head.meta, unsupported, report);
            if responses.is_empty() {
                if message.from_set {
                    let flag = if is_session_context(&parts) {
                        "is_meta"
                    } else {
                        "compaction_summary"
                    };
                    head.meta.insert(flag.to_owned(), Value::Bool(true));
                }
                builder.user(head, parts);
                return Ok(());
            }
            let mut results = Vec::new();
            for response in responses {
                let call_id =
                    match calls.answering(response.id.as_deref(), response.name.as_deref()) {
                        // Its call already has this result (from `toolCalls`): a repeat.
                        Some(id) if !calls.answer(&id) => continue,
                        Some(id) => id,
                        // A response to no call made here is kept under its function's name.
                        None => response
                            .name
                            .ok_or("function response names neither a call id nor a name")?,
                    };
                results.push(Part::ToolResult(ToolResult {
                    call_id,
                    parts: response.parts,
                    is_error: response.failed,
                }));
            }
            if results.is_empty() && !head.meta.contains_key("unsupported_parts") {
                // Every result was recorded with its call already.
                report.superseded_records += 1;
            } else {
                builder.results(head, results);
            }
        }
        "gemini" => gemini(builder, calls, message, head, report)?,
        "error" => {
            let text = content_text(obj.get("content"));
            builder.seal_response();
            builder.assistant(None, head, vec![Part::Error { message: text }]);
        }
        "info" | "warning" => report.ignored(&format!("{kind} message")),
        other => return Err(format!("message has unknown type {other:?}")),
    }
    Ok(())
}

/// `true` for the environment Gemini CLI injects as the first user message of a chat.
fn is_session_context(parts: &[Part]) -> bool {
    parts.iter().any(|p| match p {
        Part::Text { text } => text.trim_start().starts_with("<session_context>"),
        _ => false,
    })
}

fn keep_unsupported(meta: &mut Map<String, Value>, parts: Vec<Value>, report: &mut ImportReport) {
    if !parts.is_empty() {
        report.unsupported_parts += parts.len() as u64;
        meta.insert("unsupported_parts".to_owned(), Value::Array(parts));
    }
}

fn gemini(
    builder: &mut ConversationBuilder,
    calls: &mut Calls,
    message: &Message,
    mut head: TurnHead,
    report: &mut ImportReport,
) -> Result<(), String> {
    let obj = &message.obj;
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
    let listed: Vec<&Map<String, Value>> = obj
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .collect();
    let converted = content(obj.get("content"), &message.id, true, model.as_deref())?;
    keep_unsupported(&mut head.meta, converted.unsupported, report);
    for part in converted.parts {
        if let Part::ToolCall(call) = &part {
            let repeated = listed.iter().any(|c| match &call.provider_id {
                Some(id) => str_field(c, "id") == Some(id),
                None => {
                    str_field(c, "name") == Some(&call.name)
                        && c.get("args").unwrap_or(&Value::Null) == &call.input
                }
            });
            // The same call as a `toolCalls` entry (which has its result), or one made before.
            if repeated || !calls.make(&call.id, &call.name) {
                continue;
            }
        }
        parts.push(part);
    }
    let mut results = Vec::new();
    let mut result_unsupported = Vec::new();
    for (i, call) in obj
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let call = call
            .as_object()
            .ok_or_else(|| format!("tool call {i} is not an object"))?;
        let id = string_field(call, "id").unwrap_or_else(|| format!("{}-call-{i}", message.id));
        let name = string_field(call, "name")
            .ok_or_else(|| format!("tool call {i} ({id}) has no \"name\""))?;
        if calls.make(&id, &name) {
            parts.push(Part::ToolCall(ToolCall {
                provider_id: Some(id.clone()),
                id: id.clone(),
                name,
                input: call
                    .get("args")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
            }));
        }
        let status = str_field(call, "status").unwrap_or_default();
        let ended = matches!(status, "error" | "cancelled");
        let (result_parts, is_error) = match call.get("result").filter(|r| !r.is_null()) {
            Some(result) => {
                let (parts, failed, unsupported) = result_parts(result);
                result_unsupported.extend(unsupported);
                (parts, failed || ended)
            }
            // Refused or cancelled before it produced anything: its failure is its result
            // (a call still running has none yet and stays pending).
            None if ended => (Vec::new(), true),
            None => continue,
        };
        if calls.answer(&id) {
            results.push(Part::ToolResult(ToolResult {
                call_id: id,
                parts: result_parts,
                is_error,
            }));
        }
    }
    let timestamp = head.timestamp;
    head.model = model;
    let turn = builder.assistant(Some(&message.id), head, parts);
    if let Some(tokens) = obj.get("tokens").and_then(Value::as_object) {
        let cached = count(tokens, "cached");
        let call = CallUsage {
            input_tokens: count(tokens, "input")
                .saturating_sub(cached)
                .saturating_add(count(tokens, "tool")),
            output_tokens: count(tokens, "output").saturating_add(count(tokens, "thoughts")),
            cache_read_tokens: cached,
            cache_creation_tokens: 0,
            primary: true,
            model: None,
            request_id: None,
        };
        builder.usage(turn, None, call);
    }
    if !results.is_empty() || !result_unsupported.is_empty() {
        let mut head = TurnHead::new(format!("{}:results", message.id), timestamp);
        keep_unsupported(&mut head.meta, result_unsupported, report);
        builder.results(head, results);
    }
    Ok(())
}
