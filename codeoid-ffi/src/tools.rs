//! The four memory tools a model calls (`recall`, `recall_file`, `timeline`, `get_episode`):
//! their declarations, and the dispatcher that answers a model's call by name. A harness mounts
//! the declarations (`codeoid_memory_tool_schemas`, then `codeoid_translate_declare_tools` or
//! `codeoid_translate_to_request` for a provider's format) and hands every call of one of them
//! to `codeoid_memory_call_tool`.
//!
//! All functions are thread-safe on one `codeoid_memory`.

use std::ffi::c_char;

use crate::args::{handle, optional_text, out, text};
use crate::error::codeoid_error;
use crate::json;
use crate::memory::codeoid_memory;
use crate::panic::boundary;
use crate::strings::codeoid_string;

/// Answers a model's call of memory tool `name` (`recall`, `recall_file`, `timeline` or
/// `get_episode`, bare or prefixed as in `codeoid_memory__recall`) made in session
/// `current_session_id` (optional: NULL is no session), with `arguments_json` as the model sent
/// it (optional: NULL is no arguments; a double-encoded JSON string is accepted). Writes the text
/// to send back as the tool result into `*out_text`, and into `*out_is_error` whether to send it
/// as an error result.
///
/// A failed tool call is not a failed function call: bad arguments, an unknown tool name, a
/// missing episode or an unknown session come back as success with `*out_is_error == true` and a
/// text that tells the model what to do. Memory switched off (`memory_enabled: false`) is such a
/// result too.
///
/// Errors: only `CODEOID_ERROR_NULL_ARGUMENT` and `CODEOID_ERROR_INVALID_UTF8` (and
/// `CODEOID_ERROR_PANIC`). Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; each `(ptr, len)` pair is NULL or readable; `out_text` is
/// NULL or points at a `codeoid_string` that owns nothing; `out_is_error` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_call_tool(
    memory: *const codeoid_memory,
    current_session_id: *const c_char,
    current_session_id_len: usize,
    name: *const c_char,
    name_len: usize,
    arguments_json: *const c_char,
    arguments_json_len: usize,
    out_text: *mut codeoid_string,
    out_is_error: *mut bool,
) -> *mut codeoid_error {
    boundary("codeoid_memory_call_tool", || {
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
        let name = unsafe { text(name, name_len, "name") }?;
        // SAFETY: as above.
        let arguments =
            unsafe { optional_text(arguments_json, arguments_json_len, "arguments_json") }?;
        // SAFETY: as above.
        let out_text = unsafe { out(out_text, "out_text") }?;
        // SAFETY: as above.
        let out_is_error = unsafe { out(out_is_error, "out_is_error") }?;
        let output = memory
            .inner
            .call_tool(current, name, arguments.unwrap_or(""));
        *out_text = codeoid_string::from_string(output.text);
        *out_is_error = output.is_error;
        Ok(())
    })
}

/// Writes the four memory tools' declarations into `*out_json` as a JSON array of `{"name",
/// "description", "input_schema"}` (a JSON Schema object), named `{prefix}__{name}` when
/// `prefix` (optional) is given. Pass them to `codeoid_translate_declare_tools` for a
/// provider's `tools` value, or as the `tools` of `codeoid_translate_to_request`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (a prefix that is empty, has characters other than ASCII
/// letters, digits, `_` and `-`, or makes a name longer than 64 characters). Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `prefix` is NULL or readable; `out_json` is NULL or points
/// at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_tool_schemas(
    memory: *const codeoid_memory,
    prefix: *const c_char,
    prefix_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_tool_schemas", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let prefix = unsafe { optional_text(prefix, prefix_len, "prefix") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        json::write(out_json, &memory.inner.tool_schemas(prefix)?)
    })
}
