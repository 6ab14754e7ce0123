//! Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.json` and the newer `.jsonl`,
//! subagents under `chats/<parent session>/`) → one imported session.
//!
//! The `.json` form is one `ConversationRecord` document. The `.jsonl` form is a log of
//! records replayed into the conversation (see `replay`): message records (a record whose `id`
//! was seen before replaces it in place), `$set` lines merging metadata (a `$set.messages`
//! history rewrite applied by id: messages no record wrote are added, the rest kept as
//! recorded), and `$rewindTo` lines removing a message and everything after it. Replaced,
//! removed and unapplied records are counted as superseded.
//!
//! Messages: `user` → user turn (or tool results, for `functionResponse` parts); `gemini` →
//! assistant turn (thought summaries as unsigned thinking, the text, `thoughtSignature`s as
//! empty signed thinking, `toolCalls` as tool calls) followed by a user turn of the calls'
//! results (`<id>:results`); a result is an error when the call's status is
//! `error`/`cancelled` or the function response holds `error`. `error` messages become error
//! parts; `info`/`warning` are UI notices and are ignored. Gemini counts cached tokens inside
//! `input` and thoughts outside `output`, so usage is `input - cached` (+ `tool`) uncached
//! input, `cached` cache reads, `output + thoughts` output.
//!
//! The session's `cwd` is the `directories` entry (or an ancestor of one) whose path hashes to
//! `projectHash` (see `project`); without one the chat names no directory and the caller places
//! it.
//!
//! This module turns the final message list into a session; `replay` produces that list from
//! either file form, `message` converts one message and `parts` Gemini content.

mod message;
mod parts;
mod project;
mod replay;

use self::project::project_root;
pub(crate) use self::project::{root_here, unmatched_root};

use std::path::Path;

use serde_json::{Map, Value};

use self::message::{Calls, add_message};
use self::replay::{Message, document_messages, looks_like_lines, replay_lines};
use super::conversation::ConversationBuilder;
use super::fields::{self, Stamp, str_field, string_field};
use super::jsonl;
use super::report::{At, ImportReport};
use super::session::{ImportedSession, LogFormat, SessionKind};
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
    if let Some(hash) = str_field(metadata, "projectHash") {
        let directories: Vec<&Path> = metadata
            .get("directories")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(Path::new)
            .collect();
        session.cwd = project_root(hash, directories);
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
    let mut calls = Calls::default();
    for message in messages {
        let at = match message.line {
            Some(n) => At::Line(n),
            None => At::Pointer(&message.location),
        };
        if let Err(reason) = add_message(&mut builder, &mut calls, &message, report, path) {
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
