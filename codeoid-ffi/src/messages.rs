//! Provider messages in and canonical turns out: record a session's messages in a backend's own
//! format (one at a time, as a harness receives them, or a whole list), and read a session's
//! canonical turns back, to rebuild a conversation after a restart or replay it elsewhere.
//!
//! All functions are thread-safe on one `codeoid_memory`.

use std::ffi::c_char;

use codeoid_core::canonical::Turn;
use codeoid_core::translate;
use serde_json::Value;

use crate::args::{handle, optional_text, out, parse_json, text};
use crate::error::{Failure, codeoid_error};
use crate::json;
use crate::memory::codeoid_memory;
use crate::panic::boundary;
use crate::strings::codeoid_string;
use crate::translate::backend;

/// Records one provider message of session `session_id` as `codeoid_memory_record_turn`
/// records a canonical turn (same outcome JSON in `*out_json`, rotation decision included).
/// `format` is a `CODEOID_FORMAT_*` value; `message_json` is one message as that API takes it
/// (an Anthropic or OpenAI Chat message, an OpenAI Responses `input` item, a Gemini `contents`
/// entry); assistant turns are stamped with the format's provider and `model` (optional).
/// `usage_json` (optional) is the usage of the call that produced an assistant message: the
/// canonical turn's `usage` object (`docs/canonical-turns.md`, or one call's counts), or the
/// provider's own usage object in `format` (Anthropic `usage`, OpenAI `usage`, Gemini
/// `usageMetadata`), cached input counted once. An Anthropic response object passed whole as
/// `message_json` brings its own `usage` when `usage_json` is NULL.
///
/// Gemini calls without ids get ids unique within the session, and a response without an id
/// pairs with the first call of its name in the latest model message that no response answered
/// yet, as Gemini intends.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (unknown format, a message not in the format's shape, one
/// that holds nothing to record or translates to several turns; nothing is written),
/// `CODEOID_ERROR_NOT_FOUND` (session), database errors. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; each `(ptr, len)` pair is NULL or readable; `out_json` is
/// NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn codeoid_memory_record_message(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    format: u32,
    model: *const c_char,
    model_len: usize,
    message_json: *const c_char,
    message_json_len: usize,
    usage_json: *const c_char,
    usage_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_record_message", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let model = unsafe { optional_text(model, model_len, "model") }?;
        // SAFETY: as above.
        let message = unsafe { text(message_json, message_json_len, "message_json") }?;
        // SAFETY: as above.
        let usage = unsafe { optional_text(usage_json, usage_json_len, "usage_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let backend = backend(format, model)?;
        let message: Value = parse_json(message, "message_json", "a JSON message object")?;
        let usage = usage
            .map(|u| {
                let value: Value = parse_json(u, "usage_json", "a JSON usage object")?;
                translate::read_usage(&value, Some(backend.format)).map_err(|e| {
                    Failure::invalid_input(format!("argument `usage_json`: {}", e.message()))
                })
            })
            .transpose()?;
        let outcome = memory.inner.record_message(id, message, &backend, usage)?;
        json::write(out_json, &json::turn_outcome(&outcome))
    })
}

/// Records a provider message list of session `session_id` (`messages_json`, in `format`,
/// translated as a whole so results pair with their calls) as `codeoid_memory_record_turns`
/// records canonical turns: one transaction, no rotation decision. Writes the same JSON array
/// of `{"turn_id", "seq", "duplicate", "episode_ids"}` into `*out_json`.
///
/// Errors: as `codeoid_memory_record_message`; nothing is written when the list is invalid.
/// Thread-safe.
///
/// # Safety
/// As `codeoid_memory_record_message`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn codeoid_memory_record_messages(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    format: u32,
    model: *const c_char,
    model_len: usize,
    messages_json: *const c_char,
    messages_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_record_messages", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let model = unsafe { optional_text(model, model_len, "model") }?;
        // SAFETY: as above.
        let messages = unsafe { text(messages_json, messages_json_len, "messages_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let backend = backend(format, model)?;
        let messages: Value = parse_json(messages, "messages_json", "a JSON array of messages")?;
        let recorded: Vec<Value> = memory
            .inner
            .record_messages(id, &messages, &backend)?
            .iter()
            .map(json::recorded)
            .collect();
        json::write(out_json, &recorded)
    })
}

/// Writes the canonical turns of session `session_id` with sequence numbers in
/// `start..end` (`end` = `UINT64_MAX`: to the last), as a JSON array of turn objects
/// (`docs/canonical-turns.md`), into `*out_json`: what a harness that restarts rebuilds its
/// conversation from, or hands to `codeoid_translate_to_messages`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_NOT_FOUND` (session not in this workspace), database errors. Thread-safe.
///
/// # Safety
/// As `codeoid_memory_record_message`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_turns(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    start: u64,
    end: u64,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_turns", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let turns: Vec<Turn> = memory
            .inner
            .turns(id, start..end)?
            .into_iter()
            .map(|t| t.turn)
            .collect();
        json::write(out_json, &turns)
    })
}
