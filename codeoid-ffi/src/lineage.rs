//! Fork and import (DESIGN §7, `docs/fork.md`, `docs/import.md`): a new session from a verbatim
//! copy of another's turns, optionally handed to another backend; and other harnesses' session
//! logs imported into the store. Both write through the core in one go: nothing is written on
//! error.

use std::ffi::c_char;
use std::path::{Path, PathBuf};
use std::time::Duration;

use codeoid_core::fork::{ForkOptions, Forked};
use codeoid_core::import::ImportOptions;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::args::{handle, optional_text, out, parse_json, text};
use crate::cancel::codeoid_cancel;
use crate::error::{Failure, FfiResult, codeoid_error};
use crate::json::{self, overlay};
use crate::memory::codeoid_memory;
use crate::panic::boundary;
use crate::strings::codeoid_string;
use crate::translate::backend;

/// `target_format` of `codeoid_memory_fork`: stay on the parent's backend (no handoff).
pub const CODEOID_FORMAT_NONE: u32 = 0;

fn fork_options(json: Option<&str>) -> FfiResult<ForkOptions> {
    let value: Option<Value> = json
        .map(|j| parse_json(j, "options_json", "a fork options object"))
        .transpose()?;
    overlay(&ForkOptions::default(), value.as_ref(), "options_json")
}

fn forked(f: &Forked) -> Value {
    let handoff = f.handoff.as_ref().map(|h| {
        json!({
            "backend": h.backend,
            "context_window": h.context_window,
            "budget_tokens": h.budget_tokens,
            "window": h.window,
            "omitted_turns": h.omitted_turns(),
            "seed": h.seed,
            "turns": h.turns,
            "messages": h.messages,
            "losses": h.losses,
        })
    });
    json!({
        "session": json::session(&f.session),
        "copied_turns": f.copied_turns,
        "episode_id": f.episode_id,
        "handoff": handoff,
    })
}

/// Forks session `session_id` into a new session called `name`, copying its turns up to and
/// including turn `at_turn` (0-based sequence number; negative: the tip). The parent is
/// untouched. With `target_format` a `CODEOID_FORMAT_*` value (and optionally `model`), the
/// copied conversation is also translated for that backend, within a budget of its context
/// window; `CODEOID_FORMAT_NONE` (0) keeps the parent's backend and `model` must then be NULL.
///
/// `options_json` (optional) is `{"id"?: new session id, "handoff"?: {"budget_fraction",
/// "budget_tokens", "context_window", "translate": {translation options}}}`.
///
/// Writes `{"session": session object (with its "lineage"), "copied_turns", "episode_id" (the
/// fork event), "handoff": null or {"backend", "context_window", "budget_tokens", "window",
/// "omitted_turns", "seed", "turns", "messages", "losses"}}` into `*out_json`; `messages` is
/// ready to send to the target.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (unknown format, blank name, `at_turn` out of range, bad
/// options), `CODEOID_ERROR_NOT_FOUND` (session), `CODEOID_ERROR_ALREADY_EXISTS` (the new id is
/// taken), `CODEOID_ERROR_TRANSLATION` (strict translation that would lose something).
/// Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; each `(ptr, len)` pair is NULL or readable; `out_json` is
/// NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_fork(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    at_turn: i64,
    target_format: u32,
    model: *const c_char,
    model_len: usize,
    name: *const c_char,
    name_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_fork", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let id = unsafe { text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let model = unsafe { optional_text(model, model_len, "model") }?;
        // SAFETY: as above.
        let name = unsafe { text(name, name_len, "name") }?;
        // SAFETY: as above.
        let options = unsafe { optional_text(options_json, options_json_len, "options_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let target = match (target_format, model) {
            (CODEOID_FORMAT_NONE, None) => None,
            (CODEOID_FORMAT_NONE, Some(_)) => {
                return Err(crate::error::Failure::invalid_input(
                    "argument `model` names a model but `target_format` is CODEOID_FORMAT_NONE; \
                     pass the target's format too",
                ));
            }
            (format, model) => Some(backend(format, model)?),
        };
        let options = fork_options(options)?;
        let at_turn = u64::try_from(at_turn).ok();
        let result = memory
            .inner
            .fork(id, at_turn, target.as_ref(), name, &options)?;
        json::write(out_json, &forked(&result))
    })
}

/// The options of `codeoid_memory_import`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportSettings {
    tenant: Option<String>,
    workspace_dir: Option<PathBuf>,
    fallback_dir: Option<PathBuf>,
    /// Seconds; JSON `null` never finishes.
    #[serde(default, deserialize_with = "double_option")]
    finish_after_secs: Option<Option<u64>>,
    batch_turns: Option<usize>,
}

/// Tells "absent" (outer `None`) from `null` (inner `None`).
fn double_option<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    Option::<u64>::deserialize(d).map(Some)
}

impl ImportSettings {
    fn into_options(self) -> ImportOptions {
        let mut options = ImportOptions::default();
        if let Some(tenant) = self.tenant {
            options.tenant = tenant;
        }
        options.workspace_dir = self.workspace_dir;
        options.fallback_dir = self.fallback_dir;
        if let Some(finish) = self.finish_after_secs {
            options.finish_after = finish.map(Duration::from_secs);
        }
        if let Some(batch) = self.batch_turns {
            options.batch_turns = batch;
        }
        options
    }
}

/// Imports session logs (a file or a folder: Claude Code, Codex CLI, Gemini CLI, SWE-agent;
/// the format is detected from the content) at `path` into the store. Each session goes to the
/// workspace its log names; logs that name none go to this memory's workspace. Re-importing adds
/// nothing; a log that grew is brought up to date exactly. Malformed lines are skipped and
/// reported, not fatal.
///
/// `options_json` (optional) is `{"tenant"?, "workspace_dir"? (put every session there),
/// "fallback_dir"?, "finish_after_secs"? (finish sessions idle that long; null never),
/// "batch_turns"?}`.
///
/// Writes the import summary into `*out_json`: `{"report": {...}, "sessions_new",
/// "sessions_updated", "sessions_unchanged", "sessions_empty", "sessions_skipped",
/// "skipped_sessions", "sessions_finished", "turns_added", "turns_unchanged", "turns_replaced",
/// "episodes_added", "episodes_removed"}` (see `docs/import.md`).
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (bad options), `CODEOID_ERROR_NOT_FOUND` / `CODEOID_ERROR_IO`
/// (unreadable path), `CODEOID_ERROR_IMPORT` (a single file in no known format). Thread-safe;
/// blocks until the import is done.
///
/// # Safety
/// `memory` is NULL or a live handle; each `(ptr, len)` pair is NULL or readable; `out_json` is
/// NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_import(
    memory: *const codeoid_memory,
    path: *const c_char,
    path_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_import", || {
        // SAFETY: the caller guarantees the pointers as documented.
        unsafe {
            import_into(
                memory,
                (path, path_len),
                (options_json, options_json_len),
                None,
                out_json,
            )
        }
    })
}

/// `codeoid_memory_import` that a caller can stop from another thread or a signal handler:
/// `cancel` (`codeoid_cancel_request`) is checked before each file, and once raised the import
/// ends there and writes its summary with `"stopped": true`. Every file read before is stored
/// whole, and importing again goes on from there (one very large log is read to its end first).
/// NULL `cancel` imports as `codeoid_memory_import` does.
///
/// Errors: as `codeoid_memory_import`, and `CODEOID_ERROR_CANCELLED` when `cancel` was already
/// raised as the call began (nothing was read). Thread-safe; blocks until the import is done
/// or stopped.
///
/// # Safety
/// As `codeoid_memory_import`; `cancel` is NULL or a live flag from `codeoid_cancel_new` that
/// stays alive until this call returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_import_cancellable(
    memory: *const codeoid_memory,
    path: *const c_char,
    path_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    cancel: *const codeoid_cancel,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_import_cancellable", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let cancel = unsafe { cancel.as_ref() };
        // SAFETY: as above.
        unsafe {
            import_into(
                memory,
                (path, path_len),
                (options_json, options_json_len),
                cancel,
                out_json,
            )
        }
    })
}

/// What the import functions do: convert their arguments (in the order their errors are
/// documented), import with the call's stop flag, and write the summary into `*out_json`.
///
/// # Safety
/// As `codeoid_memory_import`: `memory` is NULL or a live handle, each `(ptr, len)` pair is NULL
/// or readable, `out_json` is NULL or points at a `codeoid_string` that owns nothing.
unsafe fn import_into(
    memory: *const codeoid_memory,
    (path, path_len): (*const c_char, usize),
    (options_json, options_json_len): (*const c_char, usize),
    cancel: Option<&codeoid_cancel>,
    out_json: *mut codeoid_string,
) -> FfiResult<()> {
    // SAFETY: the caller guarantees the pointers as documented.
    let memory = unsafe { handle(memory, "memory") }?;
    // SAFETY: as above.
    let path = unsafe { text(path, path_len, "path") }?;
    // SAFETY: as above.
    let options = unsafe { optional_text(options_json, options_json_len, "options_json") }?;
    // SAFETY: as above.
    let out_json = unsafe { out(out_json, "out_json") }?;
    let settings: ImportSettings =
        crate::args::parse_optional_json(options, "options_json", "an import options object")?;
    if cancel.is_some_and(|c| !c.keep_going()) {
        return Err(Failure::cancelled("codeoid_memory_import_cancellable"));
    }
    let summary = memory.inner.import_logs_while(
        Path::new(path),
        &settings.into_options(),
        &mut |_| {},
        &mut || cancel.is_none_or(codeoid_cancel::keep_going),
    )?;
    json::write(out_json, &summary)
}
