//! Sessions and turns: start, look up, list and finish sessions; record canonical turns (JSON,
//! `docs/canonical-turns.md`) one at a time, with the rotation policy's verdict, or in bulk.
//!
//! All functions are thread-safe on one `codeoid_memory`.

use std::ffi::c_char;

use codeoid_core::canonical::Turn;

use crate::args::{handle, optional_text, out, parse_json, parse_optional_json, text};
use crate::error::codeoid_error;
use crate::json::{self, SessionOptions};
use crate::memory::codeoid_memory;
use crate::panic::boundary;
use crate::strings::codeoid_string;

/// Starts a session in the memory's workspace and writes it, as a session JSON object (see
/// `docs/ffi.md`), into `*out_json`. With the id of an existing session of this workspace,
/// returns that session unchanged.
///
/// `options_json` (optional: NULL means an anonymous session created now) is an object with
/// the optional keys `id`, `name`, `provider`, `model`, `created_at` (RFC 3339) and
/// `backing_context_id`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (bad JSON, empty id), `CODEOID_ERROR_ALREADY_EXISTS` (the id
/// belongs to another workspace), database errors. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `options_json` is NULL or points at `options_json_len`
/// readable bytes; `out_json` is NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_start_session(
    memory: *const codeoid_memory,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_start_session", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let options = unsafe { optional_text(options_json, options_json_len, "options_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let options: SessionOptions =
            parse_optional_json(options, "options_json", "a session options object")?;
        let session = memory.inner.start_session(options.into())?;
        json::write(out_json, &json::session(&session))
    })
}

/// Writes session `session_id` of this workspace, as a session JSON object, into `*out_json`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_NOT_FOUND` (also for another workspace's session). Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `session_id` is NULL or points at `session_id_len`
/// readable bytes; `out_json` is NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_session(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_session", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let session = memory.inner.session(id)?;
        json::write(out_json, &json::session(&session))
    })
}

/// Writes every session of this workspace, oldest first, as a JSON array of session objects
/// into `*out_json`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, database errors. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `out_json` is NULL or points at a `codeoid_string` that
/// owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_sessions(
    memory: *const codeoid_memory,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_sessions", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let sessions: Vec<_> = memory.inner.sessions()?.iter().map(json::session).collect();
        json::write(out_json, &sessions)
    })
}

/// Closes session `session_id`: pending tool calls become cancelled episodes and a buffered
/// final answer is stored. Writes the ids of the episodes this wrote, as a JSON array of
/// strings, into `*out_json`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_NOT_FOUND`, database errors. Thread-safe.
///
/// # Safety
/// As `codeoid_memory_session`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_finish_session(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_finish_session", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let ids = memory.inner.finish_session(id)?;
        json::write(out_json, &ids)
    })
}

/// Records one canonical turn (`turn_json`, a turn object of `docs/canonical-turns.md`) of
/// session `session_id` and, for an assistant turn, asks the rotation policy about it. Writes
/// the outcome into `*out_json`:
/// `{"recorded": {"turn_id", "seq", "duplicate", "episode_ids"}, "decision": decision or null,
/// "rotation": rotation or null, "rotation_refused": string or null}`. When `rotation` is set
/// the session was rotated: replace the backing context and start the next message with the
/// seed (`codeoid_memory_take_seed`).
///
/// Recording a turn whose id the session already has is a no-op (`duplicate: true`).
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (not a valid turn; nothing is written),
/// `CODEOID_ERROR_NOT_FOUND` (session), database errors. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; each `(ptr, len)` pair is NULL or readable; `out_json` is
/// NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_record_turn(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    turn_json: *const c_char,
    turn_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_record_turn", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let turn = unsafe { text(turn_json, turn_json_len, "turn_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let turn = Turn::from_json(turn)?;
        let outcome = memory.inner.record_turn(id, &turn)?;
        json::write(out_json, &json::turn_outcome(&outcome))
    })
}

/// Records several turns of session `session_id` in one transaction (`turns_json`: a JSON array
/// of turn objects), for importers and replays: unlike `codeoid_memory_record_turn` it does not
/// evaluate rotation. Writes a JSON array with one `{"turn_id", "seq", "duplicate",
/// "episode_ids"}` per turn into `*out_json`. Nothing is written when any turn is invalid.
///
/// Errors: as `codeoid_memory_record_turn`. Thread-safe.
///
/// # Safety
/// As `codeoid_memory_record_turn`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_record_turns(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    turns_json: *const c_char,
    turns_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_record_turns", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let turns = unsafe { text(turns_json, turns_json_len, "turns_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let turns = parse_turns(turns, "turns_json")?;
        let recorded: Vec<_> = memory
            .inner
            .record_turns(id, &turns)?
            .iter()
            .map(json::recorded)
            .collect();
        json::write(out_json, &recorded)
    })
}

/// Parses a JSON array of canonical turns, validating each like `Turn::from_json`.
pub(crate) fn parse_turns(json: &str, name: &str) -> crate::error::FfiResult<Vec<Turn>> {
    let values: Vec<serde_json::Value> = parse_json(json, name, "a JSON array of turns")?;
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            Turn::from_json(&value.to_string()).map_err(|e| {
                crate::error::Failure::invalid_input(format!(
                    "argument `{name}`: turn {i} is invalid: {}",
                    e.full_message()
                ))
            })
        })
        .collect()
}
