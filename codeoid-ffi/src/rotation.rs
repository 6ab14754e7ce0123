//! Rotation (DESIGN §5): the policy's verdict on a session's latest turn, a manual rotation,
//! the seed the next message starts with, and a per-session context window override.
//!
//! All functions are thread-safe on one `codeoid_memory`.

use std::ffi::c_char;

use crate::args::{handle, optional_text, out, text};
use crate::error::codeoid_error;
use crate::json;
use crate::memory::codeoid_memory;
use crate::panic::boundary;
use crate::strings::codeoid_string;

/// Writes the rotation policy's verdict on session `session_id`'s latest assistant turn,
/// without changing anything, into `*out_json`: `{"should_rotate", "reason", "message",
/// "occupancy", "tokens", "window": {"tokens", "source"}, "turns_since_rotation", "min_turns",
/// "auto_rotate"}` (`reason` is `no_signal` for a session without an assistant turn).
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_NOT_FOUND`. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `session_id` is NULL or readable; `out_json` is NULL or
/// points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_rotation_decision(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_rotation_decision", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let decision = memory.inner.rotation_decision(id)?;
        json::write(out_json, &decision)
    })
}

/// Rotates session `session_id` now (a manual rotation): keeps its id, turns and memory,
/// increments the rotation count, records a `rotation` event and leaves the seed pending for
/// the next message. `backing_context_id` (optional: NULL mints a `ctx_…` id) names the new
/// provider-side context. Writes `{"count", "at", "episode_id", "backing_context_id", "seed":
/// {"rotation", "kind", "text"}}` into `*out_json`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_ROTATION_REFUSED` (before the turn guard, or no user prompt to anchor the
/// seed; the message says why), `CODEOID_ERROR_NOT_FOUND`. Thread-safe.
///
/// # Safety
/// As `codeoid_memory_rotation_decision`; `backing_context_id` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_rotate(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    backing_context_id: *const c_char,
    backing_context_id_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_rotate", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let backing = unsafe {
            optional_text(
                backing_context_id,
                backing_context_id_len,
                "backing_context_id",
            )
        }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let rotation = memory.inner.rotate(id, backing)?;
        json::write(out_json, &json::rotation(&rotation))
    })
}

/// Takes the seed the next message of session `session_id` must start with and writes it into
/// `*out_json`: `{"rotation", "kind" ("memory" or "generic"), "text"}` exactly once after each
/// rotation, and the JSON `null` otherwise.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_NOT_FOUND`, `CODEOID_ERROR_CORRUPT` (the stored seed no longer parses).
/// Thread-safe: of two concurrent calls, one gets the seed.
///
/// # Safety
/// As `codeoid_memory_rotation_decision`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_take_seed(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_take_seed", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let seed = memory.inner.take_seed(id)?;
        json::write(out_json, &seed)
    })
}

/// Sets session `session_id`'s context window to `tokens`, overriding the model table (for a
/// harness that runs a model in a smaller window than the provider offers); `tokens == 0`
/// clears the override.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (an absurd window), `CODEOID_ERROR_NOT_FOUND`. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `session_id` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_set_context_window(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    tokens: u64,
) -> *mut codeoid_error {
    boundary("codeoid_memory_set_context_window", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        let tokens = (tokens != 0).then_some(tokens);
        memory.inner.set_context_window(id, tokens)?;
        Ok(())
    })
}
