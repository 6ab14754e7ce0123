//! Shell-output compression (DESIGN §6): compress output the harness already has, or run a
//! command so that its raw output is stored as an episode before the compressed text is shown.

use std::ffi::c_char;

use codeoid_core::compress::RunOutput;
use codeoid_core::{Memory, MemoryConfig};
use serde_json::json;

use crate::args::{bytes, handle, out, text};
use crate::error::{FfiResult, codeoid_error};
use crate::json;
use crate::memory::codeoid_memory;
use crate::panic::boundary;
use crate::strings::codeoid_string;

/// Compresses the stdout of `command` with the memory's rules and writes the result into
/// `*out_json`: `{"text", "rule", "bytes_in", "bytes_out", "kept_ratio", "hint": null}`, or the
/// JSON `null` when no rule saves enough (show the output as it is). Pure: nothing is stored, so
/// there is no episode to point a hint at; use `codeoid_memory_run` to keep the raw bytes.
///
/// `stdout_bytes` is raw output and need not be UTF-8; a NULL pointer is not
/// accepted, a non-NULL pointer with length 0 is empty output.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8` (`command`).
/// Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; each `(ptr, len)` pair is NULL or readable; `out_json` is
/// NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_compress(
    memory: *const codeoid_memory,
    command: *const c_char,
    command_len: usize,
    stdout_bytes: *const c_char,
    stdout_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_compress", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let command = unsafe { text(command, command_len, "command") }?;
        // SAFETY: as above.
        let stdout = unsafe { bytes(stdout_bytes, stdout_len, "stdout_bytes") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let value = memory
            .inner
            .compress(command, stdout)
            .map(|c| json::compressed(&c, None));
        json::write(out_json, &value)
    })
}

/// Runs `command` with `sh -c` in the workspace root (stdin closed), stores its raw stdout and
/// stderr as an episode of `session_id` first, then writes into `*out_json`:
/// `{"stdout", "stderr", "exit_code", "episode_id", "compressed", "store_error", "timed_out"}`
/// where
/// `stdout` is what to show (the compressed text ending with the `get_episode` hint, or the raw
/// output), `stderr` passes through unchanged, `compressed` is the compression object of
/// `codeoid_memory_compress` (with its `hint`) or null, and `store_error` says why the raw
/// output could not be stored (null normally); `timed_out` is true when the command ran past the
/// memory's `run_timeout_secs` (or the call's, see `codeoid_memory_run_with_timeout`) and was
/// killed with everything it started. Output that is not UTF-8 is converted lossily in this
/// JSON; the stored episode keeps the exact bytes.
///
/// A failing command is not an error: read `exit_code`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (empty command), `CODEOID_ERROR_NOT_FOUND` (session),
/// `CODEOID_ERROR_IO` (the shell cannot start). Thread-safe; blocks until the command exits.
///
/// # Safety
/// `memory` is NULL or a live handle; each `(ptr, len)` pair is NULL or readable; `out_json` is
/// NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_run(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    command: *const c_char,
    command_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_run", || {
        // SAFETY: the caller guarantees the pointers as documented.
        unsafe {
            run_into(
                memory,
                (session_id, session_id_len),
                (command, command_len),
                out_json,
                |memory, session, command| memory.run(session, command),
            )
        }
    })
}

/// `codeoid_memory_run` with this call's own timeout in place of the memory's
/// `run_timeout_secs`: `timeout_secs` seconds (fractions allowed), 0 for none. For a harness
/// whose model gives each command its own limit, or that allows a build longer than a listing.
/// Writes the same JSON into `*out_json`.
///
/// Errors: as `codeoid_memory_run`, and `CODEOID_ERROR_INVALID_INPUT` for a negative,
/// non-finite or over 10^9 `timeout_secs`. Thread-safe; blocks until the command exits or is
/// killed.
///
/// # Safety
/// As `codeoid_memory_run`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_run_with_timeout(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    command: *const c_char,
    command_len: usize,
    timeout_secs: f64,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_run_with_timeout", || {
        // SAFETY: the caller guarantees the pointers as documented.
        unsafe {
            run_into(
                memory,
                (session_id, session_id_len),
                (command, command_len),
                out_json,
                |memory, session, command| {
                    let timeout =
                        MemoryConfig::run_timeout_from_secs(timeout_secs, "timeout_secs")?;
                    memory.run_with_timeout(session, command, timeout)
                },
            )
        }
    })
}

/// What both run functions do around `run`: convert their arguments (in the order their errors
/// are documented), call it, and write its JSON into `*out_json`.
///
/// # Safety
/// As `codeoid_memory_run`: `memory` is NULL or a live handle, each `(ptr, len)` pair is NULL or
/// readable, `out_json` is NULL or points at a `codeoid_string` that owns nothing.
unsafe fn run_into(
    memory: *const codeoid_memory,
    (session_id, session_id_len): (*const c_char, usize),
    (command, command_len): (*const c_char, usize),
    out_json: *mut codeoid_string,
    run: impl FnOnce(&Memory, &str, &str) -> codeoid_core::Result<RunOutput>,
) -> FfiResult<()> {
    // SAFETY: the caller guarantees the pointers as documented.
    let memory = unsafe { handle(memory, "memory") }?;
    // SAFETY: as above.
    let session = unsafe { text(session_id, session_id_len, "session_id") }?;
    // SAFETY: as above.
    let command = unsafe { text(command, command_len, "command") }?;
    // SAFETY: as above.
    let out_json = unsafe { out(out_json, "out_json") }?;
    let run = run(&memory.inner, session, command)?;
    json::write(out_json, &run_json(&run))
}

/// The JSON both run functions write.
fn run_json(run: &RunOutput) -> serde_json::Value {
    let episode_id = run.episode_id.as_deref();
    json!({
        "stdout": String::from_utf8_lossy(&run.stdout),
        "stderr": String::from_utf8_lossy(&run.stderr),
        "exit_code": run.exit_code,
        "episode_id": episode_id,
        "compressed": run.compressed.as_ref().map(|c| json::compressed(c, episode_id)),
        "store_error": run.store_error.as_ref().map(codeoid_core::Error::full_message),
        "timed_out": run.timed_out,
    })
}
