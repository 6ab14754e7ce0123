//! One SWE-agent run's `history` (or `trajectory` steps) → canonical turns.
//!
//! - `system`: the system prompt, not a turn (ignored and counted).
//! - `user`: a user turn, unless it is the observation of the classic-format action just before
//!   it, which is that call's result; `is_demo` turns are `meta.demonstration` and
//!   `meta.is_meta` (context, never the task).
//! - `assistant`: its text; the function-calling format's `tool_calls` (canonical id = the OpenAI
//!   call id, suffixed `~2`, `~3`… when the run reuses one); in the classic format (no
//!   `tool_calls`, an `action`), the call the action stands for (see `action`), id
//!   `history-<index>-action`. The action is kept in `meta.action` either way.
//! - `tool`: results for its `tool_call_ids` (the content goes to the first; further ids get an
//!   empty result).
//!
//! The classic format's last action (usually `submit`) has no observation in `history`; the last
//! `trajectory` step holds it, and is its result when that step's action is the same.
//! Demonstrations are never paired: their actions stay text, so no call of another repository's
//! run becomes a tool call of this one.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{SOURCE, action, content_text};
use crate::canonical::{Part, ToolCall, ToolResult, ToolResultPart, Turn};
use crate::import::conversation::{ConversationBuilder, TurnHead};
use crate::import::fields::{str_field, string_field};
use crate::import::jsonl;
use crate::import::report::{At, ImportReport};

/// Canonical ids of the run's tool calls. Some trajectories reuse an OpenAI call id for a later
/// call (each answered before the next is made); canonical ids are unique within a conversation
/// (translation refuses duplicates, and providers reject them), so a reused id gets a suffix
/// (`call_x~2`) and the results after it answer that call. The original stays the provider id.
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

/// A classic-format call waiting for its observation.
struct Pending {
    id: String,
    action: String,
}

/// The conversation of one run, as it is read.
pub(super) struct Run<'a> {
    path: &'a Path,
    pointer: &'a str,
    model: Option<String>,
    builder: ConversationBuilder,
    call_ids: CallIds,
    pending: Option<Pending>,
}

impl<'a> Run<'a> {
    /// A run read from `path`, its records under the JSON pointer `pointer` (`""` for a whole
    /// trajectory, `/attempts/<i>` for an attempt).
    pub fn new(path: &'a Path, pointer: &'a str, model: Option<String>) -> Self {
        Run {
            path,
            pointer,
            model,
            builder: ConversationBuilder::new(SOURCE, None, true),
            call_ids: CallIds::default(),
            pending: None,
        }
    }

    pub fn finish(self) -> Vec<Turn> {
        self.builder.finish()
    }

    /// Adds `history[index]`, reporting it when it is malformed.
    pub fn history_entry(&mut self, entry: &Value, index: usize, report: &mut ImportReport) {
        report.lines += 1;
        let result = match entry.as_object() {
            Some(obj) => self.entry(obj, index, report),
            None => Err(format!(
                "history entry is a JSON {}, not an object",
                jsonl::kind_of(entry)
            )),
        };
        if let Err(reason) = result {
            let pointer = format!("{}/history/{index}", self.pointer);
            report.malformed(self.path, At::Pointer(&pointer), reason);
        }
    }

    fn entry(
        &mut self,
        obj: &Map<String, Value>,
        index: usize,
        report: &mut ImportReport,
    ) -> Result<(), String> {
        let mut head = TurnHead::new(format!("history-{index}"), None);
        let text = content_text(obj.get("content"))?;
        let demo = obj.get("is_demo").and_then(Value::as_bool) == Some(true);
        if demo {
            head.meta
                .insert("demonstration".to_owned(), Value::Bool(true));
            head.meta.insert("is_meta".to_owned(), Value::Bool(true));
        }
        let pending = self.pending.take();
        match str_field(obj, "role").unwrap_or_default() {
            "system" => report.ignored("system message"),
            "user" => match pending.filter(|_| !demo) {
                // The observation of the action before it.
                Some(call) => {
                    let result = Part::ToolResult(ToolResult {
                        call_id: call.id,
                        parts: vec![ToolResultPart::Text { text }],
                        is_error: false,
                    });
                    self.builder.results(head, vec![result]);
                }
                None => {
                    self.builder.user(head, vec![Part::Text { text }]);
                }
            },
            "assistant" => {
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(Part::Text { text });
                }
                let calls = obj.get("tool_calls").and_then(Value::as_array);
                for (i, call) in calls.into_iter().flatten().enumerate() {
                    parts.push(self.function_call(call, i, index, report)?);
                }
                let action = obj.get("action").filter(|a| !a.is_null());
                let classic = action
                    .and_then(Value::as_str)
                    .filter(|a| !a.trim().is_empty() && !demo && calls.is_none_or(Vec::is_empty));
                if let Some(action) = classic {
                    let id = format!("history-{index}-action");
                    parts.push(classic_call(&id, action));
                    self.pending = Some(Pending {
                        id,
                        action: action.to_owned(),
                    });
                }
                if let Some(action) = action {
                    head.meta.insert("action".to_owned(), action.clone());
                }
                head.model.clone_from(&self.model);
                self.builder.seal_response();
                self.builder.assistant(None, head, parts);
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
                            call_id: self.call_ids.result(&call_id),
                            parts: text
                                .take()
                                .map(|text| vec![ToolResultPart::Text { text }])
                                .unwrap_or_default(),
                            is_error: false,
                        })
                    })
                    .collect();
                self.builder.results(head, parts);
            }
            other => return Err(format!("history entry has unknown role {other:?}")),
        }
        Ok(())
    }

    /// A function-calling `tool_calls[i]` of `history[index]`.
    fn function_call(
        &mut self,
        call: &Value,
        i: usize,
        index: usize,
        report: &mut ImportReport,
    ) -> Result<Part, String> {
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
                let pointer = format!("{}/history/{index}", self.pointer);
                report.warn(
                    self.path,
                    At::Pointer(&pointer),
                    format!("arguments of call {id} are not JSON; kept as a string"),
                );
                Value::String(args.clone())
            }),
            Some(other) => other.clone(),
            None => Value::Object(Map::new()),
        };
        Ok(Part::ToolCall(ToolCall {
            id: self.call_ids.call(&id),
            provider_id: Some(id),
            name,
            input,
        }))
    }

    /// Answers the classic call still waiting after the whole history with the last trajectory
    /// step's observation, when that step ran the same action.
    pub fn last_observation(&mut self, steps: &[Value]) {
        let Some(call) = self.pending.take() else {
            return;
        };
        let Some(last) = steps.last().and_then(Value::as_object) else {
            return;
        };
        let same = str_field(last, "action").is_some_and(|a| a.trim() == call.action.trim());
        let Some(observation) = str_field(last, "observation").filter(|_| same) else {
            return;
        };
        let result = Part::ToolResult(ToolResult {
            call_id: call.id,
            parts: vec![ToolResultPart::Text {
                text: observation.to_owned(),
            }],
            is_error: false,
        });
        let head = TurnHead::new(format!("trajectory-{}-observation", steps.len() - 1), None);
        self.builder.results(head, vec![result]);
    }

    /// Adds `trajectory[index]`: its response, the call its action stands for, its observation.
    pub fn trajectory_step(&mut self, step: &Value, index: usize, report: &mut ImportReport) {
        report.lines += 1;
        let Some(step) = step.as_object() else {
            let pointer = format!("{}/trajectory/{index}", self.pointer);
            report.malformed(
                self.path,
                At::Pointer(&pointer),
                format!(
                    "trajectory step is a JSON {}, not an object",
                    jsonl::kind_of(step)
                ),
            );
            return;
        };
        let response = str_field(step, "response")
            .or_else(|| str_field(step, "thought"))
            .unwrap_or_default();
        let mut head = TurnHead::new(format!("trajectory-{index}-response"), None);
        head.model.clone_from(&self.model);
        let mut parts = vec![Part::Text {
            text: response.to_owned(),
        }];
        let action = step.get("action").filter(|a| !a.is_null());
        let call = action
            .and_then(Value::as_str)
            .filter(|a| !a.trim().is_empty())
            .map(|a| {
                let id = format!("trajectory-{index}-action");
                parts.push(classic_call(&id, a));
                id
            });
        if let Some(action) = action {
            head.meta.insert("action".to_owned(), action.clone());
        }
        self.builder.seal_response();
        self.builder.assistant(None, head, parts);
        if let Some(observation) = str_field(step, "observation") {
            let head = TurnHead::new(format!("trajectory-{index}-observation"), None);
            let text = observation.to_owned();
            match call {
                Some(call_id) => {
                    let result = Part::ToolResult(ToolResult {
                        call_id,
                        parts: vec![ToolResultPart::Text { text }],
                        is_error: false,
                    });
                    self.builder.results(head, vec![result]);
                }
                None => {
                    self.builder.user(head, vec![Part::Text { text }]);
                }
            }
        }
    }
}

/// The tool call a classic action stands for.
fn classic_call(id: &str, action: &str) -> Part {
    let (name, input) = action::call(action);
    Part::ToolCall(ToolCall {
        id: id.to_owned(),
        provider_id: None,
        name,
        input,
    })
}
