//! The chunker: a stream of canonical turns in, episodes out (DESIGN §1).
//!
//! The chunker is pure and incremental. Its small state (pending tool calls, the current user
//! intent, the prompt awaiting an answer and the assistant text since the previous call) is
//! serializable, so the store can persist it per session in the same transaction as each turn: a
//! call made in turn N and answered in turn N+1 still becomes one episode, across processes.
//!
//! Rules, in the order they bite:
//! - Assistant text is buffered. A tool call turns the buffer into that call's `# Reasoning` and
//!   consumes the pending prompt: the prompt stays the `# User intent` of every call until the next
//!   prompt. Buffered text still there when the exchange closes is the answer: a `user_turn` when
//!   a prompt was waiting for it, an `assistant_turn` otherwise (the final answer after tools).
//! - A tool result closes its call into a `tool_call` episode (status `failed` when `is_error`).
//!   A result whose call is unknown is still stored, as an orphan `tool_call`.
//! - A new user prompt, or [`Chunker::finish`], closes the exchange: calls still pending become
//!   `cancelled` episodes, the buffered answer is flushed and an unanswered prompt is stored with
//!   no answer. Nothing is ever dropped.
//! - `Part::Error` becomes an `error` episode at once. A user turn with
//!   `meta.compaction_summary = true` becomes a `compaction` episode, one with `meta.is_meta =
//!   true` (text the harness injected: environment details, caveats, hook reminders) a `context`
//!   episode; neither is a user intent, ends the exchange or cancels its pending calls.
//! - A rotation seed block in a user text (`<rotation_context>`, which a harness puts into the
//!   first message after a rotation, tool results included, usually first but anywhere) is
//!   codeoid's own text: it stays in the turn but is never a prompt, so it neither ends the
//!   exchange nor becomes the `# User intent` of the calls after it.
//! - Thinking is not put in episodes unless [`ChunkerConfig::include_thinking`] is set; it stays in
//!   the verbatim turns either way.
//! - Turns with `meta.sidechain = true` (a subagent's conversation interleaved in the main log, as
//!   older Claude Code logs do) run in their own lane: a subagent's prompt never cancels the main
//!   conversation's pending calls. A result is matched to its call in either lane.
//!
//! It deliberately does not cap oversize content, make paths relative or estimate tokens: the
//! store does that when it persists episodes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::episode::{
    Episode, EpisodeKind, EpisodeStatus, SUMMARY_MAX_CHARS, episode_id, first_line_summary,
    one_line,
};
use super::layout::{image_placeholder, result_text, tool_call_content};
use super::rotation_seed::without_rotation_seed;
use super::tool_input::{tool_paths, tool_summary};
use super::turn::{Part, Role, ToolResult, Turn};
use crate::error::{Error, ErrorKind, Result};

/// Options that change what goes into episodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkerConfig {
    /// Put thinking text into episodes like assistant text (off by default: thinking stays in the
    /// verbatim turns only).
    pub include_thinking: bool,
}

/// Where a turn sits: the session it belongs to, its stable id, its sequence number and time.
#[derive(Debug, Clone, Copy)]
pub struct TurnPosition<'a> {
    /// The session the turn belongs to (part of every episode id).
    pub session_id: &'a str,
    /// The turn's stable id.
    pub turn_id: &'a str,
    /// The turn's sequence number within the session.
    pub seq: u64,
    /// When the turn happened.
    pub at: DateTime<Utc>,
}

/// The incremental turn → episode state machine. `Default` is a fresh session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chunker {
    /// The primary conversation.
    #[serde(default, skip_serializing_if = "Lane::is_empty")]
    main: Lane,
    /// Sidechain (subagent) turns interleaved in the same log.
    #[serde(default, skip_serializing_if = "Lane::is_empty")]
    sidechain: Lane,
}

/// The state of one conversation thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Lane {
    /// The prompt of the current exchange, carried by every tool call until the next prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    intent: Option<String>,
    /// A prompt no tool call or answer has consumed yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prompt: Option<Buffered>,
    /// Assistant text since the previous tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<Buffered>,
    /// Calls whose results have not arrived, in call order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pending: Vec<PendingCall>,
}

/// Text waiting for the event that decides which episode it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Buffered {
    text: String,
    /// Episode anchor: the turn id and part index where the text started.
    anchor: String,
    /// When the text (last) arrived.
    at: DateTime<Utc>,
    seq: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct PendingCall {
    id: String,
    /// The turn that made the call: with the call id, the episode's anchor, so a call id a
    /// session uses again later (per-response numbering such as `call_0`) is a new episode.
    /// Empty in states saved before it was kept; those anchor on the call id alone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    turn_id: String,
    name: String,
    input: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    intent: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    reasoning: String,
    /// An earlier call of this exchange already carries `intent` (see
    /// [`Episode::repeats_intent`]). Absent from states saved before it was kept: those calls
    /// count as first, and are indexed whole.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    repeats_intent: bool,
    at: DateTime<Utc>,
    seq: u64,
}

/// Why a pending call never got its result.
const CANCELLED_BY_PROMPT: &str = "no result: a new user prompt arrived before the tool returned";
const CANCELLED_BY_FINISH: &str = "no result: the session finished before the tool returned";

impl Chunker {
    /// A chunker for a fresh session.
    pub fn new() -> Chunker {
        Chunker::default()
    }

    /// Restores a chunker from [`Chunker::to_state_json`].
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] when `json` is not a chunker state.
    pub fn from_state_json(json: &str) -> Result<Chunker> {
        serde_json::from_str(json).map_err(|e| {
            Error::new(ErrorKind::Corrupt, "chunker state in the store is unreadable; the store file was changed by something other than codeoid").with_source(e)
        })
    }

    /// The state as compact JSON, for persistence.
    pub fn to_state_json(&self) -> String {
        // A derived Serialize over strings, numbers, times and JSON values cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }

    /// `true` when nothing is pending: no call, no buffered text, no unanswered prompt.
    pub fn is_idle(&self) -> bool {
        self.main.is_idle() && self.sidechain.is_idle()
    }

    /// Ids of the tool calls still waiting for a result.
    pub fn pending_call_ids(&self) -> Vec<&str> {
        self.main
            .pending
            .iter()
            .chain(&self.sidechain.pending)
            .map(|c| c.id.as_str())
            .collect()
    }

    /// Feeds one turn; returns the episodes it completed, in the order they happened.
    pub fn push(
        &mut self,
        turn: &Turn,
        pos: &TurnPosition<'_>,
        config: &ChunkerConfig,
    ) -> Vec<Episode> {
        let mut out = Vec::new();
        let is_sidechain = turn.meta_flag("sidechain");
        let (lane, other) = if is_sidechain {
            (&mut self.sidechain, &mut self.main)
        } else {
            (&mut self.main, &mut self.sidechain)
        };
        match turn.role {
            Role::Assistant => lane.push_assistant(turn, pos, config, &mut out),
            Role::User => lane.push_user(turn, pos, other, &mut out),
        }
        out
    }

    /// Closes the session: pending calls become cancelled episodes and buffered text is flushed.
    /// `pos` is the position of the last recorded turn (its id is not used).
    pub fn finish(&mut self, pos: &TurnPosition<'_>) -> Vec<Episode> {
        let mut out = Vec::new();
        for lane in [&mut self.main, &mut self.sidechain] {
            lane.close_exchange(pos, CANCELLED_BY_FINISH, &mut out);
            lane.intent = None;
        }
        out
    }
}

impl Lane {
    fn is_idle(&self) -> bool {
        self.prompt.is_none() && self.text.is_none() && self.pending.is_empty()
    }

    fn is_empty(&self) -> bool {
        self.is_idle() && self.intent.is_none()
    }

    /// Whether a call made now repeats an intent an earlier call already carries: the prompt
    /// it came from was consumed, and only a call consumes a prompt without closing the
    /// exchange.
    fn intent_repeats(&self) -> bool {
        self.intent.is_some() && self.prompt.is_none()
    }

    fn push_assistant(
        &mut self,
        turn: &Turn,
        pos: &TurnPosition<'_>,
        config: &ChunkerConfig,
        out: &mut Vec<Episode>,
    ) {
        for (index, part) in turn.parts.iter().enumerate() {
            match part {
                Part::Text { text } => self.buffer_text(text, pos, index),
                Part::Thinking(thinking) if config.include_thinking => {
                    self.buffer_text(&thinking.text, pos, index);
                }
                Part::ToolCall(call) => {
                    if self.pending.iter().any(|p| p.id == call.id) {
                        // A repeated call id (a log line written twice) is the same call.
                        continue;
                    }
                    let repeats_intent = self.intent_repeats();
                    // A call answers the pending prompt; the prompt lives on as the intent.
                    self.prompt = None;
                    let reasoning = self.text.take().map(|b| b.text).unwrap_or_default();
                    self.pending.push(PendingCall {
                        id: call.id.clone(),
                        turn_id: pos.turn_id.to_owned(),
                        name: call.name.clone(),
                        input: call.input.clone(),
                        intent: self.intent.clone(),
                        reasoning,
                        repeats_intent,
                        at: pos.at,
                        seq: pos.seq,
                    });
                }
                Part::Error { message } => out.push(error_episode(message, pos, index)),
                _ => {}
            }
        }
    }

    fn push_user(
        &mut self,
        turn: &Turn,
        pos: &TurnPosition<'_>,
        other: &mut Lane,
        out: &mut Vec<Episode>,
    ) {
        let mut prompt: Vec<String> = Vec::new();
        for (index, part) in turn.parts.iter().enumerate() {
            match part {
                Part::ToolResult(result) => out.push(self.resolve(result, pos, index, other)),
                Part::Error { message } => out.push(error_episode(message, pos, index)),
                // A rotation seed is codeoid's own text, kept in the turn, not a prompt.
                Part::Text { text } => {
                    let said = without_rotation_seed(text);
                    if !said.trim().is_empty() {
                        prompt.push(said.into_owned());
                    }
                }
                Part::Image(image) => prompt.push(image_placeholder(image)),
                _ => {}
            }
        }
        if prompt.is_empty() {
            return;
        }
        let text = prompt.join("\n");
        // Harness-written text (a compaction summary, injected context) is kept as its own
        // episode and leaves the exchange as it was.
        let aside = if turn.meta_flag("compaction_summary") {
            Some(("compaction", EpisodeKind::Compaction))
        } else if turn.meta_flag("is_meta") {
            Some(("context", EpisodeKind::Context))
        } else {
            None
        };
        if let Some((anchor, kind)) = aside {
            out.push(Episode {
                id: episode_id(pos.session_id, &format!("{anchor}\0{}", pos.turn_id)),
                kind,
                tool_name: None,
                call_id: None,
                status: EpisodeStatus::Ok,
                summary: one_line(&text, SUMMARY_MAX_CHARS),
                content: text,
                paths: Vec::new(),
                created_at: pos.at,
                turn_seq: pos.seq,
                repeats_intent: false,
            });
            return;
        }
        self.close_exchange(pos, CANCELLED_BY_PROMPT, out);
        self.intent = Some(text.clone());
        self.prompt = Some(Buffered {
            text,
            anchor: format!("prompt\0{}", pos.turn_id),
            at: pos.at,
            seq: pos.seq,
        });
    }

    fn buffer_text(&mut self, text: &str, pos: &TurnPosition<'_>, index: usize) {
        if text.trim().is_empty() {
            return;
        }
        match &mut self.text {
            Some(buffer) => {
                buffer.text.push_str("\n\n");
                buffer.text.push_str(text);
                buffer.at = pos.at;
                buffer.seq = pos.seq;
            }
            None => {
                self.text = Some(Buffered {
                    text: text.to_owned(),
                    anchor: format!("text\0{}\0{index}", pos.turn_id),
                    at: pos.at,
                    seq: pos.seq,
                });
            }
        }
    }

    fn resolve(
        &mut self,
        result: &ToolResult,
        pos: &TurnPosition<'_>,
        index: usize,
        other: &mut Lane,
    ) -> Episode {
        let output = result_text(result);
        let status = if result.is_error {
            EpisodeStatus::Failed
        } else {
            EpisodeStatus::Ok
        };
        let found = match self.pending.iter().position(|c| c.id == result.call_id) {
            Some(i) => Some(self.pending.remove(i)),
            None => other
                .pending
                .iter()
                .position(|c| c.id == result.call_id)
                .map(|i| other.pending.remove(i)),
        };
        match found {
            Some(call) => call_episode(&call, status, &output, pos.session_id, pos.at, pos.seq),
            None => {
                // The call is unknown (made before a compaction, or in a log we never saw). The
                // result is still memory: keep it, under an anchor that cannot collide with a call.
                let orphan = PendingCall {
                    id: result.call_id.clone(),
                    turn_id: pos.turn_id.to_owned(),
                    name: "unknown".to_owned(),
                    input: Value::Null,
                    intent: self.intent.clone(),
                    reasoning: String::new(),
                    repeats_intent: self.intent_repeats(),
                    at: pos.at,
                    seq: pos.seq,
                };
                let mut episode =
                    call_episode(&orphan, status, &output, pos.session_id, pos.at, pos.seq);
                episode.id =
                    episode_id(pos.session_id, &format!("result\0{}\0{index}", pos.turn_id));
                episode.summary = one_line(
                    &format!("tool result for {}", result.call_id),
                    SUMMARY_MAX_CHARS,
                );
                episode
            }
        }
    }

    /// Ends the current exchange: cancels pending calls, flushes the answer or the unanswered
    /// prompt. Intent is left to the caller.
    fn close_exchange(&mut self, pos: &TurnPosition<'_>, reason: &str, out: &mut Vec<Episode>) {
        for call in std::mem::take(&mut self.pending) {
            out.push(call_episode(
                &call,
                EpisodeStatus::Cancelled,
                reason,
                pos.session_id,
                call.at,
                call.seq,
            ));
        }
        let answer = self.text.take();
        match (self.prompt.take(), answer) {
            (Some(prompt), answer) => {
                let (answer_text, at, seq) = match &answer {
                    Some(a) => (a.text.as_str(), a.at, a.seq),
                    None => ("(no answer recorded)", prompt.at, prompt.seq),
                };
                out.push(Episode {
                    id: episode_id(pos.session_id, &prompt.anchor),
                    kind: EpisodeKind::UserTurn,
                    tool_name: None,
                    call_id: None,
                    status: EpisodeStatus::Ok,
                    summary: one_line(&prompt.text, SUMMARY_MAX_CHARS),
                    content: format!("# User\n{}\n\n# Assistant\n{answer_text}", prompt.text),
                    paths: Vec::new(),
                    created_at: at,
                    turn_seq: seq,
                    repeats_intent: false,
                });
            }
            (None, Some(answer)) => out.push(Episode {
                id: episode_id(pos.session_id, &answer.anchor),
                kind: EpisodeKind::AssistantTurn,
                tool_name: None,
                call_id: None,
                status: EpisodeStatus::Ok,
                summary: one_line(&answer.text, SUMMARY_MAX_CHARS),
                content: format!("# Assistant\n{}", answer.text),
                paths: Vec::new(),
                created_at: answer.at,
                turn_seq: answer.seq,
                repeats_intent: false,
            }),
            (None, None) => {}
        }
    }
}

fn call_episode(
    call: &PendingCall,
    status: EpisodeStatus,
    output: &str,
    session_id: &str,
    at: DateTime<Utc>,
    seq: u64,
) -> Episode {
    let intent = call.intent.as_deref();
    let content = tool_call_content(
        intent,
        &call.reasoning,
        &call.name,
        &call.input,
        status,
        output,
    );
    Episode {
        id: episode_id(session_id, &call_anchor(call)),
        kind: EpisodeKind::ToolCall,
        tool_name: Some(call.name.clone()),
        call_id: Some(call.id.clone()),
        status,
        summary: tool_summary(&call.name, &call.input),
        content,
        paths: tool_paths(&call.name, &call.input),
        created_at: at,
        turn_seq: seq,
        repeats_intent: call.repeats_intent,
    }
}

/// The anchor of a call's episode: the turn that made it and the call id (a bare call id for
/// calls pending in a state saved before turn ids were kept).
fn call_anchor(call: &PendingCall) -> String {
    if call.turn_id.is_empty() {
        format!("call\0{}", call.id)
    } else {
        format!("call\0{}\0{}", call.turn_id, call.id)
    }
}

fn error_episode(message: &str, pos: &TurnPosition<'_>, index: usize) -> Episode {
    Episode {
        id: episode_id(pos.session_id, &format!("error\0{}\0{index}", pos.turn_id)),
        kind: EpisodeKind::Error,
        tool_name: None,
        call_id: None,
        status: EpisodeStatus::Ok,
        summary: first_line_summary(message),
        content: message.to_owned(),
        paths: Vec::new(),
        created_at: pos.at,
        turn_seq: pos.seq,
        repeats_intent: false,
    }
}

#[cfg(test)]
#[path = "chunker_tests.rs"]
mod tests;
