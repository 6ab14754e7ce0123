//! SWE-agent trajectories (`*.traj`) → one imported session per run.
//!
//! A trajectory is one JSON document. Its `history` is the message list the model saw, so it
//! is the conversation (see `history`): `system` messages are the system prompt (not a turn),
//! `user` messages become user turns, `assistant` messages assistant turns, and tool calls and
//! results come from both formats SWE-agent writes: the function-calling format's `tool_calls`
//! and `tool` messages, and the classic format's parsed `action` (see `action`) with the
//! observation after it. Demonstrations (`is_demo`: an example run on another repository) are
//! flagged `meta.demonstration` and `meta.is_meta`, so they are never the task. When `history`
//! is empty the `trajectory` steps (response, action, observation) are used instead.
//!
//! A retry run (`RetryAgent`) writes its runs under `attempts`, and, once it chose, a copy of
//! the best one at the top level: each attempt is its own session `<stem>#attempt-<i>` (the
//! copy is not imported again; the chosen attempt has `meta.best_attempt`).
//!
//! Trajectories have no timestamps and no per-call usage; `info.model_stats` (totals) and the
//! submitted patch go to the session's meta. Turn ids are `history-<index>` (or
//! `trajectory-<index>-response` / `-observation`): the file is written whole, once.

mod action;
mod history;

use std::path::Path;

use serde_json::{Map, Value};

use self::history::Run;
use super::fields::str_field;
use super::jsonl;
use super::report::{At, ImportReport};
use super::session::{ImportedSession, LogFormat};
use crate::canonical::Role;
use crate::error::{Error, ErrorKind, Result};

const SOURCE: &str = "swe_agent";

/// Reads one SWE-agent trajectory.
pub(crate) fn read(
    path: &Path,
    bytes: &[u8],
    report: &mut ImportReport,
) -> Result<Vec<ImportedSession>> {
    let doc = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(doc)) => doc,
        Ok(other) => {
            return Err(Error::new(
                ErrorKind::Import,
                format!(
                    "cannot import {}: a SWE-agent trajectory is a JSON object, found a JSON {}",
                    path.display(),
                    jsonl::kind_of(&other)
                ),
            ));
        }
        Err(e) => {
            return Err(Error::new(
                ErrorKind::Import,
                format!(
                    "cannot import {}: the trajectory is not valid JSON (line {}, column {}); \
                     the file may be truncated",
                    path.display(),
                    e.line(),
                    e.column()
                ),
            )
            .with_source(e));
        }
    };
    let stem = path
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.strip_suffix(".traj").unwrap_or(n).to_owned())
        .unwrap_or_default();
    let Some(attempts) = doc.get("attempts").and_then(Value::as_array) else {
        return Ok(run(path, &doc, stem, "", report).into_iter().collect());
    };
    let best = doc
        .get("info")
        .and_then(|i| i.get("best_attempt_idx"))
        .and_then(Value::as_u64);
    let mut sessions = Vec::new();
    for (i, attempt) in attempts.iter().enumerate() {
        let pointer = format!("/attempts/{i}");
        let Some(attempt) = attempt.as_object() else {
            report.malformed(
                path,
                At::Pointer(&pointer),
                format!(
                    "attempt is a JSON {}, not an object",
                    jsonl::kind_of(attempt)
                ),
            );
            continue;
        };
        let id = format!("{stem}#attempt-{i}");
        if let Some(mut session) = run(path, attempt, id, &pointer, report) {
            session.meta.insert("attempt".to_owned(), Value::from(i));
            session
                .meta
                .insert("attempts".to_owned(), Value::from(attempts.len()));
            if best == Some(i as u64) {
                session
                    .meta
                    .insert("best_attempt".to_owned(), Value::Bool(true));
            }
            sessions.push(session);
        }
    }
    Ok(sessions)
}

/// One run (a whole trajectory, or one attempt of a retry run) → its session, when it has turns.
/// An attempt's model is its own replay config's: the retry run's top-level one is the best
/// attempt's, which may have run another model.
fn run(
    path: &Path,
    doc: &Map<String, Value>,
    session_id: String,
    pointer: &str,
    report: &mut ImportReport,
) -> Option<ImportedSession> {
    let mut session = ImportedSession::new(LogFormat::SweAgent, path.to_path_buf(), session_id);
    session.model = replay_model(doc.get("replay_config"));
    if let Some(info) = doc.get("info").and_then(Value::as_object) {
        for key in ["exit_status", "model_stats", "submission"] {
            if let Some(value) = info.get(key).filter(|v| !v.is_null()) {
                session.meta.insert(key.to_owned(), value.clone());
            }
        }
    }
    if let Some(env) = doc.get("environment").filter(|v| !v.is_null()) {
        session.meta.insert("environment".to_owned(), env.clone());
    }
    let steps = doc.get("trajectory").and_then(Value::as_array);
    let mut run = Run::new(path, pointer, session.model.clone());
    match doc
        .get("history")
        .and_then(Value::as_array)
        .filter(|h| !h.is_empty())
    {
        Some(history) => {
            for (index, entry) in history.iter().enumerate() {
                run.history_entry(entry, index, report);
            }
            run.last_observation(steps.map(Vec::as_slice).unwrap_or_default());
        }
        None => {
            for (index, step) in steps.into_iter().flatten().enumerate() {
                run.trajectory_step(step, index, report);
            }
        }
    }
    session.turns = run.finish();
    for turn in &mut session.turns {
        if turn.role == Role::Assistant {
            turn.model.clone_from(&session.model);
        }
    }
    (!session.turns.is_empty()).then_some(session)
}

/// The model name of a replay config (an object, or the same object serialized as a string).
fn replay_model(config: Option<&Value>) -> Option<String> {
    let parsed;
    let config = match config? {
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            &parsed
        }
        other => other,
    };
    let model = config.get("agent")?.get("model")?;
    model
        .get("name")
        .or_else(|| model.get("model_name"))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
}

/// A message's content: a string, or a list of `{type: "text", text}` items.
fn content_text(content: Option<&Value>) -> Result<String, String> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(items)) => {
            let mut texts = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) => texts.push(s.as_str()),
                    Value::Object(obj) => texts.push(str_field(obj, "text").unwrap_or_default()),
                    other => {
                        return Err(format!(
                            "content item is a JSON {}, not text",
                            jsonl::kind_of(other)
                        ));
                    }
                }
            }
            Ok(texts.join("\n"))
        }
        Some(other) => Err(format!(
            "content is a JSON {}, not text",
            jsonl::kind_of(other)
        )),
    }
}
