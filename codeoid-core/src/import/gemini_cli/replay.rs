//! Turning a Gemini CLI chat file into its final message list: the `.json` document's
//! `messages`, or the `.jsonl` patch log replayed record by record.
//!
//! The records of a `.jsonl` are the conversation: a record whose `id` was seen before replaces
//! it in place, `$rewindTo` removes a message and everything after it, `$set` merges metadata.
//! A `$set.messages` list is Gemini CLI rewriting its history (chat compression, tool-output
//! masking, the sync when a chat starts or resumes). Gemini CLI itself would load that list
//! instead of the records; here it is applied by id instead: a message it lists that no record
//! wrote (a compression summary, the session context, a turn only an older version recorded
//! there) is added at the end of the messages so far and marked [`Message::from_set`]; its copy
//! of a message already recorded is not applied (it is the same message, often degraded:
//! truncated, masked, its tool calls repeated as parts) and counts as superseded; records after
//! the `$set` go on as before. Neither a record nor a `$set` copy ever replaces a tool output
//! with its masked placeholder (`<tool_output_masked>`): the full output recorded earlier stays.
//!
//! Invariant: every replaced, removed or unapplied record is counted in `superseded_records`,
//! every record that is not a message, patch or metadata is reported as malformed; the messages
//! come out in conversation order with their source location, and a message never moves once
//! added (a file that grew replays to the same list plus new messages, unless a record in the
//! new part replaced or rewound one).

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::import::fields::string_field;
use crate::import::jsonl;
use crate::import::report::{At, ImportReport};

/// What Gemini CLI's tool-output masking puts where a large output was.
const MASKED: &str = "<tool_output_masked>";

/// A message record and where it came from.
pub(super) struct Message {
    pub id: String,
    pub location: String,
    pub line: Option<u64>,
    pub obj: Map<String, Value>,
    /// Read only from a `$set.messages` list: text Gemini CLI put into the history itself (a
    /// compression summary, the session context), never a record of its own.
    pub from_set: bool,
}

/// `true` when the first non-blank line is a complete JSON object on its own.
pub(super) fn looks_like_lines(bytes: &[u8]) -> bool {
    jsonl::lines(bytes)
        .next()
        .is_some_and(|l| l.text.is_ok_and(|t| jsonl::object(t).is_ok()))
}

pub(super) fn document_messages(
    path: &Path,
    list: Vec<Value>,
    report: &mut ImportReport,
) -> Vec<Message> {
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
                    from_set: false,
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

/// The replayed messages, with their ids' positions.
#[derive(Default)]
struct Replay {
    messages: Vec<Message>,
    index_of: HashMap<String, usize>,
}

impl Replay {
    fn record(&mut self, message: Message, report: &mut ImportReport) {
        match self.index_of.get(&message.id) {
            Some(&i) => {
                report.superseded_records += 1;
                let old = std::mem::replace(&mut self.messages[i], message);
                keep_unmasked(&old.obj, &mut self.messages[i].obj);
            }
            None => {
                self.index_of
                    .insert(message.id.clone(), self.messages.len());
                self.messages.push(message);
            }
        }
    }

    fn rewind(&mut self, target: &str, report: &mut ImportReport) {
        let cut = self.index_of.get(target).copied().unwrap_or(0);
        report.superseded_records += (self.messages.len() - cut) as u64;
        self.messages.truncate(cut);
        self.index_of.retain(|_, i| *i < cut);
    }

    /// Applies a `$set.messages` history rewrite by id (see the module docs).
    fn set_messages(
        &mut self,
        path: &Path,
        number: u64,
        list: Vec<Value>,
        report: &mut ImportReport,
    ) {
        for (i, value) in list.into_iter().enumerate() {
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
                    continue;
                }
            };
            let Some(id) = string_field(&obj, "id") else {
                report.malformed(
                    path,
                    At::Line(number),
                    format!("$set message {i} has no string \"id\""),
                );
                continue;
            };
            if self.index_of.contains_key(&id) {
                report.superseded_records += 1;
                continue;
            }
            self.record(
                Message {
                    id,
                    location: format!("line {number} $set/messages/{i}"),
                    line: Some(number),
                    obj,
                    from_set: true,
                },
                report,
            );
        }
    }
}

/// Replays a `.jsonl` chat into its metadata and final message list.
pub(super) fn replay_lines(
    path: &Path,
    bytes: &[u8],
    report: &mut ImportReport,
) -> (Map<String, Value>, Vec<Message>) {
    let mut metadata = Map::new();
    let mut replay = Replay::default();
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
            replay.rewind(&target, report);
            report.ignored("$rewindTo");
        } else if let Some(id) = string_field(&obj, "id") {
            let message = Message {
                id,
                location: format!("line {}", line.number),
                line: Some(line.number),
                obj,
                from_set: false,
            };
            replay.record(message, report);
        } else if let Some(Value::Object(mut patch)) = obj.remove("$set") {
            if let Some(Value::Array(list)) = patch.remove("messages") {
                replay.set_messages(path, line.number, list, report);
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
    (metadata, replay.messages)
}

/// `true` when `value` holds a masked tool output anywhere.
fn is_masked(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains(MASKED),
        Value::Array(items) => items.iter().any(is_masked),
        Value::Object(map) => map.values().any(is_masked),
        _ => false,
    }
}

/// Puts back into `new` (a later version of the message `old`) what masking took out of it:
/// each tool call's `result` and the `content`, where `new` has the placeholder and `old` the
/// output. Everything else of `new` (statuses, results of calls that were running, tokens)
/// stands.
fn keep_unmasked(old: &Map<String, Value>, new: &mut Map<String, Value>) {
    if let (Some(before), Some(after)) = (old.get("content"), new.get_mut("content")) {
        if is_masked(after) && !is_masked(before) {
            *after = before.clone();
        }
    }
    let Some(Value::Array(old_calls)) = old.get("toolCalls") else {
        return;
    };
    let Some(Value::Array(new_calls)) = new.get_mut("toolCalls") else {
        return;
    };
    for call in new_calls.iter_mut().filter_map(Value::as_object_mut) {
        if !call.get("result").is_some_and(is_masked) {
            continue;
        }
        let id = call.get("id").and_then(Value::as_str);
        let earlier = old_calls
            .iter()
            .filter_map(Value::as_object)
            .find(|c| id.is_some() && c.get("id").and_then(Value::as_str) == id)
            .and_then(|c| c.get("result"))
            .filter(|r| !r.is_null() && !is_masked(r));
        if let Some(earlier) = earlier {
            call.insert("result".to_owned(), earlier.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_masked_result_never_replaces_the_full_one() {
        let old = json!({"toolCalls": [{"id": "c1", "result": "full"}, {"id": "c2"}]});
        let mut new = json!({"toolCalls": [
            {"id": "c1", "result": "<tool_output_masked>saved</tool_output_masked>"},
            {"id": "c2", "result": "<tool_output_masked>x</tool_output_masked>", "status": "success"}
        ]});
        keep_unmasked(old.as_object().unwrap(), new.as_object_mut().unwrap());
        assert_eq!(new["toolCalls"][0]["result"], "full");
        // Nothing better was recorded for c2: the placeholder is all there is.
        assert!(is_masked(&new["toolCalls"][1]["result"]));
        assert_eq!(new["toolCalls"][1]["status"], "success");
    }
}
