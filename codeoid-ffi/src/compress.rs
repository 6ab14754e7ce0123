//! Shell-output compression (DESIGN §6): compress output the harness already has, or run a
//! command so that its raw output is stored as an episode before the compressed text is shown.

use std::ffi::c_char;

use codeoid_core::MemoryConfig;
use codeoid_core::compress::RunOutput;
use serde_json::json;

use crate::args::{bytes, handle, out, text};
use crate::cancel::codeoid_cancel;
use crate::error::{Failure, FfiResult, codeoid_error};
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
/// `{"stdout", "stderr", "exit_code", "episode_id", "compressed", "store_error", "timed_out",
/// "interrupted", "left_running"}` where
/// `stdout` is what to show (the compressed text ending with the `get_episode` hint, or the raw
/// output), `stderr` passes through unchanged, `compressed` is the compression object of
/// `codeoid_memory_compress` (with its `hint`) or null, and `store_error` says why the raw
/// output could not be stored (null normally); `timed_out` is true when the command ran past the
/// memory's `run_timeout_secs` (or the call's, see `codeoid_memory_run_with_timeout`) and was
/// killed with everything it started; `left_running` is true when a process the command started
/// in the background (`server &`) still held its output when the command ended: it was left
/// running, and what it printed once the output stayed quiet 0.2 s after the command's exit is
/// not in the output.
/// `interrupted` is always false here (see `codeoid_memory_run_cancellable`). Output that is not
/// UTF-8 is converted lossily in this JSON; the stored episode keeps the exact bytes.
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
                (None, None),
                out_json,
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
                (Some(timeout_secs), None),
                out_json,
            )
        }
    })
}

/// `codeoid_memory_run_with_timeout` that a caller can stop from another thread or a signal
/// handler: raising `cancel` (`codeoid_cancel_request`) while the command runs sends it
/// `SIGINT`, as a Ctrl-C would (it runs in a process group of its own), kills what is left a
/// second later, stores what it printed, and writes the usual JSON with `"interrupted": true`
/// and a line saying so at the end of `stdout`. The flag is checked about every 0.1 s.
///
/// `timeout_secs` is optional: NULL keeps the memory's `run_timeout_secs`, otherwise it points at
/// this call's timeout in seconds (0 for none), checked as in `codeoid_memory_run_with_timeout`.
/// `cancel` is optional too: with NULL the call cannot be stopped, and runs as
/// `codeoid_memory_run` (NULL `timeout_secs`) or `codeoid_memory_run_with_timeout` does.
///
/// Errors: as `codeoid_memory_run_with_timeout`, and `CODEOID_ERROR_CANCELLED` when `cancel` was
/// already raised as the call began (nothing ran, nothing was stored). Thread-safe; blocks until
/// the command exits, is killed, or is stopped.
///
/// # Safety
/// As `codeoid_memory_run`; `timeout_secs` is NULL or points at a readable `double`; `cancel` is
/// NULL or a live flag from `codeoid_cancel_new` that stays alive until this call returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_run_cancellable(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    command: *const c_char,
    command_len: usize,
    timeout_secs: *const f64,
    cancel: *const codeoid_cancel,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_run_cancellable", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let timeout_secs = unsafe { timeout_secs.as_ref() }.copied();
        // SAFETY: as above.
        let cancel = unsafe { cancel.as_ref() };
        // SAFETY: as above.
        unsafe {
            run_into(
                memory,
                (session_id, session_id_len),
                (command, command_len),
                (timeout_secs, cancel),
                out_json,
            )
        }
    })
}

/// What the run functions do: convert their arguments (in the order their errors are
/// documented), run the command with the call's timeout in seconds (`None`: the memory's) and
/// stop flag, and write its JSON into `*out_json`.
///
/// # Safety
/// As `codeoid_memory_run`: `memory` is NULL or a live handle, each `(ptr, len)` pair is NULL or
/// readable, `out_json` is NULL or points at a `codeoid_string` that owns nothing.
unsafe fn run_into(
    memory: *const codeoid_memory,
    (session_id, session_id_len): (*const c_char, usize),
    (command, command_len): (*const c_char, usize),
    (timeout_secs, cancel): (Option<f64>, Option<&codeoid_cancel>),
    out_json: *mut codeoid_string,
) -> FfiResult<()> {
    // SAFETY: the caller guarantees the pointers as documented.
    let memory = &unsafe { handle(memory, "memory") }?.inner;
    // SAFETY: as above.
    let session = unsafe { text(session_id, session_id_len, "session_id") }?;
    // SAFETY: as above.
    let command = unsafe { text(command, command_len, "command") }?;
    // SAFETY: as above.
    let out_json = unsafe { out(out_json, "out_json") }?;
    let timeout = match timeout_secs {
        Some(secs) => MemoryConfig::run_timeout_from_secs(secs, "timeout_secs")?,
        None => memory.config().run_timeout,
    };
    let run = match cancel {
        None => memory.run_with_timeout(session, command, timeout)?,
        Some(cancel) if !cancel.keep_going() => {
            return Err(Failure::cancelled("codeoid_memory_run_cancellable"));
        }
        Some(cancel) => {
            let mut keep_going = || cancel.keep_going();
            memory.run_with_timeout_while(session, command, timeout, &mut keep_going)?
        }
    };
    json::write(out_json, &run_json(&run))
}

/// The JSON the run functions write.
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
        "interrupted": run.interrupted,
        "left_running": run.left_running,
    })
}
