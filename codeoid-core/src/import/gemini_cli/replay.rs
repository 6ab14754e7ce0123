//! Turning a Gemini CLI chat file into its final message list: the `.json` document's
//! `messages`, or the `.jsonl` patch log replayed as Gemini CLI replays it (later records with
//! a known id replace earlier ones in place, `$rewindTo` truncates, `$set` merges metadata and
//! a `$set.messages` list replaces everything).
//!
//! Invariant: every replaced or removed record is counted in `superseded_records`, every
//! record that is not a message, patch or metadata is reported as malformed; the messages
//! come out in conversation order with their source location.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::import::fields::string_field;
use crate::import::jsonl;
use crate::import::report::{At, ImportReport};

/// A message record and where it came from.
pub(super) struct Message {
    pub id: String,
    pub location: String,
    pub line: Option<u64>,
    pub obj: Map<String, Value>,
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
pub(super) fn replay_lines(
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
