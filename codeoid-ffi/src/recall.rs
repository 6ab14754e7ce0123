//! Recall (DESIGN §2): hybrid retrieval of this workspace's episodes, the latest read of a file,
//! and the background embedding worker's flush, status and warnings.
//!
//! Recall works without a model: with embeddings disabled or unavailable the vector signal is 0
//! and episodes rank by BM25, recency and paths. With a model, episodes recorded a moment ago
//! are found by meaning once the worker has embedded them; `codeoid_memory_flush` waits for that.
//!
//! All functions are thread-safe on one `codeoid_memory`.

use std::ffi::c_char;
use std::time::Duration;

use crate::args::{handle, optional_text, out, parse_optional_json, text};
use crate::error::codeoid_error;
use crate::json::{self, RecallOptions};
use crate::memory::codeoid_memory;
use crate::panic::boundary;
use crate::strings::codeoid_string;

/// Recalls the episodes of this workspace most relevant to `query` (any text: a question, an
/// error message, an identifier, a path; plain text, not JSON), best first, and writes them
/// into `*out_json` as an array of hits: the episode object of `codeoid_memory_episode` without `blobs`, plus `score`
/// (the weighted sum), `components` (`{"vec", "bm25", "recency", "path"}`, each in [0, 1];
/// `vec` is 0 without a model or for an episode not embedded yet) and `relevance` (`{"terms",
/// "held", "share", "lift", "lift_needed", "weak"}`: the query terms the hit holds and their
/// share of the query's weight, its similarity lift over the scope and the lift needed, null
/// without a model or a baseline, and whether it is a weak match).
///
/// `current_session_id` (optional) is the calling session: unless `include_current_session` is
/// set, its live context (its episodes since its last rotation, all of them if it never rotated)
/// is left out, since the model still sees it. NULL excludes nothing.
/// `options_json` (optional: NULL is the defaults) is `{"limit"? (1..=100, default 6),
/// "include_current_session"?, "as_of"? (RFC 3339: measure recency from then), "filters"?:
/// {"session_id"?, "exclude_session_id"?, "tool_name"?, "since"?, "until"?, "paths"?: [...]}}`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (bad options, limit out of range, empty time range),
/// `CODEOID_ERROR_NOT_FOUND` (`current_session_id` is not a session of this workspace),
/// `CODEOID_ERROR_DATABASE`. Thread-safe; a recall may wait about a second while the model is
/// loading, never for a download.
///
/// # Safety
/// `memory` is NULL or a live handle; each `(ptr, len)` pair is NULL or readable; `out_json` is
/// NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_recall(
    memory: *const codeoid_memory,
    current_session_id: *const c_char,
    current_session_id_len: usize,
    query: *const c_char,
    query_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_recall", || {
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
        let query = unsafe { text(query, query_len, "query") }?;
        // SAFETY: as above.
        let options = unsafe { optional_text(options_json, options_json_len, "options_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let options: RecallOptions =
            parse_optional_json(options, "options_json", "a recall options object")?;
        let hits = memory.inner.recall(current, &options.into_query(query))?;
        let hits: Vec<_> = hits.iter().map(json::hit).collect();
        json::write(out_json, &hits)
    })
}

/// Writes the most recent read of file `path` (relative to the workspace root, or absolute) in
/// any session of this workspace into `*out_json`, or the JSON `null` when memory has none:
/// `{"episode": the episode object of codeoid_memory_episode, "path": {"given", "relative",
/// "access", "content_hash"}, "disk": {"state" (unchanged, changed, deleted, unknown), "reason"
/// (why it is unknown, else null)}, "later_write": an episode header or null, "part": when the
/// read may not have covered the whole file, what the tool tells the model about it ("this read
/// holds lines 120–169 of 1204 only; read the file for the rest"), else null, "passed_over":
/// `{"episode": header, "part"}` when a later read of part of the file was passed over for this
/// earlier whole read of the same content, else null}`.
/// `disk` compares the file as it is now with the content hash recorded at the read.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_DATABASE`. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `path` is NULL or readable; `out_json` is NULL or points
/// at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_recall_file(
    memory: *const codeoid_memory,
    path: *const c_char,
    path_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_recall_file", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let path = unsafe { text(path, path_len, "path") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let found = memory.inner.recall_file(path)?;
        json::write(out_json, &found.as_ref().map(json::file_recall))
    })
}

/// Waits until every episode recorded in this workspace before the call is embedded and
/// searchable by meaning, and writes whether that happened into `*out_flushed` (`false`: the
/// timeout passed first). Returns at once, flushed, when embeddings are disabled or no model is
/// available; while a model is being downloaded it waits for the download.
///
/// `timeout_ms`: negative waits without a limit, 0 only checks, a positive value waits at most
/// that many milliseconds.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_DATABASE`. Thread-safe: recording and
/// recall go on meanwhile.
///
/// # Safety
/// `memory` is NULL or a live handle; `out_flushed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_flush(
    memory: *const codeoid_memory,
    timeout_ms: i64,
    out_flushed: *mut bool,
) -> *mut codeoid_error {
    boundary("codeoid_memory_flush", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let out_flushed = unsafe { out(out_flushed, "out_flushed") }?;
        let flushed = match u64::try_from(timeout_ms) {
            Ok(ms) => memory.inner.flush_timeout(Duration::from_millis(ms))?,
            Err(_) => {
                memory.inner.flush()?;
                true
            }
        };
        *out_flushed = flushed;
        Ok(())
    })
}

/// Writes the embedding worker's progress into `*out_json`: `{"phase" (downloading, loading,
/// ready, unavailable, disabled), "model_id" (once loaded, else null), "indexed_episodes",
/// "indexed_windows", "index_bytes", "failed_episodes"}`. `unavailable` means recall is lexical;
/// `codeoid_memory_warnings` says why.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `out_json` is NULL or points at a `codeoid_string` that
/// owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_embedding_status(
    memory: *const codeoid_memory,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_embedding_status", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        json::write(
            out_json,
            &json::embedding_status(&memory.inner.embedding_status()),
        )
    })
}

/// Writes the warnings to show the person once (not per call) into `*out_json` as a JSON array
/// of strings: why recall is lexical only, episodes the model failed on, store errors the
/// embedding worker is retrying. `[]` when all is well.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
/// As `codeoid_memory_embedding_status`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_warnings(
    memory: *const codeoid_memory,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_warnings", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        json::write(out_json, &memory.inner.warnings())
    })
}
