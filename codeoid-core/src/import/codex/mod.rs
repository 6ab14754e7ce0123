//! Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`) → one imported session.
//!
//! Lines are `{timestamp, type, payload}` envelopes (older rollouts wrote a bare `{id,
//! timestamp, instructions}` first line and bare response items; both are read):
//! - `session_meta` gives the session id, cwd, provider and CLI version; `turn_context` the
//!   current model;
//! - `response_item`s are the conversation the model saw: user/assistant `message`s,
//!   `reasoning` (summary or content text; `encrypted_content` kept as an `openai` signature),
//!   `function_call` / `custom_tool_call` / `local_shell_call` (canonical id = `call_id`) and
//!   their `*_output`s. `developer`/`system` messages are instructions, not turns;
//! - `compacted` becomes a user turn flagged `meta.compaction_summary`;
//! - `event_msg`s mostly duplicate response items and are ignored, except `token_count`
//!   (usage) and `turn_aborted` / `error` (an error part); `exec_command_end` and
//!   `patch_apply_end` say which calls failed (see `outcome`, which also reads the outputs);
//! - a response item of any other type (`web_search_call`, `image_generation_call`,
//!   `ghost_snapshot`...) is kept verbatim in `meta.unsupported_parts` of the response's
//!   assistant turn.
//!
//! Usage: `token_count` totals are cumulative and are sometimes written twice. Each new total
//! minus the previous one is one usage entry, attached to the latest assistant turn; a total
//! equal to the previous is a repeat and is merged (counted in the report), never added. OpenAI
//! counts cached tokens inside `input_tokens`, so the entry's `input_tokens` is the uncached
//! remainder and `cache_read_tokens` the cached part. A `token_count` also ends the response:
//! later assistant items start a new turn.
//!
//! Turn ids are `line-<n>` of the turn's first line (rollouts are append-only).
//!
//! This module walks the lines and assembles turns; payload → part conversion lives in
//! `items`, call outcomes in `outcome`, cumulative token accounting in `tokens`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

mod items;
mod outcome;
mod tokens;

use self::items::{is_harness_context, message_parts, output_parts, reasoning_text};
use self::tokens::{Count, Ledger};
use super::conversation::{ConversationBuilder, TurnHead};
use super::fields::{self, Stamp, str_field, string_field};
use super::jsonl;
use super::report::{At, ImportReport};
use super::session::{ImportedSession, LogFormat, SessionKind};
use crate::canonical::{CallUsage, Part, Signature, Thinking, ToolCall, ToolResult};

const SOURCE: &str = "codex";
/// Every assistant item of one response shares this key; sealing ends the response.
const RESPONSE: &str = "response";

struct Reader<'a> {
    path: &'a Path,
    builder: ConversationBuilder,
    model: Option<String>,
    ledger: Ledger,
    /// `call_id` → failed, from the rollout's command and patch events.
    outcomes: HashMap<String, bool>,
}

/// Reads one Codex rollout.
pub(crate) fn read(path: &Path, bytes: &[u8], report: &mut ImportReport) -> Vec<ImportedSession> {
    let mut records = Vec::new();
    for line in jsonl::lines(bytes) {
        report.lines += 1;
        match line.text.and_then(jsonl::object) {
            Ok(obj) => records.push((line.number, obj)),
            Err(reason) => report.malformed(path, At::Line(line.number), reason),
        }
    }

    let meta_payload = records
        .iter()
        .find_map(|(_, obj)| match str_field(obj, "type") {
            Some("session_meta") => obj.get("payload").and_then(Value::as_object).cloned(),
            None if obj.contains_key("id") && obj.contains_key("instructions") => Some(obj.clone()),
            _ => None,
        });
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut session = ImportedSession::new(LogFormat::Codex, path.to_path_buf(), stem);
    let mut primary = true;
    if let Some(meta) = &meta_payload {
        describe(&mut session, meta);
        if let Some(parent) = meta.get("source").and_then(subagent_parent) {
            primary = false;
            session.kind = SessionKind::Subagent;
            session.parent_session_id = parent;
        }
    }
    let provider = session
        .provider
        .get_or_insert_with(|| "openai".to_owned())
        .clone();
    let mut reader = Reader {
        path,
        builder: ConversationBuilder::new(SOURCE, Some(provider), primary),
        model: None,
        ledger: Ledger::default(),
        outcomes: outcome::event_outcomes(&records),
    };
    for (number, obj) in records {
        reader.record(obj, number, report, &mut session);
    }
    session.turns = reader.builder.finish();
    session.fill_from_turns();
    if session.turns.is_empty() {
        Vec::new()
    } else {
        vec![session]
    }
}

/// Session facts from the `session_meta` payload (or a legacy first line).
fn describe(session: &mut ImportedSession, meta: &Map<String, Value>) {
    if let Some(id) = string_field(meta, "id") {
        session.session_id = id;
    }
    session.cwd = string_field(meta, "cwd").map(PathBuf::from);
    session.provider = string_field(meta, "model_provider");
    if let Stamp::Valid(t) = fields::timestamp(meta, "timestamp") {
        session.started_at = Some(t);
    }
    for (from, to) in [
        ("cli_version", "version"),
        ("originator", "originator"),
        ("source", "source"),
        ("git", "git"),
    ] {
        if let Some(value) = meta.get(from).filter(|v| !v.is_null()) {
            session.meta.insert(to.to_owned(), value.clone());
        }
    }
}

/// `Some(parent id if any)` when `source` marks a subagent (`{"subagent": ...}`).
fn subagent_parent(source: &Value) -> Option<Option<String>> {
    let sub = source.as_object()?.get("subagent")?;
    fn find(v: &Value) -> Option<String> {
        match v {
            Value::Object(map) => map.iter().find_map(|(k, v)| match v {
                Value::String(s) if k.starts_with("parent_") && k.ends_with("_id") => {
                    Some(s.clone())
                }
                other => find(other),
            }),
            _ => None,
        }
    }
    Some(find(sub))
}

impl Reader<'_> {
    fn record(
        &mut self,
        obj: Map<String, Value>,
        number: u64,
        report: &mut ImportReport,
        session: &mut ImportedSession,
    ) {
        let at = At::Line(number);
        let timestamp = match fields::timestamp(&obj, "timestamp") {
            Stamp::Valid(t) => Some(t),
            Stamp::Missing => None,
            Stamp::Invalid(why) => {
                report.warn(self.path, at, why);
                None
            }
        };
        let kind = str_field(&obj, "type").map(str::to_owned);
        let payload = match obj.get("payload") {
            Some(Value::Object(p)) => Some(p.clone()),
            Some(other) => {
                report.malformed(
                    self.path,
                    at,
                    format!(
                        "\"payload\" is a JSON {}, not an object",
                        jsonl::kind_of(other)
                    ),
                );
                return;
            }
            None => None,
        };
        let head = || TurnHead::new(format!("line-{number}"), timestamp);
        let result = match (kind.as_deref(), payload) {
            (Some("response_item"), Some(item)) => self.item(item, head(), report),
            (Some("event_msg"), Some(event)) => {
                self.event(&event, head(), report);
                Ok(())
            }
            (Some("compacted"), Some(payload)) => {
                match str_field(&payload, "message").filter(|m| !m.is_empty()) {
                    Some(text) => {
                        let mut head = head();
                        head.meta
                            .insert("compaction_summary".to_owned(), Value::Bool(true));
                        self.builder.user(
                            head,
                            vec![Part::Text {
                                text: text.to_owned(),
                            }],
                        );
                    }
                    None => report.ignored("compacted"),
                }
                Ok(())
            }
            (Some("turn_context"), Some(ctx)) => {
                if let Some(model) = string_field(&ctx, "model") {
                    self.model = Some(model);
                }
                if session.cwd.is_none() {
                    session.cwd = string_field(&ctx, "cwd").map(PathBuf::from);
                }
                report.ignored("turn_context");
                Ok(())
            }
            (Some("session_meta"), Some(_)) => {
                report.ignored("session_meta");
                Ok(())
            }
            (Some(t), Some(_)) => {
                report.ignored(t);
                Ok(())
            }
            (Some(t), None) if is_bare_item(t) => self.item(obj, head(), report),
            (None, None) if obj.contains_key("id") && obj.contains_key("instructions") => {
                report.ignored("session_meta");
                Ok(())
            }
            (None, None) if obj.contains_key("record_type") => {
                report.ignored("record_type");
                Ok(())
            }
            (Some(t), None) => Err(format!("{t:?} line has no \"payload\" object")),
            (None, _) => Err("line has no string \"type\"".to_owned()),
        };
        if let Err(reason) = result {
            report.malformed(self.path, at, reason);
        }
    }

    fn item(
        &mut self,
        item: Map<String, Value>,
        mut head: TurnHead,
        report: &mut ImportReport,
    ) -> Result<(), String> {
        let kind = str_field(&item, "type").unwrap_or_default().to_owned();
        match kind.as_str() {
            "message" => {
                let role = str_field(&item, "role").unwrap_or_default();
                let (parts, unsupported) = message_parts(item.get("content"))?;
                if !unsupported.is_empty() {
                    report.unsupported_parts += unsupported.len() as u64;
                    head.meta
                        .insert("unsupported_parts".to_owned(), Value::Array(unsupported));
                }
                match role {
                    "user" => {
                        if is_harness_context(&parts) {
                            head.meta.insert("is_meta".to_owned(), Value::Bool(true));
                        }
                        self.builder.user(head, parts);
                    }
                    "assistant" => {
                        head.model.clone_from(&self.model);
                        self.builder.assistant(Some(RESPONSE), head, parts);
                    }
                    "developer" | "system" => report.ignored(&format!("{role} message")),
                    other => return Err(format!("message with unknown role {other:?}")),
                }
            }
            "reasoning" => {
                let text = reasoning_text(&item);
                let signature = string_field(&item, "encrypted_content").map(|value| Signature {
                    provider: "openai".to_owned(),
                    model: self.model.clone(),
                    value,
                });
                head.model.clone_from(&self.model);
                let part = Part::Thinking(Thinking {
                    text,
                    signature,
                    redacted: false,
                });
                self.builder.assistant(Some(RESPONSE), head, vec![part]);
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let id = string_field(&item, "call_id")
                    .or_else(|| string_field(&item, "id"))
                    .ok_or_else(|| format!("{kind} has no \"call_id\""))?;
                let (name, input) = match kind.as_str() {
                    "function_call" => {
                        let args = str_field(&item, "arguments").unwrap_or("{}");
                        let input = serde_json::from_str(args).unwrap_or_else(|_| {
                            report.warn(
                                self.path,
                                At::Line(line_of(&head)),
                                format!("arguments of call {id} are not JSON; kept as a string"),
                            );
                            Value::String(args.to_owned())
                        });
                        (string_field(&item, "name"), input)
                    }
                    "custom_tool_call" => (
                        string_field(&item, "name"),
                        Value::String(str_field(&item, "input").unwrap_or_default().to_owned()),
                    ),
                    _ => (
                        Some("local_shell".to_owned()),
                        item.get("action").cloned().unwrap_or(Value::Null),
                    ),
                };
                let name = name.ok_or_else(|| format!("{kind} {id} has no \"name\""))?;
                head.model.clone_from(&self.model);
                let part = Part::ToolCall(ToolCall {
                    provider_id: Some(id.clone()),
                    id,
                    name,
                    input,
                });
                self.builder.assistant(Some(RESPONSE), head, vec![part]);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let call_id = string_field(&item, "call_id")
                    .ok_or_else(|| format!("{kind} has no \"call_id\""))?;
                let (parts, said) = output_parts(item.get("output"))?;
                let is_error = match self.outcomes.get(&call_id) {
                    Some(&failed) => failed,
                    None => said.unwrap_or_else(|| outcome::text_says_failed(&parts)),
                };
                self.builder.results(
                    head,
                    vec![Part::ToolResult(ToolResult {
                        call_id,
                        parts,
                        is_error,
                    })],
                );
                self.builder.seal_response();
            }
            _ => {
                // No canonical part (a web search, an image generation, a ghost snapshot): kept
                // verbatim on the response it belongs to.
                report.unsupported_parts += 1;
                head.model.clone_from(&self.model);
                head.meta.insert(
                    "unsupported_parts".to_owned(),
                    Value::Array(vec![Value::Object(item)]),
                );
                self.builder.assistant(Some(RESPONSE), head, Vec::new());
            }
        }
        Ok(())
    }

    fn event(&mut self, event: &Map<String, Value>, head: TurnHead, report: &mut ImportReport) {
        let kind = str_field(event, "type").unwrap_or_default();
        match kind {
            "token_count" => self.token_count(event, &head, report),
            "turn_aborted" | "error" => {
                let message = match kind {
                    "error" => str_field(event, "message").unwrap_or("error").to_owned(),
                    _ => format!(
                        "turn aborted: {}",
                        str_field(event, "reason").unwrap_or("unknown reason")
                    ),
                };
                let part = Part::Error { message };
                match self.builder.assistant_at_tail() {
                    Some(index) => {
                        if let Some(turn) = self.builder.turn_mut(index) {
                            turn.parts.push(part);
                        }
                    }
                    None => {
                        self.builder.seal_response();
                        self.builder.assistant(Some(RESPONSE), head, vec![part]);
                    }
                }
                self.builder.seal_response();
            }
            other => report.ignored(&format!("event_msg {other}")),
        }
    }

    fn token_count(
        &mut self,
        event: &Map<String, Value>,
        head: &TurnHead,
        report: &mut ImportReport,
    ) {
        let at = At::Line(line_of(head));
        let delta = match self.ledger.record(event) {
            Count::Delta(delta) => delta,
            Count::Reset(delta) => {
                report.warn(
                    self.path,
                    at,
                    "cumulative token totals went down; counted the last call's usage instead",
                );
                delta
            }
            Count::Repeat => {
                report.repeated_usage_merged += 1;
                return;
            }
            Count::Empty => {
                report.ignored("event_msg token_count without usage");
                return;
            }
        };
        let Some(index) = self.builder.last_assistant() else {
            report.warn(
                self.path,
                at,
                "token count before any assistant turn; not attributed",
            );
            return;
        };
        let call = CallUsage {
            input_tokens: delta.input.saturating_sub(delta.cached),
            output_tokens: delta.output,
            cache_read_tokens: delta.cached.min(delta.input),
            cache_creation_tokens: 0,
            primary: true,
            model: None,
            request_id: None,
        };
        self.builder.usage(index, None, call);
        self.builder.seal_response();
    }
}

/// The line number a head was built for (heads are `line-<n>`).
fn line_of(head: &TurnHead) -> u64 {
    head.id
        .strip_prefix("line-")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn is_bare_item(kind: &str) -> bool {
    matches!(
        kind,
        "message"
            | "reasoning"
            | "function_call"
            | "function_call_output"
            | "custom_tool_call"
            | "custom_tool_call_output"
            | "local_shell_call"
    )
}
