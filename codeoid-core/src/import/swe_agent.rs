//! SWE-agent trajectories (`*.traj`) → one imported session.
//!
//! A trajectory is one JSON document. Its `history` is the message list the model saw, so it
//! is the conversation: `system` messages are the system prompt (not a turn), `user` messages
//! (the task, demonstrations flagged `meta.demonstration`, and observations in the classic
//! format) become user turns, `assistant` messages become assistant turns with their text and,
//! in the function-calling format, `tool_calls` as tool calls (canonical id = the OpenAI call
//! id, suffixed `~2`, `~3`… when the trajectory reuses one), and `tool` messages become tool
//! results for their `tool_call_ids`. In the classic
//! format the model wrote its command inside the text; the harness's parsed `action` is kept in
//! `meta.action` instead of inventing a tool call the model never made. When `history` is
//! empty the `trajectory` steps (response, then observation) are used instead.
//!
//! Trajectories have no timestamps and no per-call usage; `info.model_stats` (totals) and the
//! submitted patch go to the session's meta. Turn ids are `history-<index>` (or
//! `trajectory-<index>-response` / `-observation`): the file is written whole, once.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::conversation::{ConversationBuilder, TurnHead};
use super::fields::{str_field, string_field};
use super::jsonl;
use super::report::{At, ImportReport};
use super::session::{ImportedSession, LogFormat};
use crate::canonical::{Part, ToolCall, ToolResult, ToolResultPart};
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
    let mut session = ImportedSession::new(LogFormat::SweAgent, path.to_path_buf(), stem);
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

    let mut builder = ConversationBuilder::new(SOURCE, None, true);
    let mut call_ids = CallIds::default();
    let history = doc.get("history").and_then(Value::as_array);
    match history.filter(|h| !h.is_empty()) {
        Some(history) => {
            for (index, entry) in history.iter().enumerate() {
                report.lines += 1;
                let pointer = format!("/history/{index}");
                let result = match entry.as_object() {
                    Some(obj) => history_entry(
                        &mut builder,
                        &mut call_ids,
                        obj,
                        index,
                        &session,
                        report,
                        path,
                    ),
                    None => Err(format!(
                        "history entry is a JSON {}, not an object",
                        jsonl::kind_of(entry)
                    )),
                };
                if let Err(reason) = result {
                    report.malformed(path, At::Pointer(&pointer), reason);
                }
            }
        }
        None => {
            let steps = doc.get("trajectory").and_then(Value::as_array);
            for (index, step) in steps.into_iter().flatten().enumerate() {
                report.lines += 1;
                match step.as_object() {
                    Some(step) => trajectory_step(&mut builder, step, index),
                    None => report.malformed(
                        path,
                        At::Pointer(&format!("/trajectory/{index}")),
                        format!(
                            "trajectory step is a JSON {}, not an object",
                            jsonl::kind_of(step)
                        ),
                    ),
                }
            }
        }
    }
    session.turns = builder.finish();
    for turn in &mut session.turns {
        if turn.role == crate::canonical::Role::Assistant {
            turn.model.clone_from(&session.model);
        }
    }
    Ok(if session.turns.is_empty() {
        Vec::new()
    } else {
        vec![session]
    })
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

/// Canonical ids of the trajectory's tool calls. Some trajectories reuse an OpenAI call id for
/// a later call (each answered before the next is made); canonical ids are unique within a
/// conversation (translation refuses duplicates, and providers reject them), so a reused id gets
/// a suffix (`call_x~2`) and the results after it answer that call. The original stays the
/// provider id.
#[derive(Default)]
struct CallIds {
    /// Original id → the canonical id of its latest call.
    latest: HashMap<String, String>,
    /// Original id → how many calls used it.
    uses: HashMap<String, u32>,
}

impl CallIds {
    /// The canonical id of a new call with id `original`.
    fn call(&mut self, original: &str) -> String {
        let uses = self.uses.entry(original.to_owned()).or_insert(0);
        *uses += 1;
        let id = if *uses == 1 {
            original.to_owned()
        } else {
            format!("{original}~{uses}")
        };
        self.latest.insert(original.to_owned(), id.clone());
        id
    }

    /// The canonical id of the call a result for `original` answers: its latest.
    fn result(&self, original: &str) -> String {
        self.latest
            .get(original)
            .cloned()
            .unwrap_or_else(|| original.to_owned())
    }
}

fn history_entry(
    builder: &mut ConversationBuilder,
    call_ids: &mut CallIds,
    obj: &Map<String, Value>,
    index: usize,
    session: &ImportedSession,
    report: &mut ImportReport,
    path: &Path,
) -> Result<(), String> {
    let mut head = TurnHead::new(format!("history-{index}"), None);
    let text = content_text(obj.get("content"))?;
    match str_field(obj, "role").unwrap_or_default() {
        "system" => report.ignored("system message"),
        "user" => {
            if obj.get("is_demo").and_then(Value::as_bool) == Some(true) {
                head.meta
                    .insert("demonstration".to_owned(), Value::Bool(true));
            }
            builder.user(head, vec![Part::Text { text }]);
        }
        "assistant" => {
            let mut parts = Vec::new();
            if !text.is_empty() {
                parts.push(Part::Text { text });
            }
            for (i, call) in obj
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let call = call
                    .as_object()
                    .ok_or_else(|| format!("tool call {i} is not an object"))?;
                let function = call.get("function").and_then(Value::as_object);
                let id = string_field(call, "id")
                    .ok_or_else(|| format!("tool call {i} has no string \"id\""))?;
                let name = function
                    .and_then(|f| string_field(f, "name"))
                    .ok_or_else(|| format!("tool call {i} ({id}) has no function name"))?;
                let input = match function.and_then(|f| f.get("arguments")) {
                    Some(Value::String(args)) => serde_json::from_str(args).unwrap_or_else(|_| {
                        report.warn(
                            path,
                            At::Pointer(&format!("/history/{index}")),
                            format!("arguments of call {id} are not JSON; kept as a string"),
                        );
                        Value::String(args.clone())
                    }),
                    Some(other) => other.clone(),
                    None => Value::Object(Map::new()),
                };
                parts.push(Part::ToolCall(ToolCall {
                    id: call_ids.call(&id),
                    provider_id: Some(id),
                    name,
                    input,
                }));
            }
            if let Some(action) = obj.get("action").filter(|a| !a.is_null()) {
                head.meta.insert("action".to_owned(), action.clone());
            }
            head.model.clone_from(&session.model);
            builder.seal_response();
            builder.assistant(None, head, parts);
        }
        "tool" => {
            let ids: Vec<String> = obj
                .get("tool_call_ids")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            if ids.is_empty() {
                return Err("tool message has no \"tool_call_ids\"".to_owned());
            }
            // One observation answers the step; extra ids (parallel calls the agent refused
            // to run) get an empty result rather than a copy of it.
            let mut text = Some(text);
            let parts = ids
                .into_iter()
                .map(|call_id| {
                    Part::ToolResult(ToolResult {
                        call_id: call_ids.result(&call_id),
                        parts: text
                            .take()
                            .map(|text| vec![ToolResultPart::Text { text }])
                            .unwrap_or_default(),
                        is_error: false,
                    })
                })
                .collect();
            builder.results(head, parts);
        }
        other => return Err(format!("history entry has unknown role {other:?}")),
    }
    Ok(())
}

fn trajectory_step(builder: &mut ConversationBuilder, step: &Map<String, Value>, index: usize) {
    let response = str_field(step, "response")
        .or_else(|| str_field(step, "thought"))
        .unwrap_or_default();
    let mut head = TurnHead::new(format!("trajectory-{index}-response"), None);
    if let Some(action) = step.get("action").filter(|a| !a.is_null()) {
        head.meta.insert("action".to_owned(), action.clone());
    }
    builder.assistant(
        None,
        head,
        vec![Part::Text {
            text: response.to_owned(),
        }],
    );
    if let Some(observation) = str_field(step, "observation") {
        builder.user(
            TurnHead::new(format!("trajectory-{index}-observation"), None),
            vec![Part::Text {
                text: observation.to_owned(),
            }],
        );
    }
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
