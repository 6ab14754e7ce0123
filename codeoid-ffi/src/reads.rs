//! Reading memory back: one episode (as JSON, or as the text `get_episode` shows a model), a
//! timeline page (JSON or model text) and raw blobs. Every read is scoped to the memory's
//! workspace: another workspace's ids are "not found".
//!
//! All functions are thread-safe on one `codeoid_memory`.

use std::ffi::c_char;

use codeoid_core::store::TimelineQuery;

use crate::args::{handle, optional_text, out, parse_optional_json, text};
use crate::error::{FfiResult, codeoid_error};
use crate::json::{self, TimelineOptions};
use crate::memory::codeoid_memory;
use crate::panic::boundary;
use crate::strings::codeoid_string;

/// Writes episode `episode_id` of this workspace as a JSON object into `*out_json`: `id`,
/// `workspace_id`, `session_id`, `turn_seq`, `kind`, `tool_name`, `call_id`, `status`,
/// `summary`, `created_at`, `token_estimate`, `content` (the stored bytes, exactly), `paths`
/// (`[{"given", "relative", "access", "content_hash"}]`) and `blobs`
/// (`[{"role", "blob_id", "len"}]`).
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_NOT_FOUND`. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `episode_id` is NULL or points at `episode_id_len`
/// readable bytes; `out_json` is NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_episode(
    memory: *const codeoid_memory,
    episode_id: *const c_char,
    episode_id_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_episode", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(episode_id, episode_id_len, "episode_id") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let episode = memory.inner.episode(id)?;
        json::write(out_json, &json::episode(&episode))
    })
}

/// Writes episode `episode_id` under the `get_episode` header, then its whole stored content,
/// with sessions labelled relative to `current_session_id` (optional: NULL labels every session
/// as a prior one), into `*out_text`. The `get_episode` tool (`codeoid_memory_call_tool`) shows
/// long content in pages instead.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_NOT_FOUND`. Thread-safe.
///
/// # Safety
/// As `codeoid_memory_episode`; `current_session_id` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_episode_text(
    memory: *const codeoid_memory,
    current_session_id: *const c_char,
    current_session_id_len: usize,
    episode_id: *const c_char,
    episode_id_len: usize,
    out_text: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_episode_text", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let current = unsafe {
            optional_text(
                current_session_id,
                current_session_id_len,
                "current_session_id",
            )
        }?;
        // SAFETY: as above.
        let id = unsafe { text(episode_id, episode_id_len, "episode_id") }?;
        // SAFETY: as above.
        let out_text = unsafe { out(out_text, "out_text") }?;
        let text = memory.inner.episode_text(current, id)?;
        *out_text = codeoid_string::from_string(text);
        Ok(())
    })
}

fn timeline_query(json: Option<&str>) -> FfiResult<TimelineQuery> {
    let options: TimelineOptions =
        parse_optional_json(json, "query_json", "a timeline query object")?;
    Ok(options.into())
}

/// Writes one page of this workspace's timeline, newest first, into `*out_json`:
/// `{"episodes": [episode header...], "next": {"offset", "limit", "before"} or null}`, where a
/// header is the episode object of `codeoid_memory_episode` without `content`, `paths` and
/// `blobs`, and `next` is the query of the following (older) page.
///
/// `query_json` (optional: NULL is the newest 20) is `{"offset"?, "limit"? (1..=1000),
/// "before"? (an episode id: start just older than it)}`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (bad query, limit out of range), `CODEOID_ERROR_NOT_FOUND`
/// (`before` is not in this workspace). Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `query_json` is NULL or readable; `out_json` is NULL or
/// points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_timeline(
    memory: *const codeoid_memory,
    query_json: *const c_char,
    query_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_timeline", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let query = unsafe { optional_text(query_json, query_json_len, "query_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let page = memory.inner.timeline(&timeline_query(query)?)?;
        json::write(out_json, &json::timeline_page(&page))
    })
}

/// Writes the model-facing text of a timeline page (the `timeline` tool's output), labelled
/// relative to `current_session_id` (optional), into `*out_text`. `query_json` as in
/// `codeoid_memory_timeline`.
///
/// Errors: as `codeoid_memory_timeline`. Thread-safe.
///
/// # Safety
/// As `codeoid_memory_timeline`; `current_session_id` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_timeline_text(
    memory: *const codeoid_memory,
    current_session_id: *const c_char,
    current_session_id_len: usize,
    query_json: *const c_char,
    query_json_len: usize,
    out_text: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_timeline_text", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let current = unsafe {
            optional_text(
                current_session_id,
                current_session_id_len,
                "current_session_id",
            )
        }?;
        // SAFETY: as above.
        let query = unsafe { optional_text(query_json, query_json_len, "query_json") }?;
        // SAFETY: as above.
        let out_text = unsafe { out(out_text, "out_text") }?;
        let text = memory
            .inner
            .timeline_text(current, &timeline_query(query)?)?;
        *out_text = codeoid_string::from_string(text);
        Ok(())
    })
}

/// Writes the exact bytes of raw blob `blob_id` (the whole content of a capped episode, or a
/// command's stdout/stderr; ids appear in an episode's `blobs`) into `*out_bytes`. The bytes
/// are not necessarily UTF-8; `out_bytes->len` counts them and a NUL follows as usual.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8` (`blob_id`),
/// `CODEOID_ERROR_NOT_FOUND` (no episode of this workspace links it). Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `blob_id` is NULL or readable; `out_bytes` is NULL or
/// points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_blob(
    memory: *const codeoid_memory,
    blob_id: *const c_char,
    blob_id_len: usize,
    out_bytes: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_blob", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(blob_id, blob_id_len, "blob_id") }?;
        // SAFETY: as above.
        let out_bytes = unsafe { out(out_bytes, "out_bytes") }?;
        let bytes = memory.inner.blob(id)?;
        *out_bytes = codeoid_string::from_bytes(&bytes);
        Ok(())
    })
}
