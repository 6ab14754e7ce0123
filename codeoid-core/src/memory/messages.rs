//! Recording provider messages as a harness receives them: one message, or a message list, in a
//! backend's own format (Anthropic, OpenAI Chat or Responses, Gemini), translated to canonical
//! turns and recorded. Every binding records provider messages through here, so they all number
//! and pair tool calls the same way.
//!
//! Translating one message at a time needs what the list translator cannot know. Gemini may send
//! `functionCall`s without ids; the reader numbers those by their position in the list it was
//! given (`gemini_call_{content}_{part}`), which for one message always starts at 0. So:
//! - a model message's generated ids are renumbered with the session's turn count
//!   (`gemini_call_{turns before}_{part}`), unique within the session;
//! - a `functionResponse` without an id is read after the session's latest assistant turn, less
//!   the calls later turns already answered, so it pairs with the first of that turn's calls of
//!   the same name still unanswered, as Gemini intends (parallel calls of one function answered
//!   one message at a time each get their own response);
//! - a message list's generated ids, calls and the responses paired with them, get the turn
//!   count in front (`gemini_call_{turns before}_{content}_{part}`); ids the messages carry
//!   themselves are kept.
//!
//! One lock is held from reading the turn count to writing the turns, so threads recording into
//! one memory cannot number two calls alike.

use std::collections::HashSet;
use std::sync::{MutexGuard, PoisonError};

use serde_json::Value;

use super::Memory;
use super::rotation::TurnOutcome;
use crate::canonical::{Part, Role, Turn, Usage};
use crate::error::{Error, Result};
use crate::store::{Recorded, Session};
use crate::translate::{self, Backend, Format, Options};

use crate::translate::GEMINI_GENERATED;

/// The prefix the Gemini reader gives calls without an id in a one-message list.
const GEMINI_GENERATED_ALONE: &str = "gemini_call_0_";

impl Memory {
    /// Records one provider `message` of `backend`'s format (an Anthropic or OpenAI Chat
    /// message, an OpenAI Responses `input` item, a Gemini `contents` entry) as
    /// [`Memory::record_turn`] records a canonical turn, rotation decision included. `usage`,
    /// when given, is the usage of the call that produced an assistant message (read it from a
    /// provider's own usage object with [`translate::read_usage`]); an Anthropic response object
    /// passed whole as the message brings its own `usage`, used when `usage` is `None`.
    /// Assistant turns are stamped with `backend`'s provider and model, or, for a backend without
    /// a model, with the `model` an Anthropic response object names. A message with its own
    /// `id` (an Anthropic response, a Responses item) is recorded under it, so recording it
    /// again is a no-op (`duplicate`).
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when the message is not in the format's shape, holds
    /// nothing codeoid keeps, or translates to more than one turn (record a list with
    /// [`Memory::record_messages`]); otherwise as [`Memory::record_turn`].
    pub fn record_message(
        &self,
        session_id: &str,
        message: Value,
        backend: &Backend,
        usage: Option<Usage>,
    ) -> Result<TurnOutcome> {
        let _numbering = self.numbering(backend);
        // An Anthropic response object passed whole carries its call's usage.
        let usage = match (usage, message.get("usage")) {
            (None, Some(embedded)) if backend.format == Format::Anthropic => {
                Some(translate::read_usage(embedded, Some(Format::Anthropic))?)
            }
            (usage, _) => usage,
        };
        // The provider's own message id (an Anthropic response's `msg_…`, a Responses item's
        // id) names the turn, so recording the same message twice (a retry) records it once.
        let provider_id = message
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.trim().is_empty())
            .map(str::to_owned);
        // An Anthropic response object also names the model that wrote it: without it, a
        // backend given no model leaves the turn without one, and the rotation policy measures
        // occupancy against the conservative default window instead of the model's.
        let response_model = (backend.format == Format::Anthropic)
            .then(|| message.get("model").and_then(Value::as_str))
            .flatten()
            .filter(|model| !model.trim().is_empty())
            .map(str::to_owned);
        let mut turn = self.message_turn(session_id, message, backend)?;
        if usage.is_some() {
            turn.usage = usage;
        }
        if turn.id.is_none() {
            turn.id = provider_id;
        }
        if turn.model.is_none() && turn.role == Role::Assistant {
            turn.model = response_model;
        }
        self.record_turn(session_id, &turn)
    }

    /// Records a provider message list of `backend`'s format, translated as a whole (so tool
    /// results pair with their calls), as [`Memory::record_turns`] does: one transaction, no
    /// rotation decision (replaying history must not rotate).
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when the list is not in the format's shape (nothing is
    /// written); otherwise as [`Memory::record_turns`].
    pub fn record_messages(
        &self,
        session_id: &str,
        messages: &Value,
        backend: &Backend,
    ) -> Result<Vec<Recorded>> {
        let _numbering = self.numbering(backend);
        let turns = self.message_list_turns(session_id, messages, backend)?;
        self.record_turns(session_id, &turns)
    }

    /// Holds the numbering lock from counting a session's turns to writing them, for the one
    /// format whose ids are numbered by that count (Gemini calls without ids); other formats'
    /// messages translate the same whatever the count, and record without waiting.
    fn numbering(&self, backend: &Backend) -> Option<MutexGuard<'_, ()>> {
        (backend.format == Format::Gemini).then(|| {
            self.message_numbering
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        })
    }

    /// The one canonical turn that one provider message of session `session_id` translates to.
    fn message_turn(&self, session_id: &str, message: Value, backend: &Backend) -> Result<Turn> {
        let options = Options::default();
        let turns = if backend.format == Format::Gemini {
            self.gemini_turns(session_id, message, backend, &options)?
        } else {
            self.session(session_id)?;
            translate::from_messages(&Value::Array(vec![message]), backend, &options)?
                .value
                .turns
        };
        let count = turns.len();
        let mut turns = turns.into_iter();
        match (turns.next(), count) {
            (Some(turn), 1) => Ok(turn),
            (_, 0) => Err(Error::invalid_input(format!(
                "the {} message holds nothing to record (no content codeoid keeps); skip it or \
                 record a canonical turn",
                backend.format
            ))),
            _ => Err(Error::invalid_input(format!(
                "the {} message translates to {count} turns; record it as a message list \
                 (record_messages)",
                backend.format
            ))),
        }
    }

    /// The canonical turns of a provider message list of session `session_id`, with Gemini's
    /// generated ids made unique within the session.
    fn message_list_turns(
        &self,
        session_id: &str,
        messages: &Value,
        backend: &Backend,
    ) -> Result<Vec<Turn>> {
        let count = self.session(session_id)?.turn_count;
        let mut turns = translate::from_messages(messages, backend, &Options::default())?
            .value
            .turns;
        if backend.format != Format::Gemini {
            return Ok(turns);
        }
        let given = given_ids(messages);
        let renumber = |id: &mut String| {
            if !given.contains(id.as_str()) && is_generated(id) {
                id.insert_str(GEMINI_GENERATED.len(), &format!("{count}_"));
            }
        };
        for part in turns.iter_mut().flat_map(|t| t.parts.iter_mut()) {
            match part {
                Part::ToolCall(call) => renumber(&mut call.id),
                Part::ToolResult(result) => renumber(&mut result.call_id),
                _ => {}
            }
        }
        Ok(turns)
    }

    fn gemini_turns(
        &self,
        session_id: &str,
        message: Value,
        backend: &Backend,
        options: &Options,
    ) -> Result<Vec<Turn>> {
        let session = self.session(session_id)?;
        let parts = message.get("parts").and_then(Value::as_array);
        // Whether some part holds `key` (a call or a response) without an id.
        let without_id = |key: &str| {
            parts.is_some_and(|parts| {
                parts
                    .iter()
                    .any(|p| p.get(key).is_some_and(|inner| inner.get("id").is_none()))
            })
        };
        if without_id("functionResponse") {
            if let Some(previous) = self.open_calls(&session)? {
                let context = translate::to_messages(&[previous], backend, options)?.value;
                if let Value::Array(mut list) = context {
                    let skip = list.len();
                    list.push(message);
                    let turns = translate::from_messages(&Value::Array(list), backend, options)?
                        .value
                        .turns;
                    return Ok(turns.into_iter().skip(skip).collect());
                }
            }
        }
        let renumber = without_id("functionCall");
        let mut turns = translate::from_messages(&Value::Array(vec![message]), backend, options)?
            .value
            .turns;
        if renumber {
            let fresh = format!("{GEMINI_GENERATED}{}_", session.turn_count);
            for part in turns.iter_mut().flat_map(|t| t.parts.iter_mut()) {
                if let Part::ToolCall(call) = part {
                    if let Some(rest) = call.id.strip_prefix(GEMINI_GENERATED_ALONE) {
                        call.id = format!("{fresh}{rest}");
                    }
                }
            }
        }
        Ok(turns)
    }

    /// The session's latest assistant turn with only the calls no later turn answered yet, for
    /// a Gemini response without an id to be read after: it then answers the first of them with
    /// its name, so parallel calls of one function answered one message at a time each get
    /// their own response. The whole turn when every call was answered (a repeated response
    /// pairs as it did before); `None` when the session has no assistant turn.
    fn open_calls(&self, session: &Session) -> Result<Option<Turn>> {
        let mut turns = self.turns_from_latest_assistant(session)?.into_iter();
        let Some(mut latest) = turns.next() else {
            return Ok(None);
        };
        let answered: HashSet<String> = turns
            .flat_map(|t| t.parts)
            .filter_map(|p| match p {
                Part::ToolResult(result) => Some(result.call_id),
                _ => None,
            })
            .collect();
        let is_open = |p: &Part| matches!(p, Part::ToolCall(call) if !answered.contains(&call.id));
        if latest.parts.iter().any(is_open) {
            latest
                .parts
                .retain(|p| !matches!(p, Part::ToolCall(_)) || is_open(p));
        }
        Ok(Some(latest))
    }
}

/// The call and response ids a Gemini message list carries itself.
fn given_ids(messages: &Value) -> HashSet<&str> {
    messages
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("parts")?.as_array())
        .flatten()
        .filter_map(|p| p.get("functionCall").or_else(|| p.get("functionResponse")))
        .filter_map(|inner| inner.get("id")?.as_str())
        .collect()
}

/// Whether `id` has the shape the Gemini reader generates: `gemini_call_{n}_{n}`.
fn is_generated(id: &str) -> bool {
    id.strip_prefix(GEMINI_GENERATED).is_some_and(|rest| {
        rest.split_once('_').is_some_and(|(c, p)| {
            [c, p]
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    })
}
